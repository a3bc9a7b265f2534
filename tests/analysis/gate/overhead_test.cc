// The users' overhead gate over hand-written Google Benchmark JSON files
// (tests/data/overhead/): pairing by name with the decorations, medians over
// repetitions, the median aggregate when there are no repetitions, time
// units, the ratio against --max-ratio, and every bad input's message.
#include "spanprof/analysis/overhead.h"

#include <string>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"

namespace spanprof::analysis {
namespace {

using ::testing::HasSubstr;

std::string DataPath(const std::string& name) {
  return SPANPROF_TEST_SOURCE_DIR "/tests/data/overhead/" + name;
}

absl::StatusOr<OverheadReport> Gate(const std::string& name,
                                    OverheadOptions options = {}) {
  return ReadOverhead(DataPath(name), options);
}

TEST(OverheadTest, PairsOnWithOffAndTakesTheMedianOfTheRepetitions) {
  absl::StatusOr<OverheadReport> report = Gate("repetitions.json");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->pairs.size(), 2u);
  const OverheadPair& parse = report->pairs[0];
  EXPECT_EQ(parse.name, "BM_Parse/64");
  EXPECT_EQ(parse.off.run_name, "BM_Parse/spanprof:off/64");
  EXPECT_EQ(parse.on.run_name, "BM_Parse/spanprof:on/64");
  EXPECT_EQ(parse.off.repetitions, 3);
  EXPECT_EQ(parse.on.repetitions, 3);
  // The median of the repetitions, not the file's (here wrong) median
  // aggregate: off 90/100/110, on 103/104/120.
  EXPECT_DOUBLE_EQ(parse.off.median_ns, 100);
  EXPECT_DOUBLE_EQ(parse.on.median_ns, 104);
  EXPECT_DOUBLE_EQ(parse.ratio, 1.04);
  EXPECT_TRUE(parse.passed);
  ASSERT_TRUE(parse.spans_per_iteration.has_value());
  EXPECT_DOUBLE_EQ(*parse.spans_per_iteration, 64);
}

TEST(OverheadTest, ConvertsTimeUnitsAndTakesTheMiddleTwoOfAnEvenCount) {
  absl::StatusOr<OverheadReport> report = Gate("repetitions.json");
  ASSERT_TRUE(report.ok()) << report.status();
  const OverheadPair& scan = report->pairs[1];
  EXPECT_EQ(scan.name, "BM_Scan/4096");
  EXPECT_EQ(scan.off.repetitions, 4);
  EXPECT_DOUBLE_EQ(scan.off.median_ns, 2000);  // 1.8 2.0 2.0 2.2 us
  EXPECT_DOUBLE_EQ(scan.on.median_ns, 2500);   // 2.4 2.5 2.5 2.6 us
  EXPECT_DOUBLE_EQ(scan.ratio, 1.25);
  EXPECT_FALSE(scan.passed);
  EXPECT_FALSE(report->passed());
  // BM_Baseline's four repetitions are not a pair.
  EXPECT_EQ(report->unpaired_runs, 4);
}

TEST(OverheadTest, MaxRatioDecides) {
  absl::StatusOr<OverheadReport> strict =
      Gate("repetitions.json", {.max_ratio = 1.03});
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_FALSE(strict->pairs[0].passed);
  absl::StatusOr<OverheadReport> loose =
      Gate("repetitions.json", {.max_ratio = 1.25});
  ASSERT_TRUE(loose.ok()) << loose.status();
  EXPECT_TRUE(loose->pairs[1].passed);  // equal to the bound passes
  EXPECT_TRUE(loose->passed());
}

TEST(OverheadTest, RealTimeMetricReadsRealTime) {
  absl::StatusOr<OverheadReport> report =
      Gate("repetitions.json", {.metric = OverheadMetric::kRealTime});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_DOUBLE_EQ(report->pairs[0].off.median_ns, 200);
  EXPECT_DOUBLE_EQ(report->pairs[0].on.median_ns, 240);
  EXPECT_DOUBLE_EQ(report->pairs[0].ratio, 1.2);
  EXPECT_FALSE(report->pairs[0].passed);
}

TEST(OverheadTest, UsesTheMedianAggregateWhenThereAreNoRepetitions) {
  absl::StatusOr<OverheadReport> report = Gate("aggregates_only.json");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->pairs.size(), 1u);
  const OverheadPair& load = report->pairs[0];
  EXPECT_EQ(load.name, "BM_Load");
  EXPECT_EQ(load.off.repetitions, 0);  // the aggregate stood in
  EXPECT_DOUBLE_EQ(load.off.median_ns, 2e6);
  EXPECT_DOUBLE_EQ(load.on.median_ns, 2.1e6);
  EXPECT_TRUE(load.passed);  // 1.05, the default bound, passes
  ASSERT_TRUE(load.spans_per_iteration.has_value());
  EXPECT_DOUBLE_EQ(*load.spans_per_iteration, 3);
}

TEST(OverheadTest, PairsSurviveGoogleBenchmarkDecorations) {
  absl::StatusOr<OverheadReport> report = Gate("decorated.json");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->pairs.size(), 2u);
  EXPECT_EQ(report->pairs[0].name,
            "BM_Mix/8/iterations:100/repeats:2/threads:1/real_time");
  EXPECT_EQ(report->pairs[1].name,
            "BM_Mix/8/iterations:100/repeats:2/threads:2/real_time");
  EXPECT_DOUBLE_EQ(report->pairs[0].ratio, 1.5);
  EXPECT_DOUBLE_EQ(report->pairs[1].off.median_ns, 3000);  // 2 and 4 us
  EXPECT_DOUBLE_EQ(report->pairs[1].ratio, 1.0);
  EXPECT_FALSE(report->pairs[1].spans_per_iteration.has_value());
}

TEST(OverheadTest, TheJsonDocumentCarriesEveryPair) {
  absl::StatusOr<OverheadReport> report = Gate("repetitions.json");
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string json = OverheadToJson(*report);
  EXPECT_THAT(json, HasSubstr("\"schema\": \"spanprof.overhead\""));
  EXPECT_THAT(json, HasSubstr("\"passed\": false"));
  EXPECT_THAT(json, HasSubstr("\"name\": \"BM_Scan/4096\""));
  EXPECT_THAT(json, HasSubstr("\"ratio\": 1.25"));
  const std::string table = OverheadTable(*report);
  EXPECT_THAT(table, HasSubstr("BM_Parse/64"));
  EXPECT_THAT(table, HasSubstr("FAIL: 1 of 2 pairs above on/off 1.050"));
}

struct BadInput {
  std::string file;
  std::string message;
};

class OverheadBadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(OverheadBadInputTest, IsAnErrorNamingTheFileAndThePath) {
  absl::StatusOr<OverheadReport> report = Gate(GetParam().file);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr(DataPath(GetParam().file)));
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Files, OverheadBadInputTest,
    ::testing::Values(
        BadInput{"not_json.json", "$: "},
        BadInput{"no_benchmarks.json", "$: missing field \"benchmarks\""},
        BadInput{"no_pairs.json",
                 "$.benchmarks: no run named NAME/spanprof:on"},
        BadInput{"missing_side.json",
                 "$.benchmarks[0]: run \"BM_Parse/spanprof:on/64\" has no "
                 "\"spanprof:off\" counterpart"},
        BadInput{"wrong_type.json",
                 "$.benchmarks[1].cpu_time: expected a finite number, got "
                 "\"12\""},
        BadInput{"bad_unit.json",
                 "$.benchmarks[1].time_unit: expected \"ns\", \"us\", \"ms\" "
                 "or \"s\", got \"ps\""},
        BadInput{"failed.json",
                 "$.benchmarks[1]: benchmark \"BM_Parse/spanprof:on\" failed: "
                 "spanprof: cannot start"}));

TEST(OverheadTest, RejectsUnknownTopLevelFieldsAndNonNumericCounters) {
  absl::StatusOr<OverheadReport> report =
      AnalyzeOverhead(R"({"benchmarks": [], "extra": 1})", "x.json", {});
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("x.json: $: unknown field \"extra\""));
  report = AnalyzeOverhead(
      R"({"benchmarks": [{"name": "a/spanprof:on", "run_name": "a/spanprof:on",
          "run_type": "iteration", "real_time": 1, "cpu_time": 1,
          "time_unit": "ns", "counter": "x"}]})",
      "x.json", {});
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("$.benchmarks[0].counter: expected a finite number"));
}

TEST(OverheadTest, RejectsAMaxRatioThatIsNotPositive) {
  for (const double bad : {0.0, -1.0}) {
    absl::StatusOr<OverheadReport> report =
        Gate("repetitions.json", {.max_ratio = bad});
    ASSERT_FALSE(report.ok());
    EXPECT_THAT(std::string(report.status().message()), HasSubstr("max_ratio"));
  }
}

TEST(OverheadTest, ParsesMetricNames) {
  EXPECT_EQ(*ParseOverheadMetric("cpu_time"), OverheadMetric::kCpuTime);
  EXPECT_EQ(*ParseOverheadMetric("real_time"), OverheadMetric::kRealTime);
  EXPECT_FALSE(ParseOverheadMetric("wall").ok());
  EXPECT_EQ(OverheadMetricName(OverheadMetric::kRealTime), "real_time");
}

}  // namespace
}  // namespace spanprof::analysis
