// Summarize(): validation, timing, grouping by key, exact percentiles, totals.
// (The writer is summary_writer.cc, the strict reader summary_reader.cc.)
//
// Two paths compute the same summary. The general path builds a `Forest`,
// computes per-span timings and validates the forest; it handles any capture.
// The canonical path is one streaming pass with a per-thread stack of open
// spans, for the captures the collector produces (sorted by thread and start,
// dense ids, a valid forest); it gives up at the first irregularity of any
// kind, and the general path then recomputes everything, so issues and
// numbers always come from the reference semantics. A randomized test checks
// that both paths agree.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/numeric/int128.h"
#include "model/capture_format.h"
#include "model/counters.h"
#include "model/span_list.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/timing.h"
#include "spanprof/capture.h"
#include "summary/drops.h"
#include "summary/summary_internal.h"
#include "summary/tail_shape.h"

namespace spanprof::analysis {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// Spans whose site index is out of range (a validation issue) still count,
// under this key, so that the rows add up to the event count.
using internal::kInvalidSiteName;

// Sums saturate instead of overflowing on corrupt captures.
void SatAccumulate(int64_t& sum, int64_t value) {
  if (__builtin_add_overflow(sum, value, &sum)) {
    sum = value > 0 ? INT64_MAX : INT64_MIN;
  }
}

// Counter sums: non-negative terms, saturating at INT64_MAX.
void SatAdd(int64_t& sum, int64_t value) {
  if (__builtin_add_overflow(sum, value, &sum)) sum = INT64_MAX;
}

// A span's inclusive time, as ComputeTimings() defines it: its interval is
// [start, max(start, end)].
int64_t InclusiveNs(const Span& span) {
  int64_t inclusive;
  if (__builtin_sub_overflow(std::max(span.start_ns, span.end_ns),
                             span.start_ns, &inclusive)) {
    return INT64_MAX;
  }
  return inclusive;
}

// Below this many values, SelectSorted() uses nth_element directly.
constexpr size_t kRadixSelectMin = 4096;
constexpr int kDigitBits = 12;

// Writes to out[i] the value at 0-based position nth[i] of the sorted order
// of values[0, n), exactly, for k nondecreasing positions. Instead of
// nth_element (~13 ns a value for three positions), a few read-only passes:
// each narrows the range [lo, hi] that holds a position by a 12-bit radix
// histogram of value - lo, until the range is one value wide. Durations
// within 4 Ki ns of each other take one pass; each further pass divides the
// range by 4096. Positions that share a range share the pass.
// `T` is int64_t (durations) or uint32_t (durations minus their row's
// minimum, when they fit: half the memory for a capture's worth of them).
template <typename T>
void SelectSorted(T* values, size_t n, const size_t* nth, int64_t* out,
                  size_t k) {
  if (n == 0 || k == 0) return;
  if (n < kRadixSelectMin) {
    size_t from = 0;
    for (size_t i = 0; i < k; ++i) {
      if (nth[i] >= from) {
        std::nth_element(values + from, values + nth[i], values + n);
        from = nth[i] + 1;
      }
      out[i] = values[nth[i]];
    }
    return;
  }
  int64_t lo = values[0];
  int64_t hi = values[0];
  for (size_t i = 1; i < n; ++i) {
    lo = std::min<int64_t>(lo, values[i]);
    hi = std::max<int64_t>(hi, values[i]);
  }
  // Positions [first, last) whose value lies in [range_lo, range_hi], with
  // `below` values under range_lo.
  struct Range {
    size_t first;
    size_t last;
    int64_t lo;
    int64_t hi;
    size_t below;
  };
  std::vector<Range> pending = {{0, k, lo, hi, 0}};
  std::vector<size_t> counts(size_t{1} << kDigitBits);
  while (!pending.empty()) {
    const Range range = pending.back();
    pending.pop_back();
    const auto base = static_cast<uint64_t>(range.lo);
    const uint64_t width_range = static_cast<uint64_t>(range.hi) - base;
    if (width_range == 0) {
      for (size_t i = range.first; i < range.last; ++i) out[i] = range.lo;
      continue;
    }
    const int width = 64 - __builtin_clzll(width_range);
    const int shift = width > kDigitBits ? width - kDigitBits : 0;
    const size_t buckets = static_cast<size_t>(width_range >> shift) + 1;
    std::fill_n(counts.begin(), buckets, 0);
    size_t below = 0;
    for (size_t i = 0; i < n; ++i) {
      const int64_t v = values[i];
      if (v < range.lo) {
        ++below;
      } else if (v <= range.hi) {
        ++counts[(static_cast<uint64_t>(v) - base) >> shift];
      }
    }
    size_t bucket = 0;
    size_t under = below;
    for (size_t i = range.first; i < range.last;) {
      while (under + counts[bucket] <= nth[i]) under += counts[bucket++];
      const auto bucket_lo =
          static_cast<int64_t>(base + (static_cast<uint64_t>(bucket) << shift));
      size_t j = i;
      while (j < range.last && nth[j] < under + counts[bucket]) ++j;
      if (shift == 0) {
        for (size_t m = i; m < j; ++m) out[m] = bucket_lo;
      } else {
        const int64_t bucket_hi = static_cast<int64_t>(
            static_cast<uint64_t>(bucket_lo) + ((uint64_t{1} << shift) - 1));
        pending.push_back(
            Range{i, j, bucket_lo, std::min(bucket_hi, range.hi), under});
      }
      i = j;
    }
  }
}

// Accumulates rows and totals from finished spans, in any order.
class RowAccumulator {
 public:
  explicit RowAccumulator(const Capture& capture)
      : capture_(capture),
        row_of_site_(capture.sites.size(), kNone),
        row_of_key_(0, KeyHash{&rows_}, KeyEq{&rows_}) {}
  RowAccumulator(const RowAccumulator&) = delete;
  RowAccumulator& operator=(const RowAccumulator&) = delete;

  uint32_t RowForSite(uint32_t site) {
    if (site < row_of_site_.size() && row_of_site_[site] != kNone) {
      return row_of_site_[site];
    }
    return NewRowForSite(site);
  }

  uint32_t NewRowForSite(uint32_t site) {
    if (site >= row_of_site_.size()) {
      return RowForKey(RowKey{.name = std::string(kInvalidSiteName)});
    }
    uint32_t& row = row_of_site_[site];
    if (row == kNone) {
      const Site& s = capture_.sites[site];
      row = RowForKey(RowKeyOf(s));
    }
    return row;
  }

  // Adds one span with its timing to row `row`.
  [[gnu::always_inline]] void Add(const Span& span, size_t index, uint32_t row,
                                  int64_t inclusive_ns, int64_t self_ns,
                                  uint64_t self_heartbeats) {
    State& state = states_[row];
    Row& r = rows_[row];
    ++r.calls;
    SatAccumulate(r.total_ns, inclusive_ns);
    SatAccumulate(r.self_ns, self_ns);
    r.min_ns = std::min(r.min_ns, inclusive_ns);
    r.max_ns = std::max(r.max_ns, inclusive_ns);
    r.total_heartbeats += span.heartbeats;
    r.self_heartbeats += self_heartbeats;
    if (capture_.alloc_measured) {
      const SpanAllocs allocs = AllocsOf(capture_, index);
      SatAccumulate(*r.alloc_count, allocs.count);
      SatAccumulate(*r.alloc_bytes, allocs.bytes);
    }
    if (span.flags & kSpanException) ++r.exceptions;
    if (span.flags & kSpanHookFailed) ++r.hook_failures;
    if (span.flags & kSpanUnfinished) {
      ++r.unfinished;
      ++unfinished_;
    }
    if (span.flags & kSpanOpenAtExit) ++open_at_exit_;
    if (span.thread != state.last_thread) {
      state.last_thread = span.thread;
      state.threads.push_back(span.thread);
    }
    max_depth_ = std::max(max_depth_, span.depth);
    SatAccumulate(recorded_ns_, self_ns);
    recorded_heartbeats_ += self_heartbeats;
  }

  // The distinct processes of `threads` (sorted, unique thread indexes): 1
  // (0 for none) in a single-process capture. A thread index or process
  // index out of range counts as process 0.
  uint64_t ProcessCount(const std::vector<uint32_t>& threads) const {
    if (capture_.processes.empty()) return threads.empty() ? 0 : 1;
    std::vector<uint32_t> processes;
    processes.reserve(threads.size());
    for (uint32_t t : threads) {
      const uint32_t p =
          t < capture_.threads.size() ? capture_.threads[t].process : 0;
      processes.push_back(p < capture_.processes.size() ? p : 0);
    }
    std::sort(processes.begin(), processes.end());
    return static_cast<uint64_t>(
        std::unique(processes.begin(), processes.end()) - processes.begin());
  }

  // Writes rows and totals into `summary` (the capture-copied fields and the
  // validation issues must already be there); `counters` may be null when the
  // capture counts nothing.
  void Finish(Summary& summary, const internal::SpanCounters* counters) {
    for (const SiteDrops& drops : capture_.dropped_by_site) {
      if (drops.count == 0) continue;
      rows_[RowForSite(drops.site)].dropped += drops.count;
    }
    FinishTotals(summary);
    if (counters != nullptr && !counters->empty()) AddCounters(*counters);
    GroupedDurations grouped = GroupDurations();
    std::vector<uint32_t> all_threads;
    for (size_t r = 0; r < states_.size(); ++r) {
      State& state = states_[r];
      Row& row = rows_[r];
      std::sort(state.threads.begin(), state.threads.end());
      state.threads.erase(
          std::unique(state.threads.begin(), state.threads.end()),
          state.threads.end());
      row.threads = state.threads.size();
      row.processes = ProcessCount(state.threads);
      all_threads.insert(all_threads.end(), state.threads.begin(),
                         state.threads.end());
      FinishRow(row, grouped, r);
    }
    // The rows are moved as one block: no second copy of a million rows.
    std::vector<Row> rows = std::move(rows_);
    rows_.clear();
    row_of_key_.clear();
    std::sort(all_threads.begin(), all_threads.end());
    summary.thread_count = static_cast<uint64_t>(
        std::unique(all_threads.begin(), all_threads.end()) -
        all_threads.begin());
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
      return a.key < b.key;
    });
    summary.rows = std::move(rows);
  }

 private:
  void FinishTotals(Summary& summary) const {
    summary.event_count = internal::SpanCount(capture_);
    summary.max_depth = max_depth_;
    summary.recorded_thread_time_ns = recorded_ns_;
    summary.recorded_heartbeats = recorded_heartbeats_;
    summary.unfinished_events = unfinished_;
    summary.open_at_exit_events = open_at_exit_;
    summary.end_reason = capture_.end_reason;
    summary.complete = capture_.finished_normally &&
                       capture_.dropped_events == 0 &&
                       capture_.dropped_args == 0 && unfinished_ == 0 &&
                       summary.validation_issues.empty();
  }

  // Every row's durations, grouped by row (a counting sort). A row whose
  // durations lie within 2^32 - 1 ns of its minimum keeps them as 4-byte
  // offsets from that minimum in `narrow`, any other row as 8-byte values in
  // `wide`; row r's start at `begin[r]` in its array. Session end holds these
  // next to the capture (under 2x the ring memory in all), so most captures
  // pay 4 bytes a span.
  struct GroupedDurations {
    std::vector<uint32_t> narrow;
    std::vector<int64_t> wide;
    std::vector<size_t> begin;
    std::vector<uint8_t> is_wide;
  };

  static bool IsWide(const Row& row) {
    return row.calls != 0 && static_cast<uint64_t>(row.max_ns) -
                                     static_cast<uint64_t>(row.min_ns) >
                                 UINT32_MAX;
  }

  // Read again from the spans: a second sequential read of the capture costs
  // less than keeping a duration and a row per span in fresh memory.
  GroupedDurations GroupDurations() {
    GroupedDurations g;
    g.begin.resize(states_.size());
    g.is_wide.resize(states_.size());
    std::vector<int64_t> base(states_.size());
    size_t narrow = 0;
    size_t wide = 0;
    for (size_t r = 0; r < states_.size(); ++r) {
      const Row& row = rows_[r];
      g.is_wide[r] = IsWide(row) ? 1 : 0;
      size_t& next = g.is_wide[r] != 0 ? wide : narrow;
      g.begin[r] = next;
      next += row.calls;
      base[r] = row.calls != 0 && g.is_wide[r] == 0 ? row.min_ns : 0;
    }
    g.narrow.resize(narrow);
    g.wide.resize(wide);
    std::vector<size_t> fill(g.begin);
    for (const Span& span : internal::SpanList(capture_)) {
      const uint32_t r = RowForSite(span.site);
      const int64_t d = InclusiveNs(span);
      if (g.is_wide[r] != 0) {
        g.wide[fill[r]++] = d;
      } else {
        g.narrow[fill[r]++] = static_cast<uint32_t>(d - base[r]);
      }
    }
    return g;
  }

  // Percentiles, tail shape and share of row `r` from its `calls` durations
  // in `g` (which it reorders).
  void FinishRow(Row& row, GroupedDurations& g, size_t r) const {
    row.label = RowLabel(row.key);
    if (row.calls == 0) {
      row.min_ns = 0;
      return;
    }
    row.mean_ns = row.total_ns / static_cast<int64_t>(row.calls);
    const size_t nth[3] = {
        static_cast<size_t>(NearestRank(row.calls, 5000) - 1),
        static_cast<size_t>(NearestRank(row.calls, 9500) - 1),
        static_cast<size_t>(NearestRank(row.calls, 9900) - 1)};
    int64_t values[3];
    int64_t base = 0;
    if (g.is_wide[r] != 0) {
      SelectSorted(g.wide.data() + g.begin[r], row.calls, nth, values, 3);
    } else {
      base = row.min_ns;
      SelectSorted(g.narrow.data() + g.begin[r], row.calls, nth, values, 3);
    }
    row.median_ns = base + values[0];
    row.p95_ns = base + values[1];
    row.p99_ns = base + values[2];
    row.tail_ratio = internal::TailRatio(row.p99_ns, row.median_ns);
    row.log_sigma =
        g.is_wide[r] != 0
            ? internal::LogSigma(std::span<const int64_t>(
                                     g.wide.data() + g.begin[r], row.calls),
                                 row.median_ns)
            : internal::LogSigma(std::span<const uint32_t>(
                                     g.narrow.data() + g.begin[r], row.calls),
                                 base, row.median_ns);
    row.heavy_tail = internal::HeavyTail(row.calls, row.log_sigma);
    row.share_permille = recorded_ns_ == 0
                             ? 0
                             : static_cast<int64_t>(absl::int128(row.self_ns) *
                                                    1000 / recorded_ns_);
  }

  // Each row's counters: the sums of its spans' inclusive and self counts,
  // the non-zero ones sorted by name.
  void AddCounters(const internal::SpanCounters& counters) {
    const std::vector<std::string>& names = counters.names();
    const size_t width = names.size();
    std::vector<int64_t> totals(states_.size() * width * 2, 0);
    for (const uint32_t i : counters.spans()) {
      const size_t base =
          size_t{RowForSite(internal::SpanList(capture_)[i].site)} * width * 2;
      for (size_t k = 0; k < width; ++k) {
        SatAdd(totals[base + k], counters.inclusive(i, k));
        SatAdd(totals[base + width + k], counters.self(i, k));
      }
    }
    std::vector<size_t> by_name(width);
    for (size_t k = 0; k < width; ++k) by_name[k] = k;
    std::sort(by_name.begin(), by_name.end(),
              [&](size_t a, size_t b) { return names[a] < names[b]; });
    for (size_t r = 0; r < states_.size(); ++r) {
      for (const size_t k : by_name) {
        const int64_t total = totals[r * width * 2 + k];
        if (total == 0) continue;
        rows_[r].counters.push_back(
            RowCounter{names[k], total, totals[r * width * 2 + width + k]});
      }
    }
  }

  // A row's state while spans are added (the row itself is in rows_).
  struct State {
    uint32_t last_thread = kNone;
    std::vector<uint32_t> threads;  // one entry per run of equal threads
  };

  // The rows by key, as indexes into rows_ hashed and compared by their
  // key: each key is held once (in its row), so memory for many
  // distinct names stays one row each.
  struct KeyHash {
    using is_transparent = void;
    const std::vector<Row>* rows;
    size_t operator()(const RowKey& k) const {
      size_t h = absl::Hash<std::string_view>{}(k.name);
      for (std::string RowKey::*tag : kRowKeyTags) {
        h = h * 1000003 ^ absl::Hash<std::string_view>{}(k.*tag);
      }
      return h;
    }
    size_t operator()(uint32_t row) const { return (*this)((*rows)[row].key); }
  };
  struct KeyEq {
    using is_transparent = void;
    const std::vector<Row>* rows;
    const RowKey& Key(uint32_t row) const { return (*rows)[row].key; }
    static const RowKey& Key(const RowKey& key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Key(a) == Key(b);
    }
  };

  uint32_t RowForKey(RowKey key) {
    const auto it = row_of_key_.find(key);
    if (it != row_of_key_.end()) return *it;
    const auto row = static_cast<uint32_t>(states_.size());
    states_.emplace_back();
    Row& new_row = rows_.emplace_back();
    new_row.key = std::move(key);
    new_row.min_ns = INT64_MAX;
    if (capture_.alloc_measured) {
      new_row.alloc_count = 0;
      new_row.alloc_bytes = 0;
    }
    row_of_key_.insert(row);
    return row;
  }

  const Capture& capture_;
  std::vector<uint32_t> row_of_site_;
  std::vector<Row> rows_;      // before row_of_key_, whose functors use it
  std::vector<State> states_;  // parallel to rows_
  absl::flat_hash_set<uint32_t, KeyHash, KeyEq> row_of_key_;
  uint32_t max_depth_ = 0;
  uint64_t unfinished_ = 0;
  uint64_t open_at_exit_ = 0;
  int64_t recorded_ns_ = 0;
  uint64_t recorded_heartbeats_ = 0;
};

// The reference: forest, timings, validation, then rows.
void SummarizeGeneral(const Capture& capture, Summary& summary) {
  const Forest forest(capture);
  const std::vector<SpanTiming> timings = ComputeTimings(capture, forest);
  std::vector<ValidationIssue> issues = ValidateForest(capture, forest);
  summary.validation_issues.insert(summary.validation_issues.end(),
                                   std::make_move_iterator(issues.begin()),
                                   std::make_move_iterator(issues.end()));
  RowAccumulator rows(capture);
  const internal::SpanList spans(capture);
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& span = spans[i];
    const SpanTiming& timing = timings[i];
    rows.Add(span, i, rows.RowForSite(span.site), timing.inclusive_ns,
             timing.self_ns, timing.self_heartbeats);
  }
  const internal::SpanCounters counters(capture, forest);
  rows.Finish(summary, &counters);
}

// Ids up to this many times the span count past the smallest one use the
// dense index; the runtime numbers spans consecutively.
constexpr uint64_t kDenseFactor = 4;
constexpr uint64_t kDenseSlack = 1024;

enum class Canonical { kDone, kNotCanonical, kIdOutsideWindow };

// The span ids of SummarizeCanonical(), indexed densely: ids
// [base, base + window) map to span indices; with `window` 0, the ids must be
// base, base + 1, ... in order (what the collector writes), and no index is
// needed.
class IdIndex {
 public:
  IdIndex(uint64_t base, size_t window, size_t n)
      : base_(base), window_(window), n_(n) {
    if (window_ != 0) {
      index_.reset(new uint32_t[window_]);
      std::fill_n(index_.get(), window_, kNone);
    }
  }

  // Records span `i`'s id: kIdOutsideWindow when it does not fit (or is not
  // the next consecutive one), kNotCanonical when it is a duplicate.
  [[gnu::always_inline]] Canonical Add(uint64_t id, uint32_t i) {
    if (window_ == 0) {
      return id == base_ + i ? Canonical::kDone : Canonical::kIdOutsideWindow;
    }
    if (id < base_ || id - base_ >= window_) return Canonical::kIdOutsideWindow;
    uint32_t& slot = index_[static_cast<size_t>(id - base_)];
    if (slot != kNone) return Canonical::kNotCanonical;
    slot = i;
    return Canonical::kDone;
  }

  // The index of the span with `id`, or kNone.
  uint32_t Find(uint64_t id) const {
    if (window_ == 0) {
      return id >= base_ && id - base_ < n_ ? static_cast<uint32_t>(id - base_)
                                            : kNone;
    }
    if (id < base_ || id - base_ >= window_) return kNone;
    return index_[static_cast<size_t>(id - base_)];
  }

 private:
  uint64_t base_;
  size_t window_;
  size_t n_;
  std::unique_ptr<uint32_t[]> index_;
};

// The spans SummarizeCanonical() found no parent for on their thread's stack
// must be cross-thread children with a consistent depth, and cross-thread
// children of one parent on one thread must not overlap.
bool CrossThreadChildrenValid(const internal::SpanList& spans,
                              const std::vector<uint32_t>& deferred,
                              const IdIndex& ids) {
  struct CrossChild {
    uint32_t parent;
    uint32_t thread;
    int64_t start;
    int64_t end;
  };
  std::vector<CrossChild> cross;
  cross.reserve(deferred.size());
  for (uint32_t i : deferred) {
    const Span& s = spans[i];
    const uint32_t p = ids.Find(s.parent_id);
    if (p == kNone || spans[p].thread == s.thread ||
        s.depth != spans[p].depth + 1) {
      return false;
    }
    cross.push_back(CrossChild{p, s.thread, s.start_ns, s.end_ns});
  }
  std::sort(cross.begin(), cross.end(),
            [](const CrossChild& a, const CrossChild& b) {
              return std::tie(a.parent, a.thread, a.start) <
                     std::tie(b.parent, b.thread, b.start);
            });
  // Sorted by start: a sibling overlaps an earlier one when it starts before
  // the furthest end seen so far on the same (parent, thread).
  int64_t reach = INT64_MIN;
  for (size_t k = 0; k < cross.size(); ++k) {
    if (k > 0 && (cross[k].parent != cross[k - 1].parent ||
                  cross[k].thread != cross[k - 1].thread)) {
      reach = INT64_MIN;
    }
    if (cross[k].start < reach) return false;
    reach = std::max(reach, cross[k].end);
  }
  return true;
}

// The spans of one thread that may still get children, in
// SummarizeCanonical(). In a valid forest a same-thread parent is always on
// the stack when its child starts; self time is then inclusive minus the
// children's inclusive times (valid siblings do not overlap and lie inside
// their parent).
class OpenSpans {
 public:
  enum class Attach { kAttached, kNotOnStack, kInvalid };

  OpenSpans(const internal::SpanList& spans, RowAccumulator& rows)
      : spans_(spans), rows_(rows) {
    stack_.reserve(64);
  }

  // Finishes every open span (when the thread changes, and at the end).
  void FinishAll() {
    for (const Open& open : stack_) Finish(open);
    stack_.clear();
  }

  // Spans that ended before `start_ns` cannot be parents of what follows.
  [[gnu::always_inline]] void FinishEndedBefore(int64_t start_ns) {
    while (!stack_.empty() && stack_.back().end < start_ns) {
      Finish(stack_.back());
      stack_.pop_back();
    }
  }

  // Makes `s` (not a root) a child of its parent on the stack, finishing the
  // spans above that parent: kNotOnStack when the parent is not there (a
  // cross-thread child, or an irregular capture), kInvalid when `s` lies
  // outside its parent, has the wrong depth or overlaps a sibling.
  [[gnu::always_inline]] Attach AttachToParent(const Span& s,
                                               int64_t inclusive) {
    size_t k = stack_.size();
    while (k > 0 && stack_[k - 1].id != s.parent_id) --k;
    if (k == 0) return Attach::kNotOnStack;
    while (stack_.size() > k) {
      Finish(stack_.back());
      stack_.pop_back();
    }
    Open& parent = stack_.back();
    if (s.end_ns > parent.end || s.depth != parent.depth + 1 ||
        s.start_ns < parent.sib_end) {
      return Attach::kInvalid;
    }
    parent.sib_end = s.end_ns;
    overflow_ |=
        __builtin_add_overflow(parent.covered, inclusive, &parent.covered);
    overflow_ |= __builtin_add_overflow(parent.child_heartbeats, s.heartbeats,
                                        &parent.child_heartbeats);
    return Attach::kAttached;
  }

  [[gnu::always_inline]] void Push(const Span& s, uint32_t index,
                                   int64_t inclusive) {
    stack_.push_back(Open{s.id, s.depth, index, rows_.RowForSite(s.site),
                          s.end_ns, inclusive, 0, INT64_MIN, 0});
  }

  // The index of the innermost open span (after a successful
  // `AttachToParent()`: the parent).
  uint32_t top_index() const { return stack_.back().index; }

  // Whether a sum over children overflowed.
  bool overflow() const { return overflow_; }

 private:
  struct Open {
    uint64_t id;
    uint32_t depth;
    uint32_t index;
    uint32_t row;
    int64_t end;
    int64_t inclusive;
    int64_t covered;  // sum of same-thread children's inclusive time
    int64_t sib_end;  // furthest end of the same-thread children so far
    uint64_t child_heartbeats;
  };

  void Finish(const Open& open) {
    const Span& span = spans_[open.index];
    const uint64_t self_heartbeats =
        open.child_heartbeats >= span.heartbeats
            ? 0
            : span.heartbeats - open.child_heartbeats;
    rows_.Add(span, open.index, open.row, open.inclusive,
              open.inclusive - open.covered, self_heartbeats);
  }

  const internal::SpanList& spans_;
  RowAccumulator& rows_;
  std::vector<Open> stack_;
  bool overflow_ = false;
};

// Span `i` is in the collector's order (thread, start, depth) after the one
// before it, and is regular on its own: a non-zero id, not ending before it
// starts, its site and thread in range, depth 0 exactly for roots.
[[gnu::always_inline]] inline bool CanonicalSpan(const Capture& capture,
                                                 uint32_t i) {
  const Span& s = internal::SpanList(capture)[i];
  if (i > 0) {
    const Span& prev = internal::SpanList(capture)[i - 1];
    if (std::tie(s.thread, s.start_ns, s.depth) <
        std::tie(prev.thread, prev.start_ns, prev.depth)) {
      return false;
    }
  }
  return s.id != 0 && s.end_ns >= s.start_ns && s.site < capture.sites.size() &&
         s.thread < capture.threads.size() &&
         (s.parent_id == 0) == (s.depth == 0);
}

// The streaming path, with `IdIndex(id_base, id_window)`. Returns
// kNotCanonical, having written nothing to `summary`, as soon as the capture
// is not a canonical valid forest: unsorted, duplicate ids, any validation
// issue, or a sum that would overflow; kIdOutsideWindow when an id does not
// fit the index.
Canonical SummarizeCanonical(const Capture& capture, Summary& summary,
                             uint64_t id_base, size_t id_window) {
  constexpr Canonical kNo = Canonical::kNotCanonical;
  const internal::SpanList spans(capture);
  const size_t n = spans.size();
  IdIndex ids(id_base, id_window, n);
  RowAccumulator rows(capture);
  OpenSpans open(spans, rows);
  // Spans whose parent is not on their thread's stack: cross-thread children
  // (fine), or irregular captures (found out below).
  std::vector<uint32_t> deferred;
  // Same-thread parents, for the named counters (when there are any).
  const bool counts = internal::AnyCounter(capture);
  std::vector<uint32_t> parents(counts ? n : 0, kNone);
  uint32_t thread = kNone;
  int64_t roots_end = INT64_MIN;
  for (uint32_t i = 0; i < n; ++i) {
    const Span& s = spans[i];
    if (!CanonicalSpan(capture, i)) return kNo;
    if (const Canonical added = ids.Add(s.id, i); added != Canonical::kDone) {
      return added;
    }
    if (s.thread != thread) {
      open.FinishAll();
      thread = s.thread;
      roots_end = INT64_MIN;
    }
    open.FinishEndedBefore(s.start_ns);
    int64_t inclusive;
    if (__builtin_sub_overflow(s.end_ns, s.start_ns, &inclusive)) return kNo;
    if (s.parent_id == 0) {
      if (s.start_ns < roots_end) return kNo;  // overlapping roots
      roots_end = std::max(roots_end, s.end_ns);
    } else {
      const OpenSpans::Attach attach = open.AttachToParent(s, inclusive);
      if (attach == OpenSpans::Attach::kInvalid) return kNo;
      if (attach == OpenSpans::Attach::kNotOnStack) deferred.push_back(i);
      if (attach == OpenSpans::Attach::kAttached && counts) {
        parents[i] = open.top_index();
      }
    }
    open.Push(s, i, inclusive);
  }
  open.FinishAll();
  if (open.overflow()) return kNo;
  if (!CrossThreadChildrenValid(spans, deferred, ids)) return kNo;
  if (counts) {
    const internal::SpanCounters counters(capture, parents);
    rows.Finish(summary, &counters);
  } else {
    rows.Finish(summary, nullptr);
  }
  return Canonical::kDone;
}

// Also the import issues, first: issues of span 0 sort before the forest's.
void CopyCaptureFields(const Capture& capture, Summary& summary) {
  summary.source = capture.source;
  summary.clock = capture.clock;
  summary.process_name = capture.process_name;
  summary.host = capture.host;
  summary.pid = capture.pid;
  summary.wall_clock_anchor_ns = capture.wall_clock_anchor_ns;
  summary.wall_clock_uncertainty_ns = capture.wall_clock_uncertainty_ns;
  summary.process_count =
      capture.processes.empty() ? 1 : capture.processes.size();
  summary.window_ns = capture.window_ns;
  summary.event_limit = capture.event_limit;
  summary.overflow_policy = capture.overflow_policy;
  summary.dropped_events = capture.dropped_events;
  summary.dropped_args = capture.dropped_args;
  summary.drops = internal::SummarizeDrops(capture);
  summary.failed_prepares = capture.failed_prepares;
  summary.overhead_ns_per_span = capture.overhead_ns_per_span;
  summary.process_resources = capture.process_resources;
  for (const std::string& issue : capture.import_issues) {
    summary.validation_issues.push_back(ValidationIssue{0, issue});
  }
  // A hand-built capture may measure allocations without a full column;
  // AllocsOf() reads the missing entries as 0, and the summary says so.
  if (capture.alloc_measured &&
      capture.span_allocs.size() != internal::SpanCount(capture)) {
    summary.validation_issues.push_back(ValidationIssue{
        0, "Capture::span_allocs has " +
               std::to_string(capture.span_allocs.size()) + " entries for " +
               std::to_string(internal::SpanCount(capture)) +
               " spans (a span without one counts no allocations)"});
  }
}

}  // namespace

namespace internal {

Summary SummarizeWithPath(const Capture& capture, SummaryPath path,
                          bool* used_canonical) {
  Summary summary;
  CopyCaptureFields(capture, summary);
  bool canonical = false;
  const internal::SpanList spans(capture);
  const size_t n = spans.size();
  if (path == SummaryPath::kAny && n < kNone) {
    // The runtime numbers spans consecutively, so a window of ids around the
    // first span's id usually holds them all and saves a pass; otherwise
    // measure the id range and try once more.
    const size_t window = static_cast<size_t>(kDenseFactor * n + kDenseSlack);
    const size_t guess = static_cast<size_t>(2 * n + kDenseSlack);
    const uint64_t first = n == 0 ? 0 : spans[0].id;
    const uint64_t base = first - std::min<uint64_t>(first, guess / 4);
    Summary attempt = summary;
    // Consecutive ids first (the collector's), then a window around them.
    Canonical outcome = SummarizeCanonical(capture, attempt, first, 0);
    if (outcome == Canonical::kIdOutsideWindow) {
      attempt = summary;
      outcome = SummarizeCanonical(capture, attempt, base, guess);
    }
    if (outcome == Canonical::kIdOutsideWindow) {
      uint64_t min_id = UINT64_MAX;
      uint64_t max_id = 0;
      for (const Span& s : spans) {
        min_id = std::min(min_id, s.id);
        max_id = std::max(max_id, s.id);
      }
      if (max_id - min_id < window) {
        attempt = summary;
        outcome = SummarizeCanonical(capture, attempt, min_id, window);
      }
    }
    canonical = outcome == Canonical::kDone;
    if (canonical) summary = std::move(attempt);
  }
  if (!canonical) SummarizeGeneral(capture, summary);
  for (Row& row : summary.rows) {
    row.instrumentation_permille = InstrumentationPermille(
        row.calls, summary.overhead_ns_per_span, row.total_ns);
  }
  if (used_canonical != nullptr) *used_canonical = canonical;
  return summary;
}

}  // namespace internal

int64_t InstrumentationPermille(uint64_t calls, int64_t overhead_ns_per_span,
                                int64_t total_ns) {
  if (total_ns <= 0 || overhead_ns_per_span <= 0) return 0;
  const absl::int128 permille = absl::int128(calls) * overhead_ns_per_span *
                                1000 / absl::int128(total_ns);
  return permille > 1000 ? 1000 : static_cast<int64_t>(permille);
}

RowKey RowKeyOf(const Site& site) {
  RowKey key{.name = site.name};
  for (size_t i = 0; i < kTagFields.size(); ++i) {
    key.*kRowKeyTags[i] = site.*kTagFields[i].site;
  }
  return key;
}

std::string RowLabel(const RowKey& key) {
  std::string label = key.name;
  bool first = true;
  for (size_t i = 0; i < kTagFields.size(); ++i) {
    const std::string& value = key.*kRowKeyTags[i];
    if (value.empty()) continue;
    label += first ? " [" : ", ";
    first = false;
    label.append(kTagFields[i].name);
    label += '=';
    label += value;
  }
  if (!first) label += ']';
  return label;
}

Summary Summarize(const Capture& capture) {
  return internal::SummarizeWithPath(capture, internal::SummaryPath::kAny,
                                     nullptr);
}

}  // namespace spanprof::analysis
