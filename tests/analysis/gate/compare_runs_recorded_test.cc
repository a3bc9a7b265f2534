// The gate over repeated runs on real recorded runs (tests/data/README.md):
// an A/A set split twenty ways never regresses at the default settings,
// where the one-run gate raises false alarms on the same runs; the slow
// parse is found with ten runs a side.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis {
namespace {

std::string Data(const std::string& name) {
  return std::string(SPANPROF_TEST_SOURCE_DIR) + "/tests/data/" + name;
}

SummaryRuns Read(const std::string& name) {
  std::vector<std::string> notes;
  absl::StatusOr<SummaryRuns> runs = ReadSummaryRuns(Data(name), &notes);
  EXPECT_TRUE(runs.ok()) << runs.status();
  return runs.ok() ? *runs : SummaryRuns{};
}

// The repeated-runs defaults of `spanprof compare DIR DIR`.
ComparePolicy RunsDefaults() {
  ComparePolicy policy;
  policy.relative_tolerance_bps = kRunsDefaultRelativeToleranceBps;
  return policy;
}

TEST(CompareRunsRecordedTest, TwentySplitsOfAnAASetNeverRegress) {
  const SummaryRuns all = Read("aa-indexer");
  ASSERT_EQ(all.runs.size(), 20u);
  std::mt19937_64 rng(2026);
  for (int split = 0; split < 20; ++split) {
    std::vector<size_t> order(all.runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    SummaryRuns base;
    SummaryRuns cand;
    for (size_t i = 0; i < order.size(); ++i) {
      (i < 10 ? base : cand).runs.push_back(all.runs[order[i]]);
    }
    absl::StatusOr<Comparison> c = CompareRuns(base, cand, RunsDefaults());
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->counts.regressed, 0u) << "split " << split;
    EXPECT_TRUE(c->passed) << "split " << split;
  }
}

TEST(CompareRunsRecordedTest, TheOneRunGateFalseAlarmsOnTheSameRuns) {
  // The guide's one-run gate (p95, 0.5 ms and 10%) on consecutive pairs of
  // the A/A runs: docs/guide.md chapter 5 quotes this count.
  const SummaryRuns all = Read("aa-indexer");
  ASSERT_EQ(all.runs.size(), 20u);
  const ComparePolicy policy{.metric = CompareMetric::kP95Ns,
                             .absolute_tolerance_ns = 500'000,
                             .relative_tolerance_bps = 1000};
  int false_alarms = 0;
  for (size_t i = 0; i + 1 < all.runs.size(); ++i) {
    absl::StatusOr<Comparison> c =
        Compare(all.runs[i], all.runs[i + 1], policy);
    ASSERT_TRUE(c.ok()) << c.status();
    false_alarms += c->passed ? 0 : 1;
  }
  EXPECT_EQ(false_alarms, 7);
}

TEST(CompareRunsRecordedTest, TenRunsASideFindTheSlowParse) {
  absl::StatusOr<Comparison> c = CompareRuns(
      Read("ab-slow-parse/base"), Read("ab-slow-parse/cand"), RunsDefaults());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->passed);
  bool tokenize = false;
  for (const ComparisonRow& row : c->rows) {
    if (row.key.name == "file.tokenize") {
      tokenize = row.status == RowStatus::kRegressed;
    }
  }
  EXPECT_TRUE(tokenize);
}

TEST(CompareRunsRecordedTest, ThreeRunsASideOfTheAASetNeverRegress) {
  // Under 6 runs a side Welch's t on log values decides: on real runs of
  // one binary it must not call a change either way.
  const SummaryRuns all = Read("aa-indexer");
  ASSERT_EQ(all.runs.size(), 20u);
  std::mt19937_64 rng(3);
  for (int split = 0; split < 40; ++split) {
    std::vector<size_t> order(all.runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    SummaryRuns base;
    SummaryRuns cand;
    for (size_t i = 0; i < 6; ++i) {
      (i < 3 ? base : cand).runs.push_back(all.runs[order[i]]);
    }
    absl::StatusOr<Comparison> c = CompareRuns(base, cand, RunsDefaults());
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->counts.regressed, 0u) << "split " << split;
    EXPECT_EQ(c->counts.improved, 0u) << "split " << split;
  }
}

TEST(CompareRunsRecordedTest, ThreeRunsASideFindTheSlowParse) {
  SummaryRuns base = Read("ab-slow-parse/base");
  SummaryRuns cand = Read("ab-slow-parse/cand");
  base.runs.resize(3);
  cand.runs.resize(3);
  absl::StatusOr<Comparison> c = CompareRuns(base, cand, RunsDefaults());
  ASSERT_TRUE(c.ok()) << c.status();
  bool tokenize = false;
  for (const ComparisonRow& row : c->rows) {
    if (row.key.name == "file.tokenize") {
      tokenize = row.status == RowStatus::kRegressed;
    }
  }
  EXPECT_TRUE(tokenize);
  EXPECT_FALSE(c->passed);
}

}  // namespace
}  // namespace spanprof::analysis
