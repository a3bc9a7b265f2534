// summary_format.h — the one description of the `spanprof.summary` v1
// fields (private to the analysis library): the names and order that
// `SummaryToJson()` writes and the strict reader expects.
// docs/formats.md ("Summary") explains each field.
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_

#include <array>
#include <cstddef>
#include <string_view>

namespace spanprof::analysis::internal {

// The top-level object's fields, in order.
enum SummaryField : size_t {
  kSchema,
  kSchemaVersion,
  kClock,
  kProcessName,
  kEventCount,
  kThreadCount,
  kMaxDepth,
  kWindowNs,
  kRecordedThreadTimeNs,
  kRecordedHeartbeats,
  kEventLimit,
  kOverflowPolicy,
  kDroppedEvents,
  kUnfinishedEvents,
  kComplete,
  kOverheadNsPerSpan,
  kProcessResources,
  kValidationIssues,
  kRows,
};
inline constexpr std::array<std::string_view, 19> kSummaryKeys = {
    "schema",
    "schema_version",
    "clock",
    "process_name",
    "event_count",
    "thread_count",
    "max_depth",
    "window_ns",
    "recorded_thread_time_ns",
    "recorded_heartbeats",
    "event_limit",
    "overflow_policy",
    "dropped_events",
    "unfinished_events",
    "complete",
    "overhead_ns_per_span",
    "process_resources",
    "validation_issues",
    "rows",
};

// A `validation_issues` element's fields, and a row `key`'s.
inline constexpr std::array<std::string_view, 2> kIssueKeys = {"span",
                                                               "message"};
inline constexpr std::array<std::string_view, 4> kRowKeyKeys = {
    "name", "phase", "module", "activity"};

// A row's fields, in order.
enum RowField : size_t {
  kKey,
  kLabel,
  kCalls,
  kTotalNs,
  kSelfNs,
  kMinNs,
  kMeanNs,
  kMedianNs,
  kP95Ns,
  kP99Ns,
  kMaxNs,
  kTotalHeartbeats,
  kSelfHeartbeats,
  kAllocCount,
  kAllocBytes,
  kSharePermille,
  kThreads,
  kExceptions,
  kUnfinished,
  kDropped,
};
inline constexpr std::array<std::string_view, 20> kRowKeys = {
    "key",
    "label",
    "calls",
    "total_ns",
    "self_ns",
    "min_ns",
    "mean_ns",
    "median_ns",
    "p95_ns",
    "p99_ns",
    "max_ns",
    "total_heartbeats",
    "self_heartbeats",
    "alloc_count",
    "alloc_bytes",
    "share_permille",
    "threads",
    "exceptions",
    "unfinished",
    "dropped",
};

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_
