// trace_reader.h — the reader of spanprof's own JSON traces (private to the
// analysis library), in named steps, each in a file of its own:
//
//   trace_metadata_reader.h  `metadata` -> `TraceMetadata`
//   fast_line_reader.h       the writer's layout, line by line (fast path)
//   strict_trace_reader.h    any layout, one pass, errors diagnosed
//   strict_event_reader.h    one element of `traceEvents`
//   span_resolver.h          each event checked against `TraceMetadata`
//
// Which reader a file goes to (this one, the Perfetto reader, the foreign
// Chrome trace reader) is decided in input/input_kind.h, not here.
//
// `ParseTrace()` returns only the `Capture`. Validation also needs what the
// capture does not keep: each X event's position in `traceEvents`, its raw
// `pid`/`tid`, and its flow binding (`ParsedTrace`).
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_TRACE_READER_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_TRACE_READER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/trace.h"
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

// `ReadSpanprofTrace()` reads a spanprof JSON trace: by the fast line
// reader when it can, else by the strict reader, which starts afresh and
// gives the error. `ParsedTrace::events` is filled when `keep_events` (the
// strict reader always fills it).
absl::StatusOr<ParsedTrace> ReadSpanprofTrace(std::string_view json,
                                              std::string_view source,
                                              bool keep_events,
                                              bool* used_fast_path = nullptr);

// `GroupByStringArg()` applies `options.group_by_arg` to a capture read
// from spanprof's own trace (JSON or Perfetto); notes go to
// `options.notes`, naming `source`.
void GroupByStringArg(Capture& capture, std::string_view source,
                      const TraceReadOptions& options);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_TRACE_READER_H_
