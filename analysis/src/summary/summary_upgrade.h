// summary_upgrade.h — the step after reading a summary of an earlier version:
// the fields that version does not carry, derived from those it does
// (private to the analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_UPGRADE_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_UPGRADE_H_

#include <cstdint>

#include "spanprof/analysis/summary.h"

namespace spanprof::analysis::internal {

// `UpgradeSummary()` fills in what a summary read from version `version`
// lacks and its other fields give (summary_format.h says which fields a
// version has): the rows' `tail_ratio` (from p99_ns and median_ns, version
// 1), `instrumentation_permille` (from calls, total_ns and the session's
// overhead, versions 1 and 2), and one process (versions 1 to 3). Fields
// with nothing to derive them from keep `Summary`'s defaults. The current
// version is left as read.
void UpgradeSummary(int64_t version, Summary& summary);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_UPGRADE_H_
