// spanprof/analysis/timing.h — per-span inclusive and self time, self
// heartbeats, and exact nearest-rank percentiles.
//
// Inclusive time is `end_ns - start_ns`. Self time is inclusive time minus the
// length of the union of the span's immediate *same-thread* children's
// intervals, each clipped to the span's own interval, so overlapping or
// escaping children (a broken forest) never make self time negative or count
// twice. Cross-thread children are linked in the forest but never subtracted:
// they ran on another thread's clock. Self heartbeats are the span's
// heartbeats minus its immediate same-thread children's (saturating at 0).
//
// clang-format off
// Example:
//
//   spanprof::Capture capture = ...;
//   std::vector<spanprof::analysis::SpanTiming> timings =
//       spanprof::analysis::ComputeTimings(capture);
//   size_t i = ...;
//   int64_t self = timings[i].self_ns;  // for capture.spans[i]
//
//   std::vector<int64_t> sorted = ...;  // ascending
//   int64_t p95 = spanprof::analysis::NearestRankPercentile(sorted, 9500);
// clang-format on
#ifndef SPANPROF_ANALYSIS_TIMING_H_
#define SPANPROF_ANALYSIS_TIMING_H_

#include <cstdint>
#include <span>
#include <vector>

#include "spanprof/analysis/forest.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

// `SpanTiming` is the timing of one span.
struct SpanTiming {
  // end_ns - start_ns; a span that ends before it starts (a validation issue)
  // counts as 0.
  int64_t inclusive_ns = 0;
  // inclusive_ns - |union of same-thread children clipped to the span|.
  int64_t self_ns = 0;
  // heartbeats - sum of the same-thread children's heartbeats, at least 0.
  uint64_t self_heartbeats = 0;

  friend bool operator==(const SpanTiming&, const SpanTiming&) = default;
};

// `ComputeTimings()` returns one `SpanTiming` per span, indexed like
// `capture.spans`. O(n) given the forest. Pure.
std::vector<SpanTiming> ComputeTimings(const Capture& capture,
                                       const Forest& forest);
std::vector<SpanTiming> ComputeTimings(const Capture& capture);

// Percentiles are given in parts per 10000 (`5000` = median, `9500` = p95,
// `9900` = p99, `10000` = max), so every computation stays in integers.

// `NearestRank()` is the 1-based nearest rank of percentile `per_10000` among
// `n` samples: max(1, ceil(per_10000 * n / 10000)), capped at `n`. Returns 0
// when `n` is 0.
uint64_t NearestRank(uint64_t n, uint32_t per_10000);

// `NearestRankPercentile()` returns the sample at `NearestRank()` of an
// ascending `sorted` range, or 0 when it is empty.
int64_t NearestRankPercentile(std::span<const int64_t> sorted,
                              uint32_t per_10000);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_TIMING_H_
