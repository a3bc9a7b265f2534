// SummaryToJson() and WriteSummary(): the `spanprof.summary` v1 writer. (The
// strict reader is summary_reader.cc.)
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "io/file_io_internal.h"
#include "json/json_writer.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/status_macros.h"
#include "spanprof/analysis/summary.h"
#include "summary/process_resources.h"

namespace spanprof::analysis {
namespace {

// The scalar fields before `process_resources`.
void WriteTotals(JsonWriter& w, const Summary& summary) {
  w.Key("schema");
  w.String(summary.schema);
  w.Key("schema_version");
  w.Int(summary.schema_version);
  w.Key("clock");
  w.String(summary.clock);
  w.Key("process_name");
  w.String(summary.process_name);
  w.Key("event_count");
  w.Uint(summary.event_count);
  w.Key("thread_count");
  w.Uint(summary.thread_count);
  w.Key("max_depth");
  w.Uint(summary.max_depth);
  w.Key("window_ns");
  w.Int(summary.window_ns);
  w.Key("recorded_thread_time_ns");
  w.Int(summary.recorded_thread_time_ns);
  w.Key("recorded_heartbeats");
  w.Uint(summary.recorded_heartbeats);
  w.Key("event_limit");
  w.Uint(summary.event_limit);
  w.Key("overflow_policy");
  w.String(summary.overflow_policy);
  w.Key("dropped_events");
  w.Uint(summary.dropped_events);
  w.Key("unfinished_events");
  w.Uint(summary.unfinished_events);
  w.Key("complete");
  w.Bool(summary.complete);
  w.Key("overhead_ns_per_span");
  w.Int(summary.overhead_ns_per_span);
}

void WriteIssues(JsonWriter& w, const std::vector<ValidationIssue>& issues) {
  w.BeginArray();
  for (const ValidationIssue& issue : issues) {
    w.BeginObject();
    w.Key("span");
    w.Uint(issue.span);
    w.Key("message");
    w.String(issue.message);
    w.EndObject();
  }
  w.EndArray();
}

void WriteKey(JsonWriter& w, const RowKey& key) {
  w.BeginObject();
  w.Key("name");
  w.String(key.name);
  w.Key("phase");
  w.String(key.phase);
  w.Key("module");
  w.String(key.module);
  w.Key("activity");
  w.String(key.activity);
  w.EndObject();
}

void WriteRow(JsonWriter& w, const Row& row) {
  w.BeginObject();
  w.Key("key");
  WriteKey(w, row.key);
  w.Key("label");
  w.String(row.label);
  w.Key("calls");
  w.Uint(row.calls);
  w.Key("total_ns");
  w.Int(row.total_ns);
  w.Key("self_ns");
  w.Int(row.self_ns);
  w.Key("min_ns");
  w.Int(row.min_ns);
  w.Key("mean_ns");
  w.Int(row.mean_ns);
  w.Key("median_ns");
  w.Int(row.median_ns);
  w.Key("p95_ns");
  w.Int(row.p95_ns);
  w.Key("p99_ns");
  w.Int(row.p99_ns);
  w.Key("max_ns");
  w.Int(row.max_ns);
  w.Key("total_heartbeats");
  w.Uint(row.total_heartbeats);
  w.Key("self_heartbeats");
  w.Uint(row.self_heartbeats);
  w.Key("alloc_count");
  w.OptionalInt(row.alloc_count);
  w.Key("alloc_bytes");
  w.OptionalInt(row.alloc_bytes);
  w.Key("share_permille");
  w.Int(row.share_permille);
  w.Key("threads");
  w.Uint(row.threads);
  w.Key("exceptions");
  w.Uint(row.exceptions);
  w.Key("unfinished");
  w.Uint(row.unfinished);
  w.Key("dropped");
  w.Uint(row.dropped);
  w.EndObject();
}

}  // namespace

std::string SummaryToJson(const Summary& summary) {
  std::string out;
  out.reserve(1024 + summary.rows.size() * 700 +
              summary.validation_issues.size() * 120);
  JsonWriter w(&out, {.indent = 2});
  w.BeginObject();
  WriteTotals(w, summary);
  w.Key("process_resources");
  internal::WriteProcessResources(w, summary.process_resources);
  w.Key("validation_issues");
  WriteIssues(w, summary.validation_issues);
  w.Key("rows");
  w.BeginArray();
  for (const Row& row : summary.rows) WriteRow(w, row);
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
