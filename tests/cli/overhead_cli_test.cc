// End to end: the real `spanprof overhead` on hand-written Google Benchmark
// JSON files (tests/data/overhead/): exit codes 0/1/2, the table, the
// messages, and the --json document read back with simdjson.
#include <simdjson.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Data(const std::string& name) {
  return SPANPROF_TEST_SOURCE_DIR "/tests/data/overhead/" + name;
}

TEST(OverheadCliTest, PassesWhenEveryPairIsWithinTheRatio) {
  ProcessResult r = Spanprof({"overhead", Data("aggregates_only.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("BM_Load"));
  EXPECT_THAT(r.out, HasSubstr("1.050"));
  EXPECT_THAT(r.out, HasSubstr("overhead gate: PASS: 1 of 1 pairs"));
  EXPECT_THAT(r.err, IsEmpty());
}

TEST(OverheadCliTest, FailsWhenAPairExceedsTheRatio) {
  ProcessResult r = Spanprof({"overhead", Data("repetitions.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("BM_Scan/4096"));
  EXPECT_THAT(r.out, HasSubstr("1.250"));
  EXPECT_THAT(r.out, HasSubstr("FAIL: 1 of 2 pairs above on/off 1.050"));
  EXPECT_THAT(r.out, HasSubstr("4 runs without a spanprof:on/off variant"));
  r = Spanprof({"overhead", Data("repetitions.json"), "--max-ratio", "1.3"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Spanprof({"overhead", Data("repetitions.json"), "--max-ratio=1.3",
                "--metric", "real_time"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // real: 1.2 and 1.25
  EXPECT_THAT(r.out, HasSubstr("real_time per iteration"));
}

TEST(OverheadCliTest, WritesTheJsonDocumentEvenWhenTheGateFails) {
  TempDir dir;
  const std::string out = dir.File("out/overhead.json");
  ProcessResult r =
      Spanprof({"overhead", Data("repetitions.json"), "--json", out});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(out).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["schema"]), "spanprof.overhead");
  EXPECT_EQ(int64_t(doc["schema_version"]), 1);
  EXPECT_FALSE(bool(doc["passed"]));
  simdjson::dom::array pairs = doc["pairs"];
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(std::string_view(pairs.at(1)["name"]), "BM_Scan/4096");
  EXPECT_DOUBLE_EQ(double(pairs.at(1)["ratio"]), 1.25);
  EXPECT_DOUBLE_EQ(double(pairs.at(0)["spans_per_iteration"]), 64.0);
}

struct BadCase {
  std::vector<std::string> args;
  std::string message;
};

class OverheadCliBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(OverheadCliBadInputTest, ExitsTwoWithAMessage) {
  std::vector<std::string> args = {"overhead"};
  for (const std::string& arg : GetParam().args) {
    args.push_back(arg.starts_with("@") ? Data(arg.substr(1)) : arg);
  }
  ProcessResult r = Spanprof(args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("spanprof overhead: "));
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OverheadCliBadInputTest,
    ::testing::Values(
        BadCase{{"@not_json.json"}, "not_json.json: $: malformed JSON"},
        BadCase{{"@no_benchmarks.json"}, "$: missing field \"benchmarks\""},
        BadCase{{"@no_pairs.json"}, "nothing to gate"},
        BadCase{{"@missing_side.json"},
                "missing_side.json: $.benchmarks[0]: run "
                "\"BM_Parse/spanprof:on/64\" has no \"spanprof:off\""},
        BadCase{{"@wrong_type.json"}, "$.benchmarks[1].cpu_time: expected"},
        BadCase{{"@failed.json"}, "failed: spanprof: cannot start"},
        BadCase{{"/nonexistent/bench.json"}, "/nonexistent/bench.json"},
        BadCase{{"@repetitions.json", "--max-ratio", "0"},
                "--max-ratio: expected a number > 0"},
        BadCase{{"@repetitions.json", "--max-ratio", "fast"},
                "--max-ratio: expected a number > 0"},
        BadCase{{"@repetitions.json", "--max-ratio", "nan"},
                "--max-ratio: expected a number > 0"},
        BadCase{{"@repetitions.json", "--metric", "wall"},
                "--metric: expected cpu_time or real_time"},
        BadCase{{"@repetitions.json", "--bogus"}, "--bogus"},
        BadCase{{}, "missing argument BENCH.json"},
        BadCase{{"@repetitions.json", "@decorated.json"},
                "unexpected argument"}));

TEST(OverheadCliTest, HelpDescribesTheGate) {
  ProcessResult r = Spanprof({"overhead", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--benchmark_enable_random_interleaving"));
  EXPECT_THAT(r.out, HasSubstr("default 1.05"));
  r = Spanprof({"--help"});
  EXPECT_THAT(r.out, HasSubstr("overhead"));
}

}  // namespace
}  // namespace spanprof
