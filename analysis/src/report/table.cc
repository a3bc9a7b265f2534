// The console table (DESIGN.md §3 shows the layout this reproduces).
#include "spanprof/analysis/table.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis {
namespace {

constexpr size_t kNameColumns = 40;
// Column widths of a row after the name; the header is the DESIGN example's
// header verbatim.
constexpr size_t kSelfColumns = 10;
constexpr size_t kTotalColumns = 11;
constexpr size_t kCallsColumns = 7;
constexpr size_t kMeanColumns = 10;
constexpr size_t kP95Columns = 10;
constexpr size_t kSelfHeartbeatColumns = 9;
constexpr size_t kShareColumns = 7;
constexpr std::string_view kHeader =
    "Name                                      Self       Total  Calls      "
    "Mean       P95  Self HB      %";
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
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

// "12.34" from hundredths.
std::string Hundredths(uint64_t hundredths) {
  const uint64_t fraction = hundredths % 100;
  return absl::StrCat(hundredths / 100, ".", fraction < 10 ? "0" : "",
                      fraction);
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

std::string FormatTable(const Summary& summary, const TableOptions& options) {
  std::string out;
  out.reserve(512 + summary.rows.size() * 112);
  const ProcessResources& res = summary.process_resources;
  absl::StrAppend(&out, "spanprof: ", summary.event_count, " events, ",
                  summary.thread_count, " threads, window ",
                  FormatDuration(summary.window_ns), ", recorded thread time ",
                  FormatDuration(summary.recorded_thread_time_ns), ", ",
                  summary.recorded_heartbeats, " heartbeats\n");
  absl::StrAppend(
      &out, "Process resources: user CPU ", res.user_cpu_ns / 1'000'000,
      " ms, system CPU ", res.system_cpu_ns / 1'000'000, " ms, peak RSS ",
      res.peak_rss_kib, " KiB, context switches ",
      res.voluntary_context_switches + res.involuntary_context_switches, "\n");

  if (summary.dropped_events > 0) {
    absl::StrAppend(
        &out, "warning: ", summary.dropped_events,
        " spans dropped by the cap (SPANPROF_MAX_EVENTS=", summary.event_limit);
    if (summary.overflow_policy == "ring") {
      out += ", ring mode kept the newest";
    }
    out += "), summary incomplete\n";
  }
  if (summary.unfinished_events > 0) {
    absl::StrAppend(&out, "warning: ", summary.unfinished_events,
                    " spans were still open when the session stopped "
                    "(flagged unfinished), summary incomplete\n");
  }
  if (!summary.validation_issues.empty()) {
    const ValidationIssue& first = summary.validation_issues.front();
    absl::StrAppend(&out, "warning: ", summary.validation_issues.size(),
                    summary.validation_issues.size() == 1
                        ? " validation issue"
                        : " validation issues",
                    " in the span forest (first: span ", first.span, ": ",
                    first.message, "), summary incomplete\n");
  }
  if (!summary.complete && summary.dropped_events == 0 &&
      summary.unfinished_events == 0 && summary.validation_issues.empty()) {
    out +=
        "warning: the session did not finish normally (exit() inside the "
        "session?), summary incomplete\n";
  }

  out += '\n';
  out.append(kHeader.data(), kHeader.size());
  out += '\n';
  for (const Row& row : summary.rows) {
    AppendName(&out, row.label, kNameColumns);
    AppendRight(&out, FormatDuration(row.self_ns), kSelfColumns);
    AppendRight(&out, FormatDuration(row.total_ns), kTotalColumns);
    AppendRight(&out, absl::StrCat(row.calls), kCallsColumns);
    AppendRight(&out, FormatDuration(row.mean_ns), kMeanColumns);
    AppendRight(&out, FormatDuration(row.p95_ns), kP95Columns);
    AppendRight(&out, absl::StrCat(row.self_heartbeats), kSelfHeartbeatColumns);
    const int64_t permille = row.share_permille;
    AppendRight(
        &out,
        absl::StrCat(permille / 10, ".",
                     permille % 10 < 0 ? -(permille % 10) : permille % 10, "%"),
        kShareColumns);
    out += '\n';
  }

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
