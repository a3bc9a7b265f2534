// End to end: the real `spanprof` binary on foreign Chrome Trace Event files
// made on this machine (clang -ftime-trace of this repository's sources at
// -O0 and -O2, node --trace-events-enabled) and hand-written edge cases, all
// under tests/data/foreign/.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/lookup.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::FindRow;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

std::string Data(const std::string& name) {
  return SPANPROF_TEST_SOURCE_DIR "/tests/data/foreign/" + name;
}

TEST(ForeignTraceCliTest, ReportShowsTheCompilerPhasesOfAClangTrace) {
  const ProcessResult r =
      Spanprof({"report", Data("clang-tail_shape-O0.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Source: chrome-trace (process clang)"));
  EXPECT_THAT(r.out, Not(HasSubstr("Process resources")));
  EXPECT_THAT(r.out, HasSubstr("\nFrontend "));
  EXPECT_THAT(r.out, HasSubstr("\nSource "));
  EXPECT_THAT(r.out, HasSubstr("\nExecuteCompiler "));
  EXPECT_THAT(r.err, IsEmpty());  // clang writes only X and M events
}

TEST(ForeignTraceCliTest, SummarizeWritesAChromeTraceSummary) {
  TempDir dir;
  const std::string out = dir.File("s.json");
  const ProcessResult r =
      Spanprof({"summarize", Data("clang-tail_shape-O0.json"), "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<analysis::Summary> summary = analysis::ReadSummary(out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->schema_version, analysis::kSummarySchemaVersion);
  EXPECT_EQ(summary->source, "chrome-trace");
  EXPECT_EQ(summary->clock, "unknown");
  EXPECT_TRUE(summary->complete);
  EXPECT_NE(FindRow(*summary, "Frontend"), nullptr);
  EXPECT_NE(FindRow(*summary, "Source"), nullptr);
  // The summary reports like any other, with its source.
  const ProcessResult report = Spanprof({"report", out});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("Source: chrome-trace (process clang)"));
}

TEST(ForeignTraceCliTest, GroupByArgGivesARowPerFile) {
  const ProcessResult r =
      Spanprof({"summarize", Data("clang-tail_shape-O0.json"), "--group-by-arg",
                "detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<analysis::Summary> summary =
      analysis::ParseSummary(r.out, "stdout");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_NE(
      FindRow(*summary, "Source [detail=analysis/src/summary/tail_shape.h]"),
      nullptr);
  EXPECT_EQ(FindRow(*summary, "Source"), nullptr);
  EXPECT_NE(FindRow(*summary, "Frontend"), nullptr);

  const ProcessResult report = Spanprof(
      {"report", Data("clang-tail_shape-O0.json"), "--group-by-arg=nope"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.err,
              HasSubstr("note: " + Data("clang-tail_shape-O0.json") +
                        ": no span has a string argument \"nope\""));
}

TEST(ForeignTraceCliTest, CompareGatesTwoClangTraces) {
  TempDir dir;
  // -O2 spends longer in the backend than -O0: a regression of total_ns.
  ProcessResult r = Spanprof({"compare", Data("clang-tail_shape-O0.json"),
                              Data("clang-tail_shape-O2.json"), "--metric",
                              "total_ns", "--relative-tolerance-bps", "1000",
                              "--json", dir.File("c.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("regressed     Backend "));
  // Per source file (the table shortens keys; the document has them whole).
  r = Spanprof({"compare", Data("clang-tail_shape-O0.json"),
                Data("clang-tail_shape-O2.json"), "--metric", "total_ns",
                "--group-by-arg", "detail", "--absolute-tolerance",
                "1000000000", "--json", dir.File("files.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Source [detail="));
  const std::string json = testing::ReadText(dir.File("files.json"));
  EXPECT_THAT(json, HasSubstr("\"Source [detail=analysis/src/summary/"
                              "tail_shape.h]\""));
  EXPECT_THAT(json, HasSubstr("\"OptModule [detail=analysis/src/summary/"
                              "tail_shape.cc]\""));
  // A summary against a trace works too.
  ASSERT_EQ(Spanprof({"summarize", Data("clang-tail_shape-O0.json"), "-o",
                      dir.File("base.json")})
                .exit_code,
            0);
  r = Spanprof(
      {"compare", dir.File("base.json"), Data("clang-tail_shape-O0.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(ForeignTraceCliTest, NotesWhatANodeTraceHoldsBesidesSpans) {
  for (const char* command : {"report", "summarize"}) {
    SCOPED_TRACE(command);
    const ProcessResult r = Spanprof({command, Data("node-trace.json")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.err, StartsWith("note: " + Data("node-trace.json") +
                                  ": skipped 6 instant, 16 async events"));
  }
}

TEST(ForeignTraceCliTest, ATraceWithoutSpansIsAnEmptySummary) {
  const ProcessResult r = Spanprof({"summarize", Data("only-instants.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("skipped 2 instant, 1 counter"));
  absl::StatusOr<analysis::Summary> summary =
      analysis::ParseSummary(r.out, "stdout");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_THAT(summary->rows, IsEmpty());
  EXPECT_TRUE(summary->complete);
}

TEST(ForeignTraceCliTest, ReadsTheBareArrayFormEverywhere) {
  for (const char* command : {"report", "summarize", "folded"}) {
    SCOPED_TRACE(command);
    const ProcessResult r = Spanprof({command, Data("bare-array.json")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  const ProcessResult folded = Spanprof({"folded", Data("bare-array.json")});
  EXPECT_EQ(folded.out, "outer 7000\nouter;inner 3000\n");
  EXPECT_EQ(Spanprof({"scaling", Data("clang-tail_shape-O0.json")}).exit_code,
            0);
}

TEST(ForeignTraceCliTest, MalformedTracesExitTwoWithAPath) {
  ProcessResult r = Spanprof({"summarize", Data("malformed-ts.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("$.traceEvents[1].ts: expected a number of "
                               "microseconds, got \"soon\""));
  r = Spanprof({"report", Data("truncated.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("truncated.json: $"));
  r = Spanprof({"compare", Data("malformed-ts.json"), Data("bare-array.json")});
  EXPECT_EQ(r.exit_code, 2);
  r = Spanprof({"summarize", Data("bare-array.json"), "--group-by-arg"});
  EXPECT_EQ(r.exit_code, 2);
}

// validate checks spanprof's own traces; it says what a foreign one is.
TEST(ForeignTraceCliTest, ValidateSaysATraceIsForeign) {
  const ProcessResult r = Spanprof({"validate", Data("node-trace.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("a foreign Chrome trace"));
}

TEST(ForeignTraceCliTest, IncompleteForeignTracesAreSaidSo) {
  const ProcessResult r = Spanprof({"report", Data("unmatched.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("E event with no open B"));
}

}  // namespace
}  // namespace spanprof
