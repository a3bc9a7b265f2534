// `ParseCompareArgs()`: the whole command line of the regression gate,
// without touching files.
#include "spanprof/cli/compare_args.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/compare.h"

namespace spanprof::cli {
namespace {

using ::spanprof::analysis::CompareMetric;
using ::testing::HasSubstr;

std::string Error(const std::vector<std::string>& args) {
  absl::StatusOr<CompareArgs> parsed = ParseCompareArgs(args);
  EXPECT_FALSE(parsed.ok()) << "accepted";
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

TEST(CompareArgsTest, Defaults) {
  absl::StatusOr<CompareArgs> args = ParseCompareArgs({"b.json", "c.json"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_FALSE(args->help);
  EXPECT_EQ(args->base_path, "b.json");
  EXPECT_EQ(args->candidate_path, "c.json");
  EXPECT_EQ(args->json_path, "");
  EXPECT_EQ(args->policy, analysis::ComparePolicy{});
  EXPECT_EQ(args->policy.metric, CompareMetric::kP95Ns);
}

TEST(CompareArgsTest, EveryFlagInBothForms) {
  const std::vector<std::string> spaced = {"--metric",
                                           "self_ns",
                                           "b.json",
                                           "--absolute-tolerance",
                                           "500000",
                                           "--relative-tolerance-bps",
                                           "1000",
                                           "--json",
                                           "out/cmp.json",
                                           "--fail-on-new",
                                           "c.json",
                                           "--fail-on-missing",
                                           "--allow-incomplete"};
  const std::vector<std::string> joined = {"b.json",
                                           "c.json",
                                           "--metric=self_ns",
                                           "--absolute-tolerance=500000",
                                           "--relative-tolerance-bps=1000",
                                           "--json=out/cmp.json",
                                           "--fail-on-new",
                                           "--fail-on-missing",
                                           "--allow-incomplete"};
  for (const auto& words : {spaced, joined}) {
    absl::StatusOr<CompareArgs> args = ParseCompareArgs(words);
    ASSERT_TRUE(args.ok()) << args.status();
    EXPECT_EQ(args->base_path, "b.json");
    EXPECT_EQ(args->candidate_path, "c.json");
    EXPECT_EQ(args->json_path, "out/cmp.json");
    EXPECT_EQ(args->policy,
              (analysis::ComparePolicy{.metric = CompareMetric::kSelfNs,
                                       .absolute_tolerance_ns = 500000,
                                       .relative_tolerance_bps = 1000,
                                       .fail_on_new = true,
                                       .fail_on_missing = true,
                                       .allow_incomplete = true}));
  }
}

TEST(CompareArgsTest, EveryMetricName) {
  for (CompareMetric metric : analysis::AllCompareMetrics()) {
    const std::string name(analysis::CompareMetricName(metric));
    absl::StatusOr<CompareArgs> args =
        ParseCompareArgs({"b", "c", "--metric", name});
    ASSERT_TRUE(args.ok()) << name;
    EXPECT_EQ(args->policy.metric, metric);
  }
  EXPECT_THAT(Error({"b", "c", "--metric", "p95"}),
              HasSubstr("--metric: unknown metric \"p95\""));
}

TEST(CompareArgsTest, CounterMetric) {
  absl::StatusOr<CompareArgs> args =
      ParseCompareArgs({"b.json", "c.json", "--metric=counter:bytes.copied"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->policy.metric, CompareMetric::kCounter);
  EXPECT_EQ(args->policy.counter, "bytes.copied");
  EXPECT_THAT(Error({"b.json", "c.json", "--metric", "counter:"}),
              HasSubstr("--metric: counter: needs a counter name"));
  EXPECT_THAT(Error({"b.json", "c.json", "--metric", "counters:x"}),
              HasSubstr("or counter:NAME"));
}

TEST(CompareArgsTest, ToleranceMustBeANonNegativeInteger) {
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", "-5"}),
              HasSubstr("--absolute-tolerance: expected a non-negative "
                        "integer, got \"-5\" (negative)"));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance=-1"}),
              HasSubstr("--absolute-tolerance: "));
  EXPECT_THAT(Error({"b", "c", "--relative-tolerance-bps", "10%"}),
              HasSubstr("--relative-tolerance-bps: expected a non-negative "
                        "integer, got \"10%\""));
  EXPECT_THAT(Error({"b", "c", "--relative-tolerance-bps", "1.5"}),
              HasSubstr("--relative-tolerance-bps"));
  EXPECT_THAT(Error({"b", "c", "--relative-tolerance-bps", "1e3"}),
              HasSubstr("--relative-tolerance-bps"));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", "+5"}),
              HasSubstr("--absolute-tolerance"));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", ""}),
              HasSubstr("--absolute-tolerance"));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", "9223372036854775808"}),
              HasSubstr("--absolute-tolerance: expected a non-negative "
                        "integer, got \"9223372036854775808\" (too large)"));
  absl::StatusOr<CompareArgs> max =
      ParseCompareArgs({"b", "c", "--absolute-tolerance=9223372036854775807",
                        "--relative-tolerance-bps=0"});
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(max->policy.absolute_tolerance_ns, INT64_MAX);
}

TEST(CompareArgsTest, UsageErrors) {
  EXPECT_THAT(Error({}), HasSubstr("missing arguments BASE and CAND"));
  EXPECT_THAT(Error({"b"}), HasSubstr("missing argument CAND"));
  EXPECT_THAT(Error({"b", "c", "d"}), HasSubstr("unexpected argument \"d\""));
  EXPECT_THAT(Error({"b", "c", "--metrc", "p95_ns"}),
              HasSubstr("unknown flag --metrc"));
  EXPECT_THAT(Error({"b", "c", "-x"}), HasSubstr("unknown flag -x"));
  EXPECT_THAT(Error({"b", "c", "--json"}),
              HasSubstr("flag --json needs a value"));
  EXPECT_THAT(Error({"b", "c", "--json", "--fail-on-new"}),
              HasSubstr("flag --json needs a value"));
  EXPECT_THAT(Error({"b", "c", "--fail-on-new=yes"}),
              HasSubstr("flag --fail-on-new takes no value"));
  EXPECT_THAT(Error({"b", "c", "--metric", "p95_ns", "--metric=p99_ns"}),
              HasSubstr("flag --metric given more than once"));
  EXPECT_THAT(Error({"b", "c", "--json="}), HasSubstr("--json"));
  EXPECT_THAT(Error({"", "c"}), HasSubstr("must not be empty"));
}

TEST(CompareArgsTest, HelpWinsAndDoubleDashEndsFlags) {
  absl::StatusOr<CompareArgs> help = ParseCompareArgs({"--bogus", "--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(help->help);
  ASSERT_TRUE(ParseCompareArgs({"-h"}).ok());
  absl::StatusOr<CompareArgs> dashed =
      ParseCompareArgs({"--fail-on-new", "--", "--base.json", "-h"});
  ASSERT_TRUE(dashed.ok()) << dashed.status();
  EXPECT_FALSE(dashed->help);
  EXPECT_EQ(dashed->base_path, "--base.json");
  EXPECT_EQ(dashed->candidate_path, "-h");
  EXPECT_TRUE(dashed->policy.fail_on_new);
}

}  // namespace
}  // namespace spanprof::cli
