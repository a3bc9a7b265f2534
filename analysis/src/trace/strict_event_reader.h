// strict_event_reader.h — the strict reader of one `traceEvents` element
// of a spanprof JSON trace (private to the analysis library): its JSON
// walked with simdjson On Demand, every key and type checked, `ts` and `dur`
// read exactly from their decimal text. What it cannot check alone (that a
// span's name, tags, pid and tid are those of its site and thread) is kept
// in a `PendingSpan` for the span resolver.
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_STRICT_EVENT_READER_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_STRICT_EVENT_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "spanprof/capture.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis::internal {

// One X event's span before the capture is assembled. What it repeats of
// `metadata` (which comes last in the file) is kept to be checked once
// metadata is read; the strings point into the parser's string buffer, which
// lives as long as the document.
struct PendingSpan {
  Span span;
  size_t event = 0;               // index into the events
  std::vector<SpanArg> args;      // numeric arguments, then counters
  std::vector<SpanArg> counters;  // args.counters, until the event is read
  std::string_view name;
  std::string_view cat;
  int64_t site = 0;    // unchecked index into metadata.sites
  int64_t thread = 0;  // unchecked index into metadata.threads
  // Which optional tags the event carried.
  std::optional<std::string_view> phase;
  std::optional<std::string_view> module;
  std::optional<std::string_view> activity;
  std::optional<std::string_view> backend;
  std::optional<std::string_view> dtype;
  std::optional<std::string_view> device;
  bool has_alloc_count = false;
  bool has_alloc_bytes = false;
  SpanAllocs allocs;
};

// `ReadTraceEvent()` reads `ev`, element `index` of `$.traceEvents` (at
// `ep`), into `event` and, for an X event (then `is_span`), `pending`.
// Errors name `source` and the JSON path.
absl::Status ReadTraceEvent(std::string_view source, size_t index,
                            simdjson::ondemand::value& ev, const JsonPath& ep,
                            TraceEvent& event, PendingSpan& pending,
                            bool& is_span);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_STRICT_EVENT_READER_H_
