// SummaryToJson() and WriteSummary(): the `spanprof.summary` writer of the
// current version, its field names from summary_format.h's tables. (The strict
// reader is summary_reader.cc.)
#include <array>
#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "io/file_io_internal.h"
#include "json/json_writer.h"
#include "resources/process_resources.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "status_macros.h"
#include "summary/drops.h"
#include "summary/row_key_json.h"
#include "summary/summary_format.h"

namespace spanprof::analysis {
namespace internal {
namespace {

// The name of field `field` of `table`, which the current version must have:
// the writer writes only the current version (a call for a field that an
// earlier version dropped does not compile).
template <size_t N>
consteval std::string_view CurrentName(
    const std::array<VersionedField, N>& table, size_t field) {
  if (!table[field].In(kSummarySchemaVersion)) {
    throw "the current summary version has no such field";
  }
  return table[field].name;
}
consteval std::string_view RootName(SummaryField field) {
  return CurrentName(kSummaryFields, field);
}
consteval std::string_view RowName(RowField field) {
  return CurrentName(kRowFields, field);
}
consteval std::string_view IssueName(IssueField field) {
  return CurrentName(kIssueFields, field);
}
consteval std::string_view CounterName(RowCounterField field) {
  return CurrentName(kRowCounterFields, field);
}

// The scalar fields before `process_resources`.
void WriteTotals(JsonWriter& w, const Summary& summary) {
  w.Key(RootName(kRootSchema));
  w.String(summary.schema);
  // The layout below is the current version's, whatever version the summary
  // was read from.
  w.Key(RootName(kRootSchemaVersion));
  w.Int(kSummarySchemaVersion);
  w.Key(RootName(kRootSource));
  w.String(summary.source);
  w.Key(RootName(kRootClock));
  w.String(summary.clock);
  w.Key(RootName(kRootProcessName));
  w.String(summary.process_name);
  w.Key(RootName(kRootHost));
  w.String(summary.host);
  w.Key(RootName(kRootPid));
  w.Int(summary.pid);
  w.Key(RootName(kRootWallClockAnchorNs));
  w.Int(summary.wall_clock_anchor_ns);
  w.Key(RootName(kRootWallClockUncertaintyNs));
  w.Int(summary.wall_clock_uncertainty_ns);
  w.Key(RootName(kRootProcessCount));
  w.Uint(summary.process_count);
  w.Key(RootName(kRootEventCount));
  w.Uint(summary.event_count);
  w.Key(RootName(kRootThreadCount));
  w.Uint(summary.thread_count);
  w.Key(RootName(kRootMaxDepth));
  w.Uint(summary.max_depth);
  w.Key(RootName(kRootWindowNs));
  w.Int(summary.window_ns);
  w.Key(RootName(kRootRecordedThreadTimeNs));
  w.Int(summary.recorded_thread_time_ns);
  w.Key(RootName(kRootRecordedHeartbeats));
  w.Uint(summary.recorded_heartbeats);
  w.Key(RootName(kRootEventLimit));
  w.Uint(summary.event_limit);
  w.Key(RootName(kRootOverflowPolicy));
  w.String(summary.overflow_policy);
  w.Key(RootName(kRootDroppedEvents));
  w.Uint(summary.dropped_events);
  w.Key(RootName(kRootDroppedArgs));
  w.Uint(summary.dropped_args);
  w.Key(RootName(kRootDrops));
  WriteDrops(w, summary.drops);
  w.Key(RootName(kRootFailedPrepares));
  w.Uint(summary.failed_prepares);
  w.Key(RootName(kRootUnfinishedEvents));
  w.Uint(summary.unfinished_events);
  w.Key(RootName(kRootComplete));
  w.Bool(summary.complete);
  w.Key(RootName(kRootEndReason));
  w.String(summary.end_reason);
  w.Key(RootName(kRootOpenAtExitEvents));
  w.Uint(summary.open_at_exit_events);
  w.Key(RootName(kRootOverheadNsPerSpan));
  w.Int(summary.overhead_ns_per_span);
}

void WriteIssues(JsonWriter& w, const std::vector<ValidationIssue>& issues) {
  w.BeginArray();
  for (const ValidationIssue& issue : issues) {
    w.BeginObject();
    w.Key(IssueName(kIssueSpan));
    w.Uint(issue.span);
    w.Key(IssueName(kIssueMessage));
    w.String(issue.message);
    w.EndObject();
  }
  w.EndArray();
}

void OptionalDouble(JsonWriter& w, const std::optional<double>& value) {
  if (value.has_value()) {
    w.Double(*value);
  } else {
    w.Null();
  }
}

// {"NAME": {"total": .., "self": ..}, ...} in the row's (name) order.
void WriteCounters(JsonWriter& w, const std::vector<RowCounter>& counters) {
  w.BeginObject();
  for (const RowCounter& counter : counters) {
    w.Key(counter.name);
    w.BeginObject();
    w.Key(CounterName(kCounterTotal));
    w.Int(counter.total);
    w.Key(CounterName(kCounterSelf));
    w.Int(counter.self);
    w.EndObject();
  }
  w.EndObject();
}

void WriteRow(JsonWriter& w, const Row& row) {
  w.BeginObject();
  w.Key(RowName(kRowKey));
  WriteRowKey(w, row.key);
  w.Key(RowName(kRowLabel));
  w.String(row.label);
  w.Key(RowName(kRowCalls));
  w.Uint(row.calls);
  w.Key(RowName(kRowTotalNs));
  w.Int(row.total_ns);
  w.Key(RowName(kRowSelfNs));
  w.Int(row.self_ns);
  w.Key(RowName(kRowMinNs));
  w.Int(row.min_ns);
  w.Key(RowName(kRowMeanNs));
  w.Int(row.mean_ns);
  w.Key(RowName(kRowMedianNs));
  w.Int(row.median_ns);
  w.Key(RowName(kRowP95Ns));
  w.Int(row.p95_ns);
  w.Key(RowName(kRowP99Ns));
  w.Int(row.p99_ns);
  w.Key(RowName(kRowMaxNs));
  w.Int(row.max_ns);
  w.Key(RowName(kRowTailRatio));
  OptionalDouble(w, row.tail_ratio);
  w.Key(RowName(kRowLogSigma));
  OptionalDouble(w, row.log_sigma);
  w.Key(RowName(kRowHeavyTail));
  w.Bool(row.heavy_tail);
  w.Key(RowName(kRowTotalHeartbeats));
  w.Uint(row.total_heartbeats);
  w.Key(RowName(kRowSelfHeartbeats));
  w.Uint(row.self_heartbeats);
  w.Key(RowName(kRowAllocCount));
  w.OptionalInt(row.alloc_count);
  w.Key(RowName(kRowAllocBytes));
  w.OptionalInt(row.alloc_bytes);
  w.Key(RowName(kRowSharePermille));
  w.Int(row.share_permille);
  w.Key(RowName(kRowInstrumentationPermille));
  w.Int(row.instrumentation_permille);
  w.Key(RowName(kRowThreads));
  w.Uint(row.threads);
  w.Key(RowName(kRowProcesses));
  w.Uint(row.processes);
  w.Key(RowName(kRowExceptions));
  w.Uint(row.exceptions);
  w.Key(RowName(kRowHookFailures));
  w.Uint(row.hook_failures);
  w.Key(RowName(kRowUnfinished));
  w.Uint(row.unfinished);
  w.Key(RowName(kRowDropped));
  w.Uint(row.dropped);
  w.Key(RowName(kRowCounters));
  WriteCounters(w, row.counters);
  w.EndObject();
}

}  // namespace

void WriteRowKey(JsonWriter& w, const RowKey& key) {
  const std::string* const values[] = {&key.name,     &key.phase,   &key.module,
                                       &key.activity, &key.backend, &key.dtype,
                                       &key.device};
  static_assert(std::size(values) == kRowKeyFields.size());
  w.BeginObject();
  for (size_t i = 0; i < kRowKeyFields.size(); ++i) {
    // A field a reader may find missing is written only when set.
    if (!kRowKeyFields[i].required && values[i]->empty()) continue;
    w.Key(kRowKeyFields[i].name);
    w.String(*values[i]);
  }
  w.EndObject();
}

}  // namespace internal

std::string SummaryToJson(const Summary& summary) {
  std::string out;
  // A row is about 800 bytes plus its name twice (key and label); reserving
  // a little more costs only address space, growing past it a second copy.
  size_t bytes = 1024 + summary.validation_issues.size() * 120;
  for (const Row& row : summary.rows) {
    bytes += 1024 + row.key.name.size() + row.label.size();
  }
  out.reserve(bytes);
  JsonWriter w(&out, {.indent = 2});
  w.BeginObject();
  internal::WriteTotals(w, summary);
  w.Key(internal::RootName(internal::kRootProcessResources));
  internal::WriteProcessResources(w, summary.process_resources);
  w.Key(internal::RootName(internal::kRootValidationIssues));
  internal::WriteIssues(w, summary.validation_issues);
  w.Key(internal::RootName(internal::kRootRows));
  w.BeginArray();
  for (const Row& row : summary.rows) internal::WriteRow(w, row);
  w.EndArray();
  w.EndObject();
  w.Newline();
  return out;
}

absl::Status WriteSummary(const Summary& summary, const std::string& path) {
  SPANPROF_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::OutputFile> file,
      internal::OutputFile::Create(path, internal::EndsWithGz(path)));
  SPANPROF_RETURN_IF_ERROR(file->Write(SummaryToJson(summary)));
  return file->Commit();
}

}  // namespace spanprof::analysis
