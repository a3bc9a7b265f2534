// `PlotBreakdown()` (plot.h): inclusive and self time per summary row.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/bar_chart.h"
#include "report/svg.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"

namespace spanprof::analysis {
namespace {

using svg::BarLayout;
using svg::Centi;
using svg::Document;
using svg::Escape;
using svg::kMargin;
using svg::Px;
using svg::TextWidth;
using svg::V;

constexpr std::string_view kInclusiveFill = "#a0cbe8";
constexpr std::string_view kSelfFill = "#2f5d8c";
constexpr Centi kBar = Px(12);
constexpr Centi kRowHeight = Px(36);

std::string BreakdownSubtitle(const Summary& summary) {
  const size_t total_rows = summary.rows.size();
  std::string subtitle = absl::StrCat(
      summary.event_count, summary.event_count == 1 ? " span, " : " spans, ",
      total_rows, total_rows == 1 ? " row, " : " rows, ", summary.thread_count,
      summary.thread_count == 1 ? " thread" : " threads", "; window ",
      FormatDuration(summary.window_ns), ", recorded thread time ",
      FormatDuration(summary.recorded_thread_time_ns));
  if (!summary.complete || summary.dropped_events > 0 ||
      summary.unfinished_events > 0 || !summary.validation_issues.empty()) {
    absl::StrAppend(&subtitle, "; incomplete capture");
  }
  return subtitle;
}

// The texts of the first `shown` rows, and what the layout needs of them.
struct BreakdownText {
  std::vector<std::string> labels;
  std::vector<std::string> inclusive;
  std::vector<std::string> self;
  Centi widest_value = 0;
  int64_t max = 1;
};

BreakdownText BreakdownRows(const Summary& summary, size_t shown) {
  BreakdownText text;
  for (size_t r = 0; r < shown; ++r) {
    const Row& row = summary.rows[r];
    text.labels.push_back(row.label.empty() ? RowLabel(row.key) : row.label);
    text.inclusive.push_back(absl::StrCat(FormatDuration(row.total_ns), " in ",
                                          row.calls,
                                          row.calls == 1 ? " call" : " calls"));
    text.self.push_back(absl::StrCat(FormatDuration(row.self_ns), " self (",
                                     row.share_permille / 10, ".",
                                     row.share_permille % 10, "%)"));
    text.widest_value =
        std::max({text.widest_value, TextWidth(text.inclusive.back(), 11),
                  TextWidth(text.self.back(), 11)});
    text.max = std::max({text.max, row.total_ns, row.self_ns});
  }
  return text;
}

// Row `r`: its label, the inclusive bar over the self bar, their values.
void DrawBreakdownRow(Document& doc, const BarLayout& layout, const Row& row,
                      const BreakdownText& text, size_t r, Centi top) {
  doc.Text(layout.label_x + Px(4), top + Px(22), "label",
           svg::FitTextAlways(text.labels[r], layout.label_width - Px(10), 12));
  const Centi inclusive_end = svg::BarEnd(layout, row.total_ns);
  const Centi self_end = svg::BarEnd(layout, row.self_ns);
  doc.Rect(layout.x0, top + Px(5),
           std::max<Centi>(inclusive_end - layout.x0, Px(1)), kBar,
           absl::StrCat("fill=\"", V(kInclusiveFill), "\""),
           Escape(absl::StrCat(text.labels[r], ": ", text.inclusive[r])));
  doc.Rect(layout.x0, top + Px(5) + kBar + Px(2),
           std::max<Centi>(self_end - layout.x0, Px(1)), kBar,
           absl::StrCat("fill=\"", V(kSelfFill), "\""),
           Escape(absl::StrCat(text.labels[r], ": ", text.self[r])));
  doc.Text(inclusive_end + Px(6), top + Px(15), "value",
           Escape(text.inclusive[r]));
  doc.Text(self_end + Px(6), top + Px(29), "value", Escape(text.self[r]));
}

}  // namespace

std::string PlotBreakdown(const Summary& summary,
                          const BreakdownOptions& options) {
  const int width = std::clamp(options.width, kMinPlotWidth, kMaxPlotWidth);
  Document doc(width);
  const size_t total_rows = summary.rows.size();
  const size_t shown = options.max_rows == 0
                           ? total_rows
                           : std::min(total_rows, options.max_rows);

  const std::string process =
      summary.process_name.empty() ? "spanprof" : summary.process_name;
  const std::string title =
      absl::StrCat(process, " \xE2\x80\x94 inclusive and self time per row");
  Centi y = svg::DrawHeading(doc, title, BreakdownSubtitle(summary));
  y = svg::DrawLegend(
      doc, y + Px(6),
      {"inclusive (total) time", "self time (excluding same-thread children)"},
      [&](size_t i, Centi x, Centi top) {
        doc.Rect(x, top, Px(12), Px(12),
                 absl::StrCat("rx=\"2\" fill=\"",
                              V(i == 0 ? kInclusiveFill : kSelfFill), "\""));
      });
  y += Px(8);

  const BreakdownText text = BreakdownRows(summary, shown);
  const BarLayout layout =
      svg::LayoutBars(doc, text.labels, text.widest_value, text.max);
  const Centi rows_top = y;
  svg::DrawRowBands(doc, rows_top, shown, kRowHeight);
  const Centi rows_bottom = rows_top + static_cast<Centi>(shown) * kRowHeight;
  y = svg::DrawAxis(doc, layout.x0, layout.x1, rows_bottom + Px(4), rows_top, 0,
                    layout.max, svg::ValueKind::kDuration, "");
  for (size_t r = 0; r < shown; ++r) {
    DrawBreakdownRow(doc, layout, summary.rows[r], text, r,
                     rows_top + static_cast<Centi>(r) * kRowHeight);
  }
  y = svg::DrawRowNotes(doc, y, shown, total_rows, "the summary has no rows");
  return doc.Finish(y + Px(8), Escape(title));
}

}  // namespace spanprof::analysis
