// spanprof/analysis/summary.h — the `spanprof.summary` v4 document.
//
// `Summarize()` is a pure function of a `Capture`: validation issues, timing,
// grouped rows with exact nearest-rank percentiles, the tail shape and the
// named counters of each row, totals. The summary is written as strict JSON
// (`SummaryToJson`, `WriteSummary`) and read back by the strict simdjson
// reader (`ParseSummary`, `ReadSummary`), which rejects anything that is not
// the schema, with the file and JSON path in the error; it reads versions 1
// to 3 too.
//
// clang-format off
// Example:
//
//   spanprof::Capture capture = ...;
//   spanprof::analysis::Summary summary = spanprof::analysis::Summarize(capture);
//   absl::Status status = spanprof::analysis::WriteSummary(summary, "out.json");
//   absl::StatusOr<spanprof::analysis::Summary> back =
//       spanprof::analysis::ReadSummary("out.json");
// clang-format on
#ifndef SPANPROF_ANALYSIS_SUMMARY_H_
#define SPANPROF_ANALYSIS_SUMMARY_H_

#include <array>
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
// The version the writer writes (version 5 added `end_reason` and
// `open_at_exit_events`). A row
// `key`'s `backend`, `dtype` and `device` are written only when set and read
// as "" when missing, so v4 summaries written before those key fields read
// unchanged. The reader reads it, version 4 (which has no `end_reason`: read
// as "finished", and no `open_at_exit_events`: read as 0), version 3 (which
// also has no `process_count` and no row `processes`: read as one process),
// version 2 (which also has no `source`: read as "spanprof") and version 1
// (which also has no tail shape, counters or `dropped_args`).
// Version 5 also added `drops` (older versions read with one "unknown"
// entry of their `dropped_args`).
inline constexpr int64_t kSummarySchemaVersion = 5;

// `RowKey` is the grouping key: a span name plus its tags (`spanprof::Tags`).
// Compare matches rows by the whole key. Every field defaults to empty, so
// `RowKey{.name = "x", .dtype = "f16"}` names only what is set.
struct RowKey {
  std::string name{};
  std::string phase{};
  std::string module{};
  std::string activity{};
  std::string backend{};
  std::string dtype{};
  std::string device{};

  friend bool operator==(const RowKey&, const RowKey&) = default;
  friend auto operator<=>(const RowKey&, const RowKey&) = default;
};

// `kRowKeyTags` holds the `RowKey` member of each tag in `kTagFields` order:
// `key.*kRowKeyTags[i]` is the tag `kTagFields[i]` names (its `Site` member is
// `kTagFields[i].site`). Code that handles every tag of a key iterates it.
inline constexpr std::array kRowKeyTags = {&RowKey::phase,    &RowKey::module,
                                           &RowKey::activity, &RowKey::backend,
                                           &RowKey::dtype,    &RowKey::device};
static_assert(kRowKeyTags.size() == kTagFields.size(),
              "a RowKey member for every tag of kTagFields");

// `RowKeyOf()` is the key of a site's spans: its name and all its tags.
RowKey RowKeyOf(const Site& site);

// `RowLabel()` renders `name [phase=.., module=.., activity=.., backend=..,
// dtype=.., device=..]`, listing only the tags that are set (just `name` when
// none is).
std::string RowLabel(const RowKey& key);

// `RowCounter` is one named counter (`SPANPROF_COUNT`) of a row: `total` sums
// the inclusive count of every call (the span's own count plus its
// same-thread descendants'; like `total_ns`, a call nested in a call of the
// same key is counted again), `self` the calls' own counts.
struct RowCounter {
  std::string name;
  int64_t total = 0;
  int64_t self = 0;

  friend bool operator==(const RowCounter&, const RowCounter&) = default;
};

// `Row` aggregates every span with one key. Durations are inclusive ns unless
// named self. `alloc_*` are nullopt when allocations were not measured.
//
// Tail shape: `tail_ratio` is p99_ns / median_ns (nullopt when the median is
// 0), `log_sigma` the sample standard deviation of ln(duration ns) over the
// calls with a duration > 0 (nullopt with fewer than two), and `heavy_tail`
// is calls >= 20 && log_sigma >= 0.8 (docs/formats.md says why). A summary
// read from a version 1 file has no `log_sigma` (so no `heavy_tail`); its
// `tail_ratio` is computed from p99_ns and median_ns on reading.
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
  std::optional<double> tail_ratio;
  std::optional<double> log_sigma;
  bool heavy_tail = false;
  uint64_t total_heartbeats = 0;
  uint64_t self_heartbeats = 0;
  std::optional<int64_t> alloc_count;
  std::optional<int64_t> alloc_bytes;
  int64_t share_permille = 0;  // self_ns * 1000 / recorded_thread_time_ns
  // The estimated share of the row's time that its own spans' recording
  // took: InstrumentationPermille(calls, overhead_ns_per_span, total_ns).
  int64_t instrumentation_permille = 0;
  uint64_t threads = 0;  // distinct threads that ran this key
  // Distinct processes whose threads ran this key: 1 in a single-process
  // capture, up to `Summary::process_count` in a merged one; 0 when calls is
  // 0. Version 4; read as threads > 0 ? 1 : 0 from older versions.
  uint64_t processes = 0;
  uint64_t exceptions = 0;  // spans flagged kSpanException
  // Spans whose `complete` or `enrich` hook threw (kSpanHookFailed); 0 in
  // versions 1 to 3.
  uint64_t hook_failures = 0;
  uint64_t unfinished = 0;  // spans flagged kSpanUnfinished
  uint64_t dropped = 0;     // spans of this key the cap did not retain
  // The counters with a non-zero total in this row, sorted by name.
  std::vector<RowCounter> counters;

  friend bool operator==(const Row&, const Row&) = default;
};

// `InstrumentationPermille()` estimates the share (per mille, at most 1000)
// of a row's inclusive time that recording its own `calls` spans cost, from
// the session's measured cost of one span: calls * overhead_ns_per_span *
// 1000 / total_ns, rounded down; 0 when total_ns or the overhead is 0. The
// spans of the row's children are their own rows' cost.
int64_t InstrumentationPermille(uint64_t calls, int64_t overhead_ns_per_span,
                                int64_t total_ns);

// `kInstrumentationNotePermille` is the share from which `report` marks a
// row and suggests coarser spans: 5%.
inline constexpr int64_t kInstrumentationNotePermille = 50;

// `ValidationIssue` is one problem found in the event forest.
struct ValidationIssue {
  uint64_t span = 0;  // span id the issue is about
  std::string message;

  friend bool operator==(const ValidationIssue&,
                         const ValidationIssue&) = default;
};

// `Drop` is one element of the summary's `drops` (version 5): arguments or
// counter flushes of one kind and name that the capture lost at one span
// site for one reason (`Capture::arg_drops`). `site` is the key of the span
// they belonged to (for reason "no_open_span", of the span that began next
// on their thread), empty when there is none or the runtime could not tell.
// `kind` is "arg" or "count"; `reason` one of "cap", "side_budget",
// "no_open_span", "span_left_open", "counter_limit", "arg_limit" or "unknown"
// (only the total is known: `name` and `kind` are then "" and written as null).
// Σ `count` = `dropped_args`.
struct Drop {
  std::optional<RowKey> site{};
  std::string name{};
  std::string kind{};
  std::string reason{};
  uint64_t count = 0;

  friend bool operator==(const Drop&, const Drop&) = default;
};

// `Summary` is the whole document. `schema_version` is the version of the
// document it was read from (1 to 4); `SummaryToJson()` always writes the
// current version, `kSummarySchemaVersion`. `source` is the capture's
// (`Capture::source`): "spanprof", or "chrome-trace" for a foreign trace,
// whose `clock` is then "unknown".
struct Summary {
  std::string schema = std::string(kSummarySchema);
  int64_t schema_version = kSummarySchemaVersion;
  std::string source = "spanprof";
  std::string clock;
  std::string process_name;
  // Where and when the capture was recorded (version 3; empty and 0 when read
  // from an older version): host name, pid, and the wall clock
  // (CLOCK_REALTIME ns) at the session start with its uncertainty.
  std::string host;
  int64_t pid = 0;
  int64_t wall_clock_anchor_ns = 0;
  int64_t wall_clock_uncertainty_ns = 0;
  // The processes of the capture: the number of `Capture::processes` of a
  // merged capture, else 1 (version 4; read as 1 from older versions). The
  // fields above are then the merged capture's (its first process's pid,
  // name and host; the earliest anchor; the largest uncertainty).
  uint64_t process_count = 1;
  uint64_t event_count = 0;
  uint64_t thread_count = 0;
  uint64_t max_depth = 0;
  int64_t window_ns = 0;
  int64_t recorded_thread_time_ns = 0;
  uint64_t recorded_heartbeats = 0;
  uint64_t event_limit = 0;
  std::string overflow_policy;
  uint64_t dropped_events = 0;
  // Arguments and counter counts the cap refused, and counts made with no
  // span open (`Capture::dropped_args`); non-zero makes `complete` false.
  uint64_t dropped_args = 0;
  // The same drops by site, name, kind and reason, the largest first
  // (version 5; an older version reads as one "unknown" entry of
  // `dropped_args`, none when it is 0).
  std::vector<Drop> drops;
  // Spans not recorded because their `prepare` hook failed
  // (`Capture::failed_prepares`; 0 in versions 1 to 3). Reported, but not a
  // loss of data: `complete` does not depend on it.
  uint64_t failed_prepares = 0;
  uint64_t unfinished_events = 0;
  // Spans still open when the program ended the session early (exit(), a
  // return from main, `spanprof::FinishSession()`), closed at that moment
  // (`kSpanOpenAtExit`; 0 before version 5). A normal end: `complete` does
  // not depend on it.
  uint64_t open_at_exit_events = 0;
  bool complete = true;
  // How the session ended (`Capture::end_reason`): "finished", "exit",
  // "signal:SIGTERM", "crash:SIGSEGV", "crash:terminate" or "lost".
  // "finished" for versions 1 to 4, which do not say.
  std::string end_reason = "finished";
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
