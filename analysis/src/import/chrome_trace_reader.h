// chrome_trace_reader.h — the reader of foreign Chrome Trace Event files
// (private to the analysis library): traces that clang -ftime-trace, node
// --trace-events-enabled, Chrome or other tools write, read into a `Capture`
// whose `source` is "chrome-trace" (`kSourceChromeTrace`). Which files are
// foreign traces is decided by input/input_kind.h.
//
// What is read (docs/formats.md, "Foreign Chrome traces", is the contract):
// `X` events and `B`/`E` pairs (matched per pid and tid: an `E` closes the
// innermost open `B` of its thread, whatever its name) become spans; `M`
// events process_name, thread_name and thread_sort_index name the processes
// and threads; every other phase is skipped and counted. `ts` and `dur` are
// microseconds, read exactly from their decimal text into nanoseconds
// (digits past the nanosecond are dropped). Nesting is rebuilt per thread
// from the times. Problems of the trace (an `E` with nothing open, a `B`
// never closed, a negative duration) become import issues and unfinished
// spans, never errors; malformed JSON and wrong types of the fields read are
// errors with a JSON path.
//
// It includes only public headers and the JSON helpers, so that tests can
// include it as "analysis/src/import/chrome_trace_reader.h".
#ifndef SPANPROF_ANALYSIS_SRC_IMPORT_CHROME_TRACE_READER_H_
#define SPANPROF_ANALYSIS_SRC_IMPORT_CHROME_TRACE_READER_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// `ReadChromeTrace()` reads a foreign Chrome trace. Errors name `source`
// and the JSON path (`$.traceEvents[12].ts: ...`).
absl::StatusOr<Capture> ReadChromeTrace(std::string_view json,
                                        std::string_view source,
                                        const TraceReadOptions& options);

// `ParseChromeMicros()` reads a JSON number of microseconds (any JSON
// number form: `12`, `1.0005`, `-3.5e2`) exactly into nanoseconds, dropping
// digits past the nanosecond (toward zero, as Perfetto's JSON importer
// does). False when `text` is not a JSON number or the result does not fit
// int64.
bool ParseChromeMicros(std::string_view text, int64_t* ns);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_IMPORT_CHROME_TRACE_READER_H_
