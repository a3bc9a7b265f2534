// The scaling analysis on synthetic spans of known exponents: with noise,
// outliers and a fixed per-call overhead, the true exponent lies inside the
// reported interval and the verdict names the class; counters are named
// driver or rider; the gate sees a rise of the exponent.
#include "spanprof/analysis/scaling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tests/analysis/scaling/sized_captures.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::TokenizeCapture;
using ::testing::HasSubstr;

struct Workload {
  std::function<double(double)> cost;  // ns for a span of this size
  double overhead_ns = 0;
  double noise_sigma = 0.2;     // log-normal multiplicative noise
  double outlier_share = 0.02;  // spans made 20x slower
  double min_log2 = 4;
  double max_log2 = 18;
  int spans = 3000;
  uint64_t seed = 7;
};

// Sizes log-uniform in [2^min_log2, 2^max_log2].
std::vector<SizedSpan> MakeSpans(const Workload& w,
                                 std::function<double(double)> counter = {}) {
  std::mt19937_64 engine(w.seed);
  std::uniform_real_distribution<double> log2_size(w.min_log2, w.max_log2);
  std::normal_distribution<double> noise(0.0, w.noise_sigma);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<SizedSpan> spans;
  for (int i = 0; i < w.spans; ++i) {
    const double size = std::round(std::exp2(log2_size(engine)));
    double ns = w.overhead_ns + w.cost(size) * std::exp(noise(engine));
    if (unit(engine) < w.outlier_share) ns *= 20;
    SizedSpan span{.size = size, .duration_ns = std::llround(ns)};
    if (counter) span.counters.push_back(counter(size));
    spans.push_back(span);
  }
  return spans;
}

ScalingGroup Analyze(const std::vector<SizedSpan>& spans,
                     std::vector<std::string> counter_names = {},
                     const ScalingOptions& options = {}) {
  ScalingGroup group;
  group.label = "work";
  group.size_arg = "bytes";
  group.counter_names = std::move(counter_names);
  AnalyzeSizedSpans(spans, options, group);
  return group;
}

struct KnownExponent {
  const char* name;
  double exponent;
  std::function<double(double)> cost;
  const char* verdict;
};

class KnownExponentTest : public ::testing::TestWithParam<KnownExponent> {};

TEST_P(KnownExponentTest, TrueExponentLiesInTheIntervalAndTheVerdictNamesIt) {
  const KnownExponent& known = GetParam();
  const ScalingGroup group = Analyze(MakeSpans({.cost = known.cost}));
  ASSERT_TRUE(group.exponent.has_value()) << group.reason;
  EXPECT_LE(group.exponent->ci_low, known.exponent) << group.reason;
  EXPECT_GE(group.exponent->ci_high, known.exponent) << group.reason;
  EXPECT_EQ(group.verdict, known.verdict) << group.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Synthetic, KnownExponentTest,
    ::testing::Values(
        KnownExponent{"constant", 0.0, [](double) { return 5000.0; },
                      "constant"},
        KnownExponent{"sqrt", 0.5, [](double s) { return 40.0 * std::sqrt(s); },
                      "sublinear"},
        KnownExponent{"linear", 1.0, [](double s) { return 3.0 * s; },
                      "linear"},
        KnownExponent{"n_1_5", 1.5,
                      [](double s) { return 0.2 * s * std::sqrt(s); },
                      "superlinear"},
        KnownExponent{"quadratic", 2.0, [](double s) { return 0.01 * s * s; },
                      "superlinear"},
        KnownExponent{"cubic", 3.0, [](double s) { return 1e-6 * s * s * s; },
                      "superlinear"}),
    [](const ::testing::TestParamInfo<KnownExponent>& info) {
      return std::string(info.param.name);
    });

TEST(ScalingTest, NLogNIsLinear) {
  // Over sizes 2^4 to 2^18, s·ln(s) has the log–log secant slope
  // 1 + ln(18/4) / (14·ln 2) = 1.155, the local slope falling from 1.36
  // to 1.08: the fit lies between them and the verdict says linear.
  const ScalingGroup group = Analyze(
      MakeSpans({.cost = [](double s) { return 0.5 * s * std::log(s); }}));
  ASSERT_TRUE(group.exponent.has_value());
  EXPECT_GT(group.exponent->estimate, 1.08) << group.reason;
  EXPECT_LT(group.exponent->estimate, 1.2) << group.reason;
  EXPECT_EQ(group.verdict, "linear") << group.reason;
}

TEST(ScalingTest, AFixedOverheadDoesNotHideTheSlope) {
  // 20 µs per call dominates the small sizes of a quadratic phase.
  const ScalingGroup group = Analyze(MakeSpans(
      {.cost = [](double s) { return 0.01 * s * s; }, .overhead_ns = 20000}));
  ASSERT_TRUE(group.exponent.has_value());
  EXPECT_LE(group.exponent->ci_low, 2.0) << group.reason;
  EXPECT_GE(group.exponent->ci_high, 2.0) << group.reason;
  EXPECT_EQ(group.verdict, "superlinear");
  EXPECT_GT(group.overhead_ns, 0.0);
  EXPECT_THAT(group.reason, HasSubstr("fixed overhead"));
  EXPECT_THAT(group.reason, HasSubstr("where it dominates left out"));
}

TEST(ScalingTest, ScalingSizesOrDurationsLeavesTheExponentUnchanged) {
  const Workload w{.cost = [](double s) { return 0.3 * std::pow(s, 1.4); }};
  const ScalingGroup plain = Analyze(MakeSpans(w));
  std::vector<SizedSpan> scaled = MakeSpans(w);
  for (SizedSpan& span : scaled) {
    span.size *= 1024;  // a power of 2 keeps every span in its bucket
    span.duration_ns *= 7;
  }
  const ScalingGroup moved = Analyze(scaled);
  ASSERT_TRUE(plain.exponent.has_value());
  ASSERT_TRUE(moved.exponent.has_value());
  EXPECT_NEAR(moved.exponent->estimate, plain.exponent->estimate, 1e-9);
  EXPECT_NEAR(moved.exponent->ci_low, plain.exponent->ci_low, 1e-9);
  EXPECT_NEAR(moved.exponent->ci_high, plain.exponent->ci_high, 1e-9);

  // Any other factor moves bucket edges, but not the exponent's class.
  for (SizedSpan& span : scaled) span.size *= 1000.0 / 1024;
  const ScalingGroup decimal = Analyze(scaled);
  ASSERT_TRUE(decimal.exponent.has_value());
  EXPECT_NEAR(decimal.exponent->estimate, plain.exponent->estimate, 0.05);
}

TEST(ScalingTest, TheOutputIsReproducible) {
  const std::vector<SizedSpan> spans =
      MakeSpans({.cost = [](double s) { return s * s; }});
  const ScalingGroup a = Analyze(spans);
  const ScalingGroup b = Analyze(spans);
  ASSERT_TRUE(a.exponent.has_value());
  EXPECT_EQ(a.exponent->ci_low, b.exponent->ci_low);
  EXPECT_EQ(a.exponent->ci_high, b.exponent->ci_high);
}

TEST(ScalingTest, UnderOneDecadeOfSizesIsUnknown) {
  const ScalingGroup group = Analyze(MakeSpans(
      {.cost = [](double s) { return s; }, .min_log2 = 10, .max_log2 = 12.5}));
  EXPECT_EQ(group.verdict, "unknown");
  EXPECT_THAT(group.reason, HasSubstr("decades"));
}

TEST(ScalingTest, TooFewBucketsIsUnknown) {
  const ScalingGroup group = Analyze(MakeSpans(
      {.cost = [](double s) { return s; }, .min_log2 = 10, .max_log2 = 11.5}));
  EXPECT_EQ(group.verdict, "unknown");
  EXPECT_THAT(group.reason, HasSubstr("too few buckets"));
}

TEST(ScalingTest, AWideIntervalIsUnknown) {
  // Few spans and heavy noise: no class can be told.
  const ScalingGroup group = Analyze(MakeSpans(
      {.cost = [](double s) { return s; }, .noise_sigma = 2.5, .spans = 40}));
  EXPECT_EQ(group.verdict, "unknown") << group.reason;
}

TEST(ScalingTest, TheCounterThatGrowsLikeTimeIsTheDriver) {
  Workload w{.cost = [](double s) { return 0.01 * s * s; }};
  std::vector<SizedSpan> spans = MakeSpans(w);
  // heartbeats count bytes copied (quadratic), alloc_count grows linearly,
  // alloc_bytes not at all.
  for (SizedSpan& span : spans) {
    span.counters = {span.size * span.size / 4, span.size / 16, 64.0};
  }
  const ScalingGroup group =
      Analyze(spans, {"heartbeats", "alloc_count", "alloc_bytes"});
  ASSERT_EQ(group.counters.size(), 3u);
  EXPECT_EQ(group.counters[0].role, "driver");
  EXPECT_EQ(group.counters[1].role, "rider");
  EXPECT_EQ(group.counters[2].role, "unrelated");
  ASSERT_TRUE(group.driver.has_value());
  EXPECT_EQ(*group.driver, "heartbeats");
  ASSERT_TRUE(group.counters[0].exponent.has_value());
  EXPECT_NEAR(group.counters[0].exponent->estimate, 2.0, 0.01);
  // Per unit of size, the driver's count grows bucket over bucket.
  EXPECT_LT(*group.buckets.front().counters_per_unit[0],
            *group.buckets.back().counters_per_unit[0]);
}

// Time is linear work plus quadratic work, so it bends to about 1.6 over
// these sizes, well away from the quadratic counter's 2.0: the counter whose
// count per unit of size grows is still the driver (the method's rule; a
// "γ within 0.2 of b" rule called it unrelated), and the linear one rides.
TEST(ScalingTest, LinearPlusQuadraticTimeNamesTheQuadraticCounter) {
  std::vector<SizedSpan> spans =
      MakeSpans({.cost = [](double s) { return 4.0 * s + s * s / 512.0; }});
  for (SizedSpan& span : spans) {
    span.counters = {span.size, span.size * span.size};
  }
  const ScalingGroup group = Analyze(spans, {"heartbeats", "pairs_compared"});
  ASSERT_EQ(group.verdict, "superlinear") << group.reason;
  const double b = group.exponent->estimate;
  EXPECT_GT(b, 1.3);
  EXPECT_LT(b, 1.75);  // outside any tolerance of 0.2 around 2
  ASSERT_EQ(group.counters.size(), 2u);
  EXPECT_EQ(group.counters[0].role, "rider");
  EXPECT_EQ(group.counters[1].role, "driver");
  ASSERT_TRUE(group.driver.has_value());
  EXPECT_EQ(*group.driver, "pairs_compared");
  // Shares of the super-linearity: (γ − 1)/(b − 1), inside their intervals.
  ASSERT_TRUE(group.counters[1].share.has_value());
  const Exponent& share = *group.counters[1].share;
  const double gamma = group.counters[1].exponent->estimate;
  EXPECT_NEAR(gamma, 2.0, 0.01);
  EXPECT_NEAR(share.estimate, (gamma - 1.0) / (b - 1.0), 1e-9);
  EXPECT_LE(share.ci_low, share.estimate);
  EXPECT_GE(share.ci_high, share.estimate);
  EXPECT_GT(share.estimate, 1.0);  // the counter bends more than the time
  ASSERT_TRUE(group.counters[0].share.has_value());
  EXPECT_NEAR(group.counters[0].share->estimate, 0.0, 1e-6);
}

// Time bends further than the work (b ≈ 2.5, as caches or preemption make
// it): the quadratic counter (γ = 2.0) is still the driver, with a share
// below 1; a counter that grows faster than the size but less is a rider.
TEST(ScalingTest, ATimeBentBeyondTheCounterStillNamesTheCounter) {
  std::vector<SizedSpan> spans =
      MakeSpans({.cost = [](double s) { return std::pow(s, 2.5) / 4096.0; }});
  for (SizedSpan& span : spans) {
    span.counters = {span.size * span.size, std::pow(span.size, 1.5),
                     span.size};
  }
  const ScalingGroup group =
      Analyze(spans, {"bytes_touched", "probes", "heartbeats"});
  ASSERT_EQ(group.verdict, "superlinear") << group.reason;
  const double b = group.exponent->estimate;
  EXPECT_GT(b, 2.3);  // outside any tolerance of 0.2 around 2
  ASSERT_EQ(group.counters.size(), 3u);
  EXPECT_EQ(group.counters[0].role, "driver");
  EXPECT_EQ(group.counters[1].role, "rider");
  EXPECT_EQ(group.counters[2].role, "rider");
  ASSERT_TRUE(group.driver.has_value());
  EXPECT_EQ(*group.driver, "bytes_touched");
  ASSERT_TRUE(group.counters[0].share.has_value());
  const double gamma = group.counters[0].exponent->estimate;
  EXPECT_NEAR(gamma, 2.0, 0.01);
  EXPECT_NEAR(group.counters[0].share->estimate, (gamma - 1.0) / (b - 1.0),
              1e-9);
  EXPECT_LT(group.counters[0].share->estimate, 1.0);
  const std::string json = ScalingToJson({.groups = {group}});
  EXPECT_THAT(json,
              HasSubstr("\"role\":\"driver\",\"share\":{\"estimate\":0."));
  EXPECT_THAT(ScalingTable({.groups = {group}}),
              HasSubstr("bytes_touched 2.00 (driver, share of the "
                        "super-linearity "));
}

// Outside a super-linear group there is no super-linearity to share.
TEST(ScalingTest, ALinearGroupHasNoShares) {
  std::vector<SizedSpan> spans =
      MakeSpans({.cost = [](double s) { return 3.0 * s; }});
  for (SizedSpan& span : spans) span.counters = {span.size};
  const ScalingGroup group = Analyze(spans, {"heartbeats"});
  ASSERT_EQ(group.verdict, "linear") << group.reason;
  EXPECT_EQ(group.counters[0].role, "driver");
  EXPECT_FALSE(group.counters[0].share.has_value());
  EXPECT_THAT(ScalingToJson({.groups = {group}}),
              HasSubstr("\"role\":\"driver\",\"share\":null"));
}

// One bucket holds 3 or more spans: the reason counts it.
TEST(ScalingTest, TooFewBucketsCountsTheBucketsThatHaveEnoughSpans) {
  std::vector<SizedSpan> spans;
  for (int64_t ns : {100, 110, 120, 130}) {
    spans.push_back({.size = 100, .duration_ns = ns});
  }
  spans.push_back({.size = 1000, .duration_ns = 1000});
  spans.push_back({.size = 5000, .duration_ns = 5000});
  const ScalingGroup group = Analyze(spans);
  EXPECT_EQ(group.verdict, "unknown");
  EXPECT_THAT(group.reason,
              HasSubstr("too few buckets: 1 with 3 or more spans (need 3)"));
}

TEST(ScalingTest, BucketsArePowersOfTwoWithMediansAndPerUnitCost) {
  std::vector<SizedSpan> spans;
  for (int64_t ns : {100, 300, 200})
    spans.push_back({.size = 4, .duration_ns = ns});
  for (int64_t ns : {800, 1000, 900, 5000}) {
    spans.push_back({.size = 10, .duration_ns = ns});
  }
  const ScalingGroup group = Analyze(spans);
  ASSERT_EQ(group.buckets.size(), 2u);
  EXPECT_EQ(group.buckets[0].size_low, 4);
  EXPECT_EQ(group.buckets[0].size_high, 8);
  EXPECT_EQ(group.buckets[0].spans, 3u);
  EXPECT_EQ(group.buckets[0].median_ns, 200);
  EXPECT_EQ(group.buckets[0].p95_ns, 300);
  EXPECT_EQ(group.buckets[0].median_ns_per_unit, 50);
  EXPECT_EQ(group.buckets[1].size_low, 8);
  EXPECT_EQ(group.buckets[1].median_ns, 900);  // nearest rank 2 of 4
  EXPECT_EQ(group.buckets[1].p95_ns, 5000);
  EXPECT_EQ(group.size_min, 4);
  EXPECT_EQ(group.size_max, 10);
}

TEST(ScalingTest, AnalyzeScalingGroupsCapturesBySizedKey) {
  const Capture linear = TokenizeCapture([](double s) { return 2.0 * s; }, 1);
  const Capture more = TokenizeCapture([](double s) { return 2.0 * s; }, 2);
  const NamedCapture captures[] = {{"a.json", &linear}, {"b.json", &more}};
  absl::StatusOr<ScalingReport> report = AnalyzeScaling(captures, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->traces, (std::vector<std::string>{"a.json", "b.json"}));
  // file.open's size never varies and `files` is constant: one group.
  ASSERT_EQ(report->groups.size(), 1u);
  const ScalingGroup& group = report->groups[0];
  EXPECT_EQ(group.label, "file.tokenize [phase=parse]");
  EXPECT_EQ(group.size_arg, "bytes");
  EXPECT_EQ(group.spans, 1200u);
  EXPECT_EQ(group.verdict, "linear") << group.reason;
  ASSERT_TRUE(group.driver.has_value());
  EXPECT_EQ(*group.driver, "heartbeats");

  const std::string json = ScalingToJson(*report);
  EXPECT_THAT(json, HasSubstr("\"schema\": \"spanprof.scaling\""));
  EXPECT_THAT(json, HasSubstr("\"verdict\": \"linear\""));
  EXPECT_THAT(ScalingTable(*report), HasSubstr("file.tokenize"));
}

TEST(ScalingTest, ANamedSizeArgumentThatNoSpanHasIsAnError) {
  const Capture capture = TokenizeCapture([](double s) { return s; }, 1);
  const NamedCapture captures[] = {{"a.json", &capture}};
  ScalingOptions options;
  options.size_arg = "rows";
  absl::StatusOr<ScalingReport> report = AnalyzeScaling(captures, options);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("'rows'"));

  // A named argument is analysed even where it does not vary.
  options.size_arg = "files";
  report = AnalyzeScaling(captures, options);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->groups.size(), 1u);
  EXPECT_EQ(report->groups[0].verdict, "unknown");
}

// A named counter's entry is not a size argument, even when it varies.
TEST(ScalingTest, CountersAreNotSizes) {
  Capture capture = TokenizeCapture([](double s) { return 2.0 * s; }, 1);
  std::vector<SpanArg> args;
  for (Span& span : capture.spans) {
    const std::vector<SpanArg> own(
        capture.args.begin() + span.first_arg,
        capture.args.begin() + span.first_arg + span.arg_count);
    span.first_arg = static_cast<uint32_t>(args.size());
    args.insert(args.end(), own.begin(), own.end());
    args.push_back(testing::CounterArg("bytes_copied", own[0].int_value * 3));
    span.arg_count = static_cast<uint32_t>(own.size() + 1);
  }
  capture.args = args;
  const NamedCapture captures[] = {{"a.json", &capture}};
  absl::StatusOr<ScalingReport> report = AnalyzeScaling(captures, {});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->groups.size(), 1u);
  EXPECT_EQ(report->groups[0].size_arg, "bytes");
  ScalingOptions options;
  options.size_arg = "bytes_copied";
  EXPECT_FALSE(AnalyzeScaling(captures, options).ok());
}

// A named counter (SPANPROF_COUNT) is a counter of every sized span, counted
// inclusively: here the copying, and its count, happen in a same-thread
// child, and the count grows like the time (quadratically) while the
// heartbeats (one per byte) only ride along. A cross-thread child's count
// is not the parent's.
TEST(ScalingTest, NamedCountersAreInclusiveAndCanDrive) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t worker = b.Thread(2, "worker");
  const uint32_t tokenize = b.Site("file.tokenize", "parse");
  const uint32_t copy = b.Site("copy");
  std::mt19937_64 engine(3);
  std::uniform_real_distribution<double> log2_size(6, 14);
  int64_t t = 0;
  uint64_t id = 1;
  for (int i = 0; i < 400; ++i) {
    const auto bytes = static_cast<int64_t>(std::exp2(log2_size(engine)));
    const int64_t ns = 100 + bytes * bytes / 16;
    const uint64_t parent = id++;
    b.Add(parent, 0, tokenize, main, t, t + ns).heartbeats =
        static_cast<uint64_t>(bytes);
    b.Args(parent, {testing::IntArg("bytes", bytes)});
    const uint64_t child = id++;
    b.Add(child, parent, copy, main, t + 50, t + ns - 10);
    b.Args(child, {testing::CounterArg("bytes_copied", bytes * bytes / 8)});
    const uint64_t remote = id++;
    b.Add(remote, parent, copy, worker, t + 60, t + 70);
    b.Args(remote, {testing::CounterArg("bytes_copied", 1'000'000'000)});
    t += ns + 10;
  }
  const Capture capture = b.Build();
  const NamedCapture captures[] = {{"a.json", &capture}};
  absl::StatusOr<ScalingReport> report = AnalyzeScaling(captures, {});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->groups.size(), 1u);
  const ScalingGroup& group = report->groups[0];
  EXPECT_EQ(group.counter_names,
            (std::vector<std::string>{"heartbeats", "bytes_copied"}));
  EXPECT_EQ(group.verdict, "superlinear") << group.reason;
  ASSERT_EQ(group.counters.size(), 2u);
  ASSERT_TRUE(group.counters[1].exponent.has_value());
  EXPECT_NEAR(group.counters[1].exponent->estimate, 2.0, 0.01);
  EXPECT_EQ(group.counters[1].role, "driver");
  EXPECT_EQ(group.counters[0].role, "rider");
  ASSERT_TRUE(group.driver.has_value());
  EXPECT_EQ(*group.driver, "bytes_copied");
  // Per unit of size, the count is bytes / 8: in [size_low, size_high) / 8.
  for (const ScalingBucket& bucket : group.buckets) {
    ASSERT_TRUE(bucket.counters_per_unit[1].has_value());
    EXPECT_GE(*bucket.counters_per_unit[1], bucket.size_low / 8);
    EXPECT_LE(*bucket.counters_per_unit[1], bucket.size_high / 8);
  }
  EXPECT_THAT(ScalingToJson(*report), HasSubstr("\"bytes_copied\""));
}

// `--size counter:NAME`: a span's own count of NAME is its size; a span that
// counted nothing itself (its child did) is not in the group.
TEST(ScalingTest, ACountersOwnCountIsASize) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t load = b.Site("deps.load");
  const uint32_t outer = b.Site("outer");
  std::mt19937_64 engine(5);
  std::uniform_real_distribution<double> log2_size(6, 16);
  int64_t t = 0;
  uint64_t id = 1;
  for (int i = 0; i < 300; ++i) {
    const auto entries = static_cast<int64_t>(std::exp2(log2_size(engine)));
    const int64_t ns = 40 * entries;
    const uint64_t parent = id++;
    b.Add(parent, 0, outer, main, t, t + ns + 20);
    const uint64_t child = id++;
    b.Add(child, parent, load, main, t + 10, t + 10 + ns);
    b.Args(child, {testing::CounterArg("entries", entries)});
    t += ns + 30;
  }
  const Capture capture = b.Build();
  const NamedCapture captures[] = {{"a.json", &capture}};
  ScalingOptions options;
  options.size_arg = "counter:entries";
  absl::StatusOr<ScalingReport> report = AnalyzeScaling(captures, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->groups.size(), 1u);
  const ScalingGroup& group = report->groups[0];
  EXPECT_EQ(group.label, "deps.load");
  EXPECT_EQ(group.size_arg, "counter:entries");
  EXPECT_EQ(group.spans, 300u);
  EXPECT_EQ(group.verdict, "linear") << group.reason;
  ASSERT_TRUE(group.exponent.has_value());
  EXPECT_NEAR(group.exponent->estimate, 1.0, 0.05);

  options.size_arg = "counter:nothing";
  report = AnalyzeScaling(captures, options);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("own count of counter 'nothing'"));
}

// One whole-program span a run, one run a size: each trace is a point.
Capture OneRun(int64_t targets, double exponent, double noise) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t build = b.Site("build.run");
  const auto ns = static_cast<int64_t>(
      50.0 * std::pow(static_cast<double>(targets), exponent) * noise);
  b.Add(1, 0, build, main, 0, ns);
  b.Args(1, {testing::IntArg("targets", targets)});
  return b.Build();
}

TEST(ScalingTest, OneSpanPerRunIsFittedAcrossRuns) {
  std::vector<Capture> runs;
  const double noise[] = {1.02, 0.97, 1.01, 0.99, 1.03, 0.98, 1.0};
  for (int k = 0; k < 7; ++k) {
    runs.push_back(OneRun(int64_t{1000} << k, 1.9, noise[k]));
  }
  std::vector<NamedCapture> captures;
  for (const Capture& run : runs) captures.push_back({"run.json", &run});
  ScalingOptions options;
  options.size_arg = "targets";
  absl::StatusOr<ScalingReport> report = AnalyzeScaling(captures, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->groups.size(), 1u);
  const ScalingGroup& group = report->groups[0];
  EXPECT_EQ(group.spans, 7u);
  EXPECT_EQ(group.verdict, "superlinear") << group.reason;
  ASSERT_TRUE(group.exponent.has_value());
  EXPECT_NEAR(group.exponent->estimate, 1.9, 0.1);
  EXPECT_LE(group.exponent->ci_low, group.exponent->estimate);
  EXPECT_GE(group.exponent->ci_high, group.exponent->estimate);
  EXPECT_GT(group.exponent->ci_high - group.exponent->ci_low, 0);
  EXPECT_THAT(group.reason, HasSubstr("one span per run"));

  // A linear program the same way is linear, not superlinear.
  std::vector<Capture> linear;
  for (int k = 0; k < 7; ++k) {
    linear.push_back(OneRun(int64_t{1000} << k, 1.0, noise[k]));
  }
  captures.clear();
  for (const Capture& run : linear) captures.push_back({"run.json", &run});
  report = AnalyzeScaling(captures, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->groups.size(), 1u);
  EXPECT_EQ(report->groups[0].verdict, "linear") << report->groups[0].reason;
  // Two runs are two points: too few to decide.
  captures.resize(2);
  report = AnalyzeScaling(captures, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->groups[0].verdict, "unknown");
}

TEST(ScalingTest, TheGateSeesTheExponentRise) {
  const Capture base = TokenizeCapture([](double s) { return 2.0 * s; }, 1);
  const Capture same = TokenizeCapture([](double s) { return 2.0 * s; }, 2);
  const Capture slow =
      TokenizeCapture([](double s) { return 0.002 * s * s; }, 3);
  const NamedCapture base_side[] = {{"base.json", &base}};
  const NamedCapture same_side[] = {{"same.json", &same}};
  const NamedCapture slow_side[] = {{"slow.json", &slow}};

  const std::vector<ScalingGateRow> regressed =
      CompareScaling(base_side, slow_side, {}, 0.15);
  ASSERT_EQ(regressed.size(), 1u);
  EXPECT_EQ(regressed[0].verdict, "regressed") << regressed[0].reason;
  ASSERT_TRUE(regressed[0].rise.has_value());
  EXPECT_NEAR(regressed[0].rise->estimate, 1.0, 0.15);

  const std::vector<ScalingGateRow> unchanged =
      CompareScaling(base_side, same_side, {}, 0.15);
  ASSERT_EQ(unchanged.size(), 1u);
  EXPECT_EQ(unchanged[0].verdict, "same") << unchanged[0].reason;
  EXPECT_THAT(ScalingGateTable(unchanged), HasSubstr("same"));

  // A long reason (both sides' reasons joined) is printed whole.
  ScalingGateRow row;
  row.label = "file.tokenize";
  row.verdict = "unknown";
  row.reason = std::string(600, 'r') + "END";
  const ScalingGateRow rows[] = {row};
  EXPECT_THAT(ScalingGateTable(rows), HasSubstr(row.reason + "\n"));
}

}  // namespace
}  // namespace spanprof::analysis
