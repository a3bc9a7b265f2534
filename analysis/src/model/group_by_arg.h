// group_by_arg.h — the name a span is keyed by under `--group-by-arg ARG`
// (`TraceReadOptions::group_by_arg`), private to the analysis library. Both
// trace readers that group (spanprof's own traces and foreign Chrome traces)
// name their grouped sites here, so a span reads as the same row whichever
// format carried it.
//
// Example:
//
//   // "Source [detail=a.cc]"
//   GroupedSiteName("Source", "detail", "a.cc", false);
//   // "Source [detail=lib/very...]": the runtime cut the value
//   GroupedSiteName("Source", "detail", "lib/very", true);
#ifndef SPANPROF_ANALYSIS_SRC_MODEL_GROUP_BY_ARG_H_
#define SPANPROF_ANALYSIS_SRC_MODEL_GROUP_BY_ARG_H_

#include <string>
#include <string_view>

namespace spanprof::analysis::internal {

// The name of a span named `name` whose string argument `arg` holds `value`:
// `NAME [ARG=VALUE]`. A `truncated` value (one the runtime cut at
// kMaxArgTextBytes, SpanArg::truncated) ends in "...": `NAME [ARG=VALUE...]`,
// so a cut value never reads as a whole one, and two values cut to the same
// bytes share a row that says so. Foreign traces' values are never cut.
std::string GroupedSiteName(std::string_view name, std::string_view arg,
                            std::string_view value, bool truncated);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_MODEL_GROUP_BY_ARG_H_
