#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "analysis/src/summary/tail_shape.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/timing.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;

// Hand-computed nearest ranks, rank = max(1, ceil(p * n)).
TEST(PercentileTest, NearestRankMatchesHandComputedRanks) {
  struct Case {
    uint64_t n;
    uint32_t per_10000;
    uint64_t rank;
  };
  const Case cases[] = {
      {1, 5000, 1},    {1, 9500, 1},      {1, 9900, 1},      {1, 0, 1},
      {2, 5000, 1},    {2, 9500, 2},      {2, 9900, 2},      {2, 10000, 2},
      {3, 5000, 2},    {3, 9500, 3},      {3, 9900, 3},      {3, 3333, 1},
      {20, 5000, 10},  {20, 9500, 19},    {20, 9900, 20},    {20, 0, 1},
      {100, 5000, 50}, {100, 9500, 95},   {100, 9900, 99},   {100, 10000, 100},
      {101, 5000, 51}, {1000, 9990, 999}, {1000, 9901, 991},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NearestRank(c.n, c.per_10000), c.rank)
        << "n=" << c.n << " p=" << c.per_10000;
  }
  EXPECT_EQ(NearestRank(0, 5000), 0u);
}

TEST(PercentileTest, NearestRankDoesNotOverflowForHugeCounts) {
  EXPECT_EQ(NearestRank(UINT64_MAX, 10000), UINT64_MAX);
  // ceil(0.5 * (2^64 - 1)) = 2^63.
  EXPECT_EQ(NearestRank(UINT64_MAX, 5000), uint64_t{1} << 63);
}

TEST(PercentileTest, PercentileOfSortedSamples) {
  std::vector<int64_t> twenty(20);
  std::iota(twenty.begin(), twenty.end(), 1);  // 1..20
  EXPECT_EQ(NearestRankPercentile(twenty, 5000), 10);
  EXPECT_EQ(NearestRankPercentile(twenty, 9500), 19);
  EXPECT_EQ(NearestRankPercentile(twenty, 9900), 20);
  const std::vector<int64_t> one = {7};
  EXPECT_EQ(NearestRankPercentile(one, 5000), 7);
  EXPECT_EQ(NearestRankPercentile(one, 9900), 7);
  EXPECT_EQ(NearestRankPercentile(std::vector<int64_t>{}, 5000), 0);
}

// Summarize() selects instead of sorting; check it on shuffled durations.
Row SummarizeDurations(const std::vector<int64_t>& durations) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("work");
  int64_t at = 0;
  uint64_t id = 1;
  for (int64_t d : durations) {
    b.Add(id++, 0, s, t, at, at + d);
    at += d + 1;
  }
  const Summary summary = Summarize(b.Build());
  EXPECT_EQ(summary.rows.size(), 1u);
  return summary.rows.at(0);
}

TEST(PercentileTest, SummaryPercentilesAtOneSample) {
  const Row row = SummarizeDurations({42});
  EXPECT_EQ(row.min_ns, 42);
  EXPECT_EQ(row.median_ns, 42);
  EXPECT_EQ(row.p95_ns, 42);
  EXPECT_EQ(row.p99_ns, 42);
  EXPECT_EQ(row.max_ns, 42);
  EXPECT_EQ(row.mean_ns, 42);
}

TEST(PercentileTest, SummaryPercentilesAtTwoSamples) {
  const Row row = SummarizeDurations({9, 4});
  EXPECT_EQ(row.median_ns, 4);  // rank 1
  EXPECT_EQ(row.p95_ns, 9);     // rank 2
  EXPECT_EQ(row.p99_ns, 9);
  EXPECT_EQ(row.mean_ns, 6);  // floor(13 / 2)
}

TEST(PercentileTest, SummaryPercentilesAtThreeSamples) {
  const Row row = SummarizeDurations({30, 10, 20});
  EXPECT_EQ(row.min_ns, 10);
  EXPECT_EQ(row.median_ns, 20);  // rank 2
  EXPECT_EQ(row.p95_ns, 30);     // rank 3
  EXPECT_EQ(row.p99_ns, 30);
  EXPECT_EQ(row.max_ns, 30);
  EXPECT_EQ(row.mean_ns, 20);
}

TEST(PercentileTest, SummaryPercentilesAtTwentySamples) {
  std::vector<int64_t> durations(20);
  std::iota(durations.begin(), durations.end(), 1);
  std::shuffle(durations.begin(), durations.end(), std::mt19937(7));
  for (int64_t& d : durations) d *= 100;  // 100..2000
  const Row row = SummarizeDurations(durations);
  EXPECT_EQ(row.median_ns, 1000);  // rank 10
  EXPECT_EQ(row.p95_ns, 1900);     // rank 19
  EXPECT_EQ(row.p99_ns, 2000);     // rank 20
  EXPECT_EQ(row.mean_ns, 1050);    // 21000 / 20
}

TEST(PercentileTest, SummaryPercentilesAtHundredSamples) {
  std::vector<int64_t> durations(100);
  std::iota(durations.begin(), durations.end(), 1);  // 1..100
  std::shuffle(durations.begin(), durations.end(), std::mt19937(11));
  const Row row = SummarizeDurations(durations);
  EXPECT_EQ(row.min_ns, 1);
  EXPECT_EQ(row.median_ns, 50);
  EXPECT_EQ(row.p95_ns, 95);
  EXPECT_EQ(row.p99_ns, 99);
  EXPECT_EQ(row.max_ns, 100);
  EXPECT_EQ(row.mean_ns, 50);  // floor(5050 / 100)
}

TEST(PercentileTest, SummaryPercentilesWithTiesAndRandomData) {
  std::mt19937 rng(3);
  for (int round = 0; round < 20; ++round) {
    const size_t n = 1 + rng() % 300;
    std::vector<int64_t> durations(n);
    for (int64_t& d : durations) d = static_cast<int64_t>(rng() % 50);
    const Row row = SummarizeDurations(durations);
    std::vector<int64_t> sorted = durations;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(row.median_ns, NearestRankPercentile(sorted, 5000)) << n;
    EXPECT_EQ(row.p95_ns, NearestRankPercentile(sorted, 9500)) << n;
    EXPECT_EQ(row.p99_ns, NearestRankPercentile(sorted, 9900)) << n;
    EXPECT_EQ(row.min_ns, sorted.front());
    EXPECT_EQ(row.max_ns, sorted.back());
  }
}

// Large groups (4096 samples and up) take the radix selection: check it
// against a sort on the shapes that exercise its passes: values within one
// 4 Ki-wide range (one pass), a narrow cluster with far outliers (several
// passes narrowing into one bucket), values spread over 44 bits, all equal,
// two values, and ranks that fall on bucket edges.
TEST(PercentileTest, LargeGroupsMatchASortOnEveryShape) {
  std::mt19937_64 rng(17);
  auto check = [](std::vector<int64_t> durations, const char* shape) {
    // One thread of back-to-back roots, built directly (CaptureBuilder::Add
    // looks up parents linearly).
    Capture capture;
    capture.threads.push_back(ThreadInfo{1, "main", 0});
    capture.sites.push_back(Site{.name = "work"});
    int64_t at = 0;
    for (int64_t d : durations) {
      Span& span = capture.spans.emplace_back();
      span.id = capture.spans.size();
      span.start_ns = at;
      span.end_ns = at + d;
      at += d + 1;
    }
    const Summary summary = Summarize(capture);
    ASSERT_EQ(summary.rows.size(), 1u) << shape;
    ASSERT_TRUE(summary.validation_issues.empty()) << shape;
    const Row& row = summary.rows[0];
    std::sort(durations.begin(), durations.end());
    EXPECT_EQ(row.median_ns, NearestRankPercentile(durations, 5000)) << shape;
    EXPECT_EQ(row.p95_ns, NearestRankPercentile(durations, 9500)) << shape;
    EXPECT_EQ(row.p99_ns, NearestRankPercentile(durations, 9900)) << shape;
    EXPECT_EQ(row.min_ns, durations.front()) << shape;
    EXPECT_EQ(row.max_ns, durations.back()) << shape;
    // Summarize keeps a row's durations as 4-byte offsets from its minimum
    // when they fit; the tail shape is the one of the durations themselves.
    EXPECT_EQ(row.log_sigma, internal::LogSigma(durations, row.median_ns))
        << shape;
  };
  for (size_t n : {4096u, 5000u, 20011u}) {
    std::vector<int64_t> d(n);
    for (int64_t& x : d) x = 20 + static_cast<int64_t>(rng() % 50);
    check(d, "narrow");
    for (size_t i = 0; i < n; i += 97) {
      d[i] = static_cast<int64_t>(rng() % 1'000'000'000'000);
    }
    check(d, "cluster with outliers");
    for (int64_t& x : d) x = static_cast<int64_t>(rng() >> 20);
    check(d, "44-bit spread");
    std::fill(d.begin(), d.end(), 12345);
    check(d, "all equal");
    for (size_t i = 0; i < n; ++i) d[i] = i % 3 == 0 ? 7 : 1'000'000'007;
    check(d, "two values");
    // 4096-wide buckets at the first pass: values on both sides of edges.
    for (size_t i = 0; i < n; ++i) {
      d[i] = static_cast<int64_t>((i % 8) * 4096 + (i % 2 == 0 ? 4095 : 0));
    }
    check(d, "bucket edges");
  }
  // Rows are held as 4-byte offsets from their minimum when their spread is
  // below 2^32 ns, else as 8-byte durations: both sides of that edge, far
  // from zero, and below the radix threshold (nth_element on either form).
  for (size_t n : {3u, 100u, 4095u, 4096u, 9000u}) {
    std::vector<int64_t> d(n);
    const int64_t far = 5'000'000'000'000;  // 5,000 s
    for (int64_t& x : d) x = far + static_cast<int64_t>(rng() % 100'000);
    check(d, "narrow far from zero");
    const int64_t edge = int64_t{UINT32_MAX};
    for (size_t i = 0; i < n; ++i) {
      const auto jitter = static_cast<int64_t>(i % 5);
      d[i] = far + (i % 2 == 0 ? jitter : edge - jitter);
    }
    d[0] = far;
    d[1] = far + edge;
    check(d, "spread exactly 2^32 - 1");
    d[1] = far + edge + 1;
    check(d, "spread 2^32");
    for (size_t i = 0; i < n; ++i) {
      d[i] = far + static_cast<int64_t>(rng() % (uint64_t{1} << 33));
    }
    check(d, "spread 2^33");
  }
}

// One capture with a narrow row and a wide row: each keeps its own form.
TEST(PercentileTest, NarrowAndWideRowsInOneCapture) {
  Capture capture;
  capture.threads.push_back(ThreadInfo{1, "main", 0});
  capture.sites.push_back(Site{.name = "narrow"});
  capture.sites.push_back(Site{.name = "wide"});
  std::vector<int64_t> narrow;
  std::vector<int64_t> wide;
  int64_t at = 0;
  for (int64_t i = 0; i < 6000; ++i) {
    const bool is_wide = i % 3 == 0;
    const int64_t d = is_wide ? (i * 7'919'000'003) % 20'000'000'000
                              : 3'000'000'000 + (i * 104'729) % 4'000'000;
    (is_wide ? wide : narrow).push_back(d);
    Span& span = capture.spans.emplace_back();
    span.id = capture.spans.size();
    span.site = is_wide ? 1 : 0;
    span.start_ns = at;
    span.end_ns = at + d;
    at += d + 1;
  }
  const Summary summary = Summarize(capture);
  ASSERT_EQ(summary.rows.size(), 2u);
  for (const Row& row : summary.rows) {
    std::vector<int64_t>& d = row.key.name == "wide" ? wide : narrow;
    std::sort(d.begin(), d.end());
    EXPECT_EQ(row.calls, d.size()) << row.key.name;
    EXPECT_EQ(row.median_ns, NearestRankPercentile(d, 5000)) << row.key.name;
    EXPECT_EQ(row.p95_ns, NearestRankPercentile(d, 9500)) << row.key.name;
    EXPECT_EQ(row.p99_ns, NearestRankPercentile(d, 9900)) << row.key.name;
    EXPECT_EQ(row.log_sigma, internal::LogSigma(d, row.median_ns))
        << row.key.name;
  }
}

}  // namespace
}  // namespace spanprof::analysis
