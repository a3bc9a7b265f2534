// compare_internal.h — what the one-run gate (compare.cc) and the gate over
// repeated runs (compare_runs.cc) share (private to the analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_GATE_COMPARE_INTERNAL_H_
#define SPANPROF_ANALYSIS_SRC_GATE_COMPARE_INTERNAL_H_

#include <optional>
#include <string>
#include <vector>

#include "spanprof/analysis/compare.h"

namespace spanprof::analysis::internal {

// Counts one row's verdict in the matching field of `counts`.
void CountStatus(RowStatus status, ComparisonCounts& counts);

// Sorts rows worst first: regressed, new, missing, unknown, then the rest
// (within, same, improved) by Δ descending, then not measured; ties by key.
void SortWorstFirst(std::vector<ComparisonRow>& rows);

// The row's share of the summary's recorded thread time, or nullopt.
std::optional<double> ShareOfThreadTime(const Row& row, const Summary& summary);

// With a counter metric: refuses a policy whose counter no row of any of
// `summaries` has (a typo must not compare zeros and pass).
absl::Status CheckCounterKnown(const std::vector<const Summary*>& summaries,
                               const ComparePolicy& policy);

// Whether `summary` measured the policy's metric at all: false only for a
// counter that none of its rows has (allocations are per row).
bool Measures(const Summary& summary, const ComparePolicy& policy);

// The gate's evidence rule (`Comparison::no_evidence`, `missing_share`)
// over `comparison.rows` (already classified) and the runs of each side.
void JudgeEvidence(const std::vector<const Summary*>& base_runs,
                   const std::vector<const Summary*>& candidate_runs,
                   Comparison& comparison);

// Refuses a negative tolerance or a confidence outside (0.5, 1).
absl::Status CheckPolicy(const ComparePolicy& policy);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_GATE_COMPARE_INTERNAL_H_
