// summary_invariants.h — the last step of reading a summary: the rules
// between its fields (private to the analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_INVARIANTS_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_INVARIANTS_H_

#include <string_view>

#include "absl/status/status.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis::internal {

// `CheckSummaryInvariants()` checks the cross-field rules of DESIGN.md §3 on
// a summary as read (older versions already upgraded): the source and clock
// agree; each row's label, percentiles, mean, counts and tail shape are
// consistent; keys are unique and rows sorted by self_ns, then key; the
// totals are the rows' sums; shares recompute; `complete` means no loss.
// The error names `source` and the JSON path of the field at fault, as the
// reader's other errors do (`source: $.rows[3]: ...`).
absl::Status CheckSummaryInvariants(std::string_view source,
                                    const Summary& summary);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_INVARIANTS_H_
