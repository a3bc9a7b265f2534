// spanprof/analysis/plot_flame.h — flame graphs of captures, and
// differential flame graphs of two captures or two sets of runs.
//
// A flame graph merges every call with the same stack (the span names from a
// root down) into one frame whose width is the inclusive time of those calls
// summed. Children sit on their parents (above them in a flame graph, below
// in an icicle), siblings in name order, so the picture is a pure function
// of the captures: the same inputs give the same bytes on every machine.
// Cross-thread children (spans opened under a `ContextScope` or `Bind`) sit
// under the span that spawned them, whatever thread ran them.
//
// A differential flame graph lays out the candidate's frames and colours
// each by the change of its self time against the baseline: red slower,
// blue faster, the more saturated the larger the change against the largest
// one. With several runs a side, a frame is coloured only where the gate's
// repeated-runs verdict on its self time is `regressed` or `improved`.
//
// clang-format off
// Example:
//
//   #include <spanprof/analysis/trace.h>
//
//   absl::StatusOr<spanprof::Capture> capture =
//       spanprof::analysis::ReadTrace("build/spanprof-trace.json");
//   const spanprof::analysis::FlameGraph graph =
//       spanprof::analysis::BuildFlameGraph({&*capture}, {});
//   std::string svg = spanprof::analysis::PlotFlame(graph, {});
// clang-format on
#ifndef SPANPROF_ANALYSIS_PLOT_FLAME_H_
#define SPANPROF_ANALYSIS_PLOT_FLAME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

// `FlameFrame` is one distinct stack: every call of `name` under the same
// chain of parent frames.
struct FlameFrame {
  std::string name;      // the span name (a thread's label for thread frames)
  uint32_t parent = 0;   // index of the parent frame; the root's is itself
  int64_t total_ns = 0;  // inclusive time summed over the calls
  int64_t self_ns = 0;   // self time summed over the calls
  uint64_t calls = 0;    // 0 for the root and thread frames
  bool thread_frame = false;
  std::vector<uint32_t> children = {};  // in name order
};

// `FlameGraph` is the merged stacks of one or more captures. `frames[0]` is
// the root ("all"), whose total is the sum of its children's.
struct FlameGraph {
  std::vector<FlameFrame> frames;
  size_t captures = 0;
  uint64_t spans = 0;
};

// `FlameBuildOptions` configures `BuildFlameGraph()`.
struct FlameBuildOptions {
  // One tree over every thread (roots directly under "all") instead of a
  // frame per thread (named by the thread's label) holding its roots.
  bool merge_threads = false;
};

// `BuildFlameGraph()` merges the stacks of `captures` (none null). Threads of
// different captures with the same label share a thread frame. Pure.
FlameGraph BuildFlameGraph(const std::vector<const Capture*>& captures,
                           const FlameBuildOptions& options);

// `FlameStack()` is the names of frame `index`'s stack from the first frame
// under the root, joined by ';' (the folded-stack form).
std::string FlameStack(const FlameGraph& graph, uint32_t index);

// `FlamePlotOptions` configures `PlotFlame()` and `PlotFlameDiff()`.
struct FlamePlotOptions {
  int width = 1200;
  // Roots at the top and children below them, instead of roots at the
  // bottom.
  bool icicle = false;
};

// `PlotFlame()` draws `graph`: each frame a `<g class="frame">` holding a
// `<title>` (the stack's full name, inclusive and self time, calls, share
// of the total) and a `<rect>` whose width is the frame's inclusive time on
// one scale for the whole figure, with the name as a label where it fits.
// A frame whose cross-thread children ran in parallel can hold more child
// time than its own: its children are then scaled down to fit in it (the
// titles keep the real figures). Frames narrower than 0.1 px are not drawn
// and counted in the subtitle. Pure; never fails.
std::string PlotFlame(const FlameGraph& graph,
                      const FlamePlotOptions& options = {});

// `FlameDiffFrame` is one candidate frame's self time on both sides and
// whether it is coloured.
struct FlameDiffFrame {
  int64_t base_self_ns = 0;  // the baseline's (median over its runs)
  int64_t cand_self_ns = 0;  // the candidate's (median over its runs)
  bool in_base = false;      // some baseline run has the stack
  // With one run a side: the self time changed. With more: the
  // repeated-runs verdict is `regressed` or `improved`.
  bool coloured = false;
  std::string verdict;  // with more runs, the verdict's word; else ""
};

// `FlameDiff` is a differential flame graph before it is drawn.
struct FlameDiff {
  FlameGraph candidate;  // the layout: the candidate's runs merged
  std::vector<FlameDiffFrame> frames;  // per frame of `candidate`
  size_t base_runs = 0;
  size_t candidate_runs = 0;
  size_t only_in_base = 0;  // stacks of the baseline not in the candidate
};

// `DiffFlameGraphs()` compares the stacks of two sides, each one or more
// runs (one capture a run). The candidate's runs merged give the layout.
// With one run a side every frame whose self time changed is coloured; with
// more, each stack's self time over the runs goes through the gate over
// repeated runs (`CompareRuns()`, metric `self_ns`, the directories'
// default band of 5%), and only `regressed` and `improved` frames are
// coloured. An error when a side has no run.
absl::StatusOr<FlameDiff> DiffFlameGraphs(
    const std::vector<const Capture*>& base_runs,
    const std::vector<const Capture*>& candidate_runs,
    const FlameBuildOptions& options);

// `PlotFlameDiff()` draws the candidate's frames of `diff` coloured by the
// change of their self time (red slower, blue faster, intensity by the size
// of the change against the largest); the titles give both self times and
// the change. Pure; never fails.
std::string PlotFlameDiff(const FlameDiff& diff,
                          const FlamePlotOptions& options = {});

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_PLOT_FLAME_H_
