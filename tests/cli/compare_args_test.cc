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
  // The documented defaults (docs/cli.md, "Default tolerances"): 5% and
  // 500 us for a duration metric.
  EXPECT_EQ(args->policy,
            (analysis::ComparePolicy{.absolute_tolerance_ns = 500'000,
                                     .relative_tolerance_bps = 500}));
  EXPECT_EQ(args->policy.metric, CompareMetric::kP95Ns);
  EXPECT_FALSE(args->absolute_tolerance_given);
  EXPECT_FALSE(args->relative_tolerance_given);
  EXPECT_FALSE(args->policy.allow_missing);
}

TEST(CompareArgsTest, ACountMetricDefaultsToExact) {
  for (const char* metric : {"total_heartbeats", "self_heartbeats",
                             "alloc_count", "alloc_bytes", "counter:bytes"}) {
    absl::StatusOr<CompareArgs> args =
        ParseCompareArgs({"b", "c", "--metric", metric});
    ASSERT_TRUE(args.ok()) << metric;
    EXPECT_EQ(args->policy.absolute_tolerance_ns, 0) << metric;
    EXPECT_EQ(args->policy.relative_tolerance_bps, 0) << metric;
  }
  for (CompareMetric metric : analysis::AllCompareMetrics()) {
    const bool duration = analysis::CompareMetricName(metric).ends_with("_ns");
    EXPECT_EQ(analysis::IsDurationMetric(metric), duration);
    EXPECT_EQ(analysis::DefaultAbsoluteTolerance(metric),
              duration ? 500'000 : 0);
    EXPECT_EQ(analysis::DefaultRelativeToleranceBps(metric),
              duration ? 500 : 0);
  }
}

TEST(CompareArgsTest, TolerancesTakeUnits) {
  struct Case {
    std::vector<std::string> flags;
    int64_t absolute_ns;
    int64_t relative_bps;
  };
  const Case cases[] = {
      {{"--relative-tolerance", "5%"}, 500'000, 500},
      {{"--relative-tolerance=0.05"}, 500'000, 500},
      {{"--relative-tolerance", "2.5%"}, 500'000, 250},
      {{"--relative-tolerance", "0.01%"}, 500'000, 1},
      {{"--relative-tolerance", "0"}, 500'000, 0},
      {{"--relative-tolerance", "1"}, 500'000, 10'000},
      {{"--relative-tolerance", "150%"}, 500'000, 15'000},
      {{"--absolute-tolerance", "1ms"}, 1'000'000, 500},
      {{"--absolute-tolerance=50us"}, 50'000, 500},
      {{"--absolute-tolerance", "1.5ms"}, 1'500'000, 500},
      {{"--absolute-tolerance", "2s"}, 2'000'000'000, 500},
      {{"--absolute-tolerance", "0.5us"}, 500, 500},
      {{"--absolute-tolerance", "700ns"}, 700, 500},
      {{"--absolute-tolerance", "700"}, 700, 500},
      {{"--absolute-tolerance", "0ms", "--relative-tolerance-bps", "0"}, 0, 0},
      {{"--relative-tolerance-bps", "1000"}, 500'000, 1000},
  };
  for (const Case& c : cases) {
    std::vector<std::string> words = {"b", "c"};
    words.insert(words.end(), c.flags.begin(), c.flags.end());
    absl::StatusOr<CompareArgs> args = ParseCompareArgs(words);
    ASSERT_TRUE(args.ok()) << c.flags[0] << ": " << args.status();
    EXPECT_EQ(args->policy.absolute_tolerance_ns, c.absolute_ns) << c.flags[0];
    EXPECT_EQ(args->policy.relative_tolerance_bps, c.relative_bps)
        << c.flags[0];
  }
}

TEST(CompareArgsTest, BadUnitsNameTheFlag) {
  EXPECT_THAT(Error({"b", "c", "--relative-tolerance", "5 %"}),
              HasSubstr("--relative-tolerance: expected a percentage such as "
                        "5% or a fraction such as 0.05, got \"5 %\""));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", "1 parsec"}),
              HasSubstr("--absolute-tolerance: expected a non-negative "
                        "integer, got \"1 parsec\""));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", "1 parsec"}),
              HasSubstr("a unit ns, us, ms or s"));
  for (const char* bad :
       {"-5%", "5%%", "%", ".5%", "5.%", "1e2%", "0.5.5", "", "five%", "+5%"}) {
    EXPECT_THAT(Error({"b", "c", "--relative-tolerance", bad}),
                HasSubstr("--relative-tolerance: "))
        << bad;
  }
  for (const char* bad : {"-1ms", "1 ms", "ms", "1.ms", "1mss", "1h", "1.5",
                          "1e3us", "1MS", "+1us"}) {
    EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", bad}),
                HasSubstr("--absolute-tolerance: "))
        << bad;
  }
  EXPECT_THAT(Error({"b", "c", "--relative-tolerance", "5"}),
              HasSubstr("more than 100%; write a percentage with % (e.g. 5% "
                        "for 5 percent)"));
  EXPECT_THAT(Error({"b", "c", "--relative-tolerance", "0.00001"}),
              HasSubstr("(finer than one basis point, 0.01%)"));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", "0.1ns"}),
              HasSubstr("(finer than a nanosecond)"));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance", "9999999999s"}),
              HasSubstr("(too large)"));
  // Many digits neither overflow nor wrap around.
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance",
                     "9999999999999999999999999999s"}),
              HasSubstr("(too large)"));
  EXPECT_THAT(Error({"b", "c", "--absolute-tolerance",
                     "99999999999999999999999999999999999999999s"}),
              HasSubstr("--absolute-tolerance: expected a non-negative "
                        "duration"));
  EXPECT_THAT(Error({"b", "c", "--relative-tolerance",
                     "9999999999999999999999999999%"}),
              HasSubstr("(too large)"));
  EXPECT_THAT(Error({"b", "c", "--relative-tolerance", "5%",
                     "--relative-tolerance-bps", "500"}),
              HasSubstr("not both"));
  // A duration is no tolerance for a count.
  EXPECT_THAT(Error({"b", "c", "--metric", "alloc_count",
                     "--absolute-tolerance", "1ms"}),
              HasSubstr("--absolute-tolerance: \"1ms\" is a duration, but "
                        "the metric is a count"));
  absl::StatusOr<CompareArgs> count = ParseCompareArgs(
      {"b", "c", "--metric", "alloc_count", "--absolute-tolerance", "3"});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->policy.absolute_tolerance_ns, 3);
}

TEST(CompareArgsTest, AllowMissing) {
  absl::StatusOr<CompareArgs> args =
      ParseCompareArgs({"b", "c", "--allow-missing"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_TRUE(args->policy.allow_missing);
  EXPECT_FALSE(args->policy.fail_on_missing);
  EXPECT_THAT(Error({"b", "c", "--allow-missing=yes"}),
              HasSubstr("takes no value"));
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
