// summary_format.h — the one description of the `spanprof.summary` fields
// (private to the analysis library): the names and order that
// `SummaryToJson()` writes (version 5) and the strict reader expects, and
// which of them versions 1 to 4 have.
// docs/formats.md ("Summary") explains each field.
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_

#include <array>
#include <cstddef>
#include <string_view>

#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// The top-level object's fields, in order.
enum SummaryField : size_t {
  kRootSchema,
  kRootSchemaVersion,
  kRootSource,
  kRootClock,
  kRootProcessName,
  kRootHost,
  kRootPid,
  kRootWallClockAnchorNs,
  kRootWallClockUncertaintyNs,
  kRootProcessCount,
  kRootEventCount,
  kRootThreadCount,
  kRootMaxDepth,
  kRootWindowNs,
  kRootRecordedThreadTimeNs,
  kRootRecordedHeartbeats,
  kRootEventLimit,
  kRootOverflowPolicy,
  kRootDroppedEvents,
  kRootDroppedArgs,
  kRootFailedPrepares,
  kRootUnfinishedEvents,
  kRootComplete,
  kRootEndReason,
  kRootOpenAtExitEvents,
  kRootOverheadNsPerSpan,
  kRootProcessResources,
  kRootValidationIssues,
  kRootRows,
};
inline constexpr std::array<std::string_view, 29> kSummaryKeys = {
    "schema",
    "schema_version",
    "source",
    "clock",
    "process_name",
    "host",
    "pid",
    "wall_clock_anchor_ns",
    "wall_clock_uncertainty_ns",
    "process_count",
    "event_count",
    "thread_count",
    "max_depth",
    "window_ns",
    "recorded_thread_time_ns",
    "recorded_heartbeats",
    "event_limit",
    "overflow_policy",
    "dropped_events",
    "dropped_args",
    "failed_prepares",
    "unfinished_events",
    "complete",
    "end_reason",
    "open_at_exit_events",
    "overhead_ns_per_span",
    "process_resources",
    "validation_issues",
    "rows",
};

// A `validation_issues` element's fields, and a row `key`'s.
inline constexpr std::array<std::string_view, 2> kIssueKeys = {"span",
                                                               "message"};
// The key's first four fields are always written; backend, dtype and device
// (added to v4 with span hooks) only when set, and read as "" when missing.
// The name, then the tags (kTagFields).
inline constexpr std::array<std::string_view, 1 + kTagFields.size()>
    kRowKeyKeys = [] {
      std::array<std::string_view, 1 + kTagFields.size()> keys{"name"};
      for (size_t i = 0; i < kTagFields.size(); ++i) {
        keys[i + 1] = kTagFields[i].name;
      }
      return keys;
    }();
inline constexpr size_t kRowKeyAlwaysWritten = 4;

// A row's fields, in order.
enum RowField : size_t {
  kRowKey,
  kRowLabel,
  kRowCalls,
  kRowTotalNs,
  kRowSelfNs,
  kRowMinNs,
  kRowMeanNs,
  kRowMedianNs,
  kRowP95Ns,
  kRowP99Ns,
  kRowMaxNs,
  kRowTailRatio,
  kRowLogSigma,
  kRowHeavyTail,
  kRowTotalHeartbeats,
  kRowSelfHeartbeats,
  kRowAllocCount,
  kRowAllocBytes,
  kRowSharePermille,
  kRowInstrumentationPermille,
  kRowThreads,
  kRowProcesses,
  kRowExceptions,
  kRowHookFailures,
  kRowUnfinished,
  kRowDropped,
  kRowCounters,
};
inline constexpr std::array<std::string_view, 27> kRowKeys = {
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
    "tail_ratio",
    "log_sigma",
    "heavy_tail",
    "total_heartbeats",
    "self_heartbeats",
    "alloc_count",
    "alloc_bytes",
    "share_permille",
    "instrumentation_permille",
    "threads",
    "processes",
    "exceptions",
    "hook_failures",
    "unfinished",
    "dropped",
    "counters",
};

// A row's `counters` value is an object with one member per counter name,
// each with these fields.
inline constexpr std::array<std::string_view, 2> kRowCounterKeys = {"total",
                                                                    "self"};

// The values of `source` (version 3): spanprof's own captures, and foreign
// Chrome Trace Event files; and the clock of a foreign capture (whose clock
// spanprof cannot know).
inline constexpr std::string_view kSourceSpanprof = "spanprof";
inline constexpr std::string_view kSourceChromeTrace = "chrome-trace";
inline constexpr std::string_view kClockUnknown = "unknown";

// The fields of version 4: every field but `open_at_exit_events` and
// `end_reason` (version 5).
inline constexpr std::array<size_t, 27> kSummaryV4Fields = {
    kRootSchema,
    kRootSchemaVersion,
    kRootSource,
    kRootClock,
    kRootProcessName,
    kRootHost,
    kRootPid,
    kRootWallClockAnchorNs,
    kRootWallClockUncertaintyNs,
    kRootProcessCount,
    kRootEventCount,
    kRootThreadCount,
    kRootMaxDepth,
    kRootWindowNs,
    kRootRecordedThreadTimeNs,
    kRootRecordedHeartbeats,
    kRootEventLimit,
    kRootOverflowPolicy,
    kRootDroppedEvents,
    kRootDroppedArgs,
    kRootFailedPrepares,
    kRootUnfinishedEvents,
    kRootComplete,
    kRootOverheadNsPerSpan,
    kRootProcessResources,
    kRootValidationIssues,
    kRootRows,
};

// The fields of version 3: every field of version 4 but `process_count` and
// `failed_prepares` (version 4).
inline constexpr std::array<size_t, 25> kSummaryV3Fields = {
    kRootSchema,
    kRootSchemaVersion,
    kRootSource,
    kRootClock,
    kRootProcessName,
    kRootHost,
    kRootPid,
    kRootWallClockAnchorNs,
    kRootWallClockUncertaintyNs,
    kRootEventCount,
    kRootThreadCount,
    kRootMaxDepth,
    kRootWindowNs,
    kRootRecordedThreadTimeNs,
    kRootRecordedHeartbeats,
    kRootEventLimit,
    kRootOverflowPolicy,
    kRootDroppedEvents,
    kRootDroppedArgs,
    kRootUnfinishedEvents,
    kRootComplete,
    kRootOverheadNsPerSpan,
    kRootProcessResources,
    kRootValidationIssues,
    kRootRows,
};

// The row fields of version 3: every row field but `processes` and
// `hook_failures` (version 4).
inline constexpr std::array<size_t, 25> kRowV3Fields = {
    kRowKey,
    kRowLabel,
    kRowCalls,
    kRowTotalNs,
    kRowSelfNs,
    kRowMinNs,
    kRowMeanNs,
    kRowMedianNs,
    kRowP95Ns,
    kRowP99Ns,
    kRowMaxNs,
    kRowTailRatio,
    kRowLogSigma,
    kRowHeavyTail,
    kRowTotalHeartbeats,
    kRowSelfHeartbeats,
    kRowAllocCount,
    kRowAllocBytes,
    kRowSharePermille,
    kRowInstrumentationPermille,
    kRowThreads,
    kRowExceptions,
    kRowUnfinished,
    kRowDropped,
    kRowCounters,
};

// The fields of version 2: every field of version 3 but `source`, `host`,
// `pid` and the wall-clock anchor.
inline constexpr std::array<size_t, 20> kSummaryV2Fields = {
    kRootSchema,
    kRootSchemaVersion,
    kRootClock,
    kRootProcessName,
    kRootEventCount,
    kRootThreadCount,
    kRootMaxDepth,
    kRootWindowNs,
    kRootRecordedThreadTimeNs,
    kRootRecordedHeartbeats,
    kRootEventLimit,
    kRootOverflowPolicy,
    kRootDroppedEvents,
    kRootDroppedArgs,
    kRootUnfinishedEvents,
    kRootComplete,
    kRootOverheadNsPerSpan,
    kRootProcessResources,
    kRootValidationIssues,
    kRootRows,
};

// The row fields of version 2: every row field of version 3 but
// `instrumentation_permille`.
inline constexpr std::array<size_t, 24> kRowV2Fields = {
    kRowKey,        kRowLabel,      kRowCalls,           kRowTotalNs,
    kRowSelfNs,     kRowMinNs,      kRowMeanNs,          kRowMedianNs,
    kRowP95Ns,      kRowP99Ns,      kRowMaxNs,           kRowTailRatio,
    kRowLogSigma,   kRowHeavyTail,  kRowTotalHeartbeats, kRowSelfHeartbeats,
    kRowAllocCount, kRowAllocBytes, kRowSharePermille,   kRowThreads,
    kRowExceptions, kRowUnfinished, kRowDropped,         kRowCounters,
};

// The fields of version 1: indexes into kSummaryKeys and kRowKeys, in order.
// (Its rows are version 2's without the tail shape and counters; version 3's
// rows add `instrumentation_permille`.)
inline constexpr std::array<size_t, 19> kSummaryV1Fields = {
    kRootSchema,
    kRootSchemaVersion,
    kRootClock,
    kRootProcessName,
    kRootEventCount,
    kRootThreadCount,
    kRootMaxDepth,
    kRootWindowNs,
    kRootRecordedThreadTimeNs,
    kRootRecordedHeartbeats,
    kRootEventLimit,
    kRootOverflowPolicy,
    kRootDroppedEvents,
    kRootUnfinishedEvents,
    kRootComplete,
    kRootOverheadNsPerSpan,
    kRootProcessResources,
    kRootValidationIssues,
    kRootRows,
};
inline constexpr std::array<size_t, 20> kRowV1Fields = {
    kRowKey,
    kRowLabel,
    kRowCalls,
    kRowTotalNs,
    kRowSelfNs,
    kRowMinNs,
    kRowMeanNs,
    kRowMedianNs,
    kRowP95Ns,
    kRowP99Ns,
    kRowMaxNs,
    kRowTotalHeartbeats,
    kRowSelfHeartbeats,
    kRowAllocCount,
    kRowAllocBytes,
    kRowSharePermille,
    kRowThreads,
    kRowExceptions,
    kRowUnfinished,
    kRowDropped,
};

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_
