// spanprof/analysis/summary.h — the `spanprof.summary` v1 document.
//
// `Summarize()` is a pure function of a `Capture`: validation issues, timing,
// grouped rows with exact nearest-rank percentiles, totals. The summary is
// written as strict JSON (`SummaryToJson`, `WriteSummary`) and read back by
// the strict simdjson reader (`ParseSummary`, `ReadSummary`), which rejects
// anything that is not the schema, with the file and JSON path in the error.
//
// Example:
//
//   spanprof::analysis::Summary summary =
//   spanprof::analysis::Summarize(capture); absl::Status status =
//   spanprof::analysis::WriteSummary(summary, "out.json");
//   absl::StatusOr<spanprof::analysis::Summary> back =
//       spanprof::analysis::ReadSummary("out.json");
#ifndef SPANPROF_ANALYSIS_SUMMARY_H_
#define SPANPROF_ANALYSIS_SUMMARY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

inline constexpr std::string_view kSummarySchema = "spanprof.summary";
inline constexpr int64_t kSummarySchemaVersion = 1;

// `RowKey` is the grouping key: a span name plus its tags.
struct RowKey {
  std::string name;
  std::string phase;
  std::string module;
  std::string activity;

  friend bool operator==(const RowKey&, const RowKey&) = default;
  friend auto operator<=>(const RowKey&, const RowKey&) = default;
};

// `RowLabel()` renders `name [phase=.., module=.., activity=..]`, listing only
// the tags that are set (just `name` when none is).
std::string RowLabel(const RowKey& key);

// `Row` aggregates every span with one key. Durations are inclusive ns unless
// named self. `alloc_*` are nullopt when allocations were not measured.
struct Row {
  RowKey key;
  std::string label;
  uint64_t calls = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;
  int64_t min_ns = 0;
  int64_t mean_ns = 0;
  int64_t median_ns = 0;
  int64_t p95_ns = 0;
  int64_t p99_ns = 0;
  int64_t max_ns = 0;
  uint64_t total_heartbeats = 0;
  uint64_t self_heartbeats = 0;
  std::optional<int64_t> alloc_count;
  std::optional<int64_t> alloc_bytes;
  int64_t share_permille = 0;  // self_ns * 1000 / recorded_thread_time_ns
  uint64_t threads = 0;        // distinct threads that ran this key
  uint64_t exceptions = 0;     // spans flagged kSpanException
  uint64_t unfinished = 0;     // spans flagged kSpanUnfinished
  uint64_t dropped = 0;        // spans of this key the cap did not retain

  friend bool operator==(const Row&, const Row&) = default;
};

// `ValidationIssue` is one problem found in the event forest.
struct ValidationIssue {
  uint64_t span = 0;  // span id the issue is about
  std::string message;

  friend bool operator==(const ValidationIssue&,
                         const ValidationIssue&) = default;
};

struct Summary {
  std::string schema = std::string(kSummarySchema);
  int64_t schema_version = kSummarySchemaVersion;
  std::string clock;
  std::string process_name;
  uint64_t event_count = 0;
  uint64_t thread_count = 0;
  uint64_t max_depth = 0;
  int64_t window_ns = 0;
  int64_t recorded_thread_time_ns = 0;
  uint64_t recorded_heartbeats = 0;
  uint64_t event_limit = 0;
  std::string overflow_policy;
  uint64_t dropped_events = 0;
  uint64_t unfinished_events = 0;
  bool complete = true;
  int64_t overhead_ns_per_span = 0;
  ProcessResources process_resources;
  std::vector<ValidationIssue> validation_issues;
  std::vector<Row> rows;

  friend bool operator==(const Summary&, const Summary&) = default;
};

// `Summarize()` computes the summary of a capture. Pure; never fails:
// problems in the forest become `validation_issues`.
Summary Summarize(const Capture& capture);

// `SummaryToJson()` renders strict JSON (integers as integers, `null` for
// unmeasured allocation counters, every control character escaped).
std::string SummaryToJson(const Summary& summary);

// `WriteSummary()` writes `SummaryToJson()` atomically (temp + rename),
// creating parent directories. Errors name the path.
absl::Status WriteSummary(const Summary& summary, const std::string& path);

// `ParseSummary()` is the strict reader. `source` names the input in errors
// (`source: $.rows[3].p95_ns: expected ...`).
absl::StatusOr<Summary> ParseSummary(std::string_view json,
                                     std::string_view source);

// `ReadSummary()` reads and parses a file with `ParseSummary()`.
absl::StatusOr<Summary> ReadSummary(const std::string& path);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_SUMMARY_H_
