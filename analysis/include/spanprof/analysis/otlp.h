// spanprof/analysis/otlp.h — captures as an OpenTelemetry OTLP/JSON
// `ExportTraceServiceRequest`, for a Collector and any tracing backend.
//
// `ExportOtlp()` renders one or more captures as the body of an OTLP/HTTP
// JSON request (`POST /v1/traces`, or a file for the Collector's
// `otlpjsonfile` receiver): one `resourceSpans` per process (`service.name`,
// `host.name`, `process.pid`: a merged capture gives one per process it
// holds, each with that process's spans), one `scopeSpans` (`spanprof`),
// and one span per retained span, with the OTLP/JSON encoding's rules: trace
// and span ids as lowercase hex, times as decimal strings of Unix-epoch
// nanoseconds (the capture's wall-clock anchor plus the span's session time),
// 64-bit integers as decimal strings, enums as integers. docs/formats.md
// ("OTLP/JSON export") lists every field; docs/distributed.md says where to
// send the file.
//
// Ids are the ones spanprof hands out (`ExternalSpanId()`, the capture's
// `trace_id`), so a span another process named in a `traceparent` keeps that
// id and the other process's roots link to it. A capture without a
// wall-clock anchor (a foreign Chrome trace, a very old spanprof trace) is an
// error: OTLP times are wall-clock times. A capture without a trace id (a
// trace written before spanprof recorded one) is exported under a trace id
// derived from its host, pid and anchor, with a note.
//
// clang-format off
// Example:
//
//   #include <spanprof/analysis/trace.h>
//
//   using namespace spanprof;
//   using namespace spanprof::analysis;
//   absl::StatusOr<Capture> a = ReadTrace("coordinator.json");
//   absl::StatusOr<Capture> b = ReadTrace("worker-4711.json");
//   const OtlpInput inputs[] = {{"coordinator.json", &*a},
//                               {"worker-4711.json", &*b}};
//   absl::StatusOr<OtlpExport> out = ExportOtlp(inputs);
//   // out->json: {"resourceSpans":[{"resource":...},{"resource":...}]}
// clang-format on
//
// Every function here is pure: no threads, no clocks, no files.
#ifndef SPANPROF_ANALYSIS_OTLP_H_
#define SPANPROF_ANALYSIS_OTLP_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

// `OtlpInput` is one capture to export and the name (its path) that errors
// and notes use. `capture` must outlive the call.
struct OtlpInput {
  std::string path;
  const Capture* capture = nullptr;
};

// `OtlpExport` is the result of `ExportOtlp()`.
struct OtlpExport {
  // The ExportTraceServiceRequest, compact, ending in '\n'.
  std::string json;
  // Things the user should know, one sentence each, without a trailing
  // newline: captures exported under a derived trace id, captures of
  // different trace ids, spans whose parent is not in their capture.
  std::vector<std::string> notes;
  uint64_t span_count = 0;
  // The distinct trace ids written, in input order.
  std::vector<std::string> trace_ids;
  // Roots whose remote parent was named by an alias of a span in another of
  // the inputs, and that now name that span's primary id.
  uint64_t rewritten_remote_parents = 0;
};

// `ExportOtlp()` renders `inputs` as one OTLP/JSON ExportTraceServiceRequest.
// Errors (the message names the input's path): no input, a null capture, a
// capture without a wall-clock anchor, a malformed trace id, a time outside
// the unsigned 64-bit nanoseconds since the epoch, the same capture given
// twice.
absl::StatusOr<OtlpExport> ExportOtlp(std::span<const OtlpInput> inputs);

// `InvalidOtlpSpans()` lists the spans of `inputs` that OTLP consumers
// cannot place, one sentence each naming the input, the span id and its name:
// a span that ends before it starts, a span that is its own parent, a span
// whose parent chain loops back to it. `ExportOtlp()` writes such spans as
// they are; a caller that must not (`spanprof export`) asks here first.
std::vector<std::string> InvalidOtlpSpans(std::span<const OtlpInput> inputs);

// `OtlpSpanIdHex()` is a 64-bit span id as OTLP/JSON writes it: 16 lowercase
// hex digits.
std::string OtlpSpanIdHex(uint64_t id);

// `IsOtlpTraceId()` is true for 32 lowercase hex digits, not all zero (the
// W3C and OTLP rule).
bool IsOtlpTraceId(std::string_view id);

// `DerivedTraceId()` is the trace id a capture without one is exported
// under: 32 hex digits mixed from its host, pid and wall-clock anchor, the
// same on every export of that capture.
std::string DerivedTraceId(const Capture& capture);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_OTLP_H_
