// `PlotScaling()` (plot.h): per scaling group, duration against size on
// log–log axes with the fitted line, and the cost per unit of size.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/svg.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/scaling.h"
#include "spanprof/analysis/table.h"

namespace spanprof::analysis {
namespace {

using svg::Centi;
using svg::Document;
using svg::Escape;
using svg::kMargin;
using svg::Px;
using svg::V;

constexpr Centi kPanelHeight = Px(190);
constexpr Centi kGap = Px(40);
constexpr Centi kAxisRoom = Px(40);
constexpr Centi kLabelRoom = Px(56);
constexpr std::string_view kMedianFill = "#2f5d8c";
constexpr std::string_view kLineStroke = "#e15759";
constexpr int kLineSamples = 48;

// A position on a log or linear axis, rounded to centi.
Centi Place(double value, double lo, double hi, Centi length) {
  if (!(hi > lo)) return 0;
  const double t = std::clamp((value - lo) / (hi - lo), 0.0, 1.0);
  return static_cast<Centi>(std::llround(t * static_cast<double>(length)));
}

// "512", "4 Ki", "1.5 Mi": sizes on the axis.
std::string SizeLabel(double size) {
  constexpr const char* kUnits[] = {"", " Ki", " Mi", " Gi", " Ti"};
  int unit = 0;
  while (size >= 1024 && unit < 4) {
    size /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text),
                size == std::floor(size) ? "%.0f%s" : "%.1f%s", size,
                kUnits[unit]);
  return text;
}

std::string NumberLabel(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", value);
  return text;
}

// One panel's frame: its box, and the log2 size range of the x axis.
struct Panel {
  Centi x = 0;
  Centi y = 0;
  Centi width = 0;
  double log2_lo = 0;
  double log2_hi = 1;

  Centi X(double size) const {
    return x + Place(std::log2(size), log2_lo, log2_hi, width);
  }
};

void DrawFrame(Document& doc, const Panel& panel, std::string_view caption) {
  doc.Line(panel.x, panel.y + kPanelHeight, panel.x + panel.width,
           panel.y + kPanelHeight, "class=\"tick\"");
  doc.Line(panel.x, panel.y, panel.x, panel.y + kPanelHeight, "class=\"tick\"");
  // Size ticks at powers of 2, at most about eight of them.
  const int first = static_cast<int>(std::ceil(panel.log2_lo));
  const int last = static_cast<int>(std::floor(panel.log2_hi));
  const int step = std::max(1, (last - first + 7) / 8);
  for (int k = first; k <= last; k += step) {
    const Centi x = panel.X(std::ldexp(1.0, k));
    doc.Line(x, panel.y + kPanelHeight, x, panel.y + kPanelHeight + Px(4),
             "class=\"tick\"");
    doc.Text(x, panel.y + kPanelHeight + Px(16), "axis",
             Escape(SizeLabel(std::ldexp(1.0, k))), "middle");
  }
  doc.Text(panel.x + panel.width / 2, panel.y + kPanelHeight + Px(32), "axis",
           Escape(caption), "middle");
}

void Dot(Document& doc, Centi x, Centi y, bool filled, std::string_view title) {
  absl::StrAppend(
      &doc.body(), "<circle cx=\"", svg::N(x), "\" cy=\"", svg::N(y),
      "\" r=\"3\" ",
      filled ? absl::StrCat("fill=\"", V(kMedianFill), "\"")
             : absl::StrCat("fill=\"none\" stroke=\"", V(kMedianFill), "\""),
      "><title>", V(Escape(title)), "</title></circle>\n");
}

void Polyline(Document& doc, const std::vector<std::pair<Centi, Centi>>& points,
              std::string_view stroke) {
  if (points.size() < 2) return;
  std::string path;
  for (const auto& [x, y] : points) {
    absl::StrAppend(&path, path.empty() ? "" : " ", svg::N(x), ",", svg::N(y));
  }
  absl::StrAppend(&doc.body(), "<polyline points=\"", path,
                  "\" fill=\"none\" stroke=\"", V(stroke),
                  "\" stroke-width=\"1.5\"/>\n");
}

// The left panel: bucket medians and p95s on log–log axes, and the fit.
void DrawDurations(Document& doc, Panel panel, const ScalingGroup& group) {
  double lo = INFINITY;
  double hi = 0;
  for (const ScalingBucket& bucket : group.buckets) {
    lo = std::min(lo,
                  static_cast<double>(std::max<int64_t>(bucket.median_ns, 1)));
    hi = std::max(hi, static_cast<double>(std::max<int64_t>(bucket.p95_ns, 1)));
  }
  const double log_lo = std::floor(std::log10(lo));
  const double log_hi = std::max(log_lo + 1, std::ceil(std::log10(hi)));
  auto y_of = [&](double ns) {
    return panel.y + kPanelHeight -
           Place(std::log10(std::max(ns, 1.0)), log_lo, log_hi, kPanelHeight);
  };
  for (int k = static_cast<int>(log_lo); k <= static_cast<int>(log_hi); ++k) {
    const Centi y = y_of(std::pow(10.0, k));
    doc.Line(panel.x - Px(4), y, panel.x, y, "class=\"tick\"");
    doc.Text(panel.x - Px(6), y + Px(4), "axis",
             Escape(FormatDuration(static_cast<int64_t>(std::pow(10.0, k)))),
             "end");
  }
  DrawFrame(doc, panel, "size (log); duration (log): dots median, rings p95");
  for (const ScalingBucket& bucket : group.buckets) {
    const double mid = std::sqrt(bucket.size_low * bucket.size_high);
    const std::string range =
        SizeLabel(bucket.size_low) + " to " + SizeLabel(bucket.size_high);
    Dot(doc, panel.X(mid), y_of(static_cast<double>(bucket.p95_ns)), false,
        absl::StrCat(V(range), ": p95 ", V(FormatDuration(bucket.p95_ns))));
    Dot(doc, panel.X(mid), y_of(static_cast<double>(bucket.median_ns)), true,
        absl::StrCat(V(range), ": median ", V(FormatDuration(bucket.median_ns)),
                     ", ", bucket.spans, " spans"));
  }
  if (!group.exponent.has_value()) return;
  std::vector<std::pair<Centi, Centi>> line;
  for (int i = 0; i <= kLineSamples; ++i) {
    const double log2_size =
        panel.log2_lo + (panel.log2_hi - panel.log2_lo) * i / kLineSamples;
    const double ns = group.overhead_ns +
                      std::exp(group.log_scale + group.exponent->estimate *
                                                     log2_size * std::log(2.0));
    if (std::log10(ns) < log_lo || std::log10(ns) > log_hi) continue;
    line.emplace_back(panel.X(std::exp2(log2_size)), y_of(ns));
  }
  Polyline(doc, line, kLineStroke);
}

// The right panel: median duration per unit of size, on a linear axis.
void DrawPerUnit(Document& doc, const Panel& panel, const ScalingGroup& group) {
  double hi = 0;
  for (const ScalingBucket& bucket : group.buckets) {
    hi = std::max(hi, bucket.median_ns_per_unit);
  }
  hi = hi > 0 ? hi * 1.1 : 1;
  auto y_of = [&](double v) {
    return panel.y + kPanelHeight - Place(v, 0, hi, kPanelHeight);
  };
  for (double v : {0.0, hi / 2, hi}) {
    doc.Line(panel.x - Px(4), y_of(v), panel.x, y_of(v), "class=\"tick\"");
    doc.Text(panel.x - Px(6), y_of(v) + Px(4), "axis", Escape(NumberLabel(v)),
             "end");
  }
  DrawFrame(doc, panel, "size (log); ns per unit of size: flat = linear");
  std::vector<std::pair<Centi, Centi>> line;
  for (const ScalingBucket& bucket : group.buckets) {
    const double mid = std::sqrt(bucket.size_low * bucket.size_high);
    line.emplace_back(panel.X(mid), y_of(bucket.median_ns_per_unit));
    Dot(doc, line.back().first, line.back().second, true,
        absl::StrCat(V(SizeLabel(bucket.size_low)), " to ",
                     V(SizeLabel(bucket.size_high)), ": ",
                     V(NumberLabel(bucket.median_ns_per_unit)),
                     " ns per unit"));
  }
  Polyline(doc, line, kMedianFill);
}

std::string GroupHeading(const ScalingGroup& group) {
  std::string text = absl::StrCat(V(group.label), " by ", V(group.size_arg),
                                  ": ", V(group.verdict));
  if (group.exponent.has_value()) {
    char exponent[96];
    std::snprintf(exponent, sizeof(exponent), ", exponent %.2f [%.2f, %.2f]",
                  group.exponent->estimate, group.exponent->ci_low,
                  group.exponent->ci_high);
    text += exponent;
  }
  if (group.driver.has_value()) {
    absl::StrAppend(&text, "; driver ", V(*group.driver));
  }
  return text;
}

// Draws one group below `y`; returns the y below it.
Centi DrawGroup(Document& doc, Centi y, const ScalingGroup& group) {
  doc.Text(kMargin, y + Px(14), "label",
           svg::FitTextAlways(GroupHeading(group), doc.width() - 2 * kMargin,
                              12, true));
  y += Px(28);
  Panel left;
  left.x = kMargin + kLabelRoom;
  left.y = y;
  // Room on the right for half of the last tick label.
  left.width = (doc.width() - 2 * kMargin - 2 * kLabelRoom - kGap - Px(24)) / 2;
  if (!group.buckets.empty()) {
    left.log2_lo = std::log2(group.buckets.front().size_low);
    left.log2_hi = std::log2(group.buckets.back().size_high);
  }
  Panel right = left;
  right.x = left.x + left.width + kGap + kLabelRoom;
  DrawDurations(doc, left, group);
  DrawPerUnit(doc, right, group);
  return y + kPanelHeight + kAxisRoom + Px(16);
}

}  // namespace

std::string PlotScaling(const ScalingReport& report,
                        const ScalingPlotOptions& options) {
  Document doc(std::clamp(options.width, kMinPlotWidth, kMaxPlotWidth));
  std::string traces;
  for (const std::string& trace : report.traces) {
    absl::StrAppend(&traces, traces.empty() ? "" : ", ",
                    V(svg::BaseName(trace)));
  }
  Centi y = svg::DrawHeading(
      doc, "Scaling: duration against size",
      absl::StrCat(report.groups.size(),
                   report.groups.size() == 1 ? " group" : " groups",
                   " with a size argument, from ", V(traces),
                   "; red line: the fitted overhead + a·size^b"));
  if (report.groups.empty()) {
    doc.Text(kMargin, y + Px(14), "note",
             Escape("no group has a numeric size argument that varies"));
    y += Px(28);
  }
  for (const ScalingGroup& group : report.groups) y = DrawGroup(doc, y, group);
  return doc.Finish(y + kMargin, Escape("spanprof scaling"));
}

}  // namespace spanprof::analysis
