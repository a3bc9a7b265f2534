#include "summary/tail_shape.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "absl/numeric/int128.h"

namespace spanprof::analysis::internal {

namespace {

// The durations are base + values[i].
template <typename T>
std::optional<double> LogSigmaOf(std::span<const T> values, int64_t base,
                                 int64_t pivot_ns) {
  // ln(d) - ln(pivot) is within ±43.7 (0 < d < 2^63), so in units of 2^-20
  // it is an integer of at most 26 bits and its square of 51: a chunk of
  // 2^11 of them sums in int64 exactly, and the chunks in int128. Integer
  // sums make the result independent of the order of the durations (which
  // differs between a session's capture and the same trace read back), at
  // little cost: the logarithm is most of the ~5 ns per duration.
  constexpr double kUnits = 1048576.0;
  constexpr size_t kChunk = size_t{1} << 11;
  const double pivot = pivot_ns > 0 ? FastLn(static_cast<double>(pivot_ns)) : 0;
  absl::int128 sum = 0;
  absl::int128 sum_squares = 0;
  int64_t count = 0;
  for (size_t at = 0; at < values.size(); at += kChunk) {
    const size_t end = std::min(values.size(), at + kChunk);
    int64_t chunk_sum = 0;
    int64_t chunk_squares = 0;
    for (size_t i = at; i < end; ++i) {
      // Branch-free: a zero duration adds nothing.
      const int64_t d = base + static_cast<int64_t>(values[i]);
      const int64_t positive = d > 0 ? 1 : 0;
      const double y =
          FastLn(static_cast<double>(std::max<int64_t>(d, 1))) - pivot;
      const int64_t q = static_cast<int64_t>(y * kUnits) * positive;
      chunk_sum += q;
      chunk_squares += q * q;
      count += positive;
    }
    sum += chunk_sum;
    sum_squares += chunk_squares;
  }
  if (count < 2) return std::nullopt;
  const auto n = static_cast<double>(count);
  const double mean = static_cast<double>(sum) / kUnits / n;
  const double squares = static_cast<double>(sum_squares) / (kUnits * kUnits);
  const double variance = (squares - mean * mean * n) / (n - 1);
  return std::sqrt(std::max(variance, 0.0));
}

}  // namespace

std::optional<double> LogSigma(std::span<const int64_t> durations,
                               int64_t pivot_ns) {
  return LogSigmaOf(durations, 0, pivot_ns);
}

std::optional<double> LogSigma(std::span<const uint32_t> offsets,
                               int64_t base_ns, int64_t pivot_ns) {
  return LogSigmaOf(offsets, base_ns, pivot_ns);
}

}  // namespace spanprof::analysis::internal
