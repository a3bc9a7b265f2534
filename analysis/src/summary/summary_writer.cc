// SummaryToJson() and WriteSummary(): the `spanprof.summary` v4 writer. (The
// strict reader is summary_reader.cc.)
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "io/file_io_internal.h"
#include "json/json_writer.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "status_macros.h"
#include "summary/process_resources.h"
#include "summary/row_key_json.h"
#include "summary/summary_format.h"

namespace spanprof::analysis {
namespace internal {
namespace {

// The scalar fields before `process_resources`.
void WriteTotals(JsonWriter& w, const Summary& summary) {
  w.Key(kSummaryKeys[kRootSchema]);
  w.String(summary.schema);
  // The layout below is the current version's, whatever version the summary
  // was read from.
  w.Key(kSummaryKeys[kRootSchemaVersion]);
  w.Int(kSummarySchemaVersion);
  w.Key(kSummaryKeys[kRootSource]);
  w.String(summary.source);
  w.Key(kSummaryKeys[kRootClock]);
  w.String(summary.clock);
  w.Key(kSummaryKeys[kRootProcessName]);
  w.String(summary.process_name);
  w.Key(kSummaryKeys[kRootHost]);
  w.String(summary.host);
  w.Key(kSummaryKeys[kRootPid]);
  w.Int(summary.pid);
  w.Key(kSummaryKeys[kRootWallClockAnchorNs]);
  w.Int(summary.wall_clock_anchor_ns);
  w.Key(kSummaryKeys[kRootWallClockUncertaintyNs]);
  w.Int(summary.wall_clock_uncertainty_ns);
  w.Key(kSummaryKeys[kRootProcessCount]);
  w.Uint(summary.process_count);
  w.Key(kSummaryKeys[kRootEventCount]);
  w.Uint(summary.event_count);
  w.Key(kSummaryKeys[kRootThreadCount]);
  w.Uint(summary.thread_count);
  w.Key(kSummaryKeys[kRootMaxDepth]);
  w.Uint(summary.max_depth);
  w.Key(kSummaryKeys[kRootWindowNs]);
  w.Int(summary.window_ns);
  w.Key(kSummaryKeys[kRootRecordedThreadTimeNs]);
  w.Int(summary.recorded_thread_time_ns);
  w.Key(kSummaryKeys[kRootRecordedHeartbeats]);
  w.Uint(summary.recorded_heartbeats);
  w.Key(kSummaryKeys[kRootEventLimit]);
  w.Uint(summary.event_limit);
  w.Key(kSummaryKeys[kRootOverflowPolicy]);
  w.String(summary.overflow_policy);
  w.Key(kSummaryKeys[kRootDroppedEvents]);
  w.Uint(summary.dropped_events);
  w.Key(kSummaryKeys[kRootDroppedArgs]);
  w.Uint(summary.dropped_args);
  w.Key(kSummaryKeys[kRootFailedPrepares]);
  w.Uint(summary.failed_prepares);
  w.Key(kSummaryKeys[kRootUnfinishedEvents]);
  w.Uint(summary.unfinished_events);
  w.Key(kSummaryKeys[kRootComplete]);
  w.Bool(summary.complete);
  w.Key(kSummaryKeys[kRootEndReason]);
  w.String(summary.end_reason);
  w.Key(kSummaryKeys[kRootOpenAtExitEvents]);
  w.Uint(summary.open_at_exit_events);
  w.Key(kSummaryKeys[kRootOverheadNsPerSpan]);
  w.Int(summary.overhead_ns_per_span);
}

void WriteIssues(JsonWriter& w, const std::vector<ValidationIssue>& issues) {
  w.BeginArray();
  for (const ValidationIssue& issue : issues) {
    w.BeginObject();
    w.Key(kIssueKeys[0]);
    w.Uint(issue.span);
    w.Key(kIssueKeys[1]);
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
    w.Key(kRowCounterKeys[0]);
    w.Int(counter.total);
    w.Key(kRowCounterKeys[1]);
    w.Int(counter.self);
    w.EndObject();
  }
  w.EndObject();
}

void WriteRow(JsonWriter& w, const Row& row) {
  w.BeginObject();
  w.Key(kRowKeys[kRowKey]);
  WriteRowKey(w, row.key);
  w.Key(kRowKeys[kRowLabel]);
  w.String(row.label);
  w.Key(kRowKeys[kRowCalls]);
  w.Uint(row.calls);
  w.Key(kRowKeys[kRowTotalNs]);
  w.Int(row.total_ns);
  w.Key(kRowKeys[kRowSelfNs]);
  w.Int(row.self_ns);
  w.Key(kRowKeys[kRowMinNs]);
  w.Int(row.min_ns);
  w.Key(kRowKeys[kRowMeanNs]);
  w.Int(row.mean_ns);
  w.Key(kRowKeys[kRowMedianNs]);
  w.Int(row.median_ns);
  w.Key(kRowKeys[kRowP95Ns]);
  w.Int(row.p95_ns);
  w.Key(kRowKeys[kRowP99Ns]);
  w.Int(row.p99_ns);
  w.Key(kRowKeys[kRowMaxNs]);
  w.Int(row.max_ns);
  w.Key(kRowKeys[kRowTailRatio]);
  OptionalDouble(w, row.tail_ratio);
  w.Key(kRowKeys[kRowLogSigma]);
  OptionalDouble(w, row.log_sigma);
  w.Key(kRowKeys[kRowHeavyTail]);
  w.Bool(row.heavy_tail);
  w.Key(kRowKeys[kRowTotalHeartbeats]);
  w.Uint(row.total_heartbeats);
  w.Key(kRowKeys[kRowSelfHeartbeats]);
  w.Uint(row.self_heartbeats);
  w.Key(kRowKeys[kRowAllocCount]);
  w.OptionalInt(row.alloc_count);
  w.Key(kRowKeys[kRowAllocBytes]);
  w.OptionalInt(row.alloc_bytes);
  w.Key(kRowKeys[kRowSharePermille]);
  w.Int(row.share_permille);
  w.Key(kRowKeys[kRowInstrumentationPermille]);
  w.Int(row.instrumentation_permille);
  w.Key(kRowKeys[kRowThreads]);
  w.Uint(row.threads);
  w.Key(kRowKeys[kRowProcesses]);
  w.Uint(row.processes);
  w.Key(kRowKeys[kRowExceptions]);
  w.Uint(row.exceptions);
  w.Key(kRowKeys[kRowHookFailures]);
  w.Uint(row.hook_failures);
  w.Key(kRowKeys[kRowUnfinished]);
  w.Uint(row.unfinished);
  w.Key(kRowKeys[kRowDropped]);
  w.Uint(row.dropped);
  w.Key(kRowKeys[kRowCounters]);
  WriteCounters(w, row.counters);
  w.EndObject();
}

}  // namespace

void WriteRowKey(JsonWriter& w, const RowKey& key) {
  w.BeginObject();
  w.Key(kRowKeyKeys[0]);
  w.String(key.name);
  // kRowKeyKeys[i + 1] is tag i's name (kTagFields order).
  for (size_t i = 0; i < kTagFields.size(); ++i) {
    const std::string& value = key.*kRowKeyTags[i];
    if (i + 1 >= kRowKeyAlwaysWritten && value.empty()) continue;
    w.Key(kRowKeyKeys[i + 1]);
    w.String(value);
  }
  w.EndObject();
}

}  // namespace internal

std::string SummaryToJson(const Summary& summary) {
  using internal::kSummaryKeys;
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
  w.Key(kSummaryKeys[internal::kRootProcessResources]);
  internal::WriteProcessResources(w, summary.process_resources);
  w.Key(kSummaryKeys[internal::kRootValidationIssues]);
  internal::WriteIssues(w, summary.validation_issues);
  w.Key(kSummaryKeys[internal::kRootRows]);
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
