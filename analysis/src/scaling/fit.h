// The statistics of the scaling analysis: nearest-rank order statistics,
// the Theil–Sen slope, and a reproducible random source for the bootstrap
// (its own uniform, normal, gamma and beta draws on top of std::mt19937_64,
// whose output the standard fixes, so a seed gives the same numbers with
// every standard library).
#ifndef SPANPROF_ANALYSIS_SRC_SCALING_FIT_H_
#define SPANPROF_ANALYSIS_SRC_SCALING_FIT_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace spanprof::analysis::scaling {

// The 1-based nearest rank of quantile `p` among `n` values:
// max(1, ceil(p·n)), as the summary's percentiles.
size_t NearestRank(double p, size_t n);

// The value of nearest rank `NearestRank(p, n)` in `sorted`.
double SortedQuantile(std::span<const double> sorted, double p);

// The median of pairwise slopes (y_j − y_i) / (x_j − x_i) over pairs with
// distinct x; nullopt-like NaN when no pair has distinct x.
double TheilSenSlope(std::span<const double> x, std::span<const double> y);

// The median of y − slope·x.
double TheilSenIntercept(std::span<const double> x, std::span<const double> y,
                         double slope);

// A reproducible source of random draws.
class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  // Uniform on (0, 1).
  double Uniform();
  // Standard normal (Box–Muller).
  double Normal();
  // Gamma(shape, 1) for shape >= 1 (Marsaglia–Tsang).
  double Gamma(double shape);
  // The 0-based index, among `n` sorted values, of the `rank`-th smallest
  // of `n` draws with replacement: the bootstrap's order statistic, drawn
  // in O(1) through U_(rank) ~ Beta(rank, n − rank + 1).
  size_t OrderStatisticIndex(size_t rank, size_t n);

 private:
  std::mt19937_64 engine_;
};

}  // namespace spanprof::analysis::scaling

#endif  // SPANPROF_ANALYSIS_SRC_SCALING_FIT_H_
