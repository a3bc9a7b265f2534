// plot_flame_layout.h — the geometry and drawing that flame graphs and
// differential flame graphs share (private to the analysis library).
//
// Each frame gets an interval on one value axis (ns of the root's inclusive
// time): children are laid left to right in name order from their parent's
// start, scaled down when their sum exceeds their parent (cross-thread
// children that ran in parallel); pixels come from that axis with integer
// arithmetic, so the bytes depend on the graph alone.
#ifndef SPANPROF_ANALYSIS_SRC_REPORT_PLOT_FLAME_LAYOUT_H_
#define SPANPROF_ANALYSIS_SRC_REPORT_PLOT_FLAME_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "spanprof/analysis/plot_flame.h"

namespace spanprof::analysis::flame {

// "12.3%": `part` of `all` in tenths of a percent, rounded down.
std::string Permille(int64_t part, int64_t all);

// A frame's interval on the value axis.
struct Extent {
  int64_t start = 0;
  int64_t length = 0;
  uint32_t depth = 0;
};

// The extents of every frame of `graph` (the root from 0 to its total).
std::vector<Extent> Layout(const FlameGraph& graph);

// How one frame is drawn.
struct FrameStyle {
  std::string fill;   // "#rrggbb"
  std::string title;  // unescaped; lines separated by '\n'
};

// The whole figure: heading, frames (each a `<g class="frame">` with its
// `<title>`, `<rect>` and, where it fits, a label), and the note on frames
// too narrow to draw. `legend` entries (label, fill) are drawn under the
// heading when not empty.
std::string Draw(
    const FlameGraph& graph, const FlamePlotOptions& options,
    std::string_view title, std::string_view subtitle,
    const std::function<FrameStyle(uint32_t)>& style,
    const std::vector<std::pair<std::string, std::string>>& legend = {});

}  // namespace spanprof::analysis::flame

#endif  // SPANPROF_ANALYSIS_SRC_REPORT_PLOT_FLAME_LAYOUT_H_
