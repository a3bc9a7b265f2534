// spanprof/analysis/plot.h — deterministic SVG figures of captures,
// summaries and comparisons.
//
// Three pure functions render SVG 1.1 documents (with a `viewBox`, so they
// scale) that read at a glance in a browser, on GitHub or in a document:
//
//   - `PlotTimeline()`: one lane per thread, one row per nesting depth, a
//     rectangle per span coloured by phase, labels where they fit, a time
//     axis, and arrows for cross-thread parent links;
//   - `PlotBreakdown()`: per summary row, inclusive and self time as two
//     horizontal bars with their values;
//   - `PlotCompare()`: per comparison row, the baseline and candidate values
//     of the compared metric, the candidate coloured by its verdict, with the
//     tolerance band around the baseline.
//
// The output is a function of the input alone: no clocks, no locale, no
// floating point in coordinates or labels (everything is integer arithmetic
// with fixed formatting), iteration in sorted order. Same input, same bytes,
// on every machine — so figures checked into a repository can be regenerated
// and diffed. File paths never appear in a figure (only the base names that a
// `Comparison` carries), so where the inputs live does not change the bytes.
//
// clang-format off
// Example:
//
//   #include <spanprof/analysis/file_io.h>
//   #include <spanprof/analysis/trace.h>
//
//   absl::StatusOr<spanprof::Capture> capture =
//       spanprof::analysis::ReadTrace("build/spanprof-trace.json");
//   std::string svg = spanprof::analysis::PlotTimeline(*capture);
//   absl::Status written =
//       spanprof::analysis::WriteFileAtomically("timeline.svg", svg);
// clang-format on
#ifndef SPANPROF_ANALYSIS_PLOT_H_
#define SPANPROF_ANALYSIS_PLOT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/scaling.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

// Figure widths are clamped to [`kMinPlotWidth`, `kMaxPlotWidth`] pixels.
inline constexpr int kMinPlotWidth = 480;
inline constexpr int kMaxPlotWidth = 8000;

// `TimelineOptions` configures `PlotTimeline()`.
struct TimelineOptions {
  // Width of the figure in SVG user units (pixels at 100%).
  int width = 1200;
  // The time window shown, in session-relative ns. Unset: from 0 to the end
  // of the session (or of the last span, if later). Spans are clipped to it;
  // spans entirely outside it are not drawn.
  std::optional<int64_t> start_ns;
  std::optional<int64_t> end_ns;
  // At most this many spans are drawn: when a capture has more in the window,
  // the longest are kept (ties by span order) and the subtitle says so.
  size_t max_spans = 20000;
  // At most this many lanes: when more threads have spans to draw, the
  // busiest are kept (by the time their top-row spans cover; ties by thread
  // order) and the subtitle says so.
  size_t max_threads = 64;

  friend bool operator==(const TimelineOptions&,
                         const TimelineOptions&) = default;
};

// `PlotTimeline()` renders the capture's spans on a time axis. Threads are
// lanes, ordered by `ThreadInfo::sort_index` then capture order, labelled with
// the thread name (or `thread-<tid>`). Within a lane, a span's row is its
// depth among spans of the same thread (a span whose parent ran on another
// thread starts at the lane's top row), and a curved arrow joins it to its
// parent. Each phase gets a stable colour from a fixed palette (a span
// without a phase is grey), listed in the legend. Spans left by an exception
// are outlined in red, unfinished ones dashed. Every span carries a `<title>`
// tooltip with its label, duration and heartbeats. Parents are `Forest`'s:
// a parent chain that loops is cut where `Forest` cuts it (the link that
// `ValidateForest()` reports as ignored). Pure; never fails (a broken forest
// still draws).
std::string PlotTimeline(const Capture& capture,
                         const TimelineOptions& options = {});

// `BreakdownOptions` configures `PlotBreakdown()`.
struct BreakdownOptions {
  int width = 1000;
  // At most this many rows (the summary's first, i.e. most self time); a note
  // counts the rest. 0 means all.
  size_t max_rows = 25;

  friend bool operator==(const BreakdownOptions&,
                         const BreakdownOptions&) = default;
};

// `PlotBreakdown()` draws, for each summary row in the summary's order (self
// time descending), an inclusive-time bar and a self-time bar on one shared
// linear scale, each with its value, plus calls and share of recorded thread
// time. Pure; never fails.
std::string PlotBreakdown(const Summary& summary,
                          const BreakdownOptions& options = {});

// `ComparePlotOptions` configures `PlotCompare()`.
struct ComparePlotOptions {
  int width = 1000;
  // At most this many rows (the comparison's first, i.e. worst first); a note
  // counts the rest. 0 means all.
  size_t max_rows = 25;

  friend bool operator==(const ComparePlotOptions&,
                         const ComparePlotOptions&) = default;
};

// `PlotCompare()` draws, for each comparison row in the comparison's order,
// the baseline value (an outlined bar) and the candidate value (a bar
// coloured by status: regressed red, improved green, within grey, new blue,
// missing orange, not measured hatched), the band of values within tolerance
// of the baseline (base ± max(absolute, relative·base)), and the change. The
// title names the metric and both tolerances; the subtitle gives the counts
// and the verdict. `Comparison::base_path` and `candidate_path` are shown by
// their base names only. Pure; never fails.
std::string PlotCompare(const Comparison& comparison,
                        const ComparePlotOptions& options = {});

// `ScalingPlotOptions` configures `PlotScaling()`.
struct ScalingPlotOptions {
  int width = 1000;
  friend bool operator==(const ScalingPlotOptions&,
                         const ScalingPlotOptions&) = default;
};

// `PlotScaling()` draws, per group of a scaling report, two panels over a
// log size axis: on the left the bucket medians (filled dots) and p95s
// (rings) of the duration on a log axis with the fitted line
// overhead + a·size^b and its exponent; on the right the median duration per
// unit of size on a linear axis (flat = linear, rising = super-linear). The
// logarithms are computed in floating point and rounded to integer
// coordinates, so the bytes are the same wherever the C library's `log`
// rounds the same (every glibc). Pure; never fails.
std::string PlotScaling(const ScalingReport& report,
                        const ScalingPlotOptions& options = {});

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_PLOT_H_
