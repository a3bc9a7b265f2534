#include "spanprof/analysis/timing.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/numeric/int128.h"
#include "model/span_list.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

// Saturating arithmetic: a corrupt capture (say start_ns = INT64_MIN) must
// not overflow, only produce large numbers that validation already flags.
int64_t SatSub(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_sub_overflow(a, b, &result))
    return b < 0 ? INT64_MAX : INT64_MIN;
  return result;
}
int64_t SatAdd(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result))
    return b > 0 ? INT64_MAX : INT64_MIN;
  return result;
}

}  // namespace

std::vector<SpanTiming> ComputeTimings(const Capture& capture,
                                       const Forest& forest) {
  const internal::SpanList spans(capture);
  const size_t n = spans.size();
  std::vector<SpanTiming> timings(n);
  for (size_t i = 0; i < n; ++i) {
    const Span& span = spans[i];
    // A span's interval is [start, max(start, end)]: an inverted span is
    // empty rather than negative.
    const int64_t end = std::max(span.start_ns, span.end_ns);
    const int64_t inclusive = SatSub(end, span.start_ns);

    // Children are in (thread, start) order, so the union of the same-thread
    // ones is one sweep that only remembers how far coverage reaches.
    int64_t covered = 0;
    int64_t reach = span.start_ns;
    uint64_t child_heartbeats = 0;
    bool heartbeat_overflow = false;
    for (uint32_t c : forest.children(i)) {
      const Span& child = spans[c];
      if (child.thread != span.thread) continue;
      const uint64_t sum = child_heartbeats + child.heartbeats;
      if (sum < child_heartbeats) heartbeat_overflow = true;
      child_heartbeats = sum;
      const int64_t child_start = std::max(child.start_ns, reach);
      const int64_t child_end =
          std::min(std::max(child.start_ns, child.end_ns), end);
      if (child_end > child_start) {
        covered = SatAdd(covered, SatSub(child_end, child_start));
        reach = child_end;
      }
    }
    SpanTiming& timing = timings[i];
    timing.inclusive_ns = inclusive;
    timing.self_ns = std::max<int64_t>(0, SatSub(inclusive, covered));
    timing.self_heartbeats =
        heartbeat_overflow || child_heartbeats >= span.heartbeats
            ? 0
            : span.heartbeats - child_heartbeats;
  }
  return timings;
}

std::vector<SpanTiming> ComputeTimings(const Capture& capture) {
  return ComputeTimings(capture, Forest(capture));
}

uint64_t NearestRank(uint64_t n, uint32_t per_10000) {
  if (n == 0) return 0;
  const absl::uint128 product = absl::uint128(n) * per_10000;
  const uint64_t rank =
      static_cast<uint64_t>((product + 9999) / 10000);  // ceil
  return std::clamp<uint64_t>(rank, 1, n);
}

int64_t NearestRankPercentile(std::span<const int64_t> sorted,
                              uint32_t per_10000) {
  if (sorted.empty()) return 0;
  return sorted[NearestRank(sorted.size(), per_10000) - 1];
}

}  // namespace spanprof::analysis
