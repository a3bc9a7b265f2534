// Summarize(): validation, timing, grouping by key, exact percentiles, totals;
// and the summary writer. (The strict reader is summary_reader.cc.)
#include "spanprof/analysis/summary.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "json_writer.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/status_macros.h"
#include "spanprof/analysis/timing.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

constexpr uint32_t kNoRow = UINT32_MAX;

// The key of spans whose site index is out of range (a validation issue):
// they still count, so that the rows add up to the event count.
constexpr std::string_view kInvalidSiteName = "(invalid site)";

// Per-row accumulators beyond what `Row` holds.
struct RowState {
  uint64_t durations_begin = 0;  // into the shared durations array
  uint64_t durations_end = 0;
  uint32_t last_thread = UINT32_MAX;
  std::vector<uint32_t> threads;  // one entry per run of equal threads
};

// Sums saturate instead of overflowing on corrupt captures.
void SatAccumulate(int64_t& sum, int64_t value) {
  if (__builtin_add_overflow(sum, value, &sum)) {
    sum = value > 0 ? INT64_MAX : INT64_MIN;
  }
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string RowLabel(const RowKey& key) {
  std::string label = key.name;
  const std::pair<std::string_view, const std::string*> tags[] = {
      {"phase", &key.phase},
      {"module", &key.module},
      {"activity", &key.activity}};
  bool first = true;
  for (const auto& [tag, value] : tags) {
    if (value->empty()) continue;
    label += first ? " [" : ", ";
    first = false;
    label.append(tag.data(), tag.size());
    label += '=';
    label += *value;
  }
  if (!first) label += ']';
  return label;
}

Summary Summarize(const Capture& capture) {
  const std::vector<Span>& spans = capture.spans;
  const size_t n = spans.size();
  const Forest forest(capture);
  const std::vector<SpanTiming> timings = ComputeTimings(capture, forest);

  Summary summary;
  summary.clock = capture.clock;
  summary.process_name = capture.process_name;
  summary.window_ns = capture.window_ns;
  summary.event_limit = capture.event_limit;
  summary.overflow_policy = capture.overflow_policy;
  summary.dropped_events = capture.dropped_events;
  summary.overhead_ns_per_span = capture.overhead_ns_per_span;
  summary.process_resources = capture.process_resources;
  summary.validation_issues = ValidateForest(capture, forest);
  summary.event_count = n;

  // Sites -> rows. Several sites may share a key (the same name and tags at
  // two call sites): they share a row.
  std::map<RowKey, uint32_t> row_of_key;
  std::vector<RowKey> keys;
  auto row_for_key = [&](RowKey key) {
    auto [it, inserted] =
        row_of_key.emplace(std::move(key), static_cast<uint32_t>(keys.size()));
    if (inserted) keys.push_back(it->first);
    return it->second;
  };
  std::vector<uint32_t> row_of_site(capture.sites.size(), kNoRow);
  auto row_for_site = [&](uint32_t site) {
    if (site >= capture.sites.size()) {
      return row_for_key(RowKey{std::string(kInvalidSiteName), "", "", ""});
    }
    uint32_t& row = row_of_site[site];
    if (row == kNoRow) {
      const Site& s = capture.sites[site];
      row = row_for_key(RowKey{s.name, s.phase, s.module, s.activity});
    }
    return row;
  };

  // Pass 1: row of every span, calls per row.
  std::vector<uint32_t> span_row(n);
  std::vector<uint64_t> calls;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t row = row_for_site(spans[i].site);
    span_row[i] = row;
    if (row >= calls.size()) calls.resize(row + 1, 0);
    ++calls[row];
  }
  std::vector<uint64_t> dropped;
  for (const SiteDrops& drops : capture.dropped_by_site) {
    if (drops.count == 0) continue;
    const uint32_t row = row_for_site(drops.site);
    if (row >= dropped.size()) dropped.resize(row + 1, 0);
    dropped[row] += drops.count;
  }
  const size_t row_count = keys.size();
  calls.resize(row_count, 0);
  dropped.resize(row_count, 0);

  std::vector<Row> rows(row_count);
  std::vector<RowState> states(row_count);
  uint64_t offset = 0;
  for (size_t r = 0; r < row_count; ++r) {
    states[r].durations_begin = states[r].durations_end = offset;
    offset += calls[r];
    rows[r].calls = calls[r];
    rows[r].dropped = dropped[r];
    rows[r].min_ns = INT64_MAX;
    if (capture.alloc_measured) {
      rows[r].alloc_count = 0;
      rows[r].alloc_bytes = 0;
    }
  }

  // Pass 2: accumulate.
  std::vector<int64_t> durations(n);
  uint32_t max_depth = 0;
  uint64_t unfinished = 0;
  int64_t recorded_ns = 0;
  uint64_t recorded_heartbeats = 0;
  for (size_t i = 0; i < n; ++i) {
    const Span& span = spans[i];
    const SpanTiming& timing = timings[i];
    Row& row = rows[span_row[i]];
    RowState& state = states[span_row[i]];
    durations[state.durations_end++] = timing.inclusive_ns;
    SatAccumulate(row.total_ns, timing.inclusive_ns);
    SatAccumulate(row.self_ns, timing.self_ns);
    row.min_ns = std::min(row.min_ns, timing.inclusive_ns);
    row.max_ns = std::max(row.max_ns, timing.inclusive_ns);
    row.total_heartbeats += span.heartbeats;
    row.self_heartbeats += timing.self_heartbeats;
    if (capture.alloc_measured) {
      SatAccumulate(*row.alloc_count, span.alloc_count);
      SatAccumulate(*row.alloc_bytes, span.alloc_bytes);
    }
    if (span.flags & kSpanException) ++row.exceptions;
    if (span.flags & kSpanUnfinished) {
      ++row.unfinished;
      ++unfinished;
    }
    if (span.thread != state.last_thread) {
      state.last_thread = span.thread;
      state.threads.push_back(span.thread);
    }
    max_depth = std::max(max_depth, span.depth);
    SatAccumulate(recorded_ns, timing.self_ns);
    recorded_heartbeats += timing.self_heartbeats;
  }

  summary.max_depth = max_depth;
  summary.recorded_thread_time_ns = recorded_ns;
  summary.recorded_heartbeats = recorded_heartbeats;
  summary.unfinished_events = unfinished;
  summary.complete = capture.finished_normally && capture.dropped_events == 0 &&
                     unfinished == 0 && summary.validation_issues.empty();

  // Pass 3: per-row statistics. Three selections (O(calls)) instead of a
  // sort: ranks are nondecreasing, so each selects within the previous tail.
  std::vector<uint32_t> all_threads;
  for (size_t r = 0; r < row_count; ++r) {
    Row& row = rows[r];
    RowState& state = states[r];
    row.key = keys[r];
    row.label = RowLabel(row.key);
    std::sort(state.threads.begin(), state.threads.end());
    state.threads.erase(std::unique(state.threads.begin(), state.threads.end()),
                        state.threads.end());
    row.threads = state.threads.size();
    all_threads.insert(all_threads.end(), state.threads.begin(),
                       state.threads.end());
    if (row.calls == 0) {
      row.min_ns = 0;
      continue;
    }
    row.mean_ns = row.total_ns / static_cast<int64_t>(row.calls);
    int64_t* const first = durations.data() + state.durations_begin;
    int64_t* const last = durations.data() + state.durations_end;
    int64_t* from = first;
    for (auto [per_10000, field] : {std::pair{uint32_t{5000}, &row.median_ns},
                                    std::pair{uint32_t{9500}, &row.p95_ns},
                                    std::pair{uint32_t{9900}, &row.p99_ns}}) {
      int64_t* const nth = first + (NearestRank(row.calls, per_10000) - 1);
      if (nth >= from) {
        std::nth_element(from, nth, last);
        from = nth + 1;
      }
      *field = *nth;
    }
    row.share_permille = recorded_ns == 0
                             ? 0
                             : static_cast<int64_t>(absl::int128(row.self_ns) *
                                                    1000 / recorded_ns);
  }

  std::sort(all_threads.begin(), all_threads.end());
  summary.thread_count = static_cast<uint64_t>(
      std::unique(all_threads.begin(), all_threads.end()) -
      all_threads.begin());

  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.self_ns != b.self_ns) return a.self_ns > b.self_ns;
    return a.key < b.key;
  });
  summary.rows = std::move(rows);
  return summary;
}

std::string SummaryToJson(const Summary& summary) {
  std::string out;
  out.reserve(1024 + summary.rows.size() * 700 +
              summary.validation_issues.size() * 120);
  JsonWriter w(&out, {.indent = 2});
  w.BeginObject();
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

  const ProcessResources& res = summary.process_resources;
  w.Key("process_resources");
  w.BeginObject();
  w.Key("user_cpu_ns");
  w.Int(res.user_cpu_ns);
  w.Key("system_cpu_ns");
  w.Int(res.system_cpu_ns);
  w.Key("peak_rss_kib");
  w.Int(res.peak_rss_kib);
  w.Key("minor_page_faults");
  w.Int(res.minor_page_faults);
  w.Key("major_page_faults");
  w.Int(res.major_page_faults);
  w.Key("voluntary_context_switches");
  w.Int(res.voluntary_context_switches);
  w.Key("involuntary_context_switches");
  w.Int(res.involuntary_context_switches);
  w.EndObject();

  w.Key("validation_issues");
  w.BeginArray();
  for (const ValidationIssue& issue : summary.validation_issues) {
    w.BeginObject();
    w.Key("span");
    w.Uint(issue.span);
    w.Key("message");
    w.String(issue.message);
    w.EndObject();
  }
  w.EndArray();

  w.Key("rows");
  w.BeginArray();
  for (const Row& row : summary.rows) {
    w.BeginObject();
    w.Key("key");
    w.BeginObject();
    w.Key("name");
    w.String(row.key.name);
    w.Key("phase");
    w.String(row.key.phase);
    w.Key("module");
    w.String(row.key.module);
    w.Key("activity");
    w.String(row.key.activity);
    w.EndObject();
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
  w.EndArray();
  w.EndObject();
  w.Newline();
  return out;
}

absl::Status WriteSummary(const Summary& summary, const std::string& path) {
  std::string json = SummaryToJson(summary);
  if (EndsWith(path, ".gz")) {
    SPANPROF_ASSIGN_OR_RETURN(std::string compressed, GzipCompress(json));
    return WriteFileAtomically(path, compressed);
  }
  return WriteFileAtomically(path, json);
}

}  // namespace spanprof::analysis
