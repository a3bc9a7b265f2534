// tail_shape.h — the tail shape of a row's durations: p99 / median, the
// standard deviation of ln(duration) and the heavy-tail rule (private to the
// analysis library). docs/formats.md ("Tail shape") explains the rule.
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_TAIL_SHAPE_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_TAIL_SHAPE_H_

#include <bit>
#include <cstdint>
#include <optional>
#include <span>

namespace spanprof::analysis::internal {

// The heavy-tail rule: at least this many calls, and `log_sigma` at least
// this. For a log-normal distribution p99 / median = exp(2.326 σ), so
// σ = 0.8 is a p99 about 6.4 times the median; fewer calls than 20 make the
// p99 the maximum and σ too noisy to call anything.
inline constexpr uint64_t kHeavyTailMinCalls = 20;
inline constexpr double kHeavyTailMinLogSigma = 0.8;

// `FastLn()` is ln(x) for a finite x > 0 (normal, not subnormal), branch-free
// and within 2e-6 of std::log: the exponent bits give x = 2^e · m with m in
// [0.75, 1.5), and a degree-6 polynomial (a Chebyshev interpolant) gives
// ln(m). About a tenth of std::log's cost, so that every span's duration can
// pass through it at session end.
inline double FastLn(double x) {
  constexpr int64_t kThreeQuarters = 0x3FE8000000000000;  // bits of 0.75
  const auto bits = std::bit_cast<int64_t>(x);
  const int64_t exponent = (bits - kThreeQuarters) >> 52;
  const double m = std::bit_cast<double>(bits - exponent * (int64_t{1} << 52));
  const double t = m - 1.0;
  double p = -0.09568351848159297;
  p = p * t + 0.20001272178532994;
  p = p * t + -0.2576759145635447;
  p = p * t + 0.3341795501342385;
  p = p * t + -0.49979545877834053;
  p = p * t + 0.9999818425874716;
  p = p * t + -9.147988726786731e-07;
  constexpr double kLn2 = 0.6931471805599453;
  return static_cast<double>(exponent) * kLn2 + p;
}

// `LogSigma()` is the sample standard deviation of ln(d) over the durations
// d > 0 (nanoseconds), nullopt with fewer than two of them. `pivot_ns`, a
// typical duration (the median), is subtracted in log space first so that
// the sums do not cancel. Each ln(d) - ln(pivot) is rounded toward zero to a
// multiple of 2^-20 and summed exactly, so the result depends only on the
// multiset of durations, not on their order.
std::optional<double> LogSigma(std::span<const int64_t> durations,
                               int64_t pivot_ns);
// The same over the durations base_ns + offsets[i] (summarize.cc keeps a
// row's durations as 4-byte offsets from its minimum when they fit).
std::optional<double> LogSigma(std::span<const uint32_t> offsets,
                               int64_t base_ns, int64_t pivot_ns);

// `TailRatio()` is p99 / median, nullopt when the median is 0.
inline std::optional<double> TailRatio(int64_t p99_ns, int64_t median_ns) {
  if (median_ns <= 0) return std::nullopt;
  return static_cast<double>(p99_ns) / static_cast<double>(median_ns);
}

// `HeavyTail()` applies the rule above.
inline bool HeavyTail(uint64_t calls, std::optional<double> log_sigma) {
  return calls >= kHeavyTailMinCalls && log_sigma.has_value() &&
         *log_sigma >= kHeavyTailMinLogSigma;
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_TAIL_SHAPE_H_
