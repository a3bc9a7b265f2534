// The human table of a comparison (`FormatComparison()`), as `spanprof
// compare` prints it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "gate/compare_metric.h"
#include "gate/shift.h"
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
  std::string tally =
      comparison.runs
          ? absl::StrFormat(
                "%d regressed, %d improved, %d same, %d unknown, %d new, "
                "%d missing",
                c.regressed, c.improved, c.same, c.unknown, c.new_keys,
                c.missing)
          : absl::StrFormat(
                "%d regressed, %d improved, %d within tolerance, %d new, "
                "%d missing",
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
  if (comparison.runs && policy.fail_on_unknown && c.unknown > 0) {
    why.push_back(Cat(c.unknown, " unknown (--fail-on-unknown)"));
  }
  if (!comparison.no_evidence.empty() && !policy.allow_missing) {
    why.push_back("no evidence");
  }
  std::string reasons;
  for (const std::string& w : why) {
    reasons += reasons.empty() ? "" : ", ";
    reasons += w;
  }
  return Cat("FAIL (", reasons, "): ", tally, "\n");
}

size_t LabelWidth(const Comparison& comparison) {
  constexpr size_t kLabelWidth = 48;
  size_t label_width = 4;
  for (const ComparisonRow& row : comparison.rows) {
    label_width =
        std::max(label_width, std::min(row.label.size(), kLabelWidth));
  }
  return label_width;
}

std::string FormatShift(std::optional<double> v, bool is_duration) {
  if (!v.has_value()) return "-";
  return FormatSigned(std::llround(*v), is_duration);
}

std::string FormatInterval(const ComparisonRow& row, bool is_duration) {
  if (!row.delta_ci_low.has_value()) {
    return row.reason.rfind("no spread", 0) == 0 ? "exact" : "-";
  }
  return Cat("[", FormatShift(row.delta_ci_low, is_duration), ", ",
             FormatShift(row.delta_ci_high, is_duration), "]");
}

// The table of a comparison over repeated runs: medians, the shift with its
// interval and p-value, and under each undecided row why.
std::string FormatRunRows(const Comparison& comparison,
                          const MetricInfo& metric) {
  const size_t width = LabelWidth(comparison);
  std::string out =
      absl::StrFormat("%-10s  %-*s  %7s  %11s  %11s  %11s  %25s  %7s\n",
                      "Verdict", static_cast<int>(width), "Key", "Runs", "Base",
                      "Candidate", "Shift", "Interval", "p");
  auto value_or_dash = [&](std::optional<int64_t> v) {
    return v.has_value() ? FormatValue(*v, metric.is_duration)
                         : std::string("-");
  };
  for (const ComparisonRow& row : comparison.rows) {
    const std::string p =
        row.p_value.has_value() ? absl::StrFormat("%.3f", *row.p_value) : "-";
    out +=
        absl::StrFormat("%-10s  %-*s  %7s  %11s  %11s  %11s  %25s  %7s\n",
                        RowStatusName(row.status), static_cast<int>(width),
                        Shorten(row.label, width),
                        Cat(row.runs_baseline, "/", row.runs_candidate),
                        value_or_dash(row.base), value_or_dash(row.candidate),
                        FormatShift(row.shift, metric.is_duration),
                        FormatInterval(row, metric.is_duration), p);
    if (row.status == RowStatus::kUnknown) {
      out += Cat("            ", row.reason, "\n");
    }
  }
  if (comparison.rows.empty()) out += "(no rows in any summary)\n";
  return out;
}

std::string FormatOneRunRows(const Comparison& comparison,
                             const MetricInfo& metric) {
  const size_t label_width = LabelWidth(comparison);
  std::string out;
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
        static_cast<int>(label_width), Shorten(row.label, label_width),
        value_or_dash(row.base), value_or_dash(row.candidate), delta, change);
  }
  if (comparison.rows.empty()) out += "(no rows in either summary)\n";
  return out;
}

// For a failing gate: the rows whose share of thread time moved most (a row
// absent on one side counts 0 there), which names the culprit even when the
// metric judged its calls one by one.
std::string ShareMoves(const Comparison& comparison) {
  constexpr size_t kShown = 3;
  std::vector<std::pair<double, const ComparisonRow*>> moves;
  for (const ComparisonRow& row : comparison.rows) {
    if (!row.base_share.has_value() && !row.candidate_share.has_value()) {
      continue;
    }
    const double move =
        row.candidate_share.value_or(0) - row.base_share.value_or(0);
    if (move != 0) moves.emplace_back(move, &row);
  }
  if (moves.empty()) return "";
  std::stable_sort(moves.begin(), moves.end(),
                   [](const auto& a, const auto& b) {
                     return std::abs(a.first) > std::abs(b.first);
                   });
  std::string out =
      "Largest moves in share of recorded thread time (total_ns / "
      "recorded_thread_time_ns):\n";
  for (size_t i = 0; i < moves.size() && i < kShown; ++i) {
    const ComparisonRow& row = *moves[i].second;
    out += absl::StrFormat(
        "  %-48s  %6.2f%% -> %6.2f%%  (%+.2f points)\n", Shorten(row.label, 48),
        row.base_share.value_or(0) * 100, row.candidate_share.value_or(0) * 100,
        moves[i].first * 100);
  }
  return out;
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
  if (comparison.runs) {
    const uint64_t runs =
        std::min(comparison.base_runs, comparison.candidate_runs);
    const bool few =
        runs >= gate::kLogTestMinRuns && runs < gate::kRankTestRuns;
    out += absl::StrFormat(
        "Repeated runs: %d baseline, %d candidate; %s decide, at %g%% over "
        "the table (%.4g%% per row)\n",
        comparison.base_runs, comparison.candidate_runs,
        few ? "under 6 runs a side, the shift and its interval from Welch's t "
              "on log values"
            : "the shift (Hodges-Lehmann) and its interval (Mann-Whitney)",
        policy.confidence * 100, comparison.row_confidence * 100);
  }
  if (!comparison.base_path.empty()) {
    out += Cat("Base:      ", comparison.base_path, "\n");
  }
  if (!comparison.candidate_path.empty()) {
    out += Cat("Candidate: ", comparison.candidate_path, "\n");
  }
  out += "\n";
  out += comparison.runs ? FormatRunRows(comparison, metric)
                         : FormatOneRunRows(comparison, metric);
  out += "\n";
  if (!comparison.passed) {
    const std::string moves = ShareMoves(comparison);
    if (!moves.empty()) out += moves + "\n";
  }
  if (!comparison.no_evidence.empty()) {
    out += policy.allow_missing
               ? Cat("No evidence (accepted: --allow-missing): ",
                     comparison.no_evidence, "\n")
               : Cat("No evidence: ", comparison.no_evidence,
                     "; pass --allow-missing to accept this\n");
  }
  out += VerdictLine(comparison);
  return out;
}

}  // namespace spanprof::analysis
