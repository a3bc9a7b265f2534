// spanprof/analysis/trace.h — the Chrome Trace Event JSON trace.
//
// `TraceToJson()` renders a capture as `{"traceEvents":[...],
// "displayTimeUnit":"ns","metadata":{...}}` that Perfetto UI and speedscope
// open. `CaptureToPerfetto()` renders it in Perfetto's native protobuf trace
// format instead (smaller and faster to write; every cross-thread link is a
// flow); `WriteTrace()` picks the format by the file name. `ReadTrace()` reads
// either format (plain or gzip, told apart by content) back into the same
// `Capture`, so `Summarize(ReadTrace(path))` reproduces the runtime's
// summary from a `.json` and a `.pftrace` alike. It also reads foreign
// Chrome Trace Event files (clang -ftime-trace, node, Chrome): a JSON trace
// without spanprof's metadata is read as a generic Chrome trace
// (`Capture::source` "chrome-trace"; docs/formats.md, "Foreign Chrome
// traces"), with the choices of `TraceReadOptions`.
//
// clang-format off
// Example:
//
//   spanprof::Capture capture = ...;
//   absl::Status s = spanprof::analysis::WriteTrace(capture, "trace.json.gz");
//   s = spanprof::analysis::WriteTrace(capture, "trace.pftrace");  // protobuf
//   absl::StatusOr<spanprof::Capture> back =
//       spanprof::analysis::ReadTrace("trace.json.gz");
//   back = spanprof::analysis::ReadTrace("trace.pftrace");  // same capture
// clang-format on
#ifndef SPANPROF_ANALYSIS_TRACE_H_
#define SPANPROF_ANALYSIS_TRACE_H_

#include <string>
#include <string_view>
#include <vector>

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

// `CaptureToPerfetto()` renders the capture as a Perfetto protobuf `Trace`
// (docs/formats.md, "Perfetto protobuf trace"). Pure.
std::string CaptureToPerfetto(const Capture& capture);

// `IsPerfettoTracePath()` is true for the trace paths written in Perfetto's
// protobuf format: ending in `.pftrace` or `.perfetto-trace`, optionally
// followed by `.gz`, in any case (`.PFTRACE`).
bool IsPerfettoTracePath(std::string_view path);

// `LooksLikePerfettoTrace()` is true when `bytes` (a file's content, after
// gzip) start like a protobuf trace rather than JSON.
bool LooksLikePerfettoTrace(std::string_view bytes);

// `WritePerfettoTrace()` writes `CaptureToPerfetto()` atomically (gzip for a
// path ending in `.gz`), streaming it in chunks. Errors name the path.
absl::Status WritePerfettoTrace(const Capture& capture,
                                const std::string& path);

// `WriteTrace()` writes the trace atomically: in Perfetto's protobuf format
// when `IsPerfettoTracePath(path)`, else as Chrome Trace Event JSON; a path
// ending in `.gz` is written gzip-compressed. Errors name the path.
absl::Status WriteTrace(const Capture& capture, const std::string& path);

// `TraceReadOptions` are the choices of a trace reader.
struct TraceReadOptions {
  // When not empty, a span with a string argument of this name (clang's
  // `detail` in a foreign trace; `SPANPROF_ARG_STR` in spanprof's own) is
  // keyed by `name [ARG=value]` instead of `name` (tags kept), so its rows
  // split by that value (one row per source file). A truncated value ends
  // in "...".
  std::string group_by_arg;
  // When not null, notes for a human are appended here: what was skipped
  // ("skipped 12 instant, 3 counter events ..."), a `group_by_arg` that no
  // span has. Reading spanprof's own traces adds none.
  std::vector<std::string>* notes = nullptr;
  // A Perfetto trace without its end packet (cut: docs/formats.md,
  // "Completeness") is an error "truncated at byte N"; when true, what is
  // there is read instead, and the capture's `import_issues` say why it is
  // not complete.
  bool allow_truncated = false;
};

// `ParseTrace()` reads a trace written by `TraceToJson()` or
// `CaptureToPerfetto()` (told apart by `LooksLikePerfettoTrace()`) back into
// a capture, or a foreign Chrome trace (a JSON trace without spanprof's
// metadata: docs/formats.md says exactly which); malformed input is an error
// naming `source` and the JSON path, or for a protobuf trace the byte offset
// and packet.
absl::StatusOr<Capture> ParseTrace(std::string_view json,
                                   std::string_view source);
absl::StatusOr<Capture> ParseTrace(std::string_view json,
                                   std::string_view source,
                                   const TraceReadOptions& options);

// `ReadTrace()` reads a trace file (gzip when it starts with the gzip magic).
absl::StatusOr<Capture> ReadTrace(const std::string& path);
absl::StatusOr<Capture> ReadTrace(const std::string& path,
                                  const TraceReadOptions& options);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_TRACE_H_
