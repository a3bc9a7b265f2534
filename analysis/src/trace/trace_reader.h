// trace_reader.h — the trace reader's full result, for `ValidateArtifact()`
// (private to the analysis library).
//
// `ParseTrace()` returns only the `Capture`. Validation also needs what the
// capture does not keep: each X event's position in `traceEvents`, its raw
// `pid`/`tid`, and its flow binding.
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_TRACE_READER_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_TRACE_READER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// `TraceEvent` is one X or M event as it appeared in the file.
struct TraceEvent {
  size_t index = 0;              // position in $.traceEvents
  bool is_span = false;          // "X" (else "M")
  bool is_process_name = false;  // an M event naming the process
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;    // X only
  uint64_t span_id = 0;  // X only
  bool has_bind_id = false;
  uint64_t bind_id = 0;
  bool flow_in = false;
  bool flow_out = false;
};

// `ParsedTrace` is a capture plus the events it was read from.
struct ParsedTrace {
  Capture capture;
  std::vector<TraceEvent> events;  // in file order
};

// `ParseTraceDocument()` is `ParseTrace()` keeping the events. When
// `used_fast_path` is not null it tells whether the trace was read by the
// byte-matching fast path (the layout `TraceToJson()` writes) rather than
// by the one-pass reader; tests use it to see that the fast path ran.
absl::StatusOr<ParsedTrace> ParseTraceDocument(std::string_view json,
                                               std::string_view source,
                                               bool* used_fast_path = nullptr);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_TRACE_READER_H_
