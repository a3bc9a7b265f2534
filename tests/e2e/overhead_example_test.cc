// The real overhead_example (Google Benchmark with SPANPROF_BENCHMARK) and
// the real `spanprof overhead` on its JSON output. No timing assertion: the
// gate runs with a ratio no real run can exceed; what is checked is that
// both variants of each benchmark ran, paired, and reported their spans.
#include <simdjson.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::RunProcess;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;

TEST(OverheadExampleTest, BothVariantsRunAndTheGatePairsThem) {
#ifndef SPANPROF_TEST_HAVE_OVERHEAD_EXAMPLE
  GTEST_SKIP() << "overhead_example is built only with Google Benchmark";
#endif
  TempDir dir;
  const std::string bench_json = dir.File("bench.json");
  ProcessResult run = RunProcess(
      {SPANPROF_TEST_BIN_DIR "/overhead_example", "--benchmark_repetitions=2",
       "--benchmark_min_time=0.01",
       "--benchmark_enable_random_interleaving=true",
       "--benchmark_out=" + bench_json, "--benchmark_out_format=json"},
      {{"SPANPROF", "\x01unset"}});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

  // Every variant of every benchmark is in the file, the "on" repetitions
  // with their spans per iteration: 256 records, or one span per batch.
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(bench_json).get(doc), simdjson::SUCCESS);
  std::set<std::string> runs;
  for (simdjson::dom::element entry : doc["benchmarks"].get_array()) {
    const std::string run_name{std::string_view(entry["run_name"])};
    runs.insert(run_name);
    if (run_name.find("spanprof:on") == std::string::npos ||
        std::string_view(entry["run_type"]) != "iteration") {
      continue;
    }
    const double spans = entry["spanprof_spans_per_iteration"];
    EXPECT_DOUBLE_EQ(spans,
                     run_name.starts_with("BM_ParsePerRecord") ? 256.0 : 1.0)
        << run_name;
  }
  EXPECT_EQ(runs, (std::set<std::string>{"BM_ParsePerRecord/spanprof:off/256",
                                         "BM_ParsePerRecord/spanprof:on/256",
                                         "BM_ParsePerBatch/spanprof:off/256",
                                         "BM_ParsePerBatch/spanprof:on/256"}));

  ProcessResult gate =
      RunProcess({SPANPROF_TEST_BIN_DIR "/spanprof", "overhead", bench_json,
                  "--max-ratio", "1000"});
  EXPECT_EQ(gate.exit_code, 0) << gate.out << gate.err;
  EXPECT_THAT(gate.out, HasSubstr("BM_ParsePerRecord/256"));
  EXPECT_THAT(gate.out, HasSubstr("BM_ParsePerBatch/256"));
  EXPECT_THAT(gate.out, HasSubstr("PASS: 2 of 2 pairs"));
}

}  // namespace
}  // namespace spanprof
