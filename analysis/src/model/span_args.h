// span_args.h — a span's arguments, as every reader of a capture takes them
// (private to the analysis library).
//
// One function instead of each writer's own index arithmetic: the writers,
// the summary and the readers' own passes reach a span's arguments only
// through it, so the one place that knows where they lie is here: in
// `Capture::args`, or packed (`Capture::packed_args`, the capture a session
// end writes its outputs from). What reads every argument at once is in
// counters.h (CounterNames(), AnyCounter()).
#ifndef SPANPROF_ANALYSIS_SRC_MODEL_SPAN_ARGS_H_
#define SPANPROF_ANALYSIS_SRC_MODEL_SPAN_ARGS_H_

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "model/span_list.h"
#include "spanprof/capture.h"
#include "spanprof/internal/packed_args.h"

namespace spanprof::analysis::internal {

// `span`'s arguments, `Capture::args[first_arg, first_arg + arg_count)`; a
// range past the end of `args` (a corrupt or hand-made capture) is clipped,
// never read. Of a packed capture, the span's arguments decoded into storage
// of the calling thread's own, valid until its next call: a reader done with
// one span's arguments before it asks for the next one's (every writer and
// the summary) reads both forms alike; one that keeps them (merge) copies a
// packed capture's out first.
inline std::span<const SpanArg> ArgsOf(const Capture& capture,
                                       const Span& span) {
  if (capture.packed_args != nullptr) {
    thread_local std::vector<SpanArg> decoded;
    if (span.arg_count == 0) return {};
    capture.packed_args->Decode(span.first_arg, span.arg_count, decoded);
    return decoded;
  }
  const size_t size = capture.args.size();
  const size_t first = std::min<size_t>(span.first_arg, size);
  const size_t count = std::min<size_t>(span.arg_count, size - first);
  return {capture.args.data() + first, count};
}

// Calls `f(arg)` for every argument of `capture`, in the order of
// `Capture::args` (its spans' order).
template <typename F>
void ForEachArg(const Capture& capture, const F& f) {
  if (capture.packed_args == nullptr) {
    for (const SpanArg& arg : capture.args) f(arg);
    return;
  }
  for (const Span& span : internal::SpanList(capture)) {
    for (const SpanArg& arg : ArgsOf(capture, span)) f(arg);
  }
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_MODEL_SPAN_ARGS_H_
