// The tail shape of a row: the fast logarithm, log_sigma, tail_ratio and the
// heavy-tail rule, alone and through Summarize().
#include "analysis/src/summary/tail_shape.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis::internal {
namespace {

using ::spanprof::testing::CaptureBuilder;

// A row of 200 calls: log-normal durations with `sigma` around 10 us.
Capture LogNormalRow(double sigma, uint32_t seed) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("item.process");
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> draw(std::log(10'000.0), sigma);
  int64_t at = 0;
  for (uint64_t id = 1; id <= 200; ++id) {
    const auto d = static_cast<int64_t>(draw(rng)) + 1;
    b.Add(id, 0, s, t, at, at + d);
    at += d + 10;
  }
  return b.Build();
}

TEST(TailShapeTest, FastLnIsCloseToStdLogOverEveryDuration) {
  double worst = 0;
  // Every power of two and its neighbours up to 2^62, where the range
  // reduction changes exponent.
  for (int e = 0; e <= 62; ++e) {
    const auto p = static_cast<int64_t>(uint64_t{1} << e);
    for (const int64_t d : {p - 1, p, p + 1, p + p / 2, p + p / 2 - 1}) {
      if (d <= 0) continue;
      const auto x = static_cast<double>(d);
      worst = std::max(worst, std::abs(FastLn(x) - std::log(x)));
    }
  }
  // Random doubles over [1e-3, 1e18], log-uniform.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-3, 18);
  for (int i = 0; i < 200'000; ++i) {
    const double x = std::pow(10.0, exponent(rng));
    worst = std::max(worst, std::abs(FastLn(x) - std::log(x)));
  }
  // Densely over one octave, where the polynomial does all the work.
  for (int i = 0; i <= 100'000; ++i) {
    const double x = 0.75 + 0.75 * i / 100'000;
    worst = std::max(worst, std::abs(FastLn(x) - std::log(x)));
  }
  EXPECT_LT(worst, 2e-6);
  EXPECT_EQ(FastLn(1.0), FastLn(1.0));  // deterministic
  EXPECT_NEAR(FastLn(1.0), 0.0, 2e-6);
}

// The textbook definition, with std::log.
std::optional<double> ReferenceLogSigma(const std::vector<int64_t>& ds) {
  std::vector<double> logs;
  for (const int64_t d : ds) {
    if (d > 0) logs.push_back(std::log(static_cast<double>(d)));
  }
  if (logs.size() < 2) return std::nullopt;
  double mean = 0;
  for (const double y : logs) mean += y;
  mean /= static_cast<double>(logs.size());
  double sum = 0;
  for (const double y : logs) sum += (y - mean) * (y - mean);
  return std::sqrt(sum / static_cast<double>(logs.size() - 1));
}

TEST(TailShapeTest, LogSigmaMatchesTheDefinition) {
  std::mt19937_64 rng(11);
  for (const double sigma : {0.0, 0.01, 0.3, 0.8, 2.0}) {
    std::lognormal_distribution<double> draw(std::log(50'000.0), sigma);
    std::vector<int64_t> ds;
    for (int i = 0; i < 1000; ++i) {
      ds.push_back(static_cast<int64_t>(draw(rng)));
    }
    ds.push_back(0);  // zero durations do not count
    const std::optional<double> got = LogSigma(ds, ds[500]);
    const std::optional<double> want = ReferenceLogSigma(ds);
    ASSERT_TRUE(got.has_value());
    EXPECT_NEAR(*got, *want, 1e-5) << sigma;
    // And the estimate is near the distribution's sigma.
    EXPECT_NEAR(*got, sigma, 0.1 * sigma + 1e-4) << sigma;
  }
}

TEST(TailShapeTest, LogSigmaDoesNotDependOnTheOrder) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> draw(std::log(3'000.0), 1.2);
  std::vector<int64_t> ds;
  for (int i = 0; i < 5000; ++i) ds.push_back(static_cast<int64_t>(draw(rng)));
  const std::optional<double> sigma = LogSigma(ds, 3000);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(ds.begin(), ds.end(), rng);
    EXPECT_EQ(LogSigma(ds, 3000), sigma);  // exactly, not nearly
  }
  // Through Summarize: the spans in another order give the same summary.
  Capture capture = LogNormalRow(1.0, 9);
  const Summary summary = Summarize(capture);
  std::reverse(capture.spans.begin(), capture.spans.end());
  EXPECT_EQ(Summarize(capture).rows, summary.rows);
}

TEST(TailShapeTest, LogSigmaNeedsTwoPositiveDurations) {
  EXPECT_EQ(LogSigma(std::vector<int64_t>{}, 0), std::nullopt);
  EXPECT_EQ(LogSigma(std::vector<int64_t>{5}, 5), std::nullopt);
  EXPECT_EQ(LogSigma(std::vector<int64_t>{5, 0, 0}, 0), std::nullopt);
  EXPECT_NEAR(*LogSigma(std::vector<int64_t>{5, 5}, 5), 0.0, 1e-9);
  // ln 1 and ln e^2 (rounded): sd of {0, 2} is sqrt(2).
  EXPECT_NEAR(*LogSigma(std::vector<int64_t>{1000, 7389}, 0), std::sqrt(2.0),
              1e-4);
}

TEST(TailShapeTest, TailRatioIsP99OverMedian) {
  EXPECT_EQ(TailRatio(100, 0), std::nullopt);
  EXPECT_DOUBLE_EQ(*TailRatio(640, 100), 6.4);
  EXPECT_DOUBLE_EQ(*TailRatio(100, 100), 1.0);
}

TEST(TailShapeTest, HeavyTailNeedsTwentyCallsAndSigmaOfPointEight) {
  EXPECT_TRUE(HeavyTail(20, 0.8));
  EXPECT_FALSE(HeavyTail(19, 3.0));
  EXPECT_FALSE(HeavyTail(20, 0.79));
  EXPECT_FALSE(HeavyTail(1000, std::nullopt));
}

TEST(TailShapeTest, SummarizeFlagsAHeavyTailAndNotATightOne) {
  const Summary heavy = Summarize(LogNormalRow(1.5, 1));
  ASSERT_EQ(heavy.rows.size(), 1u);
  const analysis::Row& h = heavy.rows[0];
  EXPECT_TRUE(h.heavy_tail);
  ASSERT_TRUE(h.log_sigma.has_value());
  EXPECT_NEAR(*h.log_sigma, 1.5, 0.25);
  ASSERT_TRUE(h.tail_ratio.has_value());
  EXPECT_DOUBLE_EQ(*h.tail_ratio, static_cast<double>(h.p99_ns) /
                                      static_cast<double>(h.median_ns));
  EXPECT_GT(*h.tail_ratio, 6.4);

  const Summary tight = Summarize(LogNormalRow(0.1, 2));
  const analysis::Row& t = tight.rows[0];
  EXPECT_FALSE(t.heavy_tail);
  EXPECT_NEAR(*t.log_sigma, 0.1, 0.03);
  EXPECT_LT(*t.tail_ratio, 1.5);
}

TEST(TailShapeTest, FewCallsHaveNoHeavyTailAndOneCallNoSigma) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t once = b.Site("once");
  const uint32_t zero = b.Site("zero");
  b.Add(1, 0, once, t, 0, 100);
  b.Add(2, 0, zero, t, 200, 200);
  b.Add(3, 0, zero, t, 300, 300);
  const Summary summary = Summarize(b.Build());
  for (const analysis::Row& row : summary.rows) {
    EXPECT_EQ(row.log_sigma, std::nullopt) << row.label;
    EXPECT_FALSE(row.heavy_tail);
  }
  // Median 0: no ratio; median 100: ratio 1.
  for (const analysis::Row& row : summary.rows) {
    if (row.key.name == "zero") EXPECT_EQ(row.tail_ratio, std::nullopt);
    if (row.key.name == "once") EXPECT_EQ(row.tail_ratio, 1.0);
  }
}

}  // namespace
}  // namespace spanprof::analysis::internal
