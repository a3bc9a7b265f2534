// The scaling analysis: sized spans → log-spaced buckets → a power-law fit
// with a bootstrap interval → a verdict and the counters' roles. The method
// and the thresholds are documented in docs/guide.md ("Scaling") and
// docs/cli.md ("scaling").
#include "spanprof/analysis/scaling.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/counters.h"
#include "model/span_args.h"
#include "scaling/fit.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

using scaling::NearestRank;
using scaling::Random;
using scaling::SortedQuantile;
using scaling::TheilSenIntercept;
using scaling::TheilSenSlope;

// The offset candidates tried by FitPowerLaw, as fractions of the smallest y.
constexpr int kOffsetSteps = 20;
// An offset is kept only when it shrinks the squared log residuals this much,
// so that noise around a flat line cannot buy a fitted offset.
constexpr double kOffsetGain = 2.0;
// An offset is a third parameter: it is fitted only to this many points or
// more, and only when the upper half of the sizes rises this much more
// steeply than the lower half.
constexpr size_t kMinOffsetPoints = 5;
constexpr double kSteepening = 0.15;

// One size bucket's spans, each column sorted on its own.
struct BucketData {
  int log2_low = 0;  // the bucket is [2^log2_low, 2^(log2_low + 1))
  std::vector<double> sizes;
  std::vector<double> durations;
  std::vector<double> ns_per_unit;
  // Per counter: the measured values and the values per unit of size.
  std::vector<std::vector<double>> counters;
  std::vector<std::vector<double>> counters_per_unit;
};

int BucketOf(double size) { return std::ilogb(size); }

std::vector<BucketData> MakeBuckets(const std::vector<SizedSpan>& spans,
                                    size_t counter_count) {
  std::map<int, BucketData> by_index;
  for (const SizedSpan& span : spans) {
    BucketData& bucket = by_index[BucketOf(span.size)];
    bucket.counters.resize(counter_count);
    bucket.counters_per_unit.resize(counter_count);
    bucket.sizes.push_back(span.size);
    bucket.durations.push_back(static_cast<double>(span.duration_ns));
    bucket.ns_per_unit.push_back(static_cast<double>(span.duration_ns) /
                                 span.size);
    for (size_t c = 0; c < counter_count && c < span.counters.size(); ++c) {
      if (!span.counters[c].has_value()) continue;
      bucket.counters[c].push_back(*span.counters[c]);
      bucket.counters_per_unit[c].push_back(*span.counters[c] / span.size);
    }
  }
  std::vector<BucketData> buckets;
  for (auto& [index, bucket] : by_index) {
    bucket.log2_low = index;
    std::sort(bucket.sizes.begin(), bucket.sizes.end());
    std::sort(bucket.durations.begin(), bucket.durations.end());
    std::sort(bucket.ns_per_unit.begin(), bucket.ns_per_unit.end());
    for (auto& column : bucket.counters)
      std::sort(column.begin(), column.end());
    for (auto& column : bucket.counters_per_unit) {
      std::sort(column.begin(), column.end());
    }
    buckets.push_back(std::move(bucket));
  }
  return buckets;
}

ScalingBucket DescribeBucket(const BucketData& data) {
  ScalingBucket bucket;
  bucket.size_low = std::ldexp(1.0, data.log2_low);
  bucket.size_high = std::ldexp(1.0, data.log2_low + 1);
  bucket.spans = data.sizes.size();
  bucket.median_ns = static_cast<int64_t>(SortedQuantile(data.durations, 0.5));
  bucket.p95_ns = static_cast<int64_t>(SortedQuantile(data.durations, 0.95));
  bucket.median_ns_per_unit = SortedQuantile(data.ns_per_unit, 0.5);
  for (const std::vector<double>& column : data.counters_per_unit) {
    bucket.counters_per_unit.push_back(
        column.empty() ? std::nullopt
                       : std::optional<double>(SortedQuantile(column, 0.5)));
  }
  return bucket;
}

// Squared log residuals of y against c + e^a·x^b.
double LogResiduals(std::span<const double> log_x, std::span<const double> y,
                    double c, double a, double b) {
  double sum = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double predicted = c + std::exp(a + b * log_x[i]);
    const double r = std::log(y[i]) - std::log(predicted);
    sum += r * r;
  }
  return sum;
}

// y − c, kept positive for the logarithm.
std::vector<double> LogOfExcess(std::span<const double> y, double c) {
  std::vector<double> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    out[i] = std::log(std::max(y[i] - c, y[i] * 1e-9));
  }
  return out;
}

// One quantity fitted over the buckets: the fit points and, per bucket, the
// sorted values the bootstrap draws its order statistics from.
struct FitInput {
  std::vector<double> x;                           // bucket median sizes
  std::vector<const std::vector<double>*> sorted;  // per bucket
  double quantile = 0.5;
  bool fit_offset = false;
};

struct FitOutput {
  std::optional<Exponent> exponent;
  double offset = 0;
  double log_scale = 0;
  std::vector<bool> used;  // per fit point: did it take part in the slope
  std::vector<double> bootstrap;
};

// Keeps the entries of `values` whose `used` flag is set.
std::vector<double> Select(std::span<const double> values,
                           const std::vector<bool>& used) {
  std::vector<double> out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (used[i]) out.push_back(values[i]);
  }
  return out;
}

FitOutput FitWithBootstrap(const FitInput& in, const ScalingOptions& options,
                           Random& random) {
  FitOutput out;
  std::vector<double> y;
  for (const std::vector<double>* values : in.sorted) {
    y.push_back(SortedQuantile(*values, in.quantile));
  }
  const std::optional<PowerLawFit> fit = FitPowerLaw(in.x, y, in.fit_offset);
  if (!fit.has_value()) return out;
  out.offset = fit->offset;
  out.log_scale = fit->log_scale;
  out.used = fit->used;
  std::vector<double> log_x(in.x.size());
  for (size_t i = 0; i < in.x.size(); ++i) log_x[i] = std::log(in.x[i]);
  const std::vector<double> used_log_x = Select(log_x, out.used);
  out.bootstrap.reserve(options.resamples);
  std::vector<double> resampled;
  for (uint32_t r = 0; r < options.resamples; ++r) {
    resampled.clear();
    for (size_t i = 0; i < in.sorted.size(); ++i) {
      if (!out.used[i]) continue;
      const std::vector<double>& values = *in.sorted[i];
      const size_t rank = NearestRank(in.quantile, values.size());
      resampled.push_back(
          values[random.OrderStatisticIndex(rank, values.size())]);
    }
    out.bootstrap.push_back(
        TheilSenSlope(used_log_x, LogOfExcess(resampled, out.offset)));
  }
  std::vector<double> sorted = out.bootstrap;
  std::sort(sorted.begin(), sorted.end());
  const double tail = (1.0 - options.confidence) / 2.0;
  out.exponent = Exponent{.estimate = fit->exponent,
                          .ci_low = SortedQuantile(sorted, tail),
                          .ci_high = SortedQuantile(sorted, 1.0 - tail)};
  return out;
}

// The buckets that take part in the fit.
std::vector<const BucketData*> FittedBuckets(
    const std::vector<BucketData>& buckets, const ScalingOptions& options) {
  std::vector<const BucketData*> fitted;
  for (const BucketData& bucket : buckets) {
    if (bucket.sizes.size() >= options.min_bucket_spans) {
      fitted.push_back(&bucket);
    }
  }
  return fitted;
}

FitInput DurationInput(const std::vector<const BucketData*>& fitted,
                       double quantile) {
  FitInput in;
  in.quantile = quantile;
  in.fit_offset = true;
  for (const BucketData* bucket : fitted) {
    in.x.push_back(SortedQuantile(bucket->sizes, 0.5));
    in.sorted.push_back(&bucket->durations);
  }
  return in;
}

// A counter's fit over the buckets whose median count is positive (a log
// needs one); nullopt when fewer than two such buckets exist.
std::optional<Exponent> FitCounter(const std::vector<const BucketData*>& fitted,
                                   size_t counter,
                                   const ScalingOptions& options,
                                   Random& random) {
  FitInput in;
  for (const BucketData* bucket : fitted) {
    const std::vector<double>& values = bucket->counters[counter];
    if (values.empty() || SortedQuantile(values, 0.5) <= 0) continue;
    in.x.push_back(SortedQuantile(bucket->sizes, 0.5));
    in.sorted.push_back(&values);
  }
  if (in.x.size() < 2) return std::nullopt;
  return FitWithBootstrap(in, options, random).exponent;
}

// True when the counter's count per unit of size clearly grows: its
// exponent's interval lies above 1.
bool GrowsPerUnit(const std::optional<Exponent>& counter) {
  return counter.has_value() && counter->ci_low > 1.0;
}

// Roles outside a super-linear group: the counter that grows like time is
// the driver, one that grows slower a rider.
std::string CounterRole(const std::optional<Exponent>& counter,
                        const ScalingGroup& group,
                        const ScalingOptions& options) {
  if (!counter.has_value() || !group.exponent.has_value()) return "unrelated";
  if (group.verdict == "unknown" || group.verdict == "constant") {
    return "unrelated";
  }
  if (counter->estimate < options.constant_below) return "unrelated";
  const double b = group.exponent->estimate;
  if (std::abs(counter->estimate - b) <= options.driver_tolerance) {
    return "driver";
  }
  if (counter->estimate < b) return "rider";
  return "unrelated";
}

// A counter's share of the super-linearity, (γ − 1)/(b − 1), with the
// interval that the two exponents' intervals allow (b's lower bound is above
// 1 in a super-linear group, so the denominator is positive).
Exponent SuperLinearShare(const Exponent& counter, const Exponent& time) {
  const double low = counter.ci_low - 1.0;
  const double high = counter.ci_high - 1.0;
  const double d_low = time.ci_low - 1.0;
  const double d_high = time.ci_high - 1.0;
  return Exponent{.estimate = (counter.estimate - 1.0) / (time.estimate - 1.0),
                  .ci_low = low < 0 ? low / d_low : low / d_high,
                  .ci_high = high < 0 ? high / d_high : high / d_low};
}

// The seed method's rule for a super-linear group: the cost per unit of size
// grows because some count per unit of size grows, so the counter whose
// count per unit grows the most (γ clearly above 1) is the driver, even when
// time bends further than it (b ≫ γ: caches, preemption); a counter that
// grows too, but no faster than the size (or than the driver), rides along.
void AssignSuperLinearRoles(const ScalingOptions& options,
                            ScalingGroup& group) {
  const Exponent& time = *group.exponent;
  CounterScaling* driver = nullptr;
  for (CounterScaling& counter : group.counters) {
    const std::optional<Exponent>& gamma = counter.exponent;
    if (!gamma.has_value() || gamma->estimate < options.constant_below) {
      counter.role = "unrelated";
      continue;
    }
    counter.share = SuperLinearShare(*gamma, time);
    counter.role = "rider";
    if (GrowsPerUnit(gamma) &&
        (driver == nullptr || gamma->estimate > driver->exponent->estimate)) {
      driver = &counter;
    }
  }
  if (driver == nullptr) return;
  driver->role = "driver";
  group.driver = driver->name;
}

void AssignCounterRoles(const std::vector<const BucketData*>& fitted,
                        const ScalingOptions& options, Random& random,
                        ScalingGroup& group) {
  for (size_t c = 0; c < group.counter_names.size(); ++c) {
    CounterScaling counter;
    counter.name = group.counter_names[c];
    counter.exponent = FitCounter(fitted, c, options, random);
    group.counters.push_back(std::move(counter));
  }
  if (group.verdict == "superlinear") {
    AssignSuperLinearRoles(options, group);
    return;
  }
  double best = std::numeric_limits<double>::infinity();
  for (CounterScaling& counter : group.counters) {
    counter.role = CounterRole(counter.exponent, group, options);
    if (counter.role != "driver") continue;
    const double distance =
        std::abs(counter.exponent->estimate - group.exponent->estimate);
    if (distance < best) {
      best = distance;
      group.driver = counter.name;
    }
  }
}

}  // namespace

namespace {

struct LogFit {
  double slope = 0;
  double intercept = 0;
};

LogFit FitLogLog(std::span<const double> log_x, std::span<const double> y,
                 double offset) {
  const std::vector<double> log_y = LogOfExcess(y, offset);
  LogFit fit;
  fit.slope = TheilSenSlope(log_x, log_y);
  fit.intercept = TheilSenIntercept(log_x, log_y, fit.slope);
  return fit;
}

// True when the upper half of the points (by size) rises more steeply than
// the lower half in log–log space: the shape a fixed offset gives (flat
// where it dominates). Only then is an offset worth fitting.
bool Steepens(std::span<const double> log_x, std::span<const double> y) {
  std::vector<size_t> order(log_x.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return log_x[a] < log_x[b]; });
  const size_t half = order.size() / 2;
  auto slope = [&](size_t begin, size_t end) {
    std::vector<double> xs;
    std::vector<double> ys;
    for (size_t k = begin; k < end; ++k) {
      xs.push_back(log_x[order[k]]);
      ys.push_back(std::log(y[order[k]]));
    }
    return TheilSenSlope(xs, ys);
  };
  // The halves share the middle point when the count is odd.
  const double lower = slope(0, order.size() - half);
  const double upper = slope(half, order.size());
  return upper > lower + kSteepening;
}

// The offset in [0, min y) that explains the points best, or 0.
double FitOffset(std::span<const double> log_x, std::span<const double> y) {
  const LogFit plain_fit = FitLogLog(log_x, y, 0);
  const double plain =
      LogResiduals(log_x, y, 0, plain_fit.intercept, plain_fit.slope);
  const double min_y = *std::min_element(y.begin(), y.end());
  const double max_log_x = *std::max_element(log_x.begin(), log_x.end());
  double best = plain;
  double offset = 0;
  for (int step = 1; step < kOffsetSteps; ++step) {
    const double c = min_y * step / kOffsetSteps;
    const LogFit fit = FitLogLog(log_x, y, c);
    if (std::isnan(fit.slope)) continue;
    const double residuals =
        LogResiduals(log_x, y, c, fit.intercept, fit.slope);
    // The offset must beat the plain fit clearly, and the part that grows
    // must reach at least the offset within the sizes seen: otherwise the
    // slope would be fitted to the noise left after the offset.
    if (residuals * kOffsetGain > plain || residuals >= best) continue;
    if (std::exp(fit.intercept + fit.slope * max_log_x) < c) continue;
    best = residuals;
    offset = c;
  }
  return offset;
}

}  // namespace

std::optional<PowerLawFit> FitPowerLaw(std::span<const double> x,
                                       std::span<const double> y,
                                       bool fit_offset) {
  std::vector<double> log_x(x.size());
  for (size_t i = 0; i < x.size(); ++i) log_x[i] = std::log(x[i]);
  PowerLawFit fit;
  fit.used.assign(x.size(), true);
  if (fit_offset && x.size() >= kMinOffsetPoints && Steepens(log_x, y)) {
    fit.offset = FitOffset(log_x, y);
  }
  if (fit.offset > 0) {
    // Where the offset is more than half of y, the growing part is too
    // small to fit a slope to.
    std::vector<bool> dominated(x.size());
    size_t kept = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      dominated[i] = y[i] < 2 * fit.offset;
      if (!dominated[i]) ++kept;
    }
    if (kept >= 3) {
      for (size_t i = 0; i < x.size(); ++i) fit.used[i] = !dominated[i];
    }
  }
  const LogFit line =
      FitLogLog(Select(log_x, fit.used), Select(y, fit.used), fit.offset);
  if (std::isnan(line.slope)) return std::nullopt;
  fit.exponent = line.slope;
  fit.log_scale = line.intercept;
  return fit;
}

std::string ScalingVerdict(const std::optional<Exponent>& exponent,
                           uint64_t fitted_buckets, double decades,
                           const ScalingOptions& options, std::string* reason) {
  char text[160];
  if (fitted_buckets < options.min_buckets || !exponent.has_value()) {
    std::snprintf(text, sizeof(text),
                  "too few buckets: %llu with %llu or more spans (need %llu)",
                  static_cast<unsigned long long>(fitted_buckets),
                  static_cast<unsigned long long>(options.min_bucket_spans),
                  static_cast<unsigned long long>(options.min_buckets));
    *reason = text;
    return "unknown";
  }
  if (decades < options.min_decades) {
    std::snprintf(text, sizeof(text), "sizes span %.2f decades (need %.2f)",
                  decades, options.min_decades);
    *reason = text;
    return "unknown";
  }
  const double width = exponent->ci_high - exponent->ci_low;
  if (width > options.max_interval_width) {
    std::snprintf(text, sizeof(text),
                  "interval [%.2f, %.2f] is wider than %.2f", exponent->ci_low,
                  exponent->ci_high, options.max_interval_width);
    *reason = text;
    return "unknown";
  }
  const double b = exponent->estimate;
  std::string verdict;
  if (b < options.constant_below) {
    verdict = "constant";
  } else if (b < options.linear_low) {
    verdict = "sublinear";
  } else if (b <= options.linear_high) {
    verdict = "linear";
  } else if (exponent->ci_low > 1.0) {
    verdict = "superlinear";
  } else {
    std::snprintf(text, sizeof(text),
                  "exponent %.2f is above linear but its interval reaches "
                  "%.2f",
                  b, exponent->ci_low);
    *reason = text;
    return "unknown";
  }
  std::snprintf(text, sizeof(text), "exponent %.2f in [%.2f, %.2f]", b,
                exponent->ci_low, exponent->ci_high);
  *reason = text;
  return verdict;
}

void AnalyzeSizedSpans(std::vector<SizedSpan> spans,
                       const ScalingOptions& options, ScalingGroup& group) {
  group.spans = spans.size();
  if (spans.empty()) {
    group.verdict = "unknown";
    group.reason = "no sized spans";
    return;
  }
  auto [min_it, max_it] = std::minmax_element(
      spans.begin(), spans.end(),
      [](const SizedSpan& a, const SizedSpan& b) { return a.size < b.size; });
  group.size_min = min_it->size;
  group.size_max = max_it->size;
  const std::vector<BucketData> buckets =
      MakeBuckets(spans, group.counter_names.size());
  for (const BucketData& bucket : buckets) {
    group.buckets.push_back(DescribeBucket(bucket));
  }
  const std::vector<const BucketData*> fitted = FittedBuckets(buckets, options);
  Random random(options.seed);
  double decades = 0;
  size_t slope_buckets = 0;
  if (fitted.size() >= 2) {
    FitOutput median =
        FitWithBootstrap(DurationInput(fitted, 0.5), options, random);
    group.exponent = median.exponent;
    group.overhead_ns = median.offset;
    group.log_scale = median.log_scale;
    group.bootstrap = std::move(median.bootstrap);
    group.p95_exponent =
        FitWithBootstrap(DurationInput(fitted, 0.95), options, random).exponent;
    double low = 0;
    double high = 0;
    for (size_t i = 0; i < fitted.size(); ++i) {
      if (!median.used.empty() && !median.used[i]) continue;
      if (slope_buckets++ == 0) low = fitted[i]->sizes.front();
      high = fitted[i]->sizes.back();
    }
    decades = slope_buckets > 0 ? std::log10(high / low) : 0;
  }
  // Without a fit (fewer than two buckets with enough spans) no bucket was
  // left out for the overhead: every such bucket counts.
  const uint64_t counted =
      group.exponent.has_value() ? slope_buckets : fitted.size();
  group.verdict =
      ScalingVerdict(group.exponent, counted, decades, options, &group.reason);
  if (group.overhead_ns > 0) {
    char text[128];
    std::snprintf(text, sizeof(text),
                  "; fixed overhead %.0f ns fitted, %zu of %zu buckets "
                  "where it dominates left out",
                  group.overhead_ns, fitted.size() - slope_buckets,
                  fitted.size());
    group.reason += text;
  }
  AssignCounterRoles(fitted, options, random, group);
}

namespace {

// `resamples` exponents of the fit through `x`, `y` (the points `used` by
// the fit, less `offset`), each from the points drawn with replacement; a
// draw whose sizes are all equal has no slope and is drawn again.
std::vector<double> PointsBootstrap(const std::vector<double>& x,
                                    const std::vector<double>& y,
                                    const std::vector<bool>& used,
                                    double offset,
                                    const ScalingOptions& options,
                                    Random& random) {
  std::vector<double> log_x;
  std::vector<double> log_y;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!used.empty() && !used[i]) continue;
    log_x.push_back(std::log(x[i]));
    log_y.push_back(LogOfExcess(std::span<const double>(&y[i], 1), offset)[0]);
  }
  std::vector<double> bootstrap;
  if (log_x.size() < 2) return bootstrap;
  const size_t n = log_x.size();
  std::vector<double> draw_x(n);
  std::vector<double> draw_y(n);
  for (uint64_t tries = 0; bootstrap.size() < options.resamples &&
                           tries < 4ULL * options.resamples + 16;
       ++tries) {
    for (size_t k = 0; k < n; ++k) {
      const auto i = std::min(
          n - 1,
          static_cast<size_t>(random.Uniform() * static_cast<double>(n)));
      draw_x[k] = log_x[i];
      draw_y[k] = log_y[i];
    }
    const double slope = TheilSenSlope(draw_x, draw_y);
    if (std::isfinite(slope)) bootstrap.push_back(slope);
  }
  return bootstrap;
}

// A group whose runs hold one span each (a whole-program span): every span
// is a point of the fit.
void AnalyzeRunPoints(const std::vector<SizedSpan>& spans,
                      const ScalingOptions& options, ScalingGroup& group) {
  ScalingOptions points = options;
  points.min_bucket_spans = 1;
  AnalyzeSizedSpans(spans, points, group);
  // The buckets' order-statistic bootstrap has nothing to draw from one
  // span: the exponent and its interval come from the points instead.
  std::vector<double> x;
  std::vector<double> y;
  for (const SizedSpan& span : spans) {
    x.push_back(span.size);
    y.push_back(static_cast<double>(span.duration_ns));
  }
  group.exponent.reset();
  group.p95_exponent.reset();
  group.bootstrap.clear();
  const std::optional<PowerLawFit> fit = FitPowerLaw(x, y, true);
  size_t used = 0;
  double decades = 0;
  if (fit.has_value()) {
    Random random(options.seed);
    group.overhead_ns = fit->offset;
    group.log_scale = fit->log_scale;
    group.bootstrap =
        PointsBootstrap(x, y, fit->used, fit->offset, options, random);
    double low = 0;
    double high = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!fit->used.empty() && !fit->used[i]) continue;
      low = used++ == 0 ? x[i] : std::min(low, x[i]);
      high = std::max(high, x[i]);
    }
    decades = used > 0 ? std::log10(high / low) : 0;
    if (!group.bootstrap.empty()) {
      std::vector<double> sorted = group.bootstrap;
      std::sort(sorted.begin(), sorted.end());
      const double tail = (1.0 - options.confidence) / 2.0;
      group.exponent = Exponent{.estimate = fit->exponent,
                                .ci_low = SortedQuantile(sorted, tail),
                                .ci_high = SortedQuantile(sorted, 1.0 - tail)};
    }
  }
  group.verdict =
      ScalingVerdict(group.exponent, used, decades, points, &group.reason);
  char note[160];
  std::snprintf(note, sizeof(note),
                "; one span per run: each of the %zu runs is one point, the "
                "interval from resampling the points (wider than from many "
                "spans a size)",
                spans.size());
  group.reason += note;
  // The counters' roles against this exponent and verdict.
  const std::vector<BucketData> buckets =
      MakeBuckets(spans, group.counter_names.size());
  group.counters.clear();
  group.driver.reset();
  Random roles(options.seed);
  AssignCounterRoles(FittedBuckets(buckets, points), points, roles, group);
}

// The counters every sized span reports: heartbeats always, allocations
// when any capture measured them, then every named counter (SPANPROF_COUNT)
// of any capture, by name. `named_begin` is the first named one's column.
struct CounterColumns {
  std::vector<std::string> names;
  size_t named_begin = 0;
};

CounterColumns CounterNames(std::span<const NamedCapture> captures) {
  CounterColumns out;
  out.names = {"heartbeats"};
  for (const NamedCapture& named : captures) {
    if (named.capture->alloc_measured) {
      out.names.push_back("alloc_count");
      out.names.push_back("alloc_bytes");
      break;
    }
  }
  out.named_begin = out.names.size();
  std::set<std::string> named;
  for (const NamedCapture& capture : captures) {
    internal::ForEachArg(*capture.capture, [&named](const SpanArg& arg) {
      if (arg.is_counter) named.insert(arg.key);
    });
  }
  out.names.insert(out.names.end(), named.begin(), named.end());
  return out;
}

// Each span's inclusive named counts (its own plus its same-thread
// descendants', as heartbeats are inclusive), in the columns' order; only
// captures that count anything build the forest this takes.
class InclusiveCounts {
 public:
  InclusiveCounts(const Capture& capture, const CounterColumns& columns) {
    if (!internal::AnyCounter(capture)) return;
    counters_.emplace(capture, Forest(capture));
    for (const std::string& name : counters_->names()) {
      const auto it =
          std::find(columns.names.begin() +
                        static_cast<std::ptrdiff_t>(columns.named_begin),
                    columns.names.end(), name);
      column_of_.push_back(static_cast<size_t>(it - columns.names.begin()));
    }
  }

  // Fills span `i`'s named columns of `sized` (0 where it counted nothing:
  // counting is always on).
  void Fill(size_t i, SizedSpan& sized) const {
    if (!counters_.has_value()) return;
    for (size_t k = 0; k < column_of_.size(); ++k) {
      sized.counters[column_of_[k]] =
          static_cast<double>(counters_->inclusive(i, k));
    }
  }

 private:
  std::optional<internal::SpanCounters> counters_;
  std::vector<size_t> column_of_;  // the capture's counter k -> its column
};

using GroupId = std::pair<RowKey, std::string>;  // key, size argument

struct Gathered {
  std::map<GroupId, std::vector<SizedSpan>> groups;
  // Per group, how many spans each capture (by index) gave it.
  std::map<GroupId, std::map<size_t, uint64_t>> per_capture;
  uint64_t nonpositive = 0;
};

// `--size counter:NAME`: a span's size is its own count of counter NAME.
constexpr std::string_view kCounterSize = "counter:";

std::string SizeCounter(const ScalingOptions& options) {
  if (!options.size_arg.starts_with(kCounterSize)) return "";
  return options.size_arg.substr(kCounterSize.size());
}

// The span's own count of counter `name` (what SPANPROF_COUNT added while
// it was the innermost open span); nullopt when it counted none.
std::optional<double> OwnCount(const Capture& capture, const Span& span,
                               const std::string& name) {
  std::optional<double> count;
  for (const SpanArg& arg : internal::ArgsOf(capture, span)) {
    if (!arg.is_counter || arg.key != name) continue;
    count =
        count.value_or(0) +
        (arg.is_double ? arg.double_value : static_cast<double>(arg.int_value));
  }
  return count;
}

// True when every capture that gave the group spans gave it exactly one,
// and more than one capture did.
bool OneSpanPerRun(const std::map<size_t, uint64_t>& per_capture) {
  return per_capture.size() > 1 &&
         std::all_of(per_capture.begin(), per_capture.end(),
                     [](const auto& entry) { return entry.second == 1; });
}

// A named counter that a span did not count is 0: counting is always on.
SizedSpan MakeSizedSpan(const Capture& capture, size_t i, double size,
                        const CounterColumns& columns,
                        const InclusiveCounts& named) {
  const Span& span = capture.spans[i];
  SizedSpan sized;
  sized.size = size;
  sized.duration_ns = span.end_ns - span.start_ns;
  sized.counters.resize(columns.names.size());
  sized.counters[0] = static_cast<double>(span.heartbeats);
  if (capture.alloc_measured && columns.named_begin >= 3) {
    const SpanAllocs allocs = AllocsOf(capture, i);
    sized.counters[1] = static_cast<double>(allocs.count);
    sized.counters[2] = static_cast<double>(allocs.bytes);
  }
  for (size_t c = columns.named_begin; c < columns.names.size(); ++c) {
    sized.counters[c] = 0.0;
  }
  named.Fill(i, sized);
  return sized;
}

RowKey KeyOf(const Capture& capture, const Span& span) {
  if (span.site >= capture.sites.size())
    return RowKey{.name = "(invalid site)"};
  return RowKeyOf(capture.sites[span.site]);
}

// Adds span `i` of capture `c` to the group `id` with `size`.
void AddSized(Gathered& out, const GroupId& id, size_t c,
              const Capture& capture, size_t i, double size,
              const CounterColumns& columns, const InclusiveCounts& inclusive) {
  if (!(size > 0) || !std::isfinite(size)) {
    ++out.nonpositive;
    return;
  }
  out.groups[id].push_back(MakeSizedSpan(capture, i, size, columns, inclusive));
  ++out.per_capture[id][c];
}

Gathered Gather(std::span<const NamedCapture> captures,
                const ScalingOptions& options, const CounterColumns& columns) {
  Gathered out;
  const std::string size_counter = SizeCounter(options);
  for (size_t c = 0; c < captures.size(); ++c) {
    const Capture& capture = *captures[c].capture;
    const InclusiveCounts inclusive(capture, columns);
    for (size_t i = 0; i < capture.spans.size(); ++i) {
      const Span& span = capture.spans[i];
      if ((span.flags & kSpanUnfinished) != 0) continue;
      if (!size_counter.empty()) {
        const std::optional<double> count =
            OwnCount(capture, span, size_counter);
        if (count.has_value()) {
          AddSized(out, {KeyOf(capture, span), options.size_arg}, c, capture, i,
                   *count, columns, inclusive);
        }
        continue;
      }
      for (const SpanArg& arg : internal::ArgsOf(capture, span)) {
        // A named counter's count is work done, not the span's size; a
        // string argument is no size.
        if (arg.is_counter || arg.is_string) continue;
        if (!options.size_arg.empty() && arg.key != options.size_arg) continue;
        const double size = arg.is_double ? arg.double_value
                                          : static_cast<double>(arg.int_value);
        AddSized(out, {KeyOf(capture, span), arg.key}, c, capture, i, size,
                 columns, inclusive);
      }
    }
  }
  return out;
}

bool SizesVary(const std::vector<SizedSpan>& spans) {
  return std::any_of(spans.begin(), spans.end(), [&](const SizedSpan& span) {
    return span.size != spans.front().size;
  });
}

ScalingGroup NewGroup(const GroupId& id,
                      const std::vector<std::string>& counter_names) {
  ScalingGroup group;
  group.key = id.first;
  group.label = RowLabel(id.first);
  group.size_arg = id.second;
  group.counter_names = counter_names;
  return group;
}

absl::Status CheckSizeArgFound(const Gathered& gathered,
                               const ScalingOptions& options) {
  if (options.size_arg.empty() || !gathered.groups.empty()) {
    return absl::OkStatus();
  }
  const std::string counter = SizeCounter(options);
  if (!counter.empty()) {
    return absl::NotFoundError("no span has its own count of counter '" +
                               counter + "' (--size " + options.size_arg + ")");
  }
  return absl::NotFoundError("no span has a positive numeric argument '" +
                             options.size_arg + "' (--size)");
}

}  // namespace

absl::StatusOr<ScalingReport> AnalyzeScaling(
    std::span<const NamedCapture> captures, const ScalingOptions& options) {
  ScalingReport report;
  for (const NamedCapture& named : captures)
    report.traces.push_back(named.path);
  const CounterColumns columns = CounterNames(captures);
  Gathered gathered = Gather(captures, options, columns);
  if (absl::Status status = CheckSizeArgFound(gathered, options);
      !status.ok()) {
    return status;
  }
  report.skipped_nonpositive_sizes = gathered.nonpositive;
  for (auto& [id, spans] : gathered.groups) {
    if (options.size_arg.empty() && !SizesVary(spans)) continue;
    ScalingGroup group = NewGroup(id, columns.names);
    if (OneSpanPerRun(gathered.per_capture[id])) {
      AnalyzeRunPoints(spans, options, group);
    } else {
      AnalyzeSizedSpans(std::move(spans), options, group);
    }
    report.groups.push_back(std::move(group));
  }
  return report;
}

namespace {

// Keeps the spans whose bucket holds enough spans on both sides.
void KeepCommonBuckets(std::vector<SizedSpan>& a, std::vector<SizedSpan>& b,
                       const ScalingOptions& options) {
  std::map<int, std::pair<uint64_t, uint64_t>> counts;
  for (const SizedSpan& span : a) ++counts[BucketOf(span.size)].first;
  for (const SizedSpan& span : b) ++counts[BucketOf(span.size)].second;
  auto common = [&](const SizedSpan& span) {
    const auto& [in_a, in_b] = counts[BucketOf(span.size)];
    return in_a >= options.min_bucket_spans && in_b >= options.min_bucket_spans;
  };
  std::erase_if(a, [&](const SizedSpan& s) { return !common(s); });
  std::erase_if(b, [&](const SizedSpan& s) { return !common(s); });
}

std::optional<Exponent> Rise(const ScalingGroup& base, const ScalingGroup& cand,
                             const ScalingOptions& options) {
  if (!base.exponent.has_value() || !cand.exponent.has_value()) {
    return std::nullopt;
  }
  std::vector<double> rises;
  const size_t n = std::min(base.bootstrap.size(), cand.bootstrap.size());
  for (size_t i = 0; i < n; ++i) {
    rises.push_back(cand.bootstrap[i] - base.bootstrap[i]);
  }
  if (rises.empty()) return std::nullopt;
  std::sort(rises.begin(), rises.end());
  const double tail = (1.0 - options.confidence) / 2.0;
  return Exponent{.estimate = cand.exponent->estimate - base.exponent->estimate,
                  .ci_low = SortedQuantile(rises, tail),
                  .ci_high = SortedQuantile(rises, 1.0 - tail)};
}

ScalingGateRow JudgeRise(const ScalingGroup& base, const ScalingGroup& cand,
                         const ScalingOptions& options, double margin) {
  ScalingGateRow row;
  row.label = base.label;
  row.size_arg = base.size_arg;
  row.base = base.exponent;
  row.candidate = cand.exponent;
  row.rise = Rise(base, cand, options);
  char text[160];
  if (base.verdict == "unknown" || cand.verdict == "unknown" ||
      !row.rise.has_value()) {
    row.verdict = "unknown";
    row.reason = "on the common sizes: baseline " + base.reason +
                 "; candidate " + cand.reason;
    return row;
  }
  if (row.rise->estimate > margin && row.rise->ci_low > margin) {
    row.verdict = "regressed";
  } else if (row.rise->ci_high <= margin) {
    row.verdict = "same";
  } else {
    row.verdict = "unknown";
  }
  std::snprintf(
      text, sizeof(text), "exponent rose %+.2f in [%+.2f, %+.2f] (margin %.2f)",
      row.rise->estimate, row.rise->ci_low, row.rise->ci_high, margin);
  row.reason = text;
  return row;
}

}  // namespace

std::vector<ScalingGateRow> CompareScaling(std::span<const NamedCapture> base,
                                           std::span<const NamedCapture> cand,
                                           const ScalingOptions& options,
                                           double margin) {
  // Both sides count the same counters, so their groups line up.
  std::vector<NamedCapture> all(base.begin(), base.end());
  all.insert(all.end(), cand.begin(), cand.end());
  const CounterColumns columns = CounterNames(all);
  Gathered base_groups = Gather(base, options, columns);
  Gathered cand_groups = Gather(cand, options, columns);
  ScalingOptions cand_options = options;
  cand_options.seed = options.seed ^ 0x9e3779b97f4a7c15ULL;
  std::vector<ScalingGateRow> rows;
  for (auto& [id, base_spans] : base_groups.groups) {
    auto it = cand_groups.groups.find(id);
    if (it == cand_groups.groups.end()) continue;
    std::vector<SizedSpan>& cand_spans = it->second;
    if (options.size_arg.empty() && !SizesVary(base_spans) &&
        !SizesVary(cand_spans)) {
      continue;
    }
    KeepCommonBuckets(base_spans, cand_spans, options);
    ScalingGroup base_group = NewGroup(id, columns.names);
    ScalingGroup cand_group = NewGroup(id, columns.names);
    AnalyzeSizedSpans(std::move(base_spans), options, base_group);
    AnalyzeSizedSpans(std::move(cand_spans), cand_options, cand_group);
    rows.push_back(JudgeRise(base_group, cand_group, options, margin));
  }
  return rows;
}

}  // namespace spanprof::analysis
