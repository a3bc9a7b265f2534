// fast_line_reader.h — the fast path of reading a spanprof JSON trace
// (private to the analysis library): a trace in the exact layout
// `TraceToJson()` writes (trace_format.h), read line by line and matched
// byte for byte against what the writer would render for metadata's sites
// and threads. Anything else is left to the strict reader.
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_FAST_LINE_READER_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_FAST_LINE_READER_H_

#include <optional>
#include <string_view>

#include "trace/trace_reader.h"

namespace spanprof::analysis::internal {

// `ReadTraceLines()` reads `text` when it is laid out as the writer writes
// it and every event is valid, into what the strict reader would read
// (`ParsedTrace::events` empty unless `keep_events`). nullopt when it is
// not: then nothing of the attempt remains, and the caller reads `text`
// again with the strict reader, which gives the error.
std::optional<ParsedTrace> ReadTraceLines(std::string_view text,
                                          std::string_view source,
                                          bool keep_events);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_FAST_LINE_READER_H_
