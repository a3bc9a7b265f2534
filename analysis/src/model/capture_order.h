// The readers' last step: spans read in file order put in the capture's
// order, (thread, start_ns, depth), ties by id, then file order, with their
// allocation deltas and arguments moved along.
#ifndef SPANPROF_ANALYSIS_SRC_MODEL_CAPTURE_ORDER_H_
#define SPANPROF_ANALYSIS_SRC_MODEL_CAPTURE_ORDER_H_

#include <vector>

#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// Moves `spans` (file order), their `allocs` (parallel to them, or empty)
// and the `args` they index into `capture`, sorted as above; a span's
// arguments stay contiguous and in their order. Consumes all three.
void MoveSpansInCaptureOrder(std::vector<Span>& spans,
                             std::vector<SpanAllocs>& allocs,
                             std::vector<SpanArg>& args, Capture& capture);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_MODEL_CAPTURE_ORDER_H_
