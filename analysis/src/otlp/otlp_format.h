// otlp_format.h — the one description of what spanprof writes in OTLP/JSON
// (private to the analysis library): the enum values of
// opentelemetry/proto/trace/v1/trace.proto that spanprof uses, and every
// attribute key. docs/formats.md ("OTLP/JSON export") documents them; the
// writer and its tests compile against these constants.
#ifndef SPANPROF_ANALYSIS_SRC_OTLP_OTLP_FORMAT_H_
#define SPANPROF_ANALYSIS_SRC_OTLP_OTLP_FORMAT_H_

#include <cstdint>
#include <string_view>

namespace spanprof::analysis::otlp {

// Span.SpanKind: every spanprof span is an in-process operation. (The
// OTLP/JSON encoding writes enums as their integer values.)
inline constexpr int64_t kSpanKindInternal = 1;
// Status.StatusCode.
inline constexpr int64_t kStatusCodeError = 2;

// The InstrumentationScope name.
inline constexpr std::string_view kScopeName = "spanprof";

inline constexpr std::string_view kExceptionStatusMessage =
    "the span was left by an exception";

// Resource attributes (OpenTelemetry semantic conventions, then spanprof's).
inline constexpr std::string_view kServiceName = "service.name";
inline constexpr std::string_view kUnknownService = "unknown_service";
inline constexpr std::string_view kHostName = "host.name";
inline constexpr std::string_view kProcessPid = "process.pid";
inline constexpr std::string_view kSdkName = "telemetry.sdk.name";
inline constexpr std::string_view kSdkLanguage = "telemetry.sdk.language";
inline constexpr std::string_view kSdkVersion = "telemetry.sdk.version";
inline constexpr std::string_view kSdkLanguageCpp = "cpp";
inline constexpr std::string_view kClock = "spanprof.clock";
inline constexpr std::string_view kDroppedEvents = "spanprof.dropped_events";
inline constexpr std::string_view kComplete = "spanprof.complete";

// Span attributes.
inline constexpr std::string_view kThreadId = "thread.id";
inline constexpr std::string_view kThreadName = "thread.name";
// A site's tags (spanprof::kTagFields), each set one as this prefix + its
// name: "spanprof.phase", "spanprof.dtype".
inline constexpr std::string_view kTagAttributePrefix = "spanprof.";
inline constexpr std::string_view kHeartbeats = "spanprof.heartbeats";
inline constexpr std::string_view kAllocCount = "spanprof.alloc_count";
inline constexpr std::string_view kAllocBytes = "spanprof.alloc_bytes";
inline constexpr std::string_view kUnfinished = "spanprof.unfinished";
// The span was open when the program ended the session (exit(),
// FinishSession()): it ends then, a normal end.
inline constexpr std::string_view kOpenAtExit = "spanprof.open_at_exit";
inline constexpr std::string_view kRerooted = "spanprof.rerooted";
inline constexpr std::string_view kException = "spanprof.exception";
// A complete or enrich hook of the span threw (its message: the string
// argument spanprof.arg.hook_error).
inline constexpr std::string_view kHookFailed = "spanprof.hook_failed";
// Prefixes of a span's numeric arguments (`SPANPROF_ARG`) and named
// counters' self counts (`SPANPROF_COUNT`): `spanprof.arg.size`,
// `spanprof.count.bytes_copied`.
inline constexpr std::string_view kArgPrefix = "spanprof.arg.";
inline constexpr std::string_view kCountPrefix = "spanprof.count.";

}  // namespace spanprof::analysis::otlp

#endif  // SPANPROF_ANALYSIS_SRC_OTLP_OTLP_FORMAT_H_
