// End to end, the real `spanprof compare` on real files: the gate fails
// without evidence (an empty candidate, no row in common, missing rows over
// 10% of the baseline's time) unless --allow-missing, warns when the sides
// differ, refuses a directory of runs of two programs or with one capture
// twice, treats a counter one side cannot hold as not measured, and has
// default tolerances that catch a 10% slowdown of a large row but not 1%.
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/captures.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class CompareEvidenceCliTest : public ::testing::Test {
 protected:
  // The rich capture at 1000x: model.forward's p95 is `forward_ns` us.
  analysis::Summary Rich(int64_t forward_ns = 4000) const {
    return analysis::Summarize(
        RichCapture({.scale = 1000, .forward_ns = forward_ns}));
  }
  void Write(const analysis::Summary& summary, const std::string& name) {
    ASSERT_TRUE(analysis::WriteSummary(summary, Path(name)).ok());
  }
  std::string Path(const std::string& name) const { return dir_.File(name); }

  TempDir dir_;
};

TEST_F(CompareEvidenceCliTest, AnEmptyForeignTraceFailsUnlessAllowed) {
  Write(Rich(), "base.json");
  testing::WriteText(Path("empty.json"), "[]");
  ProcessResult r = Spanprof({"compare", Path("base.json"), Path("empty.json"),
                              "--json", Path("cmp.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("No evidence: the candidate has no spans; "
                               "pass --allow-missing to accept this\n"));
  EXPECT_THAT(r.out, HasSubstr("FAIL (no evidence)"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(Path("cmp.json")).get(doc), simdjson::SUCCESS);
  EXPECT_FALSE(bool(doc["passed"]));
  EXPECT_EQ(std::string_view(doc["no_evidence"]), "the candidate has no spans");
  EXPECT_FALSE(bool(doc["policy"]["allow_missing"]));

  r = Spanprof(
      {"compare", Path("base.json"), Path("empty.json"), "--allow-missing"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("No evidence (accepted: --allow-missing)"));
}

TEST_F(CompareEvidenceCliTest, NoRowInCommonFails) {
  Write(Rich(), "base.json");
  analysis::Summary other = Rich();
  for (analysis::Row& row : other.rows) {
    row.key.name = "other." + row.key.name;
    row.label = analysis::RowLabel(row.key);
  }
  Write(other, "other.json");
  const ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("other.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("No evidence: the two sides have no row in common"));
  EXPECT_EQ(Spanprof({"compare", Path("base.json"), Path("other.json"),
                      "--allow-missing"})
                .exit_code,
            0);
}

TEST_F(CompareEvidenceCliTest, MissingRowsFailOverTenPercentOfTheBaseline) {
  const analysis::Summary base = Rich();
  Write(base, "base.json");
  // The candidate lacks (renamed) the row with the most self time (far over
  // 10% of the recorded thread time), or the one with the least.
  const Capture capture = RichCapture({.scale = 1000});
  size_t most = 0;
  size_t least = 0;
  for (size_t i = 0; i < base.rows.size(); ++i) {
    if (base.rows[i].self_ns > base.rows[most].self_ns) most = i;
    if (base.rows[i].self_ns < base.rows[least].self_ns) least = i;
  }
  ASSERT_GT(base.rows[most].self_ns * 10, base.recorded_thread_time_ns);
  ASSERT_LT(base.rows[least].self_ns * 10, base.recorded_thread_time_ns);
  auto renamed = [&](const std::string& name) {
    Capture changed = capture;
    for (Site& site : changed.sites) {
      if (site.name == name) site.name = "renamed." + name;
    }
    return analysis::Summarize(changed);
  };
  Write(renamed(base.rows[most].key.name), "big-loss.json");
  Write(renamed(base.rows[least].key.name), "small-loss.json");

  ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("big-loss.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("No evidence: rows missing from the candidate "
                               "held "));
  EXPECT_THAT(r.out, HasSubstr("of the baseline's recorded thread time (more "
                               "than 10%)"));
  r = Spanprof(
      {"compare", Path("base.json"), Path("big-loss.json"), "--allow-missing"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Spanprof({"compare", Path("base.json"), Path("small-loss.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("No evidence")));
  r = Spanprof({"compare", Path("base.json"), Path("small-loss.json"),
                "--fail-on-missing"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

TEST_F(CompareEvidenceCliTest, SidesThatDifferAreWarnedAbout) {
  analysis::Summary base = Rich();
  base.host = "build-1";
  Write(base, "base.json");
  analysis::Summary other = base;
  other.process_name = "another_program";
  other.host = "another-host";
  Write(other, "other.json");
  ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("other.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("spanprof compare: warning: the program "
                               "(process_name) differs: baseline \"test\", "
                               "candidate \"another_program\""));
  EXPECT_THAT(r.err, HasSubstr("spanprof compare: warning: the host differs"));
  r = Spanprof({"compare", Path("base.json"), Path("base.json")});
  EXPECT_THAT(r.err, IsEmpty());
}

TEST_F(CompareEvidenceCliTest, ARunDirectoryOfTwoProgramsIsRefused) {
  analysis::Summary run = Rich();
  for (int i = 0; i < 3; ++i) {
    run.pid = 100 + i;
    run.process_name = i == 2 ? "tokenizer" : "test";
    Write(run, "runs/run-" + std::to_string(i) + ".json");
  }
  Write(Rich(), "base.json");
  const ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("runs")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(Path("runs/run-0.json") + " of \"test\", " +
                               Path("runs/run-2.json") + " of \"tokenizer\""));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(CompareEvidenceCliTest, ARunDirectoryWithOneCaptureTwiceIsRefused) {
  analysis::Summary run = Rich();
  run.pid = 1;
  Write(run, "runs/run-1.json");
  run.pid = 2;
  Write(run, "runs/run-2.json");
  testing::WriteText(Path("runs/run-3.json"),
                     testing::ReadText(Path("runs/run-2.json")));
  const ProcessResult r = Spanprof({"compare", Path("runs"), Path("runs")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err,
              HasSubstr(Path("runs/run-2.json") + " and " +
                        Path("runs/run-3.json") + " are the same capture"));
}

TEST_F(CompareEvidenceCliTest,
       ACounterAVersion1BaselineCannotHoldIsNotMeasured) {
  const std::string v1 = std::string(SPANPROF_TEST_SOURCE_DIR) +
                         "/tests/analysis/summary/testdata/"
                         "v1-baseline-summary.json";
  absl::StatusOr<analysis::Summary> cand = analysis::ReadSummary(v1);
  ASSERT_TRUE(cand.ok()) << cand.status();
  for (analysis::Row& row : cand->rows) {
    row.counters.push_back({.name = "bytes", .total = 40, .self = 40});
  }
  Write(*cand, "cand-v4.json");
  const ProcessResult r =
      Spanprof({"compare", v1, Path("cand-v4.json"), "--metric",
                "counter:bytes", "--json", Path("cmp.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("regressed ")));
  EXPECT_THAT(r.out, Not(HasSubstr("from 0")));
  EXPECT_THAT(r.out, HasSubstr("not_measured"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(Path("cmp.json")).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(doc["counts"]["regressed"]), 0);
  EXPECT_EQ(uint64_t(doc["counts"]["not_measured"]), cand->rows.size());
}

// The default tolerances (docs/cli.md): 5% of the baseline and 500 us for
// one run against one. A large row (model.forward, 10 ms) 10% slower
// regresses; 1% slower does not.
TEST_F(CompareEvidenceCliTest, DefaultTolerancesCatchTenPercentNotOne) {
  Write(Rich(10'000), "base.json");
  Write(Rich(11'000), "ten-percent.json");
  Write(Rich(10'100), "one-percent.json");
  ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("ten-percent.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("exceeds 500000 ns AND 500 bps (+5.00%)"));
  EXPECT_THAT(r.out, HasSubstr("regressed     model.forward"));
  EXPECT_THAT(r.out, HasSubstr("+10.00%"));
  r = Spanprof({"compare", Path("base.json"), Path("one-percent.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("within        model.forward"));
  // Directories of runs: 5% and no absolute tolerance, as documented.
  analysis::Summary run = Rich(10'000);
  for (int i = 0; i < 2; ++i) {
    run.pid = i + 1;
    Write(run, "runs/run-" + std::to_string(i) + ".json");
  }
  r = Spanprof({"compare", Path("runs"), Path("runs")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("exceeds 0 ns AND 500 bps (+5.00%)"));
  r = Spanprof(
      {"compare", Path("runs"), Path("runs"), "--absolute-tolerance", "1ms"});
  EXPECT_THAT(r.out, HasSubstr("exceeds 1000000 ns AND 500 bps (+5.00%)"));
  // The old zero tolerances, asked for, still see the 1%.
  r = Spanprof({"compare", Path("base.json"), Path("one-percent.json"),
                "--absolute-tolerance", "0", "--relative-tolerance", "0%"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  r = Spanprof({"compare", Path("base.json"), Path("ten-percent.json"),
                "--absolute-tolerance", "1.5ms"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Spanprof({"compare", Path("base.json"), Path("ten-percent.json"),
                "--relative-tolerance", "0.15"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Spanprof({"compare", Path("base.json"), Path("ten-percent.json"),
                "--relative-tolerance", "5 %"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--relative-tolerance"));
  r = Spanprof({"compare", Path("base.json"), Path("ten-percent.json"),
                "--absolute-tolerance", "1 parsec"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--absolute-tolerance"));
}

}  // namespace
}  // namespace spanprof
