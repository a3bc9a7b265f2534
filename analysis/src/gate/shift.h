// shift.h — the statistics of the noise-aware gate (private to the analysis
// library): the shift between two samples of runs and how sure it is.
//
// `EstimateShift()` gives the Hodges–Lehmann estimate of the shift of the
// candidate against the baseline (the median of every pairwise difference
// candidate − baseline), its confidence interval by inverting the
// Mann–Whitney test (an order statistic of the same pairwise differences,
// with the exact null distribution of U for small samples and the normal
// approximation beyond), and the two-sided Mann–Whitney p-value.
// docs/cli.md ("compare on repeated runs") gives the formulas.
#ifndef SPANPROF_ANALYSIS_SRC_GATE_SHIFT_H_
#define SPANPROF_ANALYSIS_SRC_GATE_SHIFT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace spanprof::analysis::gate {

// Samples this large or smaller (both sides) use the exact distribution of
// U; larger ones the normal approximation with a tie correction.
inline constexpr size_t kExactLimit = 40;

// From this many runs a side (both sides) the rank test decides; with fewer,
// `EstimateLogShift()` does, from `kLogTestMinRuns` runs a side (2 runs
// estimate a side's spread from one difference: too little to trust).
inline constexpr size_t kRankTestRuns = 6;
inline constexpr size_t kLogTestMinRuns = 3;

// `Shift` is the comparison of two samples.
struct Shift {
  double estimate = 0;  // Hodges–Lehmann: median of (cand_j − base_i)
  // The confidence interval; nullopt when the samples are too small to
  // reach the confidence at all (2 runs a side cannot reach 95%).
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  double p_value = 1;  // two-sided Mann–Whitney
  bool exact = false;  // exact null distribution (else normal approximation)
};

// `EstimateShift()` compares `base` and `cand` (each at least one value) at
// `confidence` (e.g. 0.95).
Shift EstimateShift(std::span<const double> base, std::span<const double> cand,
                    double confidence);

// `EstimateLogShift()` compares `base` and `cand` by Welch's t on the
// logarithms of the values: the interval of the ratio of geometric means,
// exp(mean(log y) − mean(log x)), at `confidence`, turned into a shift by
// scaling (ratio − 1) by the median of `base`; `p_value` is Welch's
// two-sided p. It assumes log-normal runs (durations of one program are
// close to it) and can decide with 3 runs a side, which Mann–Whitney
// cannot. nullopt when a side has fewer than 2 values, a value is not
// positive, or neither side has spread.
std::optional<Shift> EstimateLogShift(std::span<const double> base,
                                      std::span<const double> cand,
                                      double confidence);

// `StudentTCdf()` is P(T ≤ t) for Student's t with `df` > 0 degrees of
// freedom (df need not be an integer).
double StudentTCdf(double t, double df);

// `MannWhitneyU()` is U of `cand` against `base`: the pairs with
// cand > base, plus half the ties.
double MannWhitneyU(std::span<const double> base, std::span<const double> cand);

// `ExactUCdf()` is P(U ≤ u) under the null hypothesis for sample sizes m
// and n without ties (Mann and Whitney's recursion).
double ExactUCdf(size_t m, size_t n, int64_t u);

}  // namespace spanprof::analysis::gate

#endif  // SPANPROF_ANALYSIS_SRC_GATE_SHIFT_H_
