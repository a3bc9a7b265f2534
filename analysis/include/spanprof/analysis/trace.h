// spanprof/analysis/trace.h — the Chrome Trace Event JSON trace.
//
// `TraceToJson()` renders a capture as `{"traceEvents":[...],
// "displayTimeUnit":"ns","metadata":{...}}` that Perfetto UI and speedscope
// open. `ReadTrace()` reads such a file (plain or `.json.gz`) back into a
// `Capture`, so `Summarize(ReadTrace(path))` reproduces the runtime's summary.
//
// Example:
//
//   absl::Status s = spanprof::analysis::WriteTrace(capture, "trace.json.gz");
//   absl::StatusOr<spanprof::Capture> back =
//       spanprof::analysis::ReadTrace("trace.json.gz");
#ifndef SPANPROF_ANALYSIS_TRACE_H_
#define SPANPROF_ANALYSIS_TRACE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

// `ThreadLabel()` is the name a thread is shown with in the trace and the
// figures: its `SetThreadName()` name, or `thread-<tid>` when it has none.
std::string ThreadLabel(const ThreadInfo& thread);

// `FormatMicros()` renders ns as `<ns/1000>.<ns%1000, 3 digits>` exactly,
// with no floating point (negative values get a leading '-').
std::string FormatMicros(int64_t ns);

// `TraceToJson()` renders the trace. Pure.
std::string TraceToJson(const Capture& capture);

// `WriteTrace()` writes the trace atomically; a path ending in `.gz` is
// written gzip-compressed. Errors name the path.
absl::Status WriteTrace(const Capture& capture, const std::string& path);

// `ParseTrace()` reads trace JSON written by `TraceToJson()` back into a
// capture; malformed input is an error naming `source` and the JSON path.
absl::StatusOr<Capture> ParseTrace(std::string_view json,
                                   std::string_view source);

// `ReadTrace()` reads a trace file (gzip when it starts with the gzip magic).
absl::StatusOr<Capture> ReadTrace(const std::string& path);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_TRACE_H_
