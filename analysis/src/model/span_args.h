// span_args.h — a span's arguments, as every reader of a capture takes them
// (private to the analysis library).
//
// One function instead of each writer's own index arithmetic: the writers,
// the summary and the readers' own passes reach a span's arguments only
// through it, so the one place that knows where they lie is here. What reads
// every argument at once is in counters.h (CounterNames(), AnyCounter()).
#ifndef SPANPROF_ANALYSIS_SRC_MODEL_SPAN_ARGS_H_
#define SPANPROF_ANALYSIS_SRC_MODEL_SPAN_ARGS_H_

#include <algorithm>
#include <cstddef>
#include <span>

#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// `span`'s arguments, `Capture::args[first_arg, first_arg + arg_count)`; a
// range past the end of `args` (a corrupt or hand-made capture) is clipped,
// never read.
inline std::span<const SpanArg> ArgsOf(const Capture& capture,
                                       const Span& span) {
  const size_t size = capture.args.size();
  const size_t first = std::min<size_t>(span.first_arg, size);
  const size_t count = std::min<size_t>(span.arg_count, size - first);
  return {capture.args.data() + first, count};
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_MODEL_SPAN_ARGS_H_
