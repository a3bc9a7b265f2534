// strict_trace_reader.h — the one-pass strict reader of a spanprof JSON
// trace (private to the analysis library): any layout of the JSON, every
// key and type checked, its errors diagnosed. The fast line reader hands a
// trace here when it is not in the writer's exact layout, or is invalid, so
// that the error this reader gives is the one reported.
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_STRICT_TRACE_READER_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_STRICT_TRACE_READER_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis::internal {

// `ReadStrictTrace()` reads `text` in one pass over the document (metadata
// with the metadata reader, each event with the strict event reader), then
// resolves every event against metadata and sorts the spans into the
// capture's order. The events are always kept. A failure is passed through
// `DiagnoseTraceError()`.
absl::StatusOr<ParsedTrace> ReadStrictTrace(std::string_view text,
                                            std::string_view source);

// `DiagnoseTraceError()` takes a second look at the top level of `text`
// after `error`: a spanprof summary, another tool's trace, a trace without
// metadata or of another schema is named as such (rather than by its first
// odd field); else `error` is returned unchanged.
absl::Status DiagnoseTraceError(std::string_view text, std::string_view source,
                                absl::Status error);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_STRICT_TRACE_READER_H_
