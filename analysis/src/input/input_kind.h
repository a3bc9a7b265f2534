// input_kind.h — what kind of file an input is, decided in one place
// (private to the analysis library). Every command and library entry point
// that takes "a trace", "a summary" or "a summary or a trace" asks here,
// then hands the bytes to that kind's reader (read_input.cc); no reader
// sniffs formats itself.
//
// The rules, in order: a Perfetto protobuf trace by its first bytes
// (perfetto_format.h); a spanprof stream file by its magic line; JSON whose
// top level is an array is a foreign Chrome trace; a JSON object with
// `traceEvents` is a foreign Chrome trace unless a `metadata` object names
// spanprof (`spanprof_version` or `schema`), else spanprof's own trace; a
// JSON object with `schema` and no `traceEvents` is a spanprof summary.
#ifndef SPANPROF_ANALYSIS_SRC_INPUT_INPUT_KIND_H_
#define SPANPROF_ANALYSIS_SRC_INPUT_INPUT_KIND_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace spanprof::analysis::internal {

// `InputKind` is what a file's bytes (after gzip) hold.
enum class InputKind {
  kSpanprofTrace,  // spanprof's JSON trace (`TraceToJson()`)
  kChromeTrace,    // another tool's Chrome Trace Event JSON
  kPerfettoTrace,  // a Perfetto protobuf trace (`CaptureToPerfetto()`)
  kSummary,        // a spanprof summary
  kStreamFile,     // a session's stream file (`spanprof recover` reads it)
  kUnknown,        // none of these
};

// `InputKindName()`: "spanprof trace", "Chrome trace", "Perfetto trace",
// "summary", "stream file" or "unknown".
std::string_view InputKindName(InputKind kind);

// `DetectInputKind()` tells what `bytes` hold. It never returns kUnknown:
// what is none of the kinds is an error naming `source` and why (not JSON,
// or a JSON object with neither `schema` nor `traceEvents`). A spanprof
// trace in the writer's layout is told by its tail (metadata) alone;
// anything else is walked at its top level.
absl::StatusOr<InputKind> DetectInputKind(std::string_view bytes,
                                          std::string_view source);

// `SniffInput()` is `DetectInputKind()` with kUnknown for its errors.
InputKind SniffInput(std::string_view bytes);

// `IsTraceKind()`: a spanprof, Chrome or Perfetto trace.
bool IsTraceKind(InputKind kind);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_INPUT_INPUT_KIND_H_
