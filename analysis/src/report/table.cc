// The console table (DESIGN.md §3 shows the layout this reproduces).
#include "spanprof/analysis/table.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "model/capture_format.h"
#include "model/span_args.h"
#include "model/span_list.h"
#include "spanprof/analysis/summary.h"
#include "summary/drops.h"

namespace spanprof::analysis {
namespace {

constexpr size_t kNameColumns = 40;
// Column widths of a row after the name, as in DESIGN.md's example (whose
// header ends some names three characters before their numbers); the Calls
// and Self HB columns grow to fit their widest number.
constexpr size_t kSelfColumns = 10;
constexpr size_t kTotalColumns = 11;
constexpr size_t kCallsColumns = 7;
constexpr size_t kMeanColumns = 10;
constexpr size_t kP95Columns = 10;
constexpr size_t kSelfHeartbeatColumns = 9;
constexpr size_t kShareColumns = 7;
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// `text` with control characters as '?', so that a name cannot break a line.
std::string Printable(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text;
}

// The number of UTF-8 code points of `text`.
size_t DisplayWidth(std::string_view text) {
  size_t points = 0;
  for (char c : text) {
    if (!IsContinuationByte(c)) ++points;
  }
  return points;
}

// Appends `name` padded or cut to exactly `columns` characters (UTF-8 code
// points; a cut name ends with "…"). Control characters become '?' so that a
// name cannot break the table's lines.
void AppendName(std::string* out, std::string_view name, size_t columns) {
  size_t points = 0;
  for (char c : name) {
    if (!IsContinuationByte(c)) ++points;
  }
  size_t keep_points = points <= columns ? points : columns - 1;
  size_t written = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!IsContinuationByte(c)) {
      if (written == keep_points) break;
      ++written;
    }
    out->push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
  }
  if (points > columns) {
    out->append(kEllipsis.data(), kEllipsis.size());
    written = columns;
  }
  out->append(columns - written, ' ');
}

void AppendRight(std::string* out, std::string_view text, size_t columns) {
  if (text.size() < columns) out->append(columns - text.size(), ' ');
  out->append(text.data(), text.size());
}

// "1 thread", "7 threads": a count and its noun, digits grouped.
std::string Counted(uint64_t count, const char* noun) {
  return absl::StrCat(FormatCount(count), " ", noun, count == 1 ? "" : "s");
}

// "12.34" from hundredths.
std::string Hundredths(uint64_t hundredths) {
  const uint64_t fraction = hundredths % 100;
  return absl::StrCat(hundredths / 100, ".", fraction < 10 ? "0" : "",
                      fraction);
}

}  // namespace

std::string FormatCount(uint64_t count) {
  const std::string digits = absl::StrCat(count);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

// A process resource (never negative; a negative delta shows as 0).
std::string FormatResource(int64_t value) {
  return FormatCount(value < 0 ? 0 : static_cast<uint64_t>(value));
}

}  // namespace

std::string FormatDuration(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t magnitude =
      negative ? ~static_cast<uint64_t>(ns) + 1 : static_cast<uint64_t>(ns);
  const std::string sign = negative ? "-" : "";
  if (magnitude < 1000) return absl::StrCat(sign, magnitude, " ns");
  // Truncated (not rounded) to hundredths of the unit, as in DESIGN.md's
  // example, where "12.17 ms" total with "4.05 ms" mean over 3 calls is only
  // consistent with truncation. Truncation also never shows "1000.00 us".
  if (magnitude < 1'000'000) {
    return absl::StrCat(sign, Hundredths(magnitude / 10), " us");
  }
  if (magnitude < 1'000'000'000) {
    return absl::StrCat(sign, Hundredths(magnitude / 10'000), " ms");
  }
  return absl::StrCat(sign, Hundredths(magnitude / 10'000'000), " s");
}

namespace {

// The table names this many drops unless asked for all (`spanprof report`).
constexpr size_t kDropLines = 2;

// "dropped 1 argument: bytes before log.load (no open span)".
std::string DropLine(const Drop& drop) {
  if (drop.reason == internal::kDropReasonUnknown) {
    return absl::StrCat(
        "dropped ", FormatCount(drop.count),
        drop.count == 1 ? " argument or count" : " arguments or counts", " (",
        std::string(internal::DropReasonWords(drop.reason)), ")");
  }
  const bool count = drop.kind == internal::kDropKindCount;
  std::string line =
      absl::StrCat("dropped ", FormatCount(drop.count), " ",
                   count ? (drop.count == 1 ? "count" : "counts")
                         : (drop.count == 1 ? "argument" : "arguments"),
                   ": ", Printable(drop.name));
  if (drop.site.has_value()) {
    // A drop with no span open names the span that began next on its
    // thread: where the program meant it to go, as a rule.
    absl::StrAppend(&line, drop.reason == "no_open_span" ? " before " : " on ",
                    Printable(RowLabel(*drop.site)));
  }
  absl::StrAppend(&line, " (",
                  std::string(internal::DropReasonWords(drop.reason)), ")");
  return line;
}

// The drops by name, site and reason: the largest kDropLines, or all.
void AppendDrops(std::string* out, const Summary& summary, bool all) {
  const size_t shown =
      all ? summary.drops.size() : std::min(kDropLines, summary.drops.size());
  for (size_t i = 0; i < shown; ++i) {
    absl::StrAppend(out, "  ", DropLine(summary.drops[i]), "\n");
  }
  if (shown < summary.drops.size()) {
    absl::StrAppend(out, "  ... and ", summary.drops.size() - shown,
                    " more (spanprof report lists them all)\n");
  }
}

// The lines that say why a summary is incomplete.
void AppendWarnings(std::string* out, const Summary& summary, bool all_drops) {
  if (summary.dropped_events > 0) {
    absl::StrAppend(
        out, "warning: ", summary.dropped_events,
        " spans dropped by the cap (SPANPROF_MAX_EVENTS=", summary.event_limit);
    if (summary.overflow_policy == "ring") {
      *out += ", ring mode kept the newest";
    }
    *out += "), summary incomplete\n";
  }
  if (summary.dropped_args > 0) {
    absl::StrAppend(out, "warning: ", summary.dropped_args,
                    " span arguments or counter counts dropped (refused by "
                    "the cap, or counted with no span open), summary "
                    "incomplete\n");
    AppendDrops(out, summary, all_drops);
  }
  if (summary.failed_prepares > 0) {
    absl::StrAppend(out, "note: ", summary.failed_prepares,
                    summary.failed_prepares == 1 ? " span was" : " spans were",
                    " not recorded: a prepare hook failed (the body ran)\n");
  }
  uint64_t hook_failures = 0;
  const Row* first_failed = nullptr;
  for (const Row& row : summary.rows) {
    hook_failures += row.hook_failures;
    if (row.hook_failures > 0 && first_failed == nullptr) first_failed = &row;
  }
  if (first_failed != nullptr) {
    absl::StrAppend(
        out, "note: ", hook_failures,
        hook_failures == 1 ? " span's" : " spans'",
        " complete or enrich hook threw (first: ", first_failed->label,
        "; the message is the span's hook_error argument)\n");
  }
  if (summary.unfinished_events > 0) {
    absl::StrAppend(out, "warning: ", summary.unfinished_events,
                    " spans were still open when the session stopped "
                    "(flagged unfinished), summary incomplete\n");
  }
  if (summary.open_at_exit_events > 0) {
    absl::StrAppend(
        out, "note: ", summary.open_at_exit_events,
        summary.open_at_exit_events == 1 ? " span was" : " spans were",
        " open when the program ended the session (exit() or "
        "FinishSession()), closed then (flagged open_at_exit)\n");
  }
  if (!summary.validation_issues.empty()) {
    const ValidationIssue& first = summary.validation_issues.front();
    absl::StrAppend(out, "warning: ", summary.validation_issues.size(),
                    summary.validation_issues.size() == 1
                        ? " validation issue"
                        : " validation issues",
                    " in the span forest (first: span ", first.span, ": ",
                    first.message, "), summary incomplete\n");
  }
  if (!summary.complete && summary.dropped_events == 0 &&
      summary.dropped_args == 0 && summary.unfinished_events == 0 &&
      summary.validation_issues.empty()) {
    absl::StrAppend(out,
                    "warning: the session did not finish normally "
                    "(end_reason ",
                    summary.end_reason, "), summary incomplete\n");
  }
}

// Counter columns: at most this many, each this wide at least; a longer
// name is cut to kCounterNameColumns.
constexpr size_t kMaxCounterColumns = 3;
constexpr size_t kCounterColumns = 10;
constexpr size_t kCounterNameColumns = 16;
constexpr std::string_view kTailHeader = "  Tail";
constexpr std::string_view kTailMark = "heavy";

// The counters of the summary, by their count over the whole capture (the
// sum of the rows' self counts) descending, then name.
std::vector<std::string> CounterNamesByCount(const Summary& summary) {
  std::map<std::string, absl::int128> counts;
  for (const Row& row : summary.rows) {
    for (const RowCounter& counter : row.counters) {
      counts[counter.name] += counter.self;
    }
  }
  std::vector<std::pair<absl::int128, std::string>> order;
  order.reserve(counts.size());
  for (const auto& [name, count] : counts) order.emplace_back(-count, name);
  std::sort(order.begin(), order.end());
  std::vector<std::string> names;
  names.reserve(order.size());
  for (auto& [count, name] : order) names.push_back(std::move(name));
  return names;
}

// The columns of the table past the fixed ones.
struct ExtraColumns {
  std::vector<std::string> counters;  // shown, in order
  std::vector<size_t> widths;         // of each counter column
  std::vector<std::string> hidden;    // counters not shown
  bool tail = false;                  // some row is heavy-tailed
  bool processes = false;             // a merged capture: in how many processes
  size_t name = kNameColumns;         // the Name column
  size_t calls = kCallsColumns;       // the Calls column
  size_t self_heartbeats = kSelfHeartbeatColumns;
};
// The column of a merged capture's rows: in how many processes each ran.
constexpr std::string_view kProcessesHeader = "  Procs";

// A counter column is as wide as its name (cut) or its widest total, plus
// two spaces, and at least kCounterColumns.
size_t CounterColumnWidth(const Summary& summary, const std::string& name) {
  size_t widest = std::min(kCounterNameColumns, DisplayWidth(name));
  for (const Row& row : summary.rows) {
    for (const RowCounter& counter : row.counters) {
      if (counter.name == name) {
        widest = std::max(widest, absl::StrCat(counter.total).size());
      }
    }
  }
  return std::max(kCounterColumns, widest + 2);
}

// The Name column is 40 characters (longer labels are cut with "…"), or
// with `wide` as wide as the longest label; Calls and Self HB fit their
// widest number with two spaces before it.
void ChooseWidths(const Summary& summary, bool wide, ExtraColumns* extra) {
  for (const Row& row : summary.rows) {
    if (wide) extra->name = std::max(extra->name, DisplayWidth(row.label));
    extra->calls = std::max(extra->calls, FormatCount(row.calls).size() + 2);
    extra->self_heartbeats = std::max(
        extra->self_heartbeats, FormatCount(row.self_heartbeats).size() + 2);
  }
}

ExtraColumns ChooseExtraColumns(const Summary& summary, bool wide) {
  ExtraColumns extra;
  ChooseWidths(summary, wide, &extra);
  extra.processes = summary.process_count > 1;
  std::vector<std::string> names = CounterNamesByCount(summary);
  for (size_t i = 0; i < names.size(); ++i) {
    if (i < kMaxCounterColumns) {
      extra.widths.push_back(CounterColumnWidth(summary, names[i]));
      extra.counters.push_back(std::move(names[i]));
    } else {
      extra.hidden.push_back(std::move(names[i]));
    }
  }
  extra.tail = std::any_of(summary.rows.begin(), summary.rows.end(),
                           [](const Row& row) { return row.heavy_tail; });
  return extra;
}

void AppendHeader(std::string* out, const ExtraColumns& extra) {
  // DESIGN.md's header verbatim, widened where the columns are.
  AppendName(out, "Name", extra.name);
  out->append("  Self       Total");
  out->append(extra.calls - kCallsColumns, ' ');
  out->append("  Calls      Mean       P95");
  out->append(extra.self_heartbeats - kSelfHeartbeatColumns, ' ');
  out->append("  Self HB      %");
  if (extra.processes) out->append(kProcessesHeader);
  for (size_t i = 0; i < extra.counters.size(); ++i) {
    const std::string& name = extra.counters[i];
    const size_t points = std::min(kCounterNameColumns, DisplayWidth(name));
    out->append(extra.widths[i] - points, ' ');
    AppendName(out, name, points);
  }
  if (extra.tail) out->append(kTailHeader.data(), kTailHeader.size());
  *out += '\n';
}

void AppendRow(std::string* out, const Row& row, const ExtraColumns& extra) {
  AppendName(out, row.label, extra.name);
  AppendRight(out, FormatDuration(row.self_ns), kSelfColumns);
  AppendRight(out, FormatDuration(row.total_ns), kTotalColumns);
  AppendRight(out, FormatCount(row.calls), extra.calls);
  AppendRight(out, FormatDuration(row.mean_ns), kMeanColumns);
  AppendRight(out, FormatDuration(row.p95_ns), kP95Columns);
  AppendRight(out, FormatCount(row.self_heartbeats), extra.self_heartbeats);
  const int64_t permille = row.share_permille;
  AppendRight(
      out,
      absl::StrCat(permille / 10, ".",
                   permille % 10 < 0 ? -(permille % 10) : permille % 10, "%"),
      kShareColumns);
  if (extra.processes) {
    AppendRight(out, absl::StrCat(row.processes), kProcessesHeader.size());
  }
  for (size_t i = 0; i < extra.counters.size(); ++i) {
    std::string cell = "-";
    for (const RowCounter& counter : row.counters) {
      if (counter.name == extra.counters[i]) cell = absl::StrCat(counter.total);
    }
    AppendRight(out, cell, extra.widths[i]);
  }
  if (extra.tail && row.heavy_tail) {
    AppendRight(out, kTailMark, kTailHeader.size());
  }
  *out += '\n';
}

// The numeric arguments (not strings, not counters) that spans of the row
// `key` carry, sorted: the sizes `spanprof scaling` can use; with
// `counters`, the named counters the spans counted themselves instead (the
// sizes of `--size counter:NAME`).
std::vector<std::string> NumericArgumentsOf(const Capture& capture,
                                            const RowKey& key,
                                            bool counters = false) {
  std::vector<bool> of_row(capture.sites.size());
  for (size_t i = 0; i < capture.sites.size(); ++i) {
    of_row[i] = RowKeyOf(capture.sites[i]) == key;
  }
  std::set<std::string> names;
  for (const Span& span : internal::SpanList(capture)) {
    if (span.site >= of_row.size() || !of_row[span.site]) continue;
    for (const SpanArg& arg : internal::ArgsOf(capture, span)) {
      if (!arg.is_string && arg.is_counter == counters) names.insert(arg.key);
    }
  }
  return {names.begin(), names.end()};
}

// After the rows: which counters the columns leave out, and what to do about
// heavy tails.
void AppendNotes(std::string* out, const Summary& summary,
                 const ExtraColumns& extra, const TableOptions& options) {
  if (!extra.counters.empty()) {
    *out +=
        "Counter columns: inclusive totals (the span and its same-thread "
        "descendants)";
    if (!extra.hidden.empty()) {
      absl::StrAppend(
          out, "; not shown: ", Printable(absl::StrJoin(extra.hidden, ", ")),
          " (see the summary's rows[].counters)");
    }
    *out += '\n';
  }
  if (!extra.tail) return;
  const Row* first = nullptr;
  size_t heavy = 0;
  for (const Row& row : summary.rows) {
    if (!row.heavy_tail) continue;
    if (first == nullptr) first = &row;
    ++heavy;
  }
  const double ratio = first->tail_ratio.value_or(0);
  const std::string trace =
      options.trace_path.empty() ? "TRACE" : options.trace_path;
  absl::StrAppend(out, "heavy tail: ", heavy, heavy == 1 ? " row" : " rows",
                  " (first: ", Printable(first->label),
                  ", p99 = ", absl::StrFormat("%.1f", ratio), "x median): ");
  if (options.capture == nullptr) {
    absl::StrAppend(out, "run `spanprof scaling ", trace,
                    "` (give the span a size argument, SPANPROF_ARG(\"size\", "
                    "n), if it has none) to see whether its cost grows faster "
                    "than its size\n");
    return;
  }
  const std::vector<std::string> sizes =
      NumericArgumentsOf(*options.capture, first->key);
  const std::vector<std::string> counts =
      NumericArgumentsOf(*options.capture, first->key, /*counters=*/true);
  if (sizes.empty() && !counts.empty()) {
    absl::StrAppend(out, "its spans count ",
                    counts.size() == 1 ? "the counter " : "the counters ",
                    Printable(absl::StrJoin(counts, ", ")),
                    ": run `spanprof scaling ", trace,
                    " --size counter:", Printable(counts.front()),
                    "` to see whether its cost grows faster than that "
                    "count\n");
    return;
  }
  if (sizes.empty()) {
    absl::StrAppend(out,
                    "add a size argument to the span (SPANPROF_ARG(\"size\", "
                    "n)) and run `spanprof scaling ",
                    trace,
                    "` to see whether its cost grows faster than its "
                    "size\n");
    return;
  }
  absl::StrAppend(out, "its spans carry ",
                  sizes.size() == 1 ? "the argument " : "the arguments ",
                  Printable(absl::StrJoin(sizes, ", ")),
                  ": run `spanprof scaling ", trace, " --size ",
                  Printable(sizes.front()),
                  "` to see whether its cost grows faster than its size\n");
}

// Rows whose own spans cost at least kInstrumentationNotePermille of their
// time (the session's measured cost of one span times their calls): the
// three worst, and what to do about them.
void AppendInstrumentationNote(std::string* out, const Summary& summary) {
  std::vector<const Row*> costly;
  for (const Row& row : summary.rows) {
    if (row.instrumentation_permille >= kInstrumentationNotePermille) {
      costly.push_back(&row);
    }
  }
  if (costly.empty()) return;
  std::stable_sort(
      costly.begin(), costly.end(), [](const Row* a, const Row* b) {
        return a->instrumentation_permille > b->instrumentation_permille;
      });
  absl::StrAppend(out, "instrumentation: ", costly.size(),
                  costly.size() == 1 ? " row spends" : " rows spend",
                  " >= ", kInstrumentationNotePermille / 10,
                  "% of its time recording its own spans (",
                  summary.overhead_ns_per_span, " ns a span):");
  for (size_t i = 0; i < costly.size() && i < 3; ++i) {
    const int64_t permille = costly[i]->instrumentation_permille;
    absl::StrAppend(out, i == 0 ? " " : ", ", Printable(costly[i]->label), " ",
                    permille / 10, ".", permille % 10, "%");
  }
  absl::StrAppend(out, costly.size() > 3 ? ", ..." : "",
                  "; use coarser spans (one around a batch, not one per "
                  "item)\n");
}

// The two lines of totals: spans and time, then the process resources (or,
// for a foreign trace, where it came from).
void AppendTotals(std::string* out, const Summary& summary) {
  const ProcessResources& res = summary.process_resources;
  const std::string processes =
      summary.process_count > 1
          ? absl::StrCat(" in ", summary.process_count, " processes")
          : "";
  absl::StrAppend(out, "spanprof: ", Counted(summary.event_count, "event"),
                  ", ", Counted(summary.thread_count, "thread"), processes,
                  ", window ", FormatDuration(summary.window_ns),
                  ", recorded thread time ",
                  FormatDuration(summary.recorded_thread_time_ns), ", ",
                  Counted(summary.recorded_heartbeats, "heartbeat"), "\n");
  if (summary.source != internal::kSourceSpanprof) {
    // A foreign trace: no process resources, heartbeats or overhead.
    absl::StrAppend(out, "Source: ", summary.source, " (process ",
                    Printable(summary.process_name), ")\n");
  } else {
    absl::StrAppend(
        out, "Process resources",
        summary.process_count > 1 ? " (summed; peak RSS: the largest)" : "",
        ": user CPU ", FormatResource(res.user_cpu_ns / 1'000'000),
        " ms, system CPU ", FormatResource(res.system_cpu_ns / 1'000'000),
        " ms, peak RSS ", FormatResource(res.peak_rss_kib),
        " KiB, context switches ",
        FormatResource(res.voluntary_context_switches +
                       res.involuntary_context_switches),
        "\n");
  }
}

}  // namespace

std::string FormatTable(const Summary& summary, const TableOptions& options) {
  std::string out;
  out.reserve(512 + summary.rows.size() * 112);
  AppendTotals(&out, summary);
  AppendWarnings(&out, summary, options.all_drops);
  out += '\n';
  const ExtraColumns extra = ChooseExtraColumns(summary, options.wide);
  AppendHeader(&out, extra);
  for (const Row& row : summary.rows) AppendRow(&out, row, extra);
  if (options.rows_left_out > 0) {
    absl::StrAppend(&out, "(", Counted(options.rows_left_out, "more row"),
                    " not shown: ", options.rows_left_out_by, ")\n");
  }
  AppendNotes(&out, summary, extra, options);
  AppendInstrumentationNote(&out, summary);

  if (!options.trace_path.empty() || !options.summary_path.empty()) {
    out += '\n';
    if (!options.trace_path.empty()) {
      absl::StrAppend(&out, "Trace: ", options.trace_path, "\n");
    }
    if (!options.summary_path.empty()) {
      absl::StrAppend(&out, "Summary: ", options.summary_path, "\n");
    }
  }
  return out;
}

}  // namespace spanprof::analysis
