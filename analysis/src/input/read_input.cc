// The library's entry points that take a file of some kind: they ask the
// sniffer (input_kind.h) what it is, then hand it to that kind's reader.
// `ParseTrace()`/`ReadTrace()` (spanprof/analysis/trace.h) and
// `DetectArtifactKind()` (spanprof/analysis/validate.h) live here.
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "import/chrome_trace_reader.h"
#include "input/input_kind.h"
#include "json/cat.h"
#include "perfetto/perfetto_reader.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"
#include "spanprof/capture.h"
#include "status_macros.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis {
namespace {

using internal::InputKind;

// A stream file given where a trace or summary is read.
absl::Status StreamFileError(std::string_view source) {
  return absl::InvalidArgumentError(internal::Cat(
      source,
      ": a spanprof stream file (what a session leaves when its program "
      "does not end normally), not a trace or summary: `spanprof recover` "
      "turns it into a trace"));
}

absl::StatusOr<Capture> ParseAnyTrace(std::string_view json,
                                      std::string_view source,
                                      const TraceReadOptions& options) {
  switch (internal::SniffInput(json)) {
    case InputKind::kPerfettoTrace: {
      SPANPROF_ASSIGN_OR_RETURN(Capture capture,
                                internal::perfetto::ParsePerfettoTrace(
                                    json, source, options.allow_truncated));
      internal::GroupByStringArg(capture, source, options);
      return capture;
    }
    case InputKind::kChromeTrace:
      return internal::ReadChromeTrace(json, source, options);
    case InputKind::kStreamFile:
      return StreamFileError(source);
    case InputKind::kSpanprofTrace:
    case InputKind::kSummary:
    case InputKind::kUnknown:
      // A summary or unknown input gets the spanprof reader's diagnosis
      // ("this is a spanprof summary, not a trace", "missing field ...").
      break;
  }
  SPANPROF_ASSIGN_OR_RETURN(
      internal::ParsedTrace parsed,
      internal::ReadSpanprofTrace(json, source, /*keep_events=*/false));
  internal::GroupByStringArg(parsed.capture, source, options);
  return std::move(parsed.capture);
}

}  // namespace

absl::StatusOr<Capture> ParseTrace(std::string_view json,
                                   std::string_view source) {
  return ParseTrace(json, source, TraceReadOptions());
}

// Memory runs out in the readers' containers (a capture is a few times its
// trace); the caller gets an error, not an exception.
absl::StatusOr<Capture> ParseTrace(std::string_view json,
                                   std::string_view source,
                                   const TraceReadOptions& options) {
  try {
    return ParseAnyTrace(json, source, options);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        internal::Cat("out of memory reading ", source, " at byte ",
                      json.size(), " (its whole size: parsing it)"));
  }
}

absl::StatusOr<Capture> ReadTrace(const std::string& path) {
  return ReadTrace(path, TraceReadOptions());
}

absl::StatusOr<Capture> ReadTrace(const std::string& path,
                                  const TraceReadOptions& options) {
  SPANPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseTrace(text, path, options);
}

std::string_view ArtifactKindName(ArtifactKind kind) {
  return kind == ArtifactKind::kSummary ? "summary" : "trace";
}

absl::StatusOr<ArtifactKind> DetectArtifactKind(std::string_view json,
                                                std::string_view source) {
  SPANPROF_ASSIGN_OR_RETURN(InputKind kind,
                            internal::DetectInputKind(json, source));
  if (kind == InputKind::kSummary) return ArtifactKind::kSummary;
  if (kind == InputKind::kStreamFile) return StreamFileError(source);
  return ArtifactKind::kTrace;
}

}  // namespace spanprof::analysis
