// compare_metric.h — the metrics the gate compares on, with their field
// names and units: the one table the gate, its table and its figure share
// (private to the analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_GATE_COMPARE_METRIC_H_
#define SPANPROF_ANALYSIS_SRC_GATE_COMPARE_METRIC_H_

#include <string_view>

#include "spanprof/analysis/compare.h"

namespace spanprof::analysis::internal {

struct MetricInfo {
  CompareMetric metric;
  std::string_view name;
  bool is_duration;
};

// In the order of the CLI help.
inline constexpr MetricInfo kMetrics[] = {
    {CompareMetric::kTotalNs, "total_ns", true},
    {CompareMetric::kSelfNs, "self_ns", true},
    {CompareMetric::kMeanNs, "mean_ns", true},
    {CompareMetric::kMedianNs, "median_ns", true},
    {CompareMetric::kP95Ns, "p95_ns", true},
    {CompareMetric::kP99Ns, "p99_ns", true},
    {CompareMetric::kMaxNs, "max_ns", true},
    {CompareMetric::kTotalHeartbeats, "total_heartbeats", false},
    {CompareMetric::kSelfHeartbeats, "self_heartbeats", false},
    {CompareMetric::kAllocCount, "alloc_count", false},
    {CompareMetric::kAllocBytes, "alloc_bytes", false},
};

// A named counter's (not in kMetrics: it needs a name).
inline constexpr MetricInfo kCounterMetric = {CompareMetric::kCounter,
                                              "counter", false};

// The row of `metric` (p95_ns's for a value outside the enum).
inline const MetricInfo& Info(CompareMetric metric) {
  if (metric == CompareMetric::kCounter) return kCounterMetric;
  for (const MetricInfo& info : kMetrics) {
    if (info.metric == metric) return info;
  }
  return kMetrics[4];
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_GATE_COMPARE_METRIC_H_
