// counters.h — named counters per span: self and inclusive counts (private to
// the analysis library; the summary and the scaling analysis share it).
//
// The capture holds each span's self count of each named counter
// (`SpanArg::is_counter`: increments made while the span was the innermost
// open span of its thread). A span's inclusive count is its self count plus
// the inclusive counts of its same-thread children. Cross-thread children are
// linked, never included, as for heartbeats and allocations: a counter, like
// a clock, belongs to one thread.
//
// Storage is sparse: only spans with a non-zero self or inclusive count of
// some counter (those that counted and their same-thread ancestors) hold
// values, so a capture that counts nothing costs one scan of its arguments.
#ifndef SPANPROF_ANALYSIS_SRC_MODEL_COUNTERS_H_
#define SPANPROF_ANALYSIS_SRC_MODEL_COUNTERS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spanprof/analysis/forest.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// `CounterNames()` lists the capture's counter names in order of first
// appearance in `Capture::args`.
std::vector<std::string> CounterNames(const Capture& capture);

// Whether any span counted a named counter (SPANPROF_COUNT).
bool AnyCounter(const Capture& capture);

// `SpanCounters` holds every span's self and inclusive count of every named
// counter of one capture. Counts are non-negative: a negative self count (only
// a corrupt or hand-made capture has one) counts as 0, and sums saturate at
// INT64_MAX. A span with two entries of one counter (also not something the
// runtime writes) counts their sum. Immutable after construction.
class SpanCounters {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // From a `Forest` of `capture`: any capture, in any order (a parent on
  // another thread is ignored).
  SpanCounters(const Capture& capture, const Forest& forest);

  // From parent indexes: `parent[i]` is the index of span `i`'s parent, or
  // `kNone` (a parent on another thread is ignored). Every parent index must
  // be smaller than its child's (true of the collector's order: thread,
  // start, depth); a span whose parent index is not below its own is treated
  // as a root.
  SpanCounters(const Capture& capture, std::span<const uint32_t> parent);

  // The counter names, in first-appearance order; counter `k` below is
  // `names()[k]`.
  const std::vector<std::string>& names() const { return names_; }
  bool empty() const { return names_.empty(); }

  // The spans that hold values, in no particular order.
  std::span<const uint32_t> spans() const { return span_of_slot_; }

  // Span `i`'s self and inclusive counts of counter `k` (0 when none).
  int64_t self(size_t i, size_t k) const { return Value(i, k, false); }
  int64_t inclusive(size_t i, size_t k) const { return Value(i, k, true); }

 private:
  // Finds the names and gives each span its self counts.
  void ReadSelfCounts(const Capture& capture);
  // Adds span `i`'s inclusive counts to those of `parent` when that is a
  // span on the same thread (all of `i`'s children must have been added).
  void AddToParent(const Capture& capture, uint32_t i, uint32_t parent);
  uint32_t SlotOf(size_t span);
  int64_t Value(size_t i, size_t k, bool inclusive) const;

  std::vector<std::string> names_;
  // Per span: its slot, or kNone when every count is 0.
  std::vector<uint32_t> slot_of_span_;
  std::vector<uint32_t> span_of_slot_;
  // Per slot: the self counts of every counter, then the inclusive counts.
  std::vector<int64_t> values_;
};

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_MODEL_COUNTERS_H_
