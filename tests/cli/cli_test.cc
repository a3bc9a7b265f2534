// End to end: the real `spanprof` binary on real files written by the
// library's writers. Every command's exit codes 0/1/2, the outputs read back
// with the strict readers, and the --json document read back with simdjson.
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/folded.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/captures.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::RichOptions;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

class CliTest : public ::testing::Test {
 protected:
  // base: forward phase 4 ms; cand: the same phase at 10 ms; both complete.
  void SetUp() override {
    base_capture_ = RichCapture({.scale = 1000, .forward_ns = 4'000});
    cand_capture_ = RichCapture({.scale = 1000, .forward_ns = 10'000});
    ASSERT_TRUE(
        analysis::WriteTrace(base_capture_, Path("base-trace.json")).ok());
    ASSERT_TRUE(
        analysis::WriteTrace(cand_capture_, Path("cand-trace.json.gz")).ok());
    ASSERT_TRUE(analysis::WriteSummary(analysis::Summarize(base_capture_),
                                       Path("base.json"))
                    .ok());
    ASSERT_TRUE(analysis::WriteSummary(analysis::Summarize(cand_capture_),
                                       Path("cand.json"))
                    .ok());
    ASSERT_TRUE(analysis::WriteSummary(
                    analysis::Summarize(RichCapture(
                        {.drops = true, .scale = 1000, .forward_ns = 4'000})),
                    Path("incomplete.json"))
                    .ok());
    testing::WriteText(Path("garbage.json"),
                       "{\"schema\": \"spanprof.summary\"");
  }

  std::string Path(const std::string& name) const { return dir_.File(name); }

  TempDir dir_;
  Capture base_capture_;
  Capture cand_capture_;
};

// --- summarize
// ----------------------------------------------------------------

TEST_F(CliTest, SummarizeReproducesTheSummaryExactly) {
  ProcessResult r = Spanprof(
      {"summarize", Path("base-trace.json"), "-o", Path("out/s.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, IsEmpty());
  absl::StatusOr<analysis::Summary> back =
      analysis::ReadSummary(Path("out/s.json"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, analysis::Summarize(base_capture_));
  // Byte for byte what the session would have written.
  EXPECT_EQ(testing::ReadText(Path("out/s.json")),
            testing::ReadText(Path("base.json")));

  // To stdout, from a gzip trace.
  r = Spanprof({"summarize", Path("cand-trace.json.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, testing::ReadText(Path("cand.json")));
  EXPECT_THAT(r.err, IsEmpty());
}

TEST_F(CliTest, SummarizeRefusesBadInput) {
  ProcessResult r = Spanprof({"summarize", Path("base.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("spanprof summarize: "));
  EXPECT_THAT(r.err, HasSubstr("this is a spanprof summary, not a trace"));
  r = Spanprof({"summarize", Path("missing.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.json"));
  r = Spanprof({"summarize"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: spanprof summarize TRACE"));
  // An output that cannot be written.
  testing::WriteText(Path("file"), "x");
  r = Spanprof(
      {"summarize", Path("base-trace.json"), "-o", Path("file/s.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("file/s.json"));
}

// --- report
// -------------------------------------------------------------------

TEST_F(CliTest, ReportPrintsTheTableOfASummaryOrATrace) {
  ProcessResult from_summary = Spanprof({"report", Path("base.json")});
  ASSERT_EQ(from_summary.exit_code, 0) << from_summary.err;
  EXPECT_THAT(from_summary.out,
              HasSubstr("model.forward [phase=forward, module=en"));
  EXPECT_THAT(from_summary.out, HasSubstr("Summary: " + Path("base.json")));
  ProcessResult from_trace = Spanprof({"report", Path("base-trace.json")});
  ASSERT_EQ(from_trace.exit_code, 0) << from_trace.err;
  EXPECT_THAT(from_trace.out, HasSubstr("Trace: " + Path("base-trace.json")));
  // Same numbers either way: only the path line differs.
  const auto body = [](const std::string& table) {
    return table.substr(0, table.rfind("\n\n"));
  };
  EXPECT_EQ(body(from_summary.out), body(from_trace.out));
}

TEST_F(CliTest, ReportRefusesBadInput) {
  ProcessResult r = Spanprof({"report", Path("garbage.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("spanprof report: " + Path("garbage.json")));
  r = Spanprof({"report", Path("nope.json")});
  EXPECT_EQ(r.exit_code, 2);
  r = Spanprof({"report"});
  EXPECT_EQ(r.exit_code, 2);
}

// --- validate
// -------------------------------------------------------------------

TEST_F(CliTest, ValidateExitCodes) {
  ProcessResult r = Spanprof({"validate", Path("base.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("valid spanprof summary (4 rows)"));
  r = Spanprof({"validate", Path("cand-trace.json.gz")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("valid spanprof trace (6 spans)"));
  // An incomplete summary is still a valid file.
  EXPECT_EQ(Spanprof({"validate", Path("incomplete.json")}).exit_code, 0);

  ASSERT_TRUE(
      analysis::WriteTrace(RichCapture({.broken = true}), Path("broken.json"))
          .ok());
  r = Spanprof({"validate", Path("broken.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("partially overlaps"));
  EXPECT_THAT(r.out,
              HasSubstr(Path("broken.json") + ": invalid spanprof trace"));

  r = Spanprof({"validate", Path("garbage.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("truncated"));

  r = Spanprof({"validate", Path("nope.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("spanprof validate: "));
  EXPECT_EQ(Spanprof({"validate"}).exit_code, 2);
}

// --- folded
// ---------------------------------------------------------------------

TEST_F(CliTest, FoldedWritesStacks) {
  ProcessResult r = Spanprof({"folded", Path("base-trace.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, analysis::FoldedStacks(base_capture_));
  EXPECT_THAT(r.out, HasSubstr("app.run;model.forward "));
  EXPECT_THAT(r.out, HasSubstr("app.run;io.read;we:ird name\"x 1000\n"));
  r = Spanprof(
      {"folded", Path("base-trace.json"), "--output", Path("f/stacks.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::ReadText(Path("f/stacks.txt")),
            analysis::FoldedStacks(base_capture_));
  EXPECT_EQ(Spanprof({"folded", Path("garbage.json")}).exit_code, 2);
  EXPECT_EQ(Spanprof({"folded"}).exit_code, 2);
}

// --- counters
// -------------------------------------------------------------------

// A trace with named counters (args.counters) and refused arguments
// (metadata.dropped_args): every command that reads a trace reads it, and
// the counters change no span, stack or figure.
TEST_F(CliTest, CommandsReadATraceWithCounters) {
  const Capture counted =
      RichCapture({.counters = true, .scale = 1000, .forward_ns = 4'000});
  ASSERT_TRUE(analysis::WriteTrace(counted, Path("counted.json")).ok());
  ProcessResult r = Spanprof({"validate", Path("counted.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("valid spanprof trace (6 spans)"));
  r = Spanprof({"summarize", Path("counted.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, analysis::SummaryToJson(analysis::Summarize(counted)));
  r = Spanprof({"folded", Path("counted.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, analysis::FoldedStacks(base_capture_));
  r = Spanprof({"report", Path("counted.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* figure : {"timeline", "breakdown"}) {
    r = Spanprof({"plot", figure, Path("counted.json"), "-o",
                  Path(std::string(figure) + ".svg")});
    EXPECT_EQ(r.exit_code, 0) << figure << ": " << r.err;
  }
  r = Spanprof({"scaling", Path("counted.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// --- compare
// --------------------------------------------------------------------

TEST_F(CliTest, CompareFindsTheRegression) {
  const std::vector<std::string> gate = {"--metric",
                                         "p95_ns",
                                         "--absolute-tolerance",
                                         "500000",
                                         "--relative-tolerance-bps",
                                         "1000"};
  std::vector<std::string> args = {"compare", Path("base.json"),
                                   Path("cand.json")};
  args.insert(args.end(), gate.begin(), gate.end());
  args.push_back("--json=" + Path("out/cmp.json"));
  ProcessResult r = Spanprof(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("regressed"));
  EXPECT_THAT(r.out,
              HasSubstr("model.forward [phase=forward, module=encoder]"));
  EXPECT_THAT(r.out, HasSubstr("FAIL (2 regressed)"));

  // The document, read back independently.
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(Path("out/cmp.json")).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["schema"]), "spanprof.comparison");
  EXPECT_EQ(int64_t(doc["schema_version"]), 1);
  EXPECT_EQ(std::string_view(doc["metric"]), "p95_ns");
  EXPECT_EQ(int64_t(doc["policy"]["absolute_tolerance_ns"]), 500000);
  EXPECT_EQ(int64_t(doc["policy"]["relative_tolerance_bps"]), 1000);
  EXPECT_FALSE(bool(doc["policy"]["fail_on_new"]));
  EXPECT_FALSE(bool(doc["policy"]["allow_incomplete"]));
  EXPECT_EQ(std::string_view(doc["base"]), Path("base.json"));
  EXPECT_EQ(std::string_view(doc["candidate"]), Path("cand.json"));
  EXPECT_FALSE(bool(doc["passed"]));
  EXPECT_EQ(int64_t(doc["counts"]["regressed"]), 2);
  EXPECT_EQ(int64_t(doc["counts"]["within"]), 2);
  bool found = false;
  for (simdjson::dom::element row : doc["rows"].get_array()) {
    if (std::string_view(row["key"]["name"]) != "model.forward") continue;
    found = true;
    EXPECT_EQ(std::string_view(row["status"]), "regressed");
    EXPECT_EQ(int64_t(row["base"]), 4'000'000);
    EXPECT_EQ(int64_t(row["candidate"]), 10'000'000);
    EXPECT_EQ(int64_t(row["delta"]), 6'000'000);
    EXPECT_EQ(int64_t(row["change_bps"]), 15000);
    EXPECT_EQ(int64_t(row["base_calls"]), 3);
    EXPECT_EQ(int64_t(row["candidate_calls"]), 3);
    EXPECT_EQ(std::string_view(row["key"]["phase"]), "forward");
  }
  EXPECT_TRUE(found);

  // Identical runs pass.
  args = {"compare", Path("base.json"), Path("base.json")};
  args.insert(args.end(), gate.begin(), gate.end());
  r = Spanprof(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASS"));

  // A looser gate lets the same pair through.
  r = Spanprof({"compare", Path("base.json"), Path("cand.json"),
                "--absolute-tolerance", "7000000"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(CliTest, CompareNewAndMissingKeysFailOnlyWhenAsked) {
  Capture extra = RichCapture({.scale = 1000, .forward_ns = 4'000});
  extra.sites[0].name = "app.start";  // the root's key changes
  ASSERT_TRUE(
      analysis::WriteSummary(analysis::Summarize(extra), Path("renamed.json"))
          .ok());
  // The root's self time is over 10% of the run: without it the candidate
  // is no evidence, unless --allow-missing.
  ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("renamed.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("No evidence: rows missing from the candidate"));
  EXPECT_EQ(Spanprof({"compare", Path("base.json"), Path("renamed.json"),
                      "--allow-missing"})
                .exit_code,
            0);
  EXPECT_EQ(Spanprof({"compare", Path("base.json"), Path("renamed.json"),
                      "--allow-missing", "--fail-on-new"})
                .exit_code,
            1);
  r = Spanprof({"compare", Path("base.json"), Path("renamed.json"),
                "--allow-missing", "--fail-on-missing"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("1 missing (--fail-on-missing)"));
}

TEST_F(CliTest, CompareRefusesIncompleteUnlessAllowed) {
  ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("incomplete.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("spanprof compare: " + Path("incomplete.json") +
                                ": incomplete capture (3 dropped events)"));
  EXPECT_THAT(r.out, IsEmpty());
  r = Spanprof({"compare", Path("base.json"), Path("incomplete.json"),
                "--allow-incomplete"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("new"));  // the dropped-only row
}

TEST_F(CliTest, CompareUsageAndInputErrors) {
  ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("garbage.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("spanprof compare: " + Path("garbage.json")));
  // A trace is summarized first: the same capture compares equal.
  r = Spanprof({"compare", Path("base.json"), Path("base-trace.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASS: 0 regressed"));
  r = Spanprof({"compare", Path("base.json"), Path("cand.json"),
                "--absolute-tolerance", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--absolute-tolerance: expected a non-negative "
                               "integer"));
  EXPECT_THAT(r.err, HasSubstr("usage: spanprof compare BASE CAND"));
  r = Spanprof(
      {"compare", Path("base.json"), Path("cand.json"), "--metric", "p42_ns"});
  EXPECT_EQ(r.exit_code, 2);
  r = Spanprof({"compare", Path("base.json")});
  EXPECT_EQ(r.exit_code, 2);
  testing::WriteText(Path("blocker"), "x");
  r = Spanprof({"compare", Path("base.json"), Path("cand.json"), "--json",
                Path("blocker/cmp.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("blocker/cmp.json"));
}

// --- the rest
// -------------------------------------------------------------------

TEST_F(CliTest, HelpAndUnknownCommand) {
  ProcessResult r = Spanprof({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: spanprof <command>"));
  r = Spanprof({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("usage: spanprof <command>"));
  r = Spanprof({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'frobnicate'"));
  for (const char* command :
       {"compare", "report", "validate", "summarize", "folded", "plot"}) {
    r = Spanprof({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_THAT(r.out, StartsWith(std::string("usage: spanprof ") + command));
  }
}

}  // namespace
}  // namespace spanprof
