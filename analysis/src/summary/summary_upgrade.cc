// A summary of an earlier version, completed to the current one's fields.
#include "summary/summary_upgrade.h"

#include <cstdint>

#include "spanprof/analysis/summary.h"
#include "summary/drops.h"
#include "summary/summary_format.h"
#include "summary/tail_shape.h"

namespace spanprof::analysis::internal {
namespace {

// Each row that ran, ran in the one process.
void DeriveProcesses(Summary& summary) {
  summary.process_count = 1;
  for (Row& row : summary.rows) row.processes = row.threads > 0 ? 1 : 0;
}

void DeriveInstrumentation(Summary& summary) {
  for (Row& row : summary.rows) {
    row.instrumentation_permille = InstrumentationPermille(
        row.calls, summary.overhead_ns_per_span, row.total_ns);
  }
}

void DeriveTailRatios(Summary& summary) {
  for (Row& row : summary.rows) {
    row.tail_ratio = TailRatio(row.p99_ns, row.median_ns);
  }
}

}  // namespace

void UpgradeSummary(int64_t version, Summary& summary) {
  if (!kRowFields[kRowTailRatio].In(version)) DeriveTailRatios(summary);
  if (!kRowFields[kRowInstrumentationPermille].In(version)) {
    DeriveInstrumentation(summary);
  }
  if (!kSummaryFields[kRootProcessCount].In(version)) DeriveProcesses(summary);
  // Older summaries count their drops without naming them.
  if (!kSummaryFields[kRootDrops].In(version)) {
    summary.drops = UnknownDrops(summary.dropped_args);
  }
}

}  // namespace spanprof::analysis::internal
