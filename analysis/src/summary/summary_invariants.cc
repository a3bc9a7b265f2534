// The cross-field rules of a summary (DESIGN.md §3), checked on what the
// reader read: each row on its own, the rows together, the totals against
// the rows, and the capture-wide flags.
#include "summary/summary_invariants.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"
#include "status_macros.h"
#include "summary/drops.h"
#include "summary/summary_format.h"
#include "summary/tail_shape.h"

namespace spanprof::analysis::internal {
namespace {

// `SummaryInvariants` checks one summary; errors name the input `source` and
// the JSON path of the field at fault.
class SummaryInvariants {
 public:
  explicit SummaryInvariants(std::string_view source) : json_(source) {}

  absl::Status CheckInvariants(const Summary& s) const {
    SPANPROF_RETURN_IF_ERROR(CheckSource(s));
    RowSums sums;
    SPANPROF_RETURN_IF_ERROR(CheckRows(s, sums));
    SPANPROF_RETURN_IF_ERROR(CheckTotals(s, sums));
    for (size_t i = 0; i < s.rows.size(); ++i) {
      SPANPROF_RETURN_IF_ERROR(CheckShare(i, s.rows[i], s));
    }
    if (s.complete &&
        (s.dropped_events != 0 || s.dropped_args != 0 ||
         s.unfinished_events != 0 || !s.validation_issues.empty())) {
      const JsonPath root = JsonPath::Root();
      return json_.Error(
          root.Field("complete"),
          Cat("true, but the capture has ", s.dropped_events,
              " dropped events, ", s.dropped_args, " dropped args, ",
              s.unfinished_events, " unfinished events and ",
              s.validation_issues.size(), " validation issues"));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status RowError(size_t index, std::string_view message) const {
    const JsonPath root = JsonPath::Root();
    const JsonPath rows = root.Field("rows");
    return json_.Error(rows.Index(index), message);
  }

  absl::Status CheckOrder(size_t index, std::string_view lo_name, int64_t lo,
                          std::string_view hi_name, int64_t hi) const {
    if (lo <= hi) return absl::OkStatus();
    return RowError(index,
                    Cat(hi_name, " (", hi, ") < ", lo_name, " (", lo, ")"));
  }

  // A row with calls 0: only dropped spans.
  absl::Status CheckUncalledRow(size_t index, const Row& row) const {
    const bool all_zero =
        row.total_ns == 0 && row.self_ns == 0 && row.min_ns == 0 &&
        row.mean_ns == 0 && row.median_ns == 0 && row.p95_ns == 0 &&
        row.p99_ns == 0 && row.max_ns == 0 && row.total_heartbeats == 0 &&
        row.self_heartbeats == 0 && row.threads == 0 && row.processes == 0 &&
        row.exceptions == 0 && row.hook_failures == 0 && row.unfinished == 0 &&
        row.share_permille == 0 && !row.tail_ratio.has_value() &&
        !row.log_sigma.has_value() && !row.heavy_tail && row.counters.empty();
    if (!all_zero) {
      return RowError(index,
                      "a row with calls 0 must have every timing, heartbeat "
                      "and count field 0, no tail shape and no counters");
    }
    if (row.dropped == 0) {
      return RowError(index,
                      "a row with calls 0 exists only for dropped spans, but "
                      "dropped is 0");
    }
    return absl::OkStatus();
  }

  // A row with calls > 0: ordered percentiles, a consistent total and mean,
  // counts within calls.
  absl::Status CheckCalledRow(size_t index, const Row& row) const {
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "min_ns", row.min_ns, "median_ns", row.median_ns));
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "median_ns", row.median_ns, "p95_ns", row.p95_ns));
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "p95_ns", row.p95_ns, "p99_ns", row.p99_ns));
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "p99_ns", row.p99_ns, "max_ns", row.max_ns));
    const absl::int128 calls = row.calls;
    if (absl::int128(row.min_ns) * calls > row.total_ns ||
        absl::int128(row.max_ns) * calls < row.total_ns) {
      return RowError(index, Cat("total_ns (", row.total_ns,
                                 ") is not within calls × [min_ns, "
                                 "max_ns]"));
    }
    const int64_t mean =
        static_cast<int64_t>(absl::int128(row.total_ns) / calls);
    if (row.mean_ns != mean) {
      return RowError(index, Cat("mean_ns (", row.mean_ns,
                                 ") != floor(total_ns / calls) (", mean, ")"));
    }
    if (row.threads == 0) {
      return RowError(index, "threads is 0 but calls > 0");
    }
    if (row.processes == 0) {
      return RowError(index, "processes is 0 but calls > 0");
    }
    SPANPROF_RETURN_IF_ERROR(CheckTailShape(index, row));
    if (row.hook_failures > row.calls) {
      return RowError(index, Cat("hook_failures (", row.hook_failures,
                                 ") > calls (", row.calls, ")"));
    }
    if (row.exceptions > row.calls) {
      return RowError(index, Cat("exceptions (", row.exceptions, ") > calls (",
                                 row.calls, ")"));
    }
    if (row.unfinished > row.calls) {
      return RowError(index, Cat("unfinished (", row.unfinished, ") > calls (",
                                 row.calls, ")"));
    }
    return absl::OkStatus();
  }

  // tail_ratio recomputes; log_sigma needs two calls; heavy_tail needs a
  // log_sigma (the rule's thresholds are not checked: they may change).
  absl::Status CheckTailShape(size_t index, const Row& row) const {
    if (row.tail_ratio != TailRatio(row.p99_ns, row.median_ns)) {
      return RowError(index, row.median_ns == 0
                                 ? "tail_ratio must be null when median_ns is 0"
                                 : Cat("tail_ratio is not p99_ns / median_ns (",
                                       row.p99_ns, " / ", row.median_ns, ")"));
    }
    if (row.log_sigma.has_value() && row.calls < 2) {
      return RowError(index, "log_sigma must be null with fewer than 2 calls");
    }
    if (row.heavy_tail && !row.log_sigma.has_value()) {
      return RowError(index, "heavy_tail is true but log_sigma is null");
    }
    return absl::OkStatus();
  }

  absl::Status CheckCounters(size_t index, const Row& row) const {
    for (const RowCounter& counter : row.counters) {
      if (counter.self > counter.total) {
        return RowError(index,
                        Cat("counter ", Quote(counter.name), ": self (",
                            counter.self, ") > total (", counter.total, ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckRow(size_t index, const Row& row,
                        const Summary& summary) const {
    if (row.label != RowLabel(row.key)) {
      return RowError(index, Cat("label ", Quote(row.label),
                                 " does not match key (expected ",
                                 Quote(RowLabel(row.key)), ")"));
    }
    if (row.alloc_count.has_value() != row.alloc_bytes.has_value()) {
      return RowError(index,
                      "alloc_count and alloc_bytes must both be null or both "
                      "be integers");
    }
    SPANPROF_RETURN_IF_ERROR(row.calls == 0 ? CheckUncalledRow(index, row)
                                            : CheckCalledRow(index, row));
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "self_ns", row.self_ns, "total_ns", row.total_ns));
    if (row.self_heartbeats > row.total_heartbeats) {
      return RowError(index,
                      Cat("self_heartbeats (", row.self_heartbeats,
                          ") > total_heartbeats (", row.total_heartbeats, ")"));
    }
    if (row.threads > summary.thread_count) {
      return RowError(index, Cat("threads (", row.threads, ") > thread_count (",
                                 summary.thread_count, ")"));
    }
    if (row.processes > row.threads || row.processes > summary.process_count) {
      return RowError(
          index, Cat("processes (", row.processes, ") > threads (", row.threads,
                     ") or process_count (", summary.process_count, ")"));
    }
    return CheckCounters(index, row);
  }

  // Needs a verified recorded_thread_time_ns, so it runs after the totals.
  absl::Status CheckShare(size_t index, const Row& row,
                          const Summary& summary) const {
    const int64_t share =
        summary.recorded_thread_time_ns == 0
            ? 0
            : static_cast<int64_t>(absl::int128(row.self_ns) * 1000 /
                                   summary.recorded_thread_time_ns);
    if (row.share_permille != share) {
      return RowError(index, Cat("share_permille (", row.share_permille,
                                 ") != self_ns * 1000 / "
                                 "recorded_thread_time_ns (",
                                 share, ")"));
    }
    const int64_t instrumentation = InstrumentationPermille(
        row.calls, summary.overhead_ns_per_span, row.total_ns);
    if (row.instrumentation_permille != instrumentation) {
      return RowError(
          index, Cat("instrumentation_permille (", row.instrumentation_permille,
                     ") != calls * overhead_ns_per_span * 1000 / total_ns, "
                     "at most 1000 (",
                     instrumentation, ")"));
    }
    return absl::OkStatus();
  }

  // What the rows add up to, for the totals.
  struct RowSums {
    absl::int128 calls = 0;
    absl::int128 self_ns = 0;
    absl::int128 unfinished = 0;
    absl::int128 self_heartbeats = 0;
  };

  // Each row on its own, then across rows: unique keys, the sort order, alloc
  // counters null in all rows or none.
  absl::Status CheckRows(const Summary& s, RowSums& sums) const {
    using KeyView =
        std::tuple<std::string_view, std::string_view, std::string_view,
                   std::string_view, std::string_view, std::string_view,
                   std::string_view>;
    absl::flat_hash_map<KeyView, size_t> seen;
    seen.reserve(s.rows.size());
    for (size_t i = 0; i < s.rows.size(); ++i) {
      const Row& row = s.rows[i];
      SPANPROF_RETURN_IF_ERROR(CheckRow(i, row, s));
      auto [it, inserted] = seen.emplace(
          KeyView(row.key.name, row.key.phase, row.key.module, row.key.activity,
                  row.key.backend, row.key.dtype, row.key.device),
          i);
      if (!inserted) {
        return RowError(i, Cat("duplicate key ", Quote(row.label),
                               " (also $.rows[", it->second, "])"));
      }
      if (i > 0) {
        const Row& prev = s.rows[i - 1];
        const bool ordered =
            prev.self_ns > row.self_ns ||
            (prev.self_ns == row.self_ns && prev.key < row.key);
        if (!ordered) {
          return RowError(i,
                          "rows are not sorted by self_ns descending, then "
                          "key");
        }
      }
      if (i > 0 &&
          row.alloc_count.has_value() != s.rows[0].alloc_count.has_value()) {
        return RowError(i,
                        "alloc counters are null in some rows and integers in "
                        "others");
      }
      sums.calls += row.calls;
      sums.self_ns += row.self_ns;
      sums.unfinished += row.unfinished;
      sums.self_heartbeats += row.self_heartbeats;
    }
    return absl::OkStatus();
  }

  absl::Status CheckTotals(const Summary& s, const RowSums& sums) const {
    const JsonPath root = JsonPath::Root();
    if (sums.calls != absl::int128(s.event_count)) {
      return json_.Error(root.Field("event_count"),
                         Cat(s.event_count, " != sum of rows[].calls (",
                             static_cast<uint64_t>(sums.calls), ")"));
    }
    if (sums.self_ns != s.recorded_thread_time_ns) {
      return json_.Error(
          root.Field("recorded_thread_time_ns"),
          Cat(s.recorded_thread_time_ns, " != sum of rows[].self_ns (",
              static_cast<int64_t>(sums.self_ns), ")"));
    }
    if (sums.unfinished != absl::int128(s.unfinished_events)) {
      return json_.Error(
          root.Field("unfinished_events"),
          Cat(s.unfinished_events, " != sum of rows[].unfinished (",
              static_cast<uint64_t>(sums.unfinished), ")"));
    }
    if (s.open_at_exit_events > s.event_count) {
      return json_.Error(
          root.Field("open_at_exit_events"),
          Cat(s.open_at_exit_events, " > event_count (", s.event_count, ")"));
    }
    if (sums.self_heartbeats != absl::int128(s.recorded_heartbeats)) {
      return json_.Error(
          root.Field("recorded_heartbeats"),
          Cat(s.recorded_heartbeats, " != sum of rows[].self_heartbeats (",
              static_cast<uint64_t>(sums.self_heartbeats), ")"));
    }
    return absl::OkStatus();
  }

  // spanprof knows its own clock, and not a foreign trace's.
  absl::Status CheckSource(const Summary& s) const {
    const bool foreign = s.source != kSourceSpanprof;
    if (foreign != (s.clock == kClockUnknown)) {
      return json_.Error(JsonPath::Root().Field("clock"),
                         Cat(Quote(s.clock), " with source ", Quote(s.source),
                             " (a clock is \"unknown\" exactly when the "
                             "source is not \"spanprof\")"));
    }
    return absl::OkStatus();
  }

  StrictJson json_;
};

}  // namespace

absl::Status CheckSummaryInvariants(std::string_view source,
                                    const Summary& summary) {
  SPANPROF_RETURN_IF_ERROR(SummaryInvariants(source).CheckInvariants(summary));
  // Older versions got their drops from dropped_args (UpgradeSummary).
  return CheckDrops(StrictJson(source), summary);
}

}  // namespace spanprof::analysis::internal
