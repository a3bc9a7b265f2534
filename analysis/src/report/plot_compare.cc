// `PlotCompare()` (plot.h): the gate's verdict per row, with the band of
// values within tolerance of the base.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gate/compare_metric.h"
#include "report/bar_chart.h"
#include "report/svg.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/table.h"

namespace spanprof::analysis {
namespace {

using svg::BarEnd;
using svg::BarLayout;
using svg::Centi;
using svg::Document;
using svg::Escape;
using svg::FormatValue;
using svg::kMargin;
using svg::N;
using svg::Px;
using svg::SaturatingAdd;
using svg::TextWidth;
using svg::V;
using svg::ValueKind;

ValueKind MetricKind(CompareMetric metric) {
  if (internal::Info(metric).is_duration) return ValueKind::kDuration;
  return metric == CompareMetric::kAllocBytes ? ValueKind::kBytes
                                              : ValueKind::kCount;
}

// Basis points as a percentage: 1000 → "10%", 250 → "2.5%", 5 → "0.05%".
std::string FormatBps(int64_t bps) {
  std::string out = absl::StrCat(bps / 100);
  const int64_t fraction = bps % 100;
  if (fraction != 0) {
    out.push_back('.');
    out.push_back(static_cast<char>('0' + fraction / 10));
    if (fraction % 10 != 0)
      out.push_back(static_cast<char>('0' + fraction % 10));
  }
  out.push_back('%');
  return out;
}

// The largest |Δ| still within tolerance of `base`:
// max(absolute, floor(bps·base/10000)), saturated.
int64_t ToleranceAround(int64_t base, const ComparePolicy& policy) {
  const int64_t b = std::max<int64_t>(base, 0);
  const int64_t bps = std::max<int64_t>(policy.relative_tolerance_bps, 0);
  int64_t relative = 0;
  int64_t whole = 0;
  if (__builtin_mul_overflow(b / 10000, bps, &whole)) {
    relative = std::numeric_limits<int64_t>::max();
  } else {
    int64_t part = 0;
    if (__builtin_mul_overflow(b % 10000, bps, &part)) {
      relative = std::numeric_limits<int64_t>::max();
    } else {
      relative = SaturatingAdd(whole, part / 10000);
    }
  }
  return std::max(std::max<int64_t>(policy.absolute_tolerance_ns, 0), relative);
}

struct StatusStyle {
  std::string_view fill;
  std::string_view text;  // a darker shade for the status word
  std::string_view name;
};

StatusStyle StyleOf(RowStatus status) {
  switch (status) {
    case RowStatus::kRegressed:
      return {"#d62728", "#b01c1d", "regressed"};
    case RowStatus::kImproved:
      return {"#2ca02c", "#1f7a1f", "improved"};
    case RowStatus::kWithin:
      return {"#9e9e9e", "#666666", "within tolerance"};
    case RowStatus::kNew:
      return {"#1f77b4", "#165a8a", "new"};
    case RowStatus::kMissing:
      return {"#ff7f0e", "#c15f00", "missing"};
    case RowStatus::kNotMeasured:
      return {"#dddddd", "#888888", "not measured"};
    case RowStatus::kSame:
      return {"#9e9e9e", "#666666", "same"};
    case RowStatus::kUnknown:
      return {"#bcbd22", "#8c8d12", "unknown"};
  }
  return {"#9e9e9e", "#666666", ""};
}

std::string FormatChange(const ComparisonRow& row, ValueKind kind) {
  if (!row.delta.has_value()) return "";
  if (*row.delta == 0) return "no change";
  std::string delta =
      absl::StrCat(*row.delta > 0 ? "+" : "", FormatValue(*row.delta, kind));
  if (!row.change_bps.has_value()) return delta;
  // One decimal of a percent, truncated toward zero: 5023 bps → "+50.2%".
  const int64_t bps = *row.change_bps;
  const uint64_t magnitude =
      bps < 0 ? ~static_cast<uint64_t>(bps) + 1 : static_cast<uint64_t>(bps);
  return absl::StrCat(bps < 0 ? "-" : "+", magnitude / 100, ".",
                      magnitude % 100 / 10, "% (", delta, ")");
}

constexpr std::string_view kBaseAttributes =
    "fill=\"#ffffff\" stroke=\"#555555\" stroke-width=\"1\"";
constexpr std::string_view kBandAttributes =
    "fill=\"#f2c94c\" fill-opacity=\"0.35\"";
constexpr Centi kBar = Px(11);
constexpr Centi kRowHeight = Px(36);

std::string CompareTitle(const ComparePolicy& policy) {
  const ValueKind kind = MetricKind(policy.metric);
  return absl::StrCat("Comparison on ", V(CompareMetricName(policy.metric)),
                      ": regression when \xCE\x94 > ",
                      FormatValue(policy.absolute_tolerance_ns, kind),
                      " and \xCE\x94 > ",
                      FormatBps(policy.relative_tolerance_bps), " of base");
}

std::string CompareSubtitle(const Comparison& comparison) {
  const ComparisonCounts& c = comparison.counts;
  std::string subtitle;
  if (!comparison.base_path.empty() || !comparison.candidate_path.empty()) {
    absl::StrAppend(&subtitle, "base ", V(svg::BaseName(comparison.base_path)),
                    " vs candidate ",
                    V(svg::BaseName(comparison.candidate_path)), "; ");
  }
  if (comparison.runs) {
    absl::StrAppend(&subtitle, comparison.base_runs, " vs ",
                    comparison.candidate_runs, " runs; ", c.regressed,
                    " regressed, ", c.improved, " improved, ", c.same,
                    " same, ", c.unknown, " unknown, ", c.new_keys, " new, ",
                    c.missing, " missing");
  } else {
    absl::StrAppend(&subtitle, c.regressed, " regressed, ", c.improved,
                    " improved, ", c.within, " within, ", c.new_keys, " new, ",
                    c.missing, " missing");
  }
  if (c.not_measured > 0)
    absl::StrAppend(&subtitle, ", ", c.not_measured, " not measured");
  absl::StrAppend(&subtitle, " \xE2\x86\x92 ",
                  comparison.passed ? "PASS" : "FAIL");
  return subtitle;
}

// Baseline, candidate by status (all of them, so the key is the same in
// every figure), and the tolerance band. Returns the y below it.
Centi DrawCompareLegend(Document& doc, Centi y) {
  const std::vector<RowStatus> statuses = {
      RowStatus::kRegressed, RowStatus::kImproved, RowStatus::kWithin,
      RowStatus::kNew, RowStatus::kMissing};
  std::vector<std::string> legend = {"base"};
  for (RowStatus status : statuses) {
    legend.push_back(absl::StrCat("candidate: ", V(StyleOf(status).name)));
  }
  legend.push_back("within tolerance of base");
  return svg::DrawLegend(doc, y, legend, [&](size_t i, Centi x, Centi top) {
    if (i == 0) {
      doc.Rect(x + Px(1) / 2, top + Px(1) / 2, Px(11), Px(11), kBaseAttributes);
    } else if (i <= statuses.size()) {
      doc.Rect(x, top, Px(12), Px(12),
               absl::StrCat("fill=\"", V(StyleOf(statuses[i - 1]).fill), "\""));
    } else {
      doc.Rect(x, top, Px(12), Px(12), kBandAttributes);
      doc.Line(x, top, x, top + Px(12),
               "stroke=\"#b8860b\" stroke-dasharray=\"2 2\"");
      doc.Line(x + Px(12), top, x + Px(12), top + Px(12),
               "stroke=\"#b8860b\" stroke-dasharray=\"2 2\"");
    }
  });
}

std::string BaseText(const ComparisonRow& row, ValueKind kind) {
  return row.base.has_value()
             ? FormatValue(*row.base, kind)
             : std::string(row.status == RowStatus::kNew ? "not in base"
                                                         : "not measured");
}

// The candidate's value, its change and its verdict.
std::string CandidateText(const ComparisonRow& row, ValueKind kind) {
  std::string text =
      row.candidate.has_value()
          ? FormatValue(*row.candidate, kind)
          : std::string(row.status == RowStatus::kMissing ? "not in candidate"
                                                          : "not measured");
  const std::string change = FormatChange(row, kind);
  if (!change.empty()) absl::StrAppend(&text, ", ", change);
  if (row.status != RowStatus::kMissing &&
      row.status != RowStatus::kNotMeasured) {
    absl::StrAppend(&text, ": ", V(StyleOf(row.status).name));
  }
  return text;
}

// The texts of the first `shown` rows, and what the layout needs of them.
struct CompareText {
  std::vector<std::string> labels;
  std::vector<std::string> base;
  std::vector<std::string> candidate;
  Centi widest_value = 0;
  int64_t max = 1;
};

CompareText CompareRows(const Comparison& comparison, size_t shown,
                        ValueKind kind) {
  CompareText text;
  for (size_t r = 0; r < shown; ++r) {
    const ComparisonRow& row = comparison.rows[r];
    text.labels.push_back(row.label.empty() ? RowLabel(row.key) : row.label);
    text.base.push_back(BaseText(row, kind));
    text.candidate.push_back(CandidateText(row, kind));
    text.widest_value =
        std::max({text.widest_value, TextWidth(text.base.back(), 11),
                  TextWidth(text.candidate.back(), 11, true)});
    if (row.base.has_value()) {
      text.max = std::max(
          text.max,
          SaturatingAdd(*row.base,
                        ToleranceAround(*row.base, comparison.policy)));
    }
    if (row.candidate.has_value())
      text.max = std::max(text.max, *row.candidate);
    if (row.base.has_value() && row.delta_ci_high.has_value()) {
      text.max = std::max(
          text.max, SaturatingAdd(*row.base, std::llround(*row.delta_ci_high)));
    }
  }
  return text;
}

// Row `r`'s tolerance band (from `band_top` to `band_bottom`), base bar and
// base value.
void DrawBase(Document& doc, const BarLayout& layout, int64_t base,
              int64_t tolerance, ValueKind kind, const CompareText& text,
              size_t r, Centi base_top, Centi candidate_top) {
  const Centi band_lo = BarEnd(layout, SaturatingAdd(base, -tolerance));
  const Centi band_hi = BarEnd(layout, SaturatingAdd(base, tolerance));
  const Centi band_top = base_top - Px(2);
  const Centi band_bottom = candidate_top + kBar + Px(2);
  doc.Rect(band_lo, band_top, std::max<Centi>(band_hi - band_lo, 0),
           band_bottom - band_top, kBandAttributes,
           Escape(absl::StrCat(
               text.labels[r], ": within tolerance from ",
               FormatValue(std::max<int64_t>(base - tolerance, 0), kind),
               " to ", FormatValue(SaturatingAdd(base, tolerance), kind))));
  for (Centi edge : {band_lo, band_hi}) {
    doc.Line(edge, band_top, edge, band_bottom,
             "stroke=\"#b8860b\" stroke-width=\"1\" stroke-dasharray=\"2 2\"");
  }
  const Centi base_end = BarEnd(layout, base);
  doc.Rect(layout.x0, base_top + Px(1) / 2,
           std::max<Centi>(base_end - layout.x0, Px(1)), kBar - Px(1),
           kBaseAttributes,
           Escape(absl::StrCat(text.labels[r], ": ", text.base[r])));
  doc.Text(std::max(base_end, band_hi) + Px(6), base_top + Px(9), "value",
           Escape(text.base[r]));
}

// Repeated runs: the candidate values the shift's interval allows, base +
// [low, high], as a whisker with end caps across the candidate bar.
void DrawInterval(Document& doc, const BarLayout& layout,
                  const ComparisonRow& row, const std::string& label,
                  ValueKind kind, Centi mid) {
  const auto at = [&](double shift) {
    return BarEnd(layout, SaturatingAdd(*row.base, std::llround(shift)));
  };
  const Centi lo = at(*row.delta_ci_low);
  const Centi hi = at(*row.delta_ci_high);
  const auto value = [&](double shift) {
    return FormatValue(
        std::max<int64_t>(SaturatingAdd(*row.base, std::llround(shift)), 0),
        kind);
  };
  const std::string title = Escape(absl::StrCat(
      label, ": the shift's interval puts the candidate at ",
      value(*row.delta_ci_low), " to ", value(*row.delta_ci_high)));
  absl::StrAppend(&doc.body(), "<g class=\"interval\"><title>", title,
                  "</title>\n");
  constexpr const char* kStroke = "stroke=\"#222222\" stroke-width=\"1.5\"";
  doc.Line(lo, mid, hi, mid, kStroke);
  for (Centi edge : {lo, hi}) {
    doc.Line(edge, mid - Px(4), edge, mid + Px(4), kStroke);
  }
  absl::StrAppend(&doc.body(), "</g>\n");
}

// Row `r`: its label, base (with the band), candidate bar and verdict.
void DrawCompareRow(Document& doc, const BarLayout& layout,
                    const ComparisonRow& row, const ComparePolicy& policy,
                    ValueKind kind, const CompareText& text, size_t r,
                    Centi top) {
  const StatusStyle style = StyleOf(row.status);
  const Centi base_top = top + Px(5);
  const Centi candidate_top = base_top + kBar + Px(3);
  doc.Text(layout.label_x + Px(4), top + Px(22), "label",
           svg::FitTextAlways(text.labels[r], layout.label_width - Px(10), 12));
  if (row.base.has_value()) {
    DrawBase(doc, layout, *row.base, ToleranceAround(*row.base, policy), kind,
             text, r, base_top, candidate_top);
  } else {
    doc.Text(layout.x0 + Px(6), base_top + Px(9), "value",
             Escape(text.base[r]));
  }
  Centi candidate_end = layout.x0;
  if (row.candidate.has_value()) {
    candidate_end = BarEnd(layout, *row.candidate);
    doc.Rect(layout.x0, candidate_top,
             std::max<Centi>(candidate_end - layout.x0, Px(1)), kBar,
             absl::StrCat("fill=\"", V(style.fill), "\""),
             Escape(absl::StrCat(text.labels[r], ": ", text.candidate[r])));
  }
  if (row.base.has_value() && row.delta_ci_low.has_value() &&
      row.delta_ci_high.has_value()) {
    DrawInterval(doc, layout, row, text.labels[r], kind,
                 candidate_top + kBar / 2);
  }
  Centi text_x = candidate_end + Px(6);
  if (row.base.has_value()) {
    text_x = std::max(
        text_x,
        BarEnd(layout,
               SaturatingAdd(*row.base, ToleranceAround(*row.base, policy))) +
            Px(6));
  }
  absl::StrAppend(
      &doc.body(), "<text x=\"", N(text_x), "\" y=\"", N(candidate_top + Px(9)),
      "\" class=\"value\" font-weight=\"bold\" style=\"fill:", V(style.text),
      "\">", Escape(text.candidate[r]), "</text>\n");
}

}  // namespace

std::string PlotCompare(const Comparison& comparison,
                        const ComparePlotOptions& options) {
  const int width = std::clamp(options.width, kMinPlotWidth, kMaxPlotWidth);
  Document doc(width);
  const ComparePolicy& policy = comparison.policy;
  const ValueKind kind = MetricKind(policy.metric);
  const size_t total_rows = comparison.rows.size();
  const size_t shown = options.max_rows == 0
                           ? total_rows
                           : std::min(total_rows, options.max_rows);

  const std::string title = CompareTitle(policy);
  Centi y = svg::DrawHeading(doc, title, CompareSubtitle(comparison));
  y = DrawCompareLegend(doc, y + Px(6));
  y += Px(8);

  const CompareText text = CompareRows(comparison, shown, kind);
  const BarLayout layout =
      svg::LayoutBars(doc, text.labels, text.widest_value, text.max);
  const Centi rows_top = y;
  svg::DrawRowBands(doc, rows_top, shown, kRowHeight);
  const Centi rows_bottom = rows_top + static_cast<Centi>(shown) * kRowHeight;
  y = svg::DrawAxis(doc, layout.x0, layout.x1, rows_bottom + Px(4), rows_top, 0,
                    layout.max, kind,
                    std::string(CompareMetricName(policy.metric)));
  for (size_t r = 0; r < shown; ++r) {
    DrawCompareRow(doc, layout, comparison.rows[r], policy, kind, text, r,
                   rows_top + static_cast<Centi>(r) * kRowHeight);
  }
  y = svg::DrawRowNotes(doc, y, shown, total_rows, "no rows to compare");
  return doc.Finish(y + Px(8), Escape(title));
}

}  // namespace spanprof::analysis
