// The gate's evidence rules: an empty candidate, no row in common, missing
// rows beyond a share of the baseline's time; counters one side did not
// measure; the warnings on sides that differ; the refusal of a directory of
// runs that mixes programs or holds one capture twice.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A row with `self_ns` of self time (its p95 the same).
Row TimedRow(const std::string& name, int64_t self_ns) {
  Row row;
  row.key = RowKey{.name = name};
  row.label = RowLabel(row.key);
  row.calls = 1;
  row.total_ns = self_ns;
  row.self_ns = self_ns;
  row.p95_ns = self_ns;
  return row;
}

// A summary of `rows` whose recorded thread time is their self time.
Summary Timed(std::vector<Row> rows) {
  Summary summary;
  for (const Row& row : rows) summary.recorded_thread_time_ns += row.self_ns;
  summary.rows = std::move(rows);
  return summary;
}

SummaryRuns RunsOf(std::vector<Summary> runs) {
  SummaryRuns side;
  side.path = "side";
  for (size_t i = 0; i < runs.size(); ++i) {
    side.run_paths.push_back("run-" + std::to_string(i));
  }
  side.runs = std::move(runs);
  return side;
}

TEST(CompareEvidenceTest, AnEmptyCandidateIsNoEvidence) {
  const Summary base = Timed({TimedRow("a", 1000), TimedRow("b", 1000)});
  absl::StatusOr<Comparison> c = Compare(base, Summary(), {});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->passed);
  EXPECT_EQ(c->counts.regressed, 0u);
  EXPECT_EQ(c->no_evidence, "the candidate has no spans");
  const std::string table = FormatComparison(*c);
  EXPECT_THAT(table, HasSubstr("No evidence: the candidate has no spans; "
                               "pass --allow-missing to accept this\n"));
  EXPECT_THAT(table, HasSubstr("FAIL (no evidence): 0 regressed"));
  EXPECT_THAT(ComparisonToJson(*c),
              HasSubstr("\"no_evidence\": \"the candidate has no spans\""));
  // Two empty sides are no evidence either.
  EXPECT_FALSE(Compare(Summary(), Summary(), {})->passed);

  ComparePolicy allow;
  allow.allow_missing = true;
  c = Compare(base, Summary(), allow);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->passed);
  EXPECT_EQ(c->no_evidence, "the candidate has no spans");
  EXPECT_THAT(FormatComparison(*c),
              HasSubstr("No evidence (accepted: --allow-missing): the "
                        "candidate has no spans\nPASS"));
  EXPECT_THAT(ComparisonToJson(*c), HasSubstr("\"allow_missing\": true"));
}

TEST(CompareEvidenceTest, NoRowInCommonIsNoEvidence) {
  const Summary base = Timed({TimedRow("a", 1000)});
  const Summary other = Timed({TimedRow("z", 1000)});
  absl::StatusOr<Comparison> c = Compare(base, other, {});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->passed);
  EXPECT_EQ(c->no_evidence, "the two sides have no row in common");
  // An empty baseline against spans: nothing in common.
  c = Compare(Summary(), other, {});
  EXPECT_EQ(c->no_evidence, "the two sides have no row in common");
  ComparePolicy allow;
  allow.allow_missing = true;
  EXPECT_TRUE(Compare(base, other, allow)->passed);
}

TEST(CompareEvidenceTest, MissingRowsFailBeyondTenPercentOfTheBaseline) {
  // `gone` holds 15% of the baseline's recorded thread time.
  const Summary base = Timed({TimedRow("kept", 850), TimedRow("gone", 150)});
  const Summary cand = Timed({TimedRow("kept", 850)});
  absl::StatusOr<Comparison> c = Compare(base, cand, {});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->passed);
  ASSERT_TRUE(c->missing_share.has_value());
  EXPECT_DOUBLE_EQ(*c->missing_share, 0.15);
  EXPECT_EQ(c->no_evidence,
            "rows missing from the candidate held 15.0% of the baseline's "
            "recorded thread time (more than 10%)");
  ComparePolicy allow;
  allow.allow_missing = true;
  EXPECT_TRUE(Compare(base, cand, allow)->passed);

  // 10% exactly, and less, is evidence enough.
  for (int64_t gone : {100, 50}) {
    const Summary small =
        Timed({TimedRow("kept", 1000 - gone), TimedRow("gone", gone)});
    c = Compare(small, Timed({TimedRow("kept", 1000 - gone)}), {});
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c->passed) << gone;
    EXPECT_THAT(c->no_evidence, IsEmpty());
    EXPECT_EQ(c->counts.missing, 1u);
    // --fail-on-missing keeps failing on any missing row.
    ComparePolicy strict;
    strict.fail_on_missing = true;
    EXPECT_FALSE(
        Compare(small, Timed({TimedRow("kept", 1000 - gone)}), strict)->passed);
    strict.allow_missing = true;
    EXPECT_FALSE(
        Compare(small, Timed({TimedRow("kept", 1000 - gone)}), strict)->passed);
  }
}

TEST(CompareEvidenceTest, TheMissingShareIsOfSelfTime) {
  // A root that only contains the others: its total is the whole run, its
  // self time 1%; renaming it loses no evidence.
  Summary base = Timed({TimedRow("root", 10), TimedRow("work", 990)});
  base.rows[0].total_ns = 1000;
  const Summary cand = Timed({TimedRow("renamed", 10), TimedRow("work", 990)});
  absl::StatusOr<Comparison> c = Compare(base, cand, {});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->passed) << c->no_evidence;
  EXPECT_DOUBLE_EQ(c->missing_share.value_or(-1), 0.01);
}

TEST(CompareEvidenceTest, RepeatedRunsNeedEvidenceToo) {
  const Summary base = Timed({TimedRow("kept", 500), TimedRow("gone", 500)});
  const Summary kept = Timed({TimedRow("kept", 500)});
  ComparePolicy policy;
  absl::StatusOr<Comparison> c =
      CompareRuns(RunsOf({base, base}), RunsOf({kept, kept}), policy);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->passed);
  EXPECT_THAT(c->no_evidence, HasSubstr("held 50.0% of the baseline's"));
  c = CompareRuns(RunsOf({base, base}), RunsOf({Summary(), Summary()}), policy);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->no_evidence, "the candidate has no spans");
  EXPECT_FALSE(c->passed);
  c = CompareRuns(RunsOf({base}), RunsOf({Timed({TimedRow("z", 5)})}), policy);
  EXPECT_EQ(c->no_evidence, "the two sides have no row in common");
  policy.allow_missing = true;
  EXPECT_TRUE(
      CompareRuns(RunsOf({base, base}), RunsOf({kept, kept}), policy)->passed);
}

// A summary whose rows carry `counter` (a version 4 summary that counts it).
Summary Counted(const std::string& counter, int64_t count) {
  Summary summary = Timed({TimedRow("parse", 1000), TimedRow("read", 1000)});
  summary.rows[0].counters.push_back(
      RowCounter{.name = counter, .total = count, .self = count});
  return summary;
}

TEST(CompareCounterMeasuredTest, ACounterOneSideLacksIsNotMeasured) {
  // A version 1 baseline cannot hold counters: not "regressed from 0".
  Summary v1 = Timed({TimedRow("parse", 1000), TimedRow("read", 1000)});
  v1.schema_version = 1;
  ComparePolicy policy;
  ASSERT_TRUE(ParseMetric("counter:bytes", policy).ok());
  for (const auto& [base, cand] : {std::pair{v1, Counted("bytes", 40)},
                                   std::pair{Counted("bytes", 40), v1}}) {
    absl::StatusOr<Comparison> c = Compare(base, cand, policy);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_TRUE(c->passed);
    EXPECT_EQ(c->counts.regressed, 0u);
    EXPECT_EQ(c->counts.improved, 0u);
    EXPECT_EQ(c->counts.not_measured, 2u);
    for (const ComparisonRow& row : c->rows) {
      EXPECT_EQ(row.status, RowStatus::kNotMeasured);
    }
    EXPECT_THAT(FormatComparison(*c), HasSubstr("2 not measured"));
  }
  // Measured on both sides, a row without the counter counts 0.
  absl::StatusOr<Comparison> both =
      Compare(Counted("bytes", 40), Counted("bytes", 40), policy);
  EXPECT_EQ(both->counts.within, 2u);
  // The same over repeated runs.
  absl::StatusOr<Comparison> runs =
      CompareRuns(RunsOf({v1, v1}),
                  RunsOf({Counted("bytes", 40), Counted("bytes", 40)}), policy);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_TRUE(runs->passed);
  EXPECT_EQ(runs->counts.not_measured, 2u);
  EXPECT_EQ(MetricValue(v1.rows[0], v1, policy), std::nullopt);
  const Summary counted = Counted("bytes", 40);
  EXPECT_EQ(MetricValue(counted.rows[1], counted, policy), 0);
}

TEST(CompareWarningsTest, NamesWhatDiffers) {
  Summary base;
  base.host = "build-1";
  base.clock = "steady";
  base.process_name = "indexer";
  Summary cand = base;
  EXPECT_THAT(ComparabilityWarnings(base, cand), IsEmpty());
  cand.process_name = "tokenizer";
  EXPECT_THAT(ComparabilityWarnings(base, cand),
              ElementsAre("the program (process_name) differs: baseline "
                          "\"indexer\", candidate \"tokenizer\"; the numbers "
                          "may not be comparable"));
  cand.host = "laptop";
  cand.clock = "unknown";
  cand.source = "chrome-trace";
  const std::vector<std::string> all = ComparabilityWarnings(base, cand);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_THAT(all[0], HasSubstr("the host differs: baseline \"build-1\""));
  EXPECT_THAT(all[1], HasSubstr("the clock differs"));
  EXPECT_THAT(all[3], HasSubstr("the source differs: baseline \"spanprof\", "
                                "candidate \"chrome-trace\""));
  // An older summary without a host says nothing about it.
  cand = base;
  cand.host.clear();
  EXPECT_THAT(ComparabilityWarnings(base, cand), IsEmpty());
}

class RunDirectoryTest : public ::testing::Test {
 protected:
  // Writes a summary of the rich capture as run `name` of `process`, with
  // its own pid (distinct runs) unless `pid` says otherwise.
  void Write(const std::string& name, const std::string& process, int64_t pid) {
    Summary summary =
        Summarize(testing::RichCapture({.scale = 1000, .forward_ns = 4000}));
    summary.process_name = process;
    summary.pid = pid;
    ASSERT_TRUE(WriteSummary(summary, dir_.File("runs/" + name)).ok());
  }
  absl::Status Read() {
    std::vector<std::string> notes;
    return ReadSummaryRuns(dir_.File("runs"), &notes).status();
  }

  testing::TempDir dir_;
};

TEST_F(RunDirectoryTest, DistinctRunsOfOneProgramAreRead) {
  Write("run-1.json", "indexer", 1);
  Write("run-2.json", "indexer", 2);
  EXPECT_TRUE(Read().ok()) << Read();
}

TEST_F(RunDirectoryTest, TwoProgramsAreRefusedNamingTheFiles) {
  Write("run-1.json", "indexer", 1);
  Write("run-2.json", "tokenizer", 2);
  const absl::Status status = Read();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("the summaries are of different programs: " +
                        dir_.File("runs/run-1.json") + " of \"indexer\", " +
                        dir_.File("runs/run-2.json") + " of \"tokenizer\""));
}

TEST_F(RunDirectoryTest, OneCaptureTwiceIsRefusedNamingTheFiles) {
  Write("run-1.json", "indexer", 1);
  Write("run-2.json", "indexer", 2);
  // A copy of run 1 under another name: identical bytes.
  testing::WriteText(dir_.File("runs/run-3.json"),
                     testing::ReadText(dir_.File("runs/run-1.json")));
  absl::Status status = Read();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(status.message()),
      HasSubstr(dir_.File("runs/run-1.json") + " and " +
                dir_.File("runs/run-3.json") + " are the same capture"));
  // The same capture in two different files: same host, pid, anchor.
  std::filesystem::remove(dir_.File("runs/run-3.json"));
  Summary again = *ReadSummary(dir_.File("runs/run-2.json"));
  again.wall_clock_uncertainty_ns += 1;
  ASSERT_TRUE(WriteSummary(again, dir_.File("runs/run-4.json")).ok());
  status = Read();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(dir_.File("runs/run-2.json") + " and " +
                        dir_.File("runs/run-4.json") +
                        " are the same capture (host, pid and wall-clock "
                        "anchor)"));
}

TEST_F(RunDirectoryTest, IdenticalFilesWithoutAnAnchorAreRefused) {
  Summary summary = Summarize(testing::RichCapture({.scale = 1000}));
  summary.wall_clock_anchor_ns = 0;  // as in a summary older than version 3
  ASSERT_TRUE(WriteSummary(summary, dir_.File("runs/a.json")).ok());
  ASSERT_TRUE(WriteSummary(summary, dir_.File("runs/b.json")).ok());
  EXPECT_THAT(std::string(Read().message()), HasSubstr(" are identical files"));
}

}  // namespace
}  // namespace spanprof::analysis
