// capture_format.h — the names a capture carries into every format
// (private to the analysis library): what a span of an unknown site is
// called, the category of a site without a phase, the span flags' names,
// and the values of `Capture::source` and of a foreign capture's clock.
// The JSON and Perfetto traces, the summary, the foreign-trace reader and
// the query tables all use these; what only one format writes stays in its
// own `<format>_format.h`.
#ifndef SPANPROF_ANALYSIS_SRC_MODEL_CAPTURE_FORMAT_H_
#define SPANPROF_ANALYSIS_SRC_MODEL_CAPTURE_FORMAT_H_

#include <cstdint>
#include <string_view>

#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// The site of spans and drops whose site index is out of range (a validation
// issue): they are still written, and still counted in the summary.
inline constexpr std::string_view kInvalidSiteName = "(invalid site)";

// A span's category (the Chrome trace's "cat", the Perfetto slice's
// category, the query's `slice.category`) when its site has no phase.
inline constexpr std::string_view kDefaultCategory = "spanprof";

// The span flags in the order a `flags` array lists them.
struct FlagName {
  uint16_t bit;
  std::string_view name;
};
inline constexpr FlagName kFlagNames[] = {
    {kSpanUnfinished, "unfinished"},   {kSpanException, "exception"},
    {kSpanRerooted, "rerooted"},       {kSpanHookFailed, "hook_failed"},
    {kSpanOpenAtExit, "open_at_exit"},
};
inline constexpr uint16_t kKnownFlags = kSpanUnfinished | kSpanException |
                                        kSpanRerooted | kSpanHookFailed |
                                        kSpanOpenAtExit;

// The values of `Capture::source` (the summary's `source`, version 3 on):
// spanprof's own captures, and foreign Chrome Trace Event files; and the
// clock of a foreign capture (whose clock spanprof cannot know).
inline constexpr std::string_view kSourceSpanprof = "spanprof";
inline constexpr std::string_view kSourceChromeTrace = "chrome-trace";
inline constexpr std::string_view kClockUnknown = "unknown";

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_MODEL_CAPTURE_FORMAT_H_
