#include "scaling/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace spanprof::analysis::scaling {
namespace {

double MedianOf(std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t rank = NearestRank(0.5, values.size());
  std::nth_element(values.begin(),
                   values.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   values.end());
  return values[rank - 1];
}

}  // namespace

size_t NearestRank(double p, size_t n) {
  const double rank = std::ceil(p * static_cast<double>(n));
  return std::max<size_t>(1, std::min(n, static_cast<size_t>(rank)));
}

double SortedQuantile(std::span<const double> sorted, double p) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  return sorted[NearestRank(p, sorted.size()) - 1];
}

double TheilSenSlope(std::span<const double> x, std::span<const double> y) {
  std::vector<double> slopes;
  slopes.reserve(x.size() * (x.size() - (x.empty() ? 0 : 1)) / 2);
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = i + 1; j < x.size(); ++j) {
      if (x[j] == x[i]) continue;
      slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
    }
  }
  // The lower median for an even count, so the result is one of the slopes.
  return MedianOf(slopes);
}

double TheilSenIntercept(std::span<const double> x, std::span<const double> y,
                         double slope) {
  std::vector<double> residuals(x.size());
  for (size_t i = 0; i < x.size(); ++i) residuals[i] = y[i] - slope * x[i];
  return MedianOf(residuals);
}

double Random::Uniform() {
  // 53 random bits, shifted off zero.
  return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
}

double Random::Normal() {
  const double u = Uniform();
  const double v = Uniform();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

double Random::Gamma(double shape) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double z = 0;
    double v = 0;
    do {
      z = Normal();
      v = 1.0 + c * z;
    } while (v <= 0);
    v = v * v * v;
    const double u = Uniform();
    if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v)) return d * v;
  }
}

size_t Random::OrderStatisticIndex(size_t rank, size_t n) {
  const double a = Gamma(static_cast<double>(rank));
  const double b = Gamma(static_cast<double>(n - rank + 1));
  const double u = a / (a + b);
  const auto index = static_cast<size_t>(u * static_cast<double>(n));
  return std::min(index, n - 1);
}

}  // namespace spanprof::analysis::scaling
