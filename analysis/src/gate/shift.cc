#include "gate/shift.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace spanprof::analysis::gate {
namespace {

// The standard normal quantile, by bisection on erfc (exact to ~1e-12).
double NormalQuantile(double p) {
  double lo = -40;
  double hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// P(U = u) for u in [0, m·n] under the null hypothesis, no ties.
std::vector<double> ExactUDistribution(size_t m, size_t n) {
  // prev/cur[j][u]: arrangements of i baseline and j candidate values with
  // U = u, rolled over i: f(i, j, u) = f(i − 1, j, u) + f(i, j − 1, u − i).
  // The largest value is a baseline value (no candidate beats it: it adds
  // nothing to U) or a candidate value (it beats all i baseline values).
  std::vector<std::vector<double>> prev(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = {1.0};  // i = 0: U = 0
  for (size_t i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> cur(n + 1);
    cur[0] = {1.0};
    for (size_t j = 1; j <= n; ++j) {
      std::vector<double>& f = cur[j];
      f.assign(i * j + 1, 0.0);
      // A candidate value is the largest: it beats all i baseline values.
      for (size_t u = 0; u < cur[j - 1].size(); ++u) f[u + i] += cur[j - 1][u];
      // A baseline value is the largest: it beats none of the candidates.
      for (size_t u = 0; u < prev[j].size(); ++u) f[u] += prev[j][u];
    }
    prev = std::move(cur);
  }
  std::vector<double> p = prev[n];
  double total = 0;
  for (double ways : p) total += ways;
  for (double& ways : p) ways /= total;
  return p;
}

bool HasTies(std::span<const double> base, std::span<const double> cand) {
  std::vector<double> all(base.begin(), base.end());
  all.insert(all.end(), cand.begin(), cand.end());
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

double Median(std::vector<double>& sorted) {
  const size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

// The 1-based rank k of the interval's lower end among the m·n sorted
// differences ([D_(k), D_(mn+1−k)] covers with the confidence); 0 when
// the samples cannot reach it.
size_t IntervalRank(size_t m, size_t n, double alpha,
                    const std::vector<double>* exact) {
  const size_t total = m * n;
  if (exact != nullptr) {
    // The largest k with P(U ≤ k − 1) ≤ alpha / 2.
    double cdf = 0;
    size_t k = 0;
    for (size_t u = 0; u < total; ++u) {
      cdf += (*exact)[u];
      if (cdf > alpha / 2 + 1e-12) break;
      k = u + 1;
    }
    return k;
  }
  const double sd = std::sqrt(static_cast<double>(m) * static_cast<double>(n) *
                              static_cast<double>(m + n + 1) / 12.0);
  const double k = std::floor(static_cast<double>(total) / 2 -
                              NormalQuantile(1 - alpha / 2) * sd);
  return k < 1 ? 0 : static_cast<size_t>(k);
}

double ExactPValue(const std::vector<double>& p, double u) {
  double below = 0;  // P(U <= floor(u))
  double above = 0;  // P(U >= ceil(u))
  for (size_t v = 0; v < p.size(); ++v) {
    if (static_cast<double>(v) <= u) below += p[v];
    if (static_cast<double>(v) >= u) above += p[v];
  }
  return std::min(1.0, 2 * std::min(below, above));
}

double NormalPValue(std::span<const double> base, std::span<const double> cand,
                    double u) {
  const auto m = static_cast<double>(base.size());
  const auto n = static_cast<double>(cand.size());
  // Tie correction: Σ (t³ − t) over groups of equal values.
  std::vector<double> all(base.begin(), base.end());
  all.insert(all.end(), cand.begin(), cand.end());
  std::sort(all.begin(), all.end());
  double ties = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    const auto t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double total = m + n;
  const double variance =
      m * n / 12.0 * ((total + 1) - ties / (total * (total - 1)));
  if (variance <= 0) return 1.0;
  const double z = (std::abs(u - m * n / 2) - 0.5) / std::sqrt(variance);
  return std::min(1.0, 2 * (1 - NormalCdf(std::max(z, 0.0))));
}

// The continued fraction of the regularized incomplete beta function
// (modified Lentz), converging for x < (a + 1) / (a + b + 2).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double dm = m;
    const double even = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
    d = 1 + even * d;
    c = 1 + even / c;
    if (std::abs(d) < kTiny) d = kTiny;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    const double odd =
        -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
    d = 1 + odd * d;
    c = 1 + odd / c;
    if (std::abs(d) < kTiny) d = kTiny;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < 1e-15) break;
  }
  return h;
}

// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 digits). Written out
// because std::lgamma sets the global `signgam` and so is not thread-safe.
double LogGamma(double x) {
  constexpr double kCoefficients[] = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  constexpr double kPi = 3.14159265358979323846;
  if (x < 0.5) {
    // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
    return std::log(kPi / std::abs(std::sin(kPi * x))) - LogGamma(1 - x);
  }
  const double z = x - 1;
  double sum = kCoefficients[0];
  for (int i = 1; i < 9; ++i) sum += kCoefficients[i] / (z + i);
  const double t = z + 7.5;
  return 0.5 * std::log(2 * kPi) + (z + 0.5) * std::log(t) - t + std::log(sum);
}

// I_x(a, b), the regularized incomplete beta function.
double IncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(LogGamma(a + b) - LogGamma(a) - LogGamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2))
    return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

// The t with P(T ≤ t) = p for p in (0.5, 1), by bisection.
double StudentTQuantile(double p, double df) {
  double lo = 0;
  double hi = 1e12;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (StudentTCdf(mid, df) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

struct LogSample {
  double mean = 0;
  double variance = 0;  // the sample variance (n − 1)
  double n = 0;
};

LogSample OfLogs(std::span<const double> values) {
  LogSample s;
  s.n = static_cast<double>(values.size());
  for (double v : values) s.mean += std::log(v);
  s.mean /= s.n;
  for (double v : values) {
    const double d = std::log(v) - s.mean;
    s.variance += d * d;
  }
  s.variance /= s.n - 1;
  return s;
}

}  // namespace

double StudentTCdf(double t, double df) {
  const double tail = 0.5 * IncompleteBeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

std::optional<Shift> EstimateLogShift(std::span<const double> base,
                                      std::span<const double> cand,
                                      double confidence) {
  if (base.size() < 2 || cand.size() < 2) return std::nullopt;
  const auto positive = [](double v) { return v > 0; };
  if (!std::all_of(base.begin(), base.end(), positive) ||
      !std::all_of(cand.begin(), cand.end(), positive)) {
    return std::nullopt;
  }
  const LogSample x = OfLogs(base);
  const LogSample y = OfLogs(cand);
  // Conservative with few runs: the larger side's variance stands for both
  // (a side whose few runs agree by chance does not narrow the interval),
  // with the degrees of freedom of the smaller side.
  const double variance = std::max(x.variance, y.variance);
  const double se2 = variance * (1 / x.n + 1 / y.n);
  if (!(se2 > 0)) return std::nullopt;
  const double df = std::min(x.n, y.n) - 1;
  const double se = std::sqrt(se2);
  const double d = y.mean - x.mean;
  const double q = StudentTQuantile(1 - (1 - confidence) / 2, df);
  std::vector<double> sorted(base.begin(), base.end());
  std::sort(sorted.begin(), sorted.end());
  const double scale = Median(sorted);
  Shift shift;
  shift.estimate = scale * std::expm1(d);
  shift.ci_low = scale * std::expm1(d - q * se);
  shift.ci_high = scale * std::expm1(d + q * se);
  shift.p_value = std::min(1.0, 2 * (1 - StudentTCdf(std::abs(d) / se, df)));
  return shift;
}

double MannWhitneyU(std::span<const double> base,
                    std::span<const double> cand) {
  double u = 0;
  for (double c : cand) {
    for (double b : base) {
      if (c > b) u += 1;
      if (c == b) u += 0.5;
    }
  }
  return u;
}

double ExactUCdf(size_t m, size_t n, int64_t u) {
  if (u < 0) return 0;
  const std::vector<double> p = ExactUDistribution(m, n);
  double cdf = 0;
  for (size_t v = 0; v < p.size() && static_cast<int64_t>(v) <= u; ++v) {
    cdf += p[v];
  }
  return std::min(cdf, 1.0);
}

Shift EstimateShift(std::span<const double> base, std::span<const double> cand,
                    double confidence) {
  Shift shift;
  std::vector<double> differences;
  differences.reserve(base.size() * cand.size());
  for (double c : cand) {
    for (double b : base) differences.push_back(c - b);
  }
  std::sort(differences.begin(), differences.end());
  shift.estimate = Median(differences);

  const size_t m = base.size();
  const size_t n = cand.size();
  shift.exact = m <= kExactLimit && n <= kExactLimit;
  std::vector<double> exact;
  if (shift.exact) exact = ExactUDistribution(m, n);
  const double u = MannWhitneyU(base, cand);
  shift.p_value = shift.exact && !HasTies(base, cand)
                      ? ExactPValue(exact, u)
                      : NormalPValue(base, cand, u);
  const size_t k =
      IntervalRank(m, n, 1 - confidence, shift.exact ? &exact : nullptr);
  if (k >= 1 && k <= differences.size() + 1 - k) {
    shift.ci_low = differences[k - 1];
    shift.ci_high = differences[differences.size() - k];
  }
  return shift;
}

}  // namespace spanprof::analysis::gate
