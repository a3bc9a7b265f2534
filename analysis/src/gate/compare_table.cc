// The human table of a comparison (`FormatComparison()`), as `spanprof
// compare` prints it.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "gate/compare_metric.h"
#include "json/cat.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/table.h"

namespace spanprof::analysis {
namespace {

using internal::Cat;
using internal::Info;
using internal::MetricInfo;

std::string FormatValue(int64_t value, bool is_duration) {
  if (!is_duration) return Cat(value);
  return FormatDuration(value);
}

std::string FormatSigned(int64_t value, bool is_duration) {
  if (value == 0) return is_duration ? "0 ns" : "0";
  const std::string sign = value > 0 ? "+" : "-";
  // |value| fits: deltas of two non-negative int64 values are > INT64_MIN.
  const int64_t magnitude = value > 0 ? value : -value;
  return sign + FormatValue(magnitude, is_duration);
}

std::string FormatBps(std::optional<int64_t> bps) {
  if (!bps.has_value()) return "n/a";
  const int64_t v = *bps;
  const uint64_t magnitude =
      v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return absl::StrFormat("%s%d.%02d%%", v < 0 ? "-" : (v > 0 ? "+" : ""),
                         magnitude / 100, magnitude % 100);
}

std::string Shorten(std::string_view text, size_t width) {
  if (text.size() <= width) return std::string(text);
  return Cat(text.substr(0, width - 3), "...");
}

// "PASS: <tally>" or "FAIL (<why>): <tally>".
std::string VerdictLine(const Comparison& comparison) {
  const ComparePolicy& policy = comparison.policy;
  const ComparisonCounts& c = comparison.counts;
  std::string tally = absl::StrFormat(
      "%d regressed, %d improved, %d within tolerance, %d new, %d missing",
      c.regressed, c.improved, c.within, c.new_keys, c.missing);
  if (c.not_measured > 0) {
    tally += absl::StrFormat(", %d not measured", c.not_measured);
  }
  if (comparison.passed) return Cat("PASS: ", tally, "\n");
  std::vector<std::string> why;
  if (c.regressed > 0) why.push_back(Cat(c.regressed, " regressed"));
  if (policy.fail_on_new && c.new_keys > 0) {
    why.push_back(Cat(c.new_keys, " new (--fail-on-new)"));
  }
  if (policy.fail_on_missing && c.missing > 0) {
    why.push_back(Cat(c.missing, " missing (--fail-on-missing)"));
  }
  std::string reasons;
  for (const std::string& w : why) {
    reasons += reasons.empty() ? "" : ", ";
    reasons += w;
  }
  return Cat("FAIL (", reasons, "): ", tally, "\n");
}

}  // namespace

std::string FormatComparison(const Comparison& comparison) {
  const ComparePolicy& policy = comparison.policy;
  const MetricInfo& metric = Info(policy.metric);
  std::string out;
  out += absl::StrFormat(
      "spanprof compare: metric %s; regression when the increase exceeds "
      "%d%s AND %d bps (%s) of the baseline\n",
      MetricLabel(policy), policy.absolute_tolerance_ns,
      metric.is_duration ? " ns" : "", policy.relative_tolerance_bps,
      FormatBps(policy.relative_tolerance_bps));
  if (!comparison.base_path.empty()) {
    out += Cat("Base:      ", comparison.base_path, "\n");
  }
  if (!comparison.candidate_path.empty()) {
    out += Cat("Candidate: ", comparison.candidate_path, "\n");
  }
  out += "\n";

  constexpr size_t kLabelWidth = 48;
  size_t label_width = 4;
  for (const ComparisonRow& row : comparison.rows) {
    label_width =
        std::max(label_width, std::min(row.label.size(), kLabelWidth));
  }
  const std::string header =
      absl::StrFormat("%-12s  %-*s  %12s  %12s  %13s  %10s\n", "Status",
                      static_cast<int>(label_width), "Key", "Base", "Candidate",
                      "Delta", "Change");
  out += header;
  auto value_or_dash = [&](std::optional<int64_t> v) {
    return v.has_value() ? FormatValue(*v, metric.is_duration)
                         : std::string("-");
  };
  for (const ComparisonRow& row : comparison.rows) {
    std::string status(RowStatusName(row.status));
    std::string delta = "-";
    std::string change = "-";
    if (row.delta.has_value()) {
      delta = FormatSigned(*row.delta, metric.is_duration);
      change = row.change_bps.has_value()
                   ? FormatBps(row.change_bps)
                   : (*row.delta == 0 ? "0.00%" : "from 0");
    }
    out += absl::StrFormat(
        "%-12s  %-*s  %12s  %12s  %13s  %10s\n", status,
        static_cast<int>(label_width), Shorten(row.label, kLabelWidth),
        value_or_dash(row.base), value_or_dash(row.candidate), delta, change);
  }
  if (comparison.rows.empty()) out += "(no rows in either summary)\n";

  out += "\n";
  out += VerdictLine(comparison);
  return out;
}

}  // namespace spanprof::analysis
