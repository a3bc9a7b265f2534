// `BuildFlameGraph()` and `PlotFlame()` (plot_flame.h): the merged stacks of
// captures and their flame graph.
#include "spanprof/analysis/plot_flame.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/plot_flame_layout.h"
#include "report/svg.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/timing.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

// Frames keyed by (parent frame, name) while they are built.
class FrameIndex {
 public:
  explicit FrameIndex(FlameGraph& graph) : graph_(graph) {
    graph_.frames.push_back(FlameFrame{.name = "all"});
  }

  uint32_t Child(uint32_t parent, const std::string& name, bool thread) {
    auto [it, inserted] =
        ids_.emplace(std::make_pair(parent, name),
                     static_cast<uint32_t>(graph_.frames.size()));
    if (inserted) {
      graph_.frames.push_back(
          FlameFrame{.name = name, .parent = parent, .thread_frame = thread});
    }
    return it->second;
  }

 private:
  FlameGraph& graph_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> ids_;
};

std::string SiteName(const Capture& capture, const Span& span) {
  return span.site < capture.sites.size() ? capture.sites[span.site].name
                                          : std::string("[unknown]");
}

// Adds one capture's spans: each root under its thread's frame (or the
// root), every child, on any thread, under its parent's frame.
void AddCapture(const Capture& capture, bool merge_threads, FrameIndex& index,
                FlameGraph& graph) {
  const Forest forest(capture);
  const std::vector<SpanTiming> timings = ComputeTimings(capture, forest);
  std::vector<std::pair<uint32_t, uint32_t>> pending;  // span, parent frame
  for (uint32_t root : forest.roots()) {
    uint32_t parent = 0;
    if (!merge_threads) {
      const uint32_t t = capture.spans[root].thread;
      const std::string label = t < capture.threads.size()
                                    ? ThreadLabel(capture.threads[t])
                                    : std::string("[unknown thread]");
      parent = index.Child(0, label, /*thread=*/true);
    }
    pending.emplace_back(root, parent);
  }
  while (!pending.empty()) {
    const auto [span, parent] = pending.back();
    pending.pop_back();
    const uint32_t frame =
        index.Child(parent, SiteName(capture, capture.spans[span]), false);
    FlameFrame& f = graph.frames[frame];
    f.total_ns += timings[span].inclusive_ns;
    f.self_ns += timings[span].self_ns;
    ++f.calls;
    ++graph.spans;
    for (uint32_t child : forest.children(span)) {
      pending.emplace_back(child, frame);
    }
  }
}

// Thread frames and the root hold the sum of their children; children are
// listed in name order.
void Finish(FlameGraph& graph) {
  std::vector<FlameFrame>& frames = graph.frames;
  for (size_t i = 1; i < frames.size(); ++i) {
    frames[frames[i].parent].children.push_back(static_cast<uint32_t>(i));
  }
  for (FlameFrame& frame : frames) {
    if (!frame.thread_frame) continue;
    for (uint32_t c : frame.children) frame.total_ns += frames[c].total_ns;
  }
  for (uint32_t c : frames[0].children) {
    frames[0].total_ns += frames[c].total_ns;
  }
  for (FlameFrame& frame : frames) {
    std::sort(frame.children.begin(), frame.children.end(),
              [&](uint32_t a, uint32_t b) {
                return frames[a].name < frames[b].name;
              });
  }
}

// A warm colour chosen from the name alone (FNV-1a), as flamegraph.pl does,
// so that a name keeps its colour from figure to figure.
std::string WarmColour(std::string_view name) {
  uint32_t hash = 2166136261u;
  for (char c : name) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  }
  const uint32_t r = 205 + hash % 50;
  const uint32_t g = 90 + (hash >> 8) % 140;
  const uint32_t b = 40 + (hash >> 16) % 50;
  return absl::StrFormat("#%02x%02x%02x", r, g, b);
}

std::string FrameTitle(const FlameGraph& graph, uint32_t i) {
  const FlameFrame& f = graph.frames[i];
  const int64_t all = std::max<int64_t>(graph.frames[0].total_ns, 1);
  std::string title = i == 0 ? std::string("all") : FlameStack(graph, i);
  absl::StrAppend(&title, " \xE2\x80\x94 inclusive ",
                  FormatDuration(f.total_ns), " (",
                  flame::Permille(f.total_ns, all), " of all)");
  if (i != 0 && !f.thread_frame) {
    absl::StrAppend(&title, ", self ", FormatDuration(f.self_ns), ", ", f.calls,
                    f.calls == 1 ? " call" : " calls");
  }
  return title;
}

}  // namespace

FlameGraph BuildFlameGraph(const std::vector<const Capture*>& captures,
                           const FlameBuildOptions& options) {
  FlameGraph graph;
  FrameIndex index(graph);
  for (const Capture* capture : captures) {
    AddCapture(*capture, options.merge_threads, index, graph);
    ++graph.captures;
  }
  Finish(graph);
  return graph;
}

std::string FlameStack(const FlameGraph& graph, uint32_t index) {
  std::vector<uint32_t> path;
  for (uint32_t i = index; i != 0; i = graph.frames[i].parent) {
    path.push_back(i);
  }
  std::string out;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (!out.empty()) out.push_back(';');
    out += graph.frames[*it].name;
  }
  return out;
}

std::string PlotFlame(const FlameGraph& graph,
                      const FlamePlotOptions& options) {
  const std::string subtitle = absl::StrCat(
      graph.spans, graph.spans == 1 ? " span" : " spans", " from ",
      graph.captures, graph.captures == 1 ? " capture" : " captures",
      "; width: inclusive time summed over the calls with the same stack (",
      FormatDuration(graph.frames.empty() ? 0 : graph.frames[0].total_ns),
      " in all)");
  return flame::Draw(graph, options,
                     options.icicle ? "Icicle graph" : "Flame graph", subtitle,
                     [&](uint32_t i) {
                       const FlameFrame& f = graph.frames[i];
                       return flame::FrameStyle{
                           .fill = i == 0           ? std::string("#d8d8d8")
                                   : f.thread_frame ? std::string("#c8c8dc")
                                                    : WarmColour(f.name),
                           .title = FrameTitle(graph, i)};
                     });
}

}  // namespace spanprof::analysis
