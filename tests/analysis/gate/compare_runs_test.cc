// The gate over repeated runs: verdicts from the shift's interval against the
// tolerance band, exact decisions without spread, too few runs, the
// Bonferroni share, key matching over runs, the v2 document.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Row MakeRow(const std::string& name, int64_t p95, uint64_t heartbeats = 0) {
  Row row;
  row.key = RowKey{.name = name};
  row.label = RowLabel(row.key);
  row.calls = 1;
  row.p95_ns = p95;
  row.total_heartbeats = heartbeats;
  return row;
}

// One side: run i has row `name` with p95 values[i].
SummaryRuns Side(const std::string& name, const std::vector<int64_t>& values) {
  SummaryRuns side;
  side.path = name + "-runs";
  for (int64_t v : values) {
    Summary s;
    s.rows.push_back(MakeRow(name, v));
    side.runs.push_back(s);
    side.run_paths.push_back("run");
  }
  return side;
}

const ComparisonRow& Only(const Comparison& c) {
  EXPECT_EQ(c.rows.size(), 1u);
  return c.rows.front();
}

ComparePolicy Band(int64_t absolute, int64_t bps) {
  ComparePolicy policy;
  policy.absolute_tolerance_ns = absolute;
  policy.relative_tolerance_bps = bps;
  return policy;
}

TEST(CompareRunsTest, AShiftWhoseIntervalClearsTheBandRegresses) {
  const SummaryRuns base =
      Side("step", {1000, 1010, 990, 1005, 995, 1002, 998, 1001});
  const SummaryRuns cand =
      Side("step", {1200, 1210, 1190, 1205, 1195, 1202, 1198, 1201});
  absl::StatusOr<Comparison> c = CompareRuns(base, cand, Band(0, 1000));
  ASSERT_TRUE(c.ok()) << c.status();
  const ComparisonRow& row = Only(*c);
  EXPECT_EQ(row.status, RowStatus::kRegressed);
  EXPECT_FALSE(c->passed);
  EXPECT_EQ(c->counts.regressed, 1u);
  ASSERT_TRUE(row.shift.has_value());
  EXPECT_NEAR(*row.shift, 200, 5);
  ASSERT_TRUE(row.delta_ci_low.has_value());
  EXPECT_GT(*row.delta_ci_low, 100);  // above the 10% band
  EXPECT_EQ(row.runs_baseline, 8u);
  EXPECT_EQ(row.runs_candidate, 8u);
  EXPECT_EQ(row.base, 1001);  // the median over runs
  ASSERT_TRUE(row.p_value.has_value());
  EXPECT_LT(*row.p_value, 0.001);
  // The mirror image improves.
  absl::StatusOr<Comparison> back = CompareRuns(cand, base, Band(0, 1000));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(Only(*back).status, RowStatus::kImproved);
  EXPECT_TRUE(back->passed);
}

TEST(CompareRunsTest, AShiftInsideTheBandIsSameAndAStraddleIsUnknown) {
  const SummaryRuns base =
      Side("step", {1000, 1010, 990, 1005, 995, 1002, 998, 1001});
  const SummaryRuns cand =
      Side("step", {1030, 1040, 1020, 1035, 1025, 1032, 1028, 1031});
  // +3% against a 10% band: the whole interval is inside.
  absl::StatusOr<Comparison> wide = CompareRuns(base, cand, Band(0, 1000));
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(Only(*wide).status, RowStatus::kSame);
  EXPECT_EQ(wide->counts.same, 1u);
  // Against a 2.5% band the interval reaches both sides of the edge.
  absl::StatusOr<Comparison> edge = CompareRuns(base, cand, Band(0, 250));
  ASSERT_TRUE(edge.ok());
  const ComparisonRow& row = Only(*edge);
  EXPECT_EQ(row.status, RowStatus::kUnknown);
  EXPECT_THAT(row.reason, HasSubstr("straddles"));
  EXPECT_THAT(row.reason, HasSubstr("runs per side"));
  EXPECT_TRUE(edge->passed);  // unknown does not fail by default
  ComparePolicy strict = Band(0, 250);
  strict.fail_on_unknown = true;
  absl::StatusOr<Comparison> failing = CompareRuns(base, cand, strict);
  ASSERT_TRUE(failing.ok());
  EXPECT_FALSE(failing->passed);
}

TEST(CompareRunsTest, TwoRunsASideDecideNothingEvenForALargeShift) {
  absl::StatusOr<Comparison> c = CompareRuns(
      Side("step", {1000, 1010}), Side("step", {2000, 2010}), Band(0, 1000));
  ASSERT_TRUE(c.ok());
  const ComparisonRow& row = Only(*c);
  EXPECT_EQ(row.status, RowStatus::kUnknown);
  EXPECT_FALSE(row.delta_ci_low.has_value());
  EXPECT_THAT(row.reason, HasSubstr("nothing can be decided"));
  EXPECT_THAT(row.reason, HasSubstr("at least 3 runs per side"));
  EXPECT_TRUE(c->passed);
}

TEST(CompareRunsTest, ThreeRunsASideDecideA38xChange) {
  const SummaryRuns slow = Side("step", {38'000'000, 39'500'000, 37'200'000});
  const SummaryRuns fast = Side("step", {1'000'000, 1'040'000, 985'000});
  absl::StatusOr<Comparison> c = CompareRuns(slow, fast, Band(0, 500));
  ASSERT_TRUE(c.ok()) << c.status();
  const ComparisonRow& row = Only(*c);
  EXPECT_EQ(row.status, RowStatus::kImproved) << row.reason;
  ASSERT_TRUE(row.delta_ci_high.has_value());
  EXPECT_LT(*row.delta_ci_high, -30'000'000);
  EXPECT_TRUE(c->passed);
  EXPECT_THAT(FormatComparison(*c), HasSubstr("Welch's t on log values"));
  absl::StatusOr<Comparison> back = CompareRuns(fast, slow, Band(0, 500));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(Only(*back).status, RowStatus::kRegressed);
  EXPECT_FALSE(back->passed);
}

TEST(CompareRunsTest, ThreeRunsASideOfOneProgramNeverRegressNorImprove) {
  // Log-normal runs with a 10% spread, split 3 and 3 two hundred times, at
  // the default band of directories: never a verdict that claims a change.
  std::mt19937_64 rng(29);
  std::lognormal_distribution<double> noise(0, 0.1);
  ComparePolicy policy;
  policy.relative_tolerance_bps = kRunsDefaultRelativeToleranceBps;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int64_t> a;
    std::vector<int64_t> b;
    for (int i = 0; i < 3; ++i) {
      a.push_back(static_cast<int64_t>(1e6 * noise(rng)));
      b.push_back(static_cast<int64_t>(1e6 * noise(rng)));
    }
    absl::StatusOr<Comparison> c =
        CompareRuns(Side("step", a), Side("step", b), policy);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_NE(Only(*c).status, RowStatus::kRegressed) << "trial " << trial;
    EXPECT_NE(Only(*c).status, RowStatus::kImproved) << "trial " << trial;
  }
}

TEST(CompareRunsTest, OneRunASideOfADeterministicMetricDecidesExactly) {
  ComparePolicy policy;
  policy.metric = CompareMetric::kTotalHeartbeats;
  SummaryRuns base;
  SummaryRuns cand;
  for (int i = 0; i < 3; ++i) {
    Summary b;
    b.rows.push_back(MakeRow("loop", 100 + i, 5000));
    base.runs.push_back(b);
    Summary c;
    c.rows.push_back(MakeRow("loop", 100 + i, 5001));
    cand.runs.push_back(c);
  }
  absl::StatusOr<Comparison> c = CompareRuns(base, cand, policy);
  ASSERT_TRUE(c.ok());
  const ComparisonRow& row = Only(*c);
  EXPECT_EQ(row.status, RowStatus::kRegressed);  // +1 beyond a zero band
  EXPECT_EQ(row.delta, 1);
  EXPECT_FALSE(row.p_value.has_value());
  EXPECT_THAT(row.reason, HasSubstr("no spread"));
  policy.absolute_tolerance_ns = 1;
  absl::StatusOr<Comparison> within = CompareRuns(base, cand, policy);
  ASSERT_TRUE(within.ok());
  EXPECT_EQ(Only(*within).status, RowStatus::kSame);
}

// An A/A table of `rows` rows over 10 runs a side: whether any row was
// decided regressed or improved with a zero band.
bool AnyFalseVerdict(std::mt19937_64& rng, int rows, double* row_confidence) {
  std::normal_distribution<double> noise(1e6, 2e4);
  SummaryRuns base;
  SummaryRuns cand;
  for (int run = 0; run < 10; ++run) {
    Summary b;
    Summary c;
    for (int k = 0; k < rows; ++k) {
      const std::string name = "row" + std::to_string(k);
      b.rows.push_back(MakeRow(name, std::llround(noise(rng))));
      c.rows.push_back(MakeRow(name, std::llround(noise(rng))));
    }
    base.runs.push_back(b);
    cand.runs.push_back(c);
  }
  absl::StatusOr<Comparison> c = CompareRuns(base, cand, Band(0, 0));
  EXPECT_TRUE(c.ok());
  *row_confidence = c->row_confidence;
  return c->counts.regressed + c->counts.improved > 0;
}

TEST(CompareRunsTest, ManyRowsShareTheConfidence) {
  // 200 A/A tables of 10 rows: at 95% over the table, about 5% of tables
  // may show any false verdict; without the shared confidence (each row at
  // 95%) it would be about 40%.
  std::mt19937_64 rng(7);
  int tables_with_false_verdicts = 0;
  double row_confidence = 0;
  for (int table = 0; table < 200; ++table) {
    tables_with_false_verdicts += AnyFalseVerdict(rng, 10, &row_confidence);
  }
  EXPECT_NEAR(row_confidence, 0.995, 1e-12);
  EXPECT_LE(tables_with_false_verdicts, 20);  // 10% of tables, 2x the rate
}

TEST(CompareRunsTest, AnAOverManySplitsNeverRegressesAtTheDefaultBand) {
  // Twenty runs of one noisy program (log-normal, heavy-ish tails), split
  // twenty ways into ten against ten: the 5% default band never fails.
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> noise(std::log(1e6), 0.08);
  std::vector<Summary> runs;
  for (int run = 0; run < 20; ++run) {
    Summary s;
    for (int k = 0; k < 8; ++k) {
      s.rows.push_back(
          MakeRow("row" + std::to_string(k), std::llround(noise(rng))));
    }
    runs.push_back(s);
  }
  ComparePolicy policy = Band(0, kRunsDefaultRelativeToleranceBps);
  for (int split = 0; split < 20; ++split) {
    std::vector<Summary> shuffled = runs;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    SummaryRuns base;
    SummaryRuns cand;
    base.runs.assign(shuffled.begin(), shuffled.begin() + 10);
    cand.runs.assign(shuffled.begin() + 10, shuffled.end());
    absl::StatusOr<Comparison> c = CompareRuns(base, cand, policy);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->counts.regressed, 0u) << "split " << split;
    EXPECT_TRUE(c->passed);
  }
}

TEST(CompareRunsTest, KeysOfOneSideAreNewOrMissingAndCountedOverRuns) {
  SummaryRuns base = Side("kept", {10, 11, 12, 13});
  SummaryRuns cand = Side("kept", {10, 11, 12, 13});
  base.runs[2].rows.push_back(MakeRow("gone", 5));  // in one run only
  cand.runs[0].rows.push_back(MakeRow("fresh", 5));
  absl::StatusOr<Comparison> c = CompareRuns(base, cand, Band(0, 1000));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->counts.new_keys, 1u);
  EXPECT_EQ(c->counts.missing, 1u);
  for (const ComparisonRow& row : c->rows) {
    if (row.key.name == "gone") {
      EXPECT_EQ(row.status, RowStatus::kMissing);
      EXPECT_EQ(row.runs_baseline, 1u);
    }
  }
}

TEST(CompareRunsTest, RefusesAnEmptySideAndABadConfidence) {
  SummaryRuns empty;
  empty.path = "nowhere";
  absl::StatusOr<Comparison> c =
      CompareRuns(empty, Side("a", {1, 2}), ComparePolicy{});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("nowhere"));
  ComparePolicy policy;
  policy.confidence = 1.0;
  c = CompareRuns(Side("a", {1, 2}), Side("a", {1, 2}), policy);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("confidence"));
}

TEST(CompareRunsTest, TheDocumentIsVersionTwoWithTheRunFields) {
  absl::StatusOr<Comparison> c =
      CompareRuns(Side("step", {1000, 1010, 990, 1005, 995}),
                  Side("step", {1200, 1210, 1190, 1205, 1195}), Band(0, 1000));
  ASSERT_TRUE(c.ok());
  const std::string json = ComparisonToJson(*c);
  EXPECT_THAT(json, HasSubstr("\"schema_version\": 2"));
  for (const char* field :
       {"\"runs_baseline\":5", "\"runs_candidate\":5", "\"delta_ci_low\":",
        "\"delta_ci_high\":", "\"p_value\":", "\"verdict\":\"regressed\"",
        "\"unknown\": 0", "\"row_confidence\":"}) {
    EXPECT_THAT(json, HasSubstr(field)) << field;
  }
  const std::string table = FormatComparison(*c);
  EXPECT_THAT(table, HasSubstr("Repeated runs: 5 baseline, 5 candidate"));
  EXPECT_THAT(table, HasSubstr("5/5"));
}

TEST(CompareRunsTest, ReadsTheSummariesOfADirectoryAndSkipsOtherFiles) {
  testing::TempDir dir;
  // Two runs: two processes of one program.
  Summary s = Summarize(testing::RichCapture());
  s.pid = 2;
  ASSERT_TRUE(WriteSummary(s, dir.File("runs/run-2.json")).ok());
  s.pid = 1;
  ASSERT_TRUE(WriteSummary(s, dir.File("runs/run-1.json")).ok());
  ASSERT_TRUE(
      WriteFileAtomically(dir.File("runs/trace.json"), "{\"traceEvents\":[]}")
          .ok());
  ASSERT_TRUE(WriteFileAtomically(dir.File("runs/notes.txt"), "hi").ok());
  std::vector<std::string> notes;
  absl::StatusOr<SummaryRuns> runs = ReadSummaryRuns(dir.File("runs"), &notes);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->runs.size(), 2u);
  EXPECT_THAT(runs->run_paths[0], HasSubstr("run-1.json"));
  EXPECT_EQ(notes.size(), 2u);
  // A broken summary is an error naming it; an empty directory too.
  ASSERT_TRUE(WriteFileAtomically(dir.File("runs/run-3.json"),
                                  "{\"schema\":\"spanprof.summary\"}")
                  .ok());
  runs = ReadSummaryRuns(dir.File("runs"), &notes);
  ASSERT_FALSE(runs.ok());
  EXPECT_THAT(runs.status().message(), HasSubstr("run-3.json"));
  std::filesystem::create_directories(dir.File("empty"));
  runs = ReadSummaryRuns(dir.File("empty"), &notes);
  ASSERT_FALSE(runs.ok());
  EXPECT_THAT(runs.status().message(), HasSubstr("no spanprof summary"));
}

}  // namespace
}  // namespace spanprof::analysis

namespace spanprof::analysis {
namespace {

TEST(CompareShareTest, AFailingGateNamesTheRowsWhoseShareMovedMost) {
  // The forward phase: 4 ms against 10 ms of each run.
  const Summary base =
      Summarize(testing::RichCapture({.scale = 1000, .forward_ns = 4000}));
  const Summary cand =
      Summarize(testing::RichCapture({.scale = 1000, .forward_ns = 10000}));
  ComparePolicy policy;
  policy.metric = CompareMetric::kP95Ns;
  absl::StatusOr<Comparison> c = Compare(base, cand, policy);
  ASSERT_TRUE(c.ok());
  ASSERT_FALSE(c->passed);
  const std::string table = FormatComparison(*c);
  const size_t moves = table.find("Largest moves in share");
  ASSERT_NE(moves, std::string::npos) << table;
  EXPECT_LT(moves, table.find("FAIL ("));
  EXPECT_THAT(table.substr(moves), HasSubstr("model.forward"));
  // A passing gate prints no such list.
  absl::StatusOr<Comparison> same = Compare(base, base, policy);
  ASSERT_TRUE(same.ok());
  EXPECT_THAT(FormatComparison(*same), Not(HasSubstr("Largest moves")));
}

}  // namespace
}  // namespace spanprof::analysis

namespace spanprof::analysis {
namespace {

TEST(CompareRunsPlotTest, TheFigureDrawsTheIntervalsWhenItHasThem) {
  absl::StatusOr<Comparison> runs =
      CompareRuns(Side("step", {1000, 1010, 990, 1005, 995}),
                  Side("step", {1200, 1210, 1190, 1205, 1195}), Band(0, 1000));
  ASSERT_TRUE(runs.ok());
  const std::string figure = PlotCompare(*runs);
  EXPECT_THAT(figure, HasSubstr("class=\"interval\""));
  EXPECT_THAT(figure, HasSubstr("interval puts the candidate at"));
  EXPECT_THAT(figure, HasSubstr("5 vs 5 runs; 1 regressed"));
  // One run a side: no interval to draw.
  Summary one;
  one.rows.push_back(MakeRow("step", 1000));
  absl::StatusOr<Comparison> single = Compare(one, one, ComparePolicy{});
  ASSERT_TRUE(single.ok());
  EXPECT_THAT(PlotCompare(*single), Not(HasSubstr("class=\"interval\"")));
}

}  // namespace
}  // namespace spanprof::analysis
