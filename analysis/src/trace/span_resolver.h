// span_resolver.h — the step of reading a spanprof JSON trace that checks
// each event against `metadata` (private to the analysis library): every
// index in range, every repeated name, category, tag, pid and tid equal to
// what metadata says. The strict reader resolves its events after its one
// pass (metadata comes last in the file); the fast line reader, which has
// read metadata first, resolves each M event as it reads it.
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_SPAN_RESOLVER_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_SPAN_RESOLVER_H_

#include <string_view>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "trace/strict_event_reader.h"
#include "trace/trace_metadata_reader.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis::internal {

// `SpanResolver` checks events against one `TraceMetadata`, which must
// outlive it. Errors name the source and the event's JSON path under
// `events` (`$.traceEvents`).
class SpanResolver {
 public:
  SpanResolver(std::string_view source, const TraceMetadata& metadata)
      : json_(source), metadata_(metadata) {}

  // `ResolveMetaEvent()`: an M event's pid is one of metadata's processes,
  // its tid one of that process's threads (a process_name event's tid is
  // its pid).
  absl::Status ResolveMetaEvent(const JsonPath& events,
                                const TraceEvent& event) const;

  // `ResolveSpan()`: an X event's site and thread indexes are in range
  // (then set in `pending.span`), and its name, category, tags, allocation
  // fields, pid and tid are those of its site and thread.
  absl::Status ResolveSpan(const JsonPath& events, PendingSpan& pending,
                           const TraceEvent& event) const;

 private:
  StrictJson json_;
  const TraceMetadata& metadata_;
};

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_SPAN_RESOLVER_H_
