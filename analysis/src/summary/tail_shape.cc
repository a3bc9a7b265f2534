#include "summary/tail_shape.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>

namespace spanprof::analysis::internal {

std::optional<double> LogSigma(std::span<const int64_t> durations,
                               int64_t pivot_ns) {
  const double pivot = pivot_ns > 0 ? FastLn(static_cast<double>(pivot_ns)) : 0;
  // Branch-free over the durations (a zero one adds nothing), so that the
  // loop vectorizes.
  double sum = 0;
  double sum_squares = 0;
  int64_t count = 0;
  for (const int64_t d : durations) {
    const bool positive = d > 0;
    const double y =
        FastLn(static_cast<double>(std::max<int64_t>(d, 1))) - pivot;
    const double w = positive ? 1.0 : 0.0;
    sum += w * y;
    sum_squares += w * y * y;
    count += positive ? 1 : 0;
  }
  if (count < 2) return std::nullopt;
  const auto n = static_cast<double>(count);
  const double variance = (sum_squares - sum * sum / n) / (n - 1);
  return std::sqrt(std::max(variance, 0.0));
}

}  // namespace spanprof::analysis::internal
