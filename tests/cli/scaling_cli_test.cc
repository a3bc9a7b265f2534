// End to end: `spanprof scaling` on real trace files — the table, the
// spanprof.scaling document read back with simdjson, the scaling gate's exit
// codes, and bad input.
#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "tests/analysis/scaling/sized_captures.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::TokenizeCapture;
using ::testing::HasSubstr;

class ScalingCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write(TokenizeCapture([](double s) { return 2.0 * s; }, 1), "base.json");
    Write(TokenizeCapture([](double s) { return 2.0 * s; }, 2), "same.json");
    Write(TokenizeCapture([](double s) { return 0.002 * s * s; }, 3),
          "slow.json");
    testing::CaptureBuilder b;
    const uint32_t main = b.Thread(1, "main");
    b.Add(1, 0, b.Site("app.run"), main, 0, 100);
    Write(b.Build(), "unsized.json");
  }

  void Write(const Capture& capture, const std::string& name) {
    ASSERT_TRUE(analysis::WriteTrace(capture, Path(name)).ok());
  }
  std::string Path(const std::string& name) const { return dir_.File(name); }

  TempDir dir_;
};

TEST_F(ScalingCliTest, PrintsTheVerdictAndWritesTheDocument) {
  const ProcessResult result =
      Spanprof({"scaling", Path("base.json"), Path("same.json"), "--json",
                Path("out/scaling.json")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("file.tokenize [phase=parse]"));
  EXPECT_THAT(result.out, HasSubstr("linear"));

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(Path("out/scaling.json")).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["schema"]), "spanprof.scaling");
  EXPECT_EQ(int64_t(doc["schema_version"]), 1);
  EXPECT_EQ(simdjson::dom::array(doc["traces"]).size(), 2u);
  simdjson::dom::array groups = doc["groups"];
  ASSERT_EQ(groups.size(), 1u);
  simdjson::dom::element group = groups.at(0);
  EXPECT_EQ(std::string_view(group["size_arg"]), "bytes");
  EXPECT_EQ(uint64_t(group["spans"]), 1200u);
  EXPECT_EQ(std::string_view(group["verdict"]), "linear");
  EXPECT_EQ(std::string_view(group["driver"]), "heartbeats");
  const double estimate = group["exponent"]["estimate"];
  EXPECT_NEAR(estimate, 1.0, 0.1);
  simdjson::dom::array buckets = group["buckets"];
  EXPECT_GE(buckets.size(), 10u);
}

TEST_F(ScalingCliTest, SuperlinearWorkIsCalledSo) {
  const ProcessResult result = Spanprof({"scaling", Path("slow.json")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("superlinear"));
  EXPECT_THAT(result.out, HasSubstr("2.0"));
}

TEST_F(ScalingCliTest, TheGateFailsWhenTheExponentRose) {
  ProcessResult result =
      Spanprof({"scaling", Path("slow.json"), "--baseline", Path("base.json")});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_THAT(result.out, HasSubstr("regressed"));
  EXPECT_THAT(result.out, HasSubstr("1 regressed"));

  result =
      Spanprof({"scaling", Path("same.json"), "--baseline", Path("base.json")});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_THAT(result.out, HasSubstr("0 regressed"));

  // A margin above the rise lets it pass.
  result = Spanprof({"scaling", Path("slow.json"), "--baseline",
                     Path("base.json"), "--margin", "1.5"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
}

TEST_F(ScalingCliTest, PlotScalingWritesTheFigure) {
  const ProcessResult result = Spanprof(
      {"plot", "scaling", Path("slow.json"), "-o", Path("fig/scaling.svg")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string svg = testing::ReadText(Path("fig/scaling.svg"));
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("file.tokenize [phase=parse] by bytes"));

  const ProcessResult missing =
      Spanprof({"plot", "scaling", Path("slow.json"), "--size", "rows"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("'rows'"));
}

TEST_F(ScalingCliTest, ATraceWithoutSizesGetsANoteAndExitsZero) {
  const ProcessResult result = Spanprof({"scaling", Path("unsized.json")});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("no group has a numeric size argument"));
}

TEST_F(ScalingCliTest, BadInputIsExitTwoNamingTheCulprit) {
  ProcessResult result =
      Spanprof({"scaling", Path("base.json"), "--size", "rows"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("'rows'"));

  result = Spanprof({"scaling", Path("missing.json")});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("missing.json"));

  result = Spanprof({"scaling", Path("base.json"), "--margin", "abc"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--margin"));

  result = Spanprof({"scaling", Path("base.json"), "--baseline"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--baseline"));

  result = Spanprof({"scaling"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("TRACE"));
}

// A real program's shape: one whole-program span a run, one run a size, the
// size counted (SPANPROF_COUNT) rather than passed. Seven traces decide.
TEST_F(ScalingCliTest, OneRunASizeWithACounterAsTheSizeDecides) {
  std::vector<std::string> args = {"scaling"};
  const double noise[] = {1.02, 0.97, 1.01, 0.99, 1.03, 0.98, 1.0};
  for (int k = 0; k < 7; ++k) {
    const int64_t edges = int64_t{1000} << k;
    testing::CaptureBuilder b;
    const uint32_t main = b.Thread(1, "main");
    const uint32_t loop = b.Site("build.loop");
    const auto ns = static_cast<int64_t>(
        20.0 * std::pow(static_cast<double>(edges), 1.9) * noise[k]);
    b.Add(1, 0, loop, main, 0, ns);
    b.Args(1, {testing::CounterArg("edges", edges)});
    const std::string name = "run-" + std::to_string(k) + ".json";
    Write(b.Build(), name);
    args.push_back(Path(name));
  }
  args.insert(args.end(),
              {"--size", "counter:edges", "--json", Path("runs.json")});
  const ProcessResult result = Spanprof(args);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("build.loop"));
  EXPECT_THAT(result.out, HasSubstr("superlinear"));
  const std::string json = testing::ReadText(Path("runs.json"));
  EXPECT_THAT(json, HasSubstr("\"size_arg\": \"counter:edges\""));
  EXPECT_THAT(json, HasSubstr("one span per run"));

  const ProcessResult missing =
      Spanprof({"scaling", Path("run-0.json"), "--size", "counter:nodes"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("counter 'nodes'"));
}

}  // namespace
}  // namespace spanprof
