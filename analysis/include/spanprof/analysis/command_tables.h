// spanprof/analysis/command_tables.h — the rows of every command's table as
// an `OutputTable`, for `--format csv|tsv|md|json|jsonl` (table_output.h).
//
// Each function gives the columns of the command's console table, with the
// numbers as the analysis holds them (integer nanoseconds, counts, permille;
// no units, no rounding to the display). Pure.
//
// clang-format off
// Example:
//
//   spanprof::analysis::Summary summary = ...;
//   std::cout << spanprof::analysis::RenderTable(
//       spanprof::analysis::SummaryRowsTable(summary),
//       spanprof::analysis::TableFormat::kCsv);
// clang-format on
#ifndef SPANPROF_ANALYSIS_COMMAND_TABLES_H_
#define SPANPROF_ANALYSIS_COMMAND_TABLES_H_

#include <string>

#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/overhead.h"
#include "spanprof/analysis/scaling.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table_output.h"

namespace spanprof::analysis {

// `report`: name (the row's label), self_ns, total_ns, calls, mean_ns,
// p95_ns, self_heartbeats, share_permille; then processes (a merged
// capture's rows), then one column `counters.NAME` per named counter (its
// inclusive total, NULL for a row without it), in name order.
OutputTable SummaryRowsTable(const Summary& summary);

// `compare`: name, status, base, candidate, delta, change_bps, base_calls,
// candidate_calls (the metric's values; NULL where absent or not
// measured); a comparison of repeated runs adds runs_baseline,
// runs_candidate, delta_ci_low, delta_ci_high, p_value and reason.
OutputTable ComparisonRowsTable(const Comparison& comparison);

// `ComparisonMarkdown()` is `compare --format md`, made for
// $GITHUB_STEP_SUMMARY: a verdict line first ("**spanprof compare: PASS**"
// or "FAIL", the metric and the counts), then a Markdown table of the rows
// that moved (regressed, improved, new, missing, unknown), or a line saying
// none did.
std::string ComparisonMarkdown(const Comparison& comparison);

// `scaling`: name, size_arg, spans, size_min, size_max, exponent,
// exponent_ci_low, exponent_ci_high, p95_exponent, verdict, driver.
OutputTable ScalingRowsTable(const ScalingReport& report);

// `overhead`: name, off_ns, on_ns (medians per iteration), ratio,
// spans_per_iteration, verdict (pass or fail).
OutputTable OverheadRowsTable(const OverheadReport& report);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_COMMAND_TABLES_H_
