// `spanprof plot` end to end: the real binary, real files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/captures.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"
#include "tests/testing/xml_check.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ParseXml;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadParseCapture;
using ::spanprof::testing::ReadSvg;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteText;
using ::spanprof::testing::XmlElement;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// A two-thread capture with phases and a cross-thread child.
Capture SampleCapture(int64_t parse_ns) {
  Capture capture = ReadParseCapture(parse_ns, /*phases=*/true);
  capture.process_name = "plot-cli";
  capture.window_ns = 10'000'000;
  return capture;
}

class PlotCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_trace_ = dir_.File("base-trace.json");
    cand_trace_ = dir_.File("cand-trace.json");
    base_summary_ = dir_.File("base-summary.json");
    cand_summary_ = dir_.File("cand-summary.json");
    const Capture base = SampleCapture(3'000'000);
    const Capture cand = SampleCapture(6'000'000);
    ASSERT_TRUE(analysis::WriteTrace(base, base_trace_).ok());
    ASSERT_TRUE(analysis::WriteTrace(cand, cand_trace_).ok());
    ASSERT_TRUE(
        analysis::WriteSummary(analysis::Summarize(base), base_summary_).ok());
    ASSERT_TRUE(
        analysis::WriteSummary(analysis::Summarize(cand), cand_summary_).ok());
  }

  TempDir dir_;
  std::string base_trace_;
  std::string cand_trace_;
  std::string base_summary_;
  std::string cand_summary_;
};

TEST_F(PlotCliTest, TimelineWritesTheSameSvgAsTheLibrary) {
  const std::string out = dir_.File("figures/nested/timeline.svg");
  const ProcessResult r =
      Spanprof({"plot", "timeline", base_trace_, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, IsEmpty());
  const std::string svg = ReadSvg(out);
  absl::StatusOr<Capture> capture = analysis::ReadTrace(base_trace_);
  ASSERT_TRUE(capture.ok()) << capture.status();
  EXPECT_EQ(svg, analysis::PlotTimeline(*capture));
  EXPECT_THAT(svg, HasSubstr(">pool-0<"));
  EXPECT_THAT(svg, HasSubstr(">file.parse<"));
  EXPECT_THAT(svg, HasSubstr("marker-end=\"url(#arrow)\""));
}

TEST_F(PlotCliTest, SameInputSameBytes) {
  const std::string a = dir_.File("a.svg");
  const std::string b = dir_.File("b.svg");
  for (const std::string& out : {a, b}) {
    ASSERT_EQ(Spanprof({"plot", "compare", base_summary_, cand_summary_,
                        "--absolute-tolerance", "100000", "-o", out})
                  .exit_code,
              0);
  }
  EXPECT_EQ(ReadText(a), ReadText(b));
  // Where the inputs live does not change the figure (only base names show).
  std::filesystem::create_directories(dir_.File("elsewhere"));
  std::filesystem::copy_file(base_summary_,
                             dir_.File("elsewhere/base-summary.json"));
  std::filesystem::copy_file(cand_summary_,
                             dir_.File("elsewhere/cand-summary.json"));
  const std::string c = dir_.File("c.svg");
  const ProcessResult moved = testing::RunProcess(
      {SPANPROF_TEST_BIN_DIR "/spanprof", "plot", "compare",
       "elsewhere/base-summary.json", "elsewhere/cand-summary.json",
       "--absolute-tolerance", "100000", "-o", c},
      {}, dir_.path().string());
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_EQ(ReadText(a), ReadText(c));
}

TEST_F(PlotCliTest, BreakdownReadsSummariesAndTraces) {
  const std::string from_summary = dir_.File("s.svg");
  const std::string from_trace = dir_.File("t.svg");
  ProcessResult r =
      Spanprof({"plot", "breakdown", base_summary_, "-o", from_summary});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Spanprof({"plot", "breakdown", base_trace_, "--output", from_trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = ReadSvg(from_summary);
  EXPECT_EQ(svg, ReadSvg(from_trace));
  EXPECT_THAT(svg, HasSubstr("inclusive (total) time"));
  EXPECT_THAT(svg, HasSubstr("file.parse [phase=parse]"));
}

TEST_F(PlotCliTest, CompareDrawsARegressionAndStillSucceeds) {
  const std::string out = dir_.File("compare.svg");
  const ProcessResult r =
      Spanprof({"plot", "compare", base_summary_, cand_summary_, "--metric",
                "total_ns", "--absolute-tolerance", "500000",
                "--relative-tolerance-bps", "1000", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = ReadSvg(out);
  EXPECT_THAT(svg, HasSubstr("Comparison on total_ns"));
  EXPECT_THAT(svg, HasSubstr("500.00 us"));
  EXPECT_THAT(svg, HasSubstr("10%"));
  EXPECT_THAT(svg, HasSubstr("1 regressed"));
  EXPECT_THAT(svg, HasSubstr("FAIL"));
  EXPECT_THAT(svg, HasSubstr("fill=\"#d62728\""));
  EXPECT_THAT(svg, HasSubstr("base-summary.json"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr(dir_.path().string())));
}

TEST_F(PlotCliTest, WritesToStdoutWithoutOutput) {
  const ProcessResult r = Spanprof({"plot", "breakdown", base_summary_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("<?xml"));
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(base_summary_);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(r.out, analysis::PlotBreakdown(*summary));
}

TEST_F(PlotCliTest, OptionsReachTheFigure) {
  const std::string out = dir_.File("narrow.svg");
  const ProcessResult r =
      Spanprof({"plot", "timeline", base_trace_, "--width=700", "--from",
                "1000000", "--to", "5000000", "--max-spans", "2", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = ReadSvg(out);
  EXPECT_THAT(svg, HasSubstr("viewBox=\"0 0 700 "));
  // The subtitle, wrapped over lines.
  absl::StatusOr<XmlElement> root = ParseXml(svg);
  ASSERT_TRUE(root.ok());
  std::string subtitle;
  for (const XmlElement* text : root->FindAll("text")) {
    if (text->Attribute("class") == "sub") subtitle += text->AllText() + " ";
  }
  EXPECT_THAT(subtitle, HasSubstr("showing 1.00 ms to 5.00 ms"));
  EXPECT_THAT(subtitle, HasSubstr("the 2 longest of 3 spans drawn"));
}

TEST_F(PlotCliTest, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {"plot"},
      {"plot", "pie", base_trace_},
      {"plot", "timeline"},
      {"plot", "timeline", base_trace_, cand_trace_},
      {"plot", "timeline", base_trace_, "--bogus"},
      {"plot", "timeline", base_trace_, "-o"},
      {"plot", "timeline", base_trace_, "-o", ""},
      {"plot", "timeline", base_trace_, "--width", "100"},
      {"plot", "timeline", base_trace_, "--width", "wide"},
      {"plot", "timeline", base_trace_, "--from", "-5"},
      {"plot", "timeline", base_trace_, "--from", "9", "--to", "3"},
      {"plot", "timeline", base_trace_, "--max-spans", "0"},
      {"plot", "timeline", base_trace_, "--max-threads", "0"},
      {"plot", "breakdown", base_summary_, "--rows", "x"},
      {"plot", "breakdown", base_summary_, "--metric", "p95_ns"},
      {"plot", "compare", base_summary_},
      {"plot", "compare", base_summary_, cand_summary_, "--metric", "speed"},
      {"plot", "compare", base_summary_, cand_summary_, "--absolute-tolerance",
       "-1"},
      {"plot", "compare", base_summary_, cand_summary_,
       "--relative-tolerance-bps", "1.5"},
  };
  for (const std::vector<std::string>& args : bad) {
    const ProcessResult r = Spanprof(args);
    std::string line;
    for (const std::string& a : args) line += a + " ";
    EXPECT_EQ(r.exit_code, 2) << line;
    EXPECT_THAT(r.err, StartsWith("spanprof plot: ")) << line;
    EXPECT_THAT(r.out, IsEmpty()) << line;
  }
}

TEST_F(PlotCliTest, InvalidInputExitsTwoAndKeepsTheOldFigure) {
  const std::string out = dir_.File("keep.svg");
  WriteText(out, "old figure");
  const std::string broken = dir_.File("broken.json");
  WriteText(broken, "{\"traceEvents\": [");
  const std::string not_a_summary = dir_.File("other.json");
  WriteText(not_a_summary, "{\"schema\":\"something.else\"}");
  const std::vector<std::vector<std::string>> bad = {
      {"plot", "timeline", dir_.File("missing.json"), "-o", out},
      {"plot", "timeline", broken, "-o", out},
      {"plot", "timeline", base_summary_, "-o", out},  // not a trace
      {"plot", "breakdown", not_a_summary, "-o", out},
      {"plot", "compare", base_summary_, broken, "-o", out},
  };
  for (const std::vector<std::string>& args : bad) {
    const ProcessResult r = Spanprof(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args[2] << ": " << r.err;
    EXPECT_THAT(r.err, StartsWith("spanprof plot: "));
  }
  EXPECT_EQ(ReadText(out), "old figure");
  const ProcessResult missing =
      Spanprof({"plot", "timeline", dir_.File("missing.json"), "-o", out});
  EXPECT_THAT(missing.err, HasSubstr("missing.json"));
}

TEST_F(PlotCliTest, RefusesIncompleteSummariesUnlessAllowed) {
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(cand_summary_);
  ASSERT_TRUE(summary.ok());
  Capture dropped = SampleCapture(6'000'000);
  dropped.dropped_events = 4;
  const std::string incomplete = dir_.File("incomplete-summary.json");
  ASSERT_TRUE(
      analysis::WriteSummary(analysis::Summarize(dropped), incomplete).ok());
  const std::string out = dir_.File("incomplete.svg");
  ProcessResult r =
      Spanprof({"plot", "compare", base_summary_, incomplete, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("incomplete-summary.json"));
  r = Spanprof({"plot", "compare", base_summary_, incomplete,
                "--allow-incomplete", "-o", out});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ReadSvg(out);
}

TEST_F(PlotCliTest, HelpDescribesEveryFigure) {
  const ProcessResult r = Spanprof({"plot", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("plot timeline TRACE"));
  EXPECT_THAT(r.out, HasSubstr("plot breakdown SUMMARY"));
  EXPECT_THAT(r.out, HasSubstr("plot compare BASE CAND"));
  EXPECT_THAT(r.out, HasSubstr("--relative-tolerance-bps"));
  const ProcessResult list = Spanprof({"--help"});
  EXPECT_THAT(list.out, HasSubstr("plot"));
  EXPECT_THAT(list.out, ::testing::Not(HasSubstr("not yet available")));
}

}  // namespace
}  // namespace spanprof
