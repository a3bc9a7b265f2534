// summary_format.h — the one description of the `spanprof.summary` fields
// (private to the analysis library).
//
// One table per kind of object (the top level, a row, a row's key, a
// validation issue, a row counter) names each field in the order that
// `SummaryToJson()` writes it, with the schema version that added it and,
// for a field a later version dropped, the last version that has it. Every
// version's list of fields is derived from the tables (`FieldsIn()`): the
// strict reader accepts exactly that list (a field of another version is
// "unknown", one of this version that is absent "missing"), and the writer
// writes the current version's. A new field is one line in its table.
// docs/formats.md ("Summary") explains each field.
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/capture_format.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis::internal {

// `VersionedField` is one field of an object: its name, the first schema
// version that has it, the last one (0 while the current version has it),
// and whether a document of those versions must have it.
struct VersionedField {
  std::string_view name;
  int64_t since = 1;
  int64_t until = 0;
  bool required = true;

  constexpr bool In(int64_t version) const {
    return version >= since && (until == 0 || version <= until);
  }
};

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
  kRootDrops,
  kRootFailedPrepares,
  kRootUnfinishedEvents,
  kRootComplete,
  kRootEndReason,
  kRootOpenAtExitEvents,
  kRootOverheadNsPerSpan,
  kRootProcessResources,
  kRootValidationIssues,
  kRootRows,
  kRootFieldCount,
};
inline constexpr auto kSummaryFields = std::to_array<VersionedField>({
    {"schema"},
    {"schema_version"},
    {"source", 3},
    {"clock"},
    {"process_name"},
    {"host", 3},
    {"pid", 3},
    {"wall_clock_anchor_ns", 3},
    {"wall_clock_uncertainty_ns", 3},
    {"process_count", 4},
    {"event_count"},
    {"thread_count"},
    {"max_depth"},
    {"window_ns"},
    {"recorded_thread_time_ns"},
    {"recorded_heartbeats"},
    {"event_limit"},
    {"overflow_policy"},
    {"dropped_events"},
    {"dropped_args", 2},
    {"drops", 5},
    {"failed_prepares", 4},
    {"unfinished_events"},
    {"complete"},
    {"end_reason", 5},
    {"open_at_exit_events", 5},
    {"overhead_ns_per_span"},
    {"process_resources"},
    {"validation_issues"},
    {"rows"},
});
static_assert(kSummaryFields.size() == kRootFieldCount);

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
  kRowFieldCount,
};
inline constexpr auto kRowFields = std::to_array<VersionedField>({
    {"key"},
    {"label"},
    {"calls"},
    {"total_ns"},
    {"self_ns"},
    {"min_ns"},
    {"mean_ns"},
    {"median_ns"},
    {"p95_ns"},
    {"p99_ns"},
    {"max_ns"},
    {"tail_ratio", 2},
    {"log_sigma", 2},
    {"heavy_tail", 2},
    {"total_heartbeats"},
    {"self_heartbeats"},
    {"alloc_count"},
    {"alloc_bytes"},
    {"share_permille"},
    {"instrumentation_permille", 3},
    {"threads"},
    {"processes", 4},
    {"exceptions"},
    {"hook_failures", 4},
    {"unfinished"},
    {"dropped"},
    {"counters", 2},
});
static_assert(kRowFields.size() == kRowFieldCount);

// A row `key`'s fields. Backend, dtype and device (version 4, with span
// hooks) are written only when set, and read as "" when missing.
enum RowKeyField : size_t {
  kKeyName,
  kKeyPhase,
  kKeyModule,
  kKeyActivity,
  kKeyBackend,
  kKeyDtype,
  kKeyDevice,
  kKeyFieldCount,
};
inline constexpr auto kRowKeyFields = std::to_array<VersionedField>({
    {"name"},
    {"phase"},
    {"module"},
    {"activity"},
    {"backend", 4, 0, false},
    {"dtype", 4, 0, false},
    {"device", 4, 0, false},
});
static_assert(kRowKeyFields.size() == kKeyFieldCount);

// A `validation_issues` element's fields.
enum IssueField : size_t { kIssueSpan, kIssueMessage, kIssueFieldCount };
inline constexpr auto kIssueFields =
    std::to_array<VersionedField>({{"span"}, {"message"}});
static_assert(kIssueFields.size() == kIssueFieldCount);

// A row's `counters` value is an object with one member per counter name
// (version 2), each with these fields.
enum RowCounterField : size_t {
  kCounterTotal,
  kCounterSelf,
  kCounterFieldCount
};
inline constexpr auto kRowCounterFields =
    std::to_array<VersionedField>({{"total", 2}, {"self", 2}});
static_assert(kRowCounterFields.size() == kCounterFieldCount);

// `CountIn()` is the number of fields of `table` that `version` has.
template <size_t N>
constexpr size_t CountIn(const std::array<VersionedField, N>& table,
                         int64_t version) {
  size_t count = 0;
  for (const VersionedField& field : table) count += field.In(version) ? 1 : 0;
  return count;
}

// `FieldsIn<kTable, kVersion>()` is version `kVersion`'s list of `kTable`'s
// fields: their indexes into the table, in the table's (the writer's) order.
template <const auto& kTable, int64_t kVersion>
constexpr auto FieldsIn() {
  std::array<size_t, CountIn(kTable, kVersion)> fields{};
  size_t n = 0;
  for (size_t i = 0; i < kTable.size(); ++i) {
    if (kTable[i].In(kVersion)) fields[n++] = i;
  }
  return fields;
}

// Each table is the history of versions 1 to the current one: no field
// appears after the current version or leaves before it appeared.
template <size_t N>
constexpr bool IsHistory(const std::array<VersionedField, N>& table) {
  return std::ranges::all_of(table, [](const VersionedField& field) {
    return field.since >= 1 && field.since <= kSummarySchemaVersion &&
           (field.until == 0 || (field.until >= field.since &&
                                 field.until < kSummarySchemaVersion));
  });
}
static_assert(IsHistory(kSummaryFields) && IsHistory(kRowFields) &&
              IsHistory(kRowKeyFields) && IsHistory(kIssueFields) &&
              IsHistory(kRowCounterFields));

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_FORMAT_H_
