// spanprof/analysis/scaling.h — the scaling-first method as functions: does a
// phase cost more *per unit of size* as its inputs grow, and which counter
// drives it?
//
// For every group of spans (the summary's row key) that carries a numeric
// size argument, the spans are put in log-spaced size buckets (powers of 2);
// the bucket medians give the exponent b of duration ∝ size^b by a
// Theil–Sen fit in log–log space, with a fixed per-call overhead fitted
// first so that it cannot hide the slope, and a percentile bootstrap over
// the spans (fixed seed: the output is reproducible) gives its confidence
// interval. Each counter (heartbeats, allocations, named counters) gets its
// own exponent γ; in a super-linear group the counter whose count per unit
// of size grows the most is the driver, with its share (γ − 1)/(b − 1) of
// the super-linearity (`CounterScaling`). See
// docs/guide.md ("Scaling") for the method and docs/formats.md for the JSON.
//
// clang-format off
// Example:
//
//   #include <spanprof/analysis/trace.h>
//
//   using namespace spanprof;
//   using namespace spanprof::analysis;
//   absl::StatusOr<Capture> capture = ReadTrace("build/spanprof-trace.json");
//   const NamedCapture captures[] = {{"build/spanprof-trace.json", &*capture}};
//   absl::StatusOr<ScalingReport> report = AnalyzeScaling(captures, {});
//   std::cout << ScalingTable(*report);
// clang-format on
//
// Every function here is pure: no threads, no clocks, no files.
#ifndef SPANPROF_ANALYSIS_SCALING_H_
#define SPANPROF_ANALYSIS_SCALING_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

inline constexpr std::string_view kScalingSchema = "spanprof.scaling";
inline constexpr int64_t kScalingSchemaVersion = 1;

// `ScalingOptions` are the settings of the fit and of the verdict. The
// defaults are documented in docs/cli.md ("scaling").
struct ScalingOptions {
  // The size argument; empty: every numeric argument that varies within a
  // group is tried as a size.
  std::string size_arg;
  // A bucket takes part in the fit when it holds at least this many spans.
  uint64_t min_bucket_spans = 3;
  // Fewer fitted buckets than this: `unknown`.
  uint64_t min_buckets = 3;
  // Sizes spanning fewer decades than this: `unknown`.
  double min_decades = 1.0;
  // Verdict thresholds on the exponent estimate: below `constant_below` is
  // constant, below `linear_low` sublinear, up to `linear_high` linear
  // (n log n over sizes 16 to 256 Ki fits about 1.15), above it
  // superlinear when the interval's lower bound is above 1.
  double constant_below = 0.15;
  double linear_low = 0.85;
  double linear_high = 1.2;
  // A confidence interval wider than this decides nothing: `unknown`.
  double max_interval_width = 0.6;
  // Outside a super-linear group, a counter is the driver when its exponent
  // is within this of the duration's; a rider when it grows, but slower
  // than that (`CounterScaling` has the super-linear rule).
  double driver_tolerance = 0.2;
  // Bootstrap resamples and the confidence level of the intervals.
  uint32_t resamples = 1000;
  double confidence = 0.95;
  uint64_t seed = 1;
};

// `SizedSpan` is one span as the scaling analysis sees it: its size, its
// inclusive duration and its counters (in the order of the group's
// `counter_names`; nullopt when the counter was not measured).
struct SizedSpan {
  double size = 0;
  int64_t duration_ns = 0;
  std::vector<std::optional<double>> counters;
};

// `Exponent` is a fitted exponent with its confidence interval.
struct Exponent {
  double estimate = 0;
  double ci_low = 0;
  double ci_high = 0;
};

// `ScalingBucket` holds the spans whose size lies in [size_low, size_high].
struct ScalingBucket {
  double size_low = 0;
  double size_high = 0;
  uint64_t spans = 0;
  int64_t median_ns = 0;
  int64_t p95_ns = 0;
  double median_ns_per_unit = 0;
  // Median of counter / size per counter, in `counter_names` order; nullopt
  // when the counter was not measured for these spans.
  std::vector<std::optional<double>> counters_per_unit;
};

// `CounterScaling` is one counter's exponent against size and its role.
//
// In a super-linear group (duration ∝ size^b, b clearly above 1) the counter
// whose count per unit of size grows the most (its exponent γ's interval
// above 1) is the `driver`, even when time bends further than it (b ≫ γ:
// caches, preemption); any other counter that grows is a `rider`. In any
// other group, the counter whose γ is within `driver_tolerance` of b is the
// driver and one that grows slower a rider. A counter that does not grow
// (γ below `constant_below`) or was not measured is `unrelated`.
struct CounterScaling {
  std::string name;
  std::optional<Exponent> exponent;  // nullopt: never nonzero, not measured
  std::string role;                  // "driver", "rider" or "unrelated"
  // In a super-linear group, the counter's share of the super-linearity,
  // (γ − 1)/(b − 1) (1: it explains all of it; 0: it grows linearly), with
  // the interval the two exponents' intervals allow; nullopt elsewhere.
  std::optional<Exponent> share;
};

// `ScalingGroup` is the analysis of one (row key, size argument) pair.
struct ScalingGroup {
  RowKey key;
  std::string label;
  std::string size_arg;
  uint64_t spans = 0;
  double size_min = 0;
  double size_max = 0;
  std::vector<std::string> counter_names;
  std::vector<ScalingBucket> buckets;
  // Fitted fixed per-call overhead (ns) subtracted before the fit; 0 when
  // none improved it. The buckets where it dominates are left out of the
  // slope (`reason` says how many).
  double overhead_ns = 0;
  // ln a of the median fit, for drawing it: median ≈ overhead + a·size^b.
  double log_scale = 0;
  std::optional<Exponent> exponent;
  std::optional<Exponent> p95_exponent;
  std::string verdict;  // constant, sublinear, linear, superlinear, unknown
  std::string reason;
  std::vector<CounterScaling> counters;
  std::optional<std::string> driver;
  // The bootstrap exponents (kept for the scaling gate; not written).
  std::vector<double> bootstrap;
};

// `ScalingReport` is the result over one or more traces.
struct ScalingReport {
  std::vector<std::string> traces;
  std::vector<ScalingGroup> groups;
  // Spans skipped because their size argument was not positive.
  uint64_t skipped_nonpositive_sizes = 0;
};

// `NamedCapture` is a capture with the path it was read from.
struct NamedCapture {
  std::string path;
  const Capture* capture = nullptr;
};

// `AnalyzeScaling()` pools the spans of every capture (several runs of one
// program) and analyses every sized group. Unfinished spans are left out.
// Errors: a `size_arg` that no span carries (the message names it).
absl::StatusOr<ScalingReport> AnalyzeScaling(
    std::span<const NamedCapture> captures, const ScalingOptions& options);

// `AnalyzeSizedSpans()` analyses one group's spans: buckets, fit, verdict
// and counter roles. `group` supplies key, label, size argument and
// counter names; the rest is filled in.
void AnalyzeSizedSpans(std::vector<SizedSpan> spans,
                       const ScalingOptions& options, ScalingGroup& group);

// `PowerLawFit` is the result of `FitPowerLaw()`.
struct PowerLawFit {
  double exponent = 0;
  double offset = 0;       // the fixed part c subtracted before the fit
  double log_scale = 0;    // ln a: the fitted line is y = c + a·x^b
  std::vector<bool> used;  // the points the slope was fitted on
};

// `FitPowerLaw()` fits y = c + a·x^b to points with positive x and y by
// Theil–Sen in log–log space. With `fit_offset`, c is the offset in
// [0, min y) that best explains the points (least squares of the log
// residuals, kept only when it halves them); the slope is then fitted on the
// points whose growing part is at least c (where the offset does not
// dominate), when three or more are. nullopt without two distinct x.
std::optional<PowerLawFit> FitPowerLaw(std::span<const double> x,
                                       std::span<const double> y,
                                       bool fit_offset);

// `ScalingVerdict()` classifies a fitted exponent and sets `*reason`.
std::string ScalingVerdict(const std::optional<Exponent>& exponent,
                           uint64_t fitted_buckets, double decades,
                           const ScalingOptions& options, std::string* reason);

// `ScalingGateRow` is one group of the scaling gate.
struct ScalingGateRow {
  std::string label;
  std::string size_arg;
  std::optional<Exponent> base;
  std::optional<Exponent> candidate;
  std::optional<Exponent> rise;  // candidate − baseline
  std::string verdict;           // "regressed", "same", "unknown"
  std::string reason;
};

// `CompareScaling()` is the scaling gate: a group regressed when its
// exponent rose by more than `margin` and the lower bound of the rise's
// interval lies above `margin`, fitted on the size buckets both sides have.
std::vector<ScalingGateRow> CompareScaling(std::span<const NamedCapture> base,
                                           std::span<const NamedCapture> cand,
                                           const ScalingOptions& options,
                                           double margin);

// `ScalingToJson()` renders the report as the `spanprof.scaling` document
// (docs/formats.md).
std::string ScalingToJson(const ScalingReport& report);

// `ScalingTable()` renders the report as the console table.
std::string ScalingTable(const ScalingReport& report);

// `ScalingGateTable()` renders the gate's rows.
std::string ScalingGateTable(std::span<const ScalingGateRow> rows);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_SCALING_H_
