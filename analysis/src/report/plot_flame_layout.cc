// The geometry and drawing of plot_flame_layout.h.
#include "report/plot_flame_layout.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "report/svg.h"
#include "spanprof/analysis/plot.h"

namespace spanprof::analysis::flame {
namespace {

using svg::Centi;
using svg::Document;
using svg::Escape;
using svg::kMargin;
using svg::Px;
using svg::V;

constexpr Centi kRowHeight = Px(18);
constexpr Centi kFrameHeight = Px(17);
// Frames narrower than this are not drawn (nor their children, which are
// narrower still): a tenth of a pixel shows nothing.
constexpr Centi kMinFrameWidth = 10;

int64_t MulDiv(int64_t a, int64_t b, int64_t c) {
  if (c <= 0) return 0;
  return static_cast<int64_t>(absl::int128(a) * b / c);
}

// The frames to draw, parents before children.
struct Placed {
  uint32_t frame = 0;
  Centi x = 0;
  Centi width = 0;
  uint32_t depth = 0;
};

std::vector<Placed> Place(const FlameGraph& graph, Centi plot_width,
                          size_t* hidden) {
  const std::vector<Extent> extents = Layout(graph);
  const int64_t all = std::max<int64_t>(graph.frames[0].total_ns, 1);
  std::vector<Placed> placed;
  std::vector<uint32_t> pending = {0};
  while (!pending.empty()) {
    const uint32_t i = pending.back();
    pending.pop_back();
    const Extent& e = extents[i];
    const Centi x0 = svg::Scale(e.start, 0, all, plot_width);
    const Centi x1 = svg::Scale(e.start + e.length, 0, all, plot_width);
    if (x1 - x0 < kMinFrameWidth) {
      // This frame and every frame above it.
      std::vector<uint32_t> skipped = {i};
      while (!skipped.empty()) {
        const uint32_t s = skipped.back();
        skipped.pop_back();
        ++*hidden;
        for (uint32_t c : graph.frames[s].children) skipped.push_back(c);
      }
      continue;
    }
    placed.push_back({i, kMargin + x0, x1 - x0, e.depth});
    const std::vector<uint32_t>& children = graph.frames[i].children;
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      pending.push_back(*it);
    }
  }
  return placed;
}

void DrawFrame(Document& doc, const Placed& p, Centi y, std::string_view name,
               const FrameStyle& style) {
  std::string& body = doc.body();
  absl::StrAppend(&body, "<g class=\"frame\"><title>", V(Escape(style.title)),
                  "</title><rect x=\"", svg::N(p.x), "\" y=\"", svg::N(y),
                  "\" width=\"", svg::N(p.width), "\" height=\"",
                  svg::N(kFrameHeight), "\" rx=\"1\" fill=\"", V(style.fill),
                  "\"/>");
  const std::optional<std::string> label =
      svg::FitText(name, p.width - Px(6), 11, 3);
  if (label.has_value()) {
    absl::StrAppend(&body, "<text x=\"", svg::N(p.x + Px(3)), "\" y=\"",
                    svg::N(y + Px(12)), "\" class=\"span\">", V(*label),
                    "</text>");
  }
  body.append("</g>\n");
}

}  // namespace

std::string Permille(int64_t part, int64_t all) {
  const int64_t permille = MulDiv(std::max<int64_t>(part, 0), 1000, all);
  return absl::StrCat(permille / 10, ".", permille % 10, "%");
}

std::vector<Extent> Layout(const FlameGraph& graph) {
  std::vector<Extent> extents(graph.frames.size());
  if (graph.frames.empty()) return extents;
  extents[0] = {0, std::max<int64_t>(graph.frames[0].total_ns, 0), 0};
  // Frames are numbered parents first, so one pass in index order places
  // every parent before its children.
  for (size_t i = 0; i < graph.frames.size(); ++i) {
    const FlameFrame& frame = graph.frames[i];
    int64_t sum = 0;
    for (uint32_t c : frame.children) {
      sum += std::max<int64_t>(graph.frames[c].total_ns, 0);
    }
    const int64_t room = extents[i].length;
    const int64_t scale_to = std::max(sum, frame.total_ns);
    int64_t cumulative = 0;
    for (uint32_t c : frame.children) {
      const int64_t value = std::max<int64_t>(graph.frames[c].total_ns, 0);
      const int64_t start = MulDiv(cumulative, room, scale_to);
      const int64_t end = MulDiv(cumulative + value, room, scale_to);
      extents[c] = {extents[i].start + start, end - start,
                    extents[i].depth + 1};
      cumulative += value;
    }
  }
  return extents;
}

std::string Draw(
    const FlameGraph& graph, const FlamePlotOptions& options,
    std::string_view title, std::string_view subtitle,
    const std::function<FrameStyle(uint32_t)>& style,
    const std::vector<std::pair<std::string, std::string>>& legend) {
  const int width = std::clamp(options.width, kMinPlotWidth, kMaxPlotWidth);
  Document doc(width);
  const Centi plot_width = doc.width() - 2 * kMargin;
  size_t hidden = 0;
  const std::vector<Placed> placed = graph.frames.empty()
                                         ? std::vector<Placed>()
                                         : Place(graph, plot_width, &hidden);
  uint32_t max_depth = 0;
  for (const Placed& p : placed) max_depth = std::max(max_depth, p.depth);
  std::string sub(subtitle);
  if (hidden > 0) {
    absl::StrAppend(&sub, "; ", hidden, hidden == 1 ? " frame" : " frames",
                    " narrower than 0.1 px not drawn");
  }
  Centi y = svg::DrawHeading(doc, title, sub);
  if (!legend.empty()) {
    std::vector<std::string> labels;
    labels.reserve(legend.size());
    for (const auto& entry : legend) labels.push_back(entry.first);
    y = svg::DrawLegend(
        doc, y + Px(6), labels, [&](size_t i, Centi x, Centi top) {
          doc.Rect(x, top, Px(12), Px(12),
                   absl::StrCat("rx=\"2\" fill=\"", V(legend[i].second), "\""));
        });
  }
  const Centi top = y + Px(8);
  const Centi rows = static_cast<Centi>(max_depth + 1) * kRowHeight;
  for (const Placed& p : placed) {
    const Centi depth = static_cast<Centi>(p.depth);
    const Centi frame_y = options.icicle
                              ? top + depth * kRowHeight
                              : top + rows - (depth + 1) * kRowHeight;
    DrawFrame(doc, p, frame_y, graph.frames[p.frame].name, style(p.frame));
  }
  return doc.Finish(top + rows + Px(12), Escape(title));
}

}  // namespace spanprof::analysis::flame
