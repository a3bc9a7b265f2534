// summary_internal.h — test access to the two Summarize() paths (private to
// the analysis library).
//
// `Summarize()` tries a streaming path for canonical captures and falls back
// to the general path; tests compare the two on random captures.
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_INTERNAL_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_INTERNAL_H_

#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

enum class SummaryPath {
  kAny,      // the streaming path when it applies, else the general one
  kGeneral,  // always the general (reference) path
};

// `SummarizeWithPath()` is `Summarize()` with the path chosen; when
// `used_canonical` is not null it tells whether the streaming path produced
// the result.
Summary SummarizeWithPath(const Capture& capture, SummaryPath path,
                          bool* used_canonical);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_INTERNAL_H_
