// trace_format.h — the one description of the trace layout that
// `TraceToJson()` writes (private to the analysis library): the schema, the
// metadata fields in their order, the flag names, the micros text form, and
// the pieces of an X event's line. The writer renders with these and the
// fast reader matches bytes against the same ones, so a layout change cannot
// reach one side only. docs/formats.md ("Trace") explains the format.
//
// The names every format shares (the invalid site, the default category,
// the flag names) are in model/capture_format.h, which it includes.
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_TRACE_FORMAT_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_TRACE_FORMAT_H_

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include "model/capture_format.h"
#include "spanprof/capture.h"
#include "spanprof/internal/parse_int.h"

namespace spanprof::analysis::internal {

inline constexpr std::string_view kTraceSchema = "spanprof.trace";
inline constexpr int64_t kTraceSchemaVersion = 1;

// How the trace document is laid out (the writer's `JsonWriter::Options`):
// no indentation, and one line per element of the top-level object and of
// traceEvents, so one event per line.
inline constexpr int kTraceIndent = 0;
inline constexpr int kTraceLineDepth = 2;
// What that layout writes before the first event, and how an M event's line
// starts.
inline constexpr std::string_view kTraceHead = "{\n\"traceEvents\":[\n";
inline constexpr std::string_view kMetaEventHead = "{\"ph\":\"M\"";

// The top-level object's fields, in order.
inline constexpr std::array<std::string_view, 3> kRootKeys = {
    "traceEvents", "displayTimeUnit", "metadata"};

// An M event's fields, in order.
inline constexpr std::array<std::string_view, 6> kMetaEventKeys = {
    "ph", "name", "pid", "tid", "ts", "args"};

// An X event's fields, in order (bind_id and one of flow_in / flow_out only
// for a span in a cross-thread flow).
enum SpanEventField : size_t {
  kEvPh,
  kEvName,
  kEvCat,
  kEvPid,
  kEvTid,
  kEvTs,
  kEvDur,
  kEvBindId,
  kEvFlowIn,
  kEvFlowOut,
  kEvArgs,
};
inline constexpr std::array<std::string_view, 11> kSpanEventKeys = {
    "ph",  "name",    "cat",     "pid",      "tid", "ts",
    "dur", "bind_id", "flow_in", "flow_out", "args"};

// An X event's args, in order; the first six are always there, the tags
// only when set, the alloc counters only when measured, flags only when
// set, the user's numeric arguments (a nested "args") only when recorded,
// and the named counters' self counts (a nested "counters") only when the
// span counted something.
enum SpanArgField : size_t {
  kArgSpanId,
  kArgParentId,
  kArgDepth,
  kArgHeartbeats,
  kArgSite,
  kArgThread,
  kArgPhase,
  kArgModule,
  kArgActivity,
  kArgBackend,
  kArgDtype,
  kArgDevice,
  kArgAllocCount,
  kArgAllocBytes,
  kArgFlags,
  kArgUserArgs,
  kArgCounters,
};
inline constexpr std::array<std::string_view, 17> kSpanArgKeys = {
    "span_id",     "parent_id",   "depth",    "heartbeats", "site",    "thread",
    "phase",       "module",      "activity", "backend",    "dtype",   "device",
    "alloc_count", "alloc_bytes", "flags",    "args",       "counters"};
// An event's tags are its args kArgPhase.. in kTagFields order.
static_assert([] {
  for (size_t i = 0; i < kTagFields.size(); ++i) {
    if (kSpanArgKeys[kArgPhase + i] != kTagFields[i].name) return false;
  }
  return kArgPhase + kTagFields.size() == kArgDevice + 1;
}());
// `metadata`'s fields, in the order the writer writes them.
enum MetadataField : size_t {
  kMetaSchema,
  kMetaSchemaVersion,
  kMetaSpanprofVersion,
  kMetaProcessName,
  kMetaPid,
  kMetaClock,
  kMetaWallClockAnchorNs,
  kMetaWallClockUncertaintyNs,
  kMetaHost,
  kMetaTraceId,
  kMetaRemoteParentSpanId,
  kMetaSpanIdSeed,
  kMetaExportedSpanIds,
  kMetaWindowNs,
  kMetaEventLimit,
  kMetaOverflowPolicy,
  kMetaDroppedEvents,
  kMetaDroppedBySite,
  kMetaDroppedArgs,
  kMetaArgDrops,
  kMetaFailedPrepares,
  kMetaFinishedNormally,
  kMetaEndReason,
  kMetaOverheadNsPerSpan,
  kMetaAllocMeasured,
  kMetaProcessResources,
  kMetaProcesses,
  kMetaThreads,
  kMetaSites,
};
inline constexpr std::array<std::string_view, 29> kMetadataKeys = {
    "schema",
    "schema_version",
    "spanprof_version",
    "process_name",
    "pid",
    "clock",
    "wall_clock_anchor_ns",
    "wall_clock_uncertainty_ns",
    "host",
    "trace_id",
    "remote_parent_span_id",
    "span_id_seed",
    "exported_span_ids",
    "window_ns",
    "event_limit",
    "overflow_policy",
    "dropped_events",
    "dropped_by_site",
    "dropped_args",
    "arg_drops",
    "failed_prepares",
    "finished_normally",
    "end_reason",
    "overhead_ns_per_span",
    "alloc_measured",
    "process_resources",
    "processes",
    "threads",
    "sites",
};
// The objects of metadata.threads, metadata.sites and
// metadata.dropped_by_site. A thread's "process" (the index of its process in
// metadata.processes) is written exactly when the capture is merged.
inline constexpr std::array<std::string_view, 4> kThreadKeys = {
    "tid", "name", "sort_index", "process"};
// The objects of metadata.processes (a merged capture's ProcessInfo, in the
// order of its fields), written only for a merged capture.
enum ProcessField : size_t {
  kProcPid,
  kProcProcessName,
  kProcHost,
  kProcClock,
  kProcTraceId,
  kProcWallClockAnchorNs,
  kProcWallClockUncertaintyNs,
  kProcTimeOffsetNs,
  kProcWindowNs,
  kProcRemoteParentSpanId,
  kProcSpanIdSeed,
  kProcSpanIdOffset,
  kProcExportedSpanIds,
};
inline constexpr std::array<std::string_view, 13> kProcessKeys = {
    "pid",
    "process_name",
    "host",
    "clock",
    "trace_id",
    "wall_clock_anchor_ns",
    "wall_clock_uncertainty_ns",
    "time_offset_ns",
    "window_ns",
    "remote_parent_span_id",
    "span_id_seed",
    "span_id_offset",
    "exported_span_ids",
};
// A site object's fields; the first four are always written, the key fields
// added with span hooks (backend, dtype, device) only when set, so traces
// written before them read unchanged (missing = empty).
// The name, then the tags (kTagFields).
inline constexpr std::array<std::string_view, 1 + kTagFields.size()> kSiteKeys =
    [] {
      std::array<std::string_view, 1 + kTagFields.size()> keys{"name"};
      for (size_t i = 0; i < kTagFields.size(); ++i) {
        keys[i + 1] = kTagFields[i].name;
      }
      return keys;
    }();
inline constexpr size_t kSiteAlwaysWritten = 4;
// The `Site` member that field `field` of kSiteKeys names.
inline const std::string& SiteField(const Site& site, size_t field) {
  return field == 0 ? site.name : site.*kTagFields[field - 1].site;
}
inline std::string& SiteField(Site& site, size_t field) {
  return field == 0 ? site.name : site.*kTagFields[field - 1].site;
}
// A truncated string argument's object in an event's "args".
inline constexpr std::array<std::string_view, 2> kTruncatedTextKeys = {
    "text", "truncated"};
// The objects of metadata.exported_span_ids.
inline constexpr std::array<std::string_view, 2> kExportedSpanIdKeys = {
    "span", "external_id"};
// A metadata.dropped_by_site object: "site", the site's fields as in
// kSiteKeys (the same written-when-set rule), "count".
inline constexpr std::array<std::string_view, kSiteKeys.size() + 2> kDropKeys =
    [] {
      std::array<std::string_view, kSiteKeys.size() + 2> keys{"site"};
      for (size_t i = 0; i < kSiteKeys.size(); ++i) keys[i + 1] = kSiteKeys[i];
      keys.back() = "count";
      return keys;
    }();
inline constexpr size_t kDropSite = 0;
inline constexpr size_t kDropCount = kDropKeys.size() - 1;
static_assert(kDropKeys.size() == kSiteKeys.size() + 2);

// A metadata.arg_drops object (Capture::ArgDrop): "site" (an index into
// metadata.sites, or null), "name", "kind" ("arg" or "count"), "reason" (one
// of kArgDropReasons), "count".
inline constexpr std::array<std::string_view, 5> kArgDropKeys = {
    "site", "name", "kind", "reason", "count"};
inline constexpr std::array<std::string_view, 7> kArgDropReasons = {
    "cap",           "side_budget", "no_open_span", "span_left_open",
    "counter_limit", "arg_limit",   "unknown"};

// An X event's line, in order:
//
//   SiteFragments::head  ThreadFragment  kLineTs<micros>  kLineDur<micros>
//   [kLineBindId<id> (kLineFlowIn | kLineFlowOut)]
//   kLineSpanId<id>  kLineParentId<id>  kLineDepth<n>  kLineHeartbeats<n>
//   kLineSite<n>  kLineThread<n>  SiteFragments::tags
//   [kLineAllocCount<n> kLineAllocBytes<n>]
//   [kLineFlags "name",... ']']  [kLineUserArgs "key":value,... '}']
//   [kLineCounters "name":count,... '}']  kLineEnd
inline constexpr std::string_view kLineHead = "{\"ph\":\"X\",\"name\":";
inline constexpr std::string_view kLineCat = ",\"cat\":";
inline constexpr std::string_view kLinePid = ",\"pid\":";
inline constexpr std::string_view kLineTid = ",\"tid\":";
inline constexpr std::string_view kLineTs = ",\"ts\":";
inline constexpr std::string_view kLineDur = ",\"dur\":";
inline constexpr std::string_view kLineBindId = ",\"bind_id\":";
inline constexpr std::string_view kLineFlowIn = ",\"flow_in\":true";
inline constexpr std::string_view kLineFlowOut = ",\"flow_out\":true";
inline constexpr std::string_view kLineSpanId = ",\"args\":{\"span_id\":";
inline constexpr std::string_view kLineParentId = ",\"parent_id\":";
inline constexpr std::string_view kLineDepth = ",\"depth\":";
inline constexpr std::string_view kLineHeartbeats = ",\"heartbeats\":";
inline constexpr std::string_view kLineSite = ",\"site\":";
inline constexpr std::string_view kLineThread = ",\"thread\":";
inline constexpr std::string_view kLineAllocCount = ",\"alloc_count\":";
inline constexpr std::string_view kLineAllocBytes = ",\"alloc_bytes\":";
inline constexpr std::string_view kLineFlags = ",\"flags\":[";
inline constexpr std::string_view kLineUserArgs = ",\"args\":{";
inline constexpr std::string_view kLineCounters = ",\"counters\":{";
inline constexpr std::string_view kLineEnd = "}}";

// `IsKeyFragment()`: `fragment` is `prefix` + `"key":`, so that the line's
// fragments and the field lists above cannot drift apart.
constexpr bool IsKeyFragment(std::string_view fragment, std::string_view key,
                             std::string_view prefix = ",") {
  return fragment.size() == prefix.size() + key.size() + 3 &&
         fragment.substr(0, prefix.size()) == prefix &&
         fragment[prefix.size()] == '"' &&
         fragment.substr(prefix.size() + 1, key.size()) == key &&
         fragment.substr(prefix.size() + 1 + key.size()) == "\":";
}
static_assert(IsKeyFragment(kLineHead, kSpanEventKeys[kEvName],
                            "{\"ph\":\"X\","));
static_assert(kSpanEventKeys[kEvPh] == "ph");
static_assert(IsKeyFragment(kLineCat, kSpanEventKeys[kEvCat]));
static_assert(IsKeyFragment(kLinePid, kSpanEventKeys[kEvPid]));
static_assert(IsKeyFragment(kLineTid, kSpanEventKeys[kEvTid]));
static_assert(IsKeyFragment(kLineTs, kSpanEventKeys[kEvTs]));
static_assert(IsKeyFragment(kLineDur, kSpanEventKeys[kEvDur]));
static_assert(IsKeyFragment(kLineBindId, kSpanEventKeys[kEvBindId]));
static_assert(IsKeyFragment(kLineFlowIn.substr(0, kLineFlowIn.size() - 4),
                            kSpanEventKeys[kEvFlowIn]));
static_assert(IsKeyFragment(kLineFlowOut.substr(0, kLineFlowOut.size() - 4),
                            kSpanEventKeys[kEvFlowOut]));
static_assert(IsKeyFragment(kLineSpanId, kSpanArgKeys[kArgSpanId],
                            ",\"args\":{"));
static_assert(kSpanEventKeys[kEvArgs] == "args");
static_assert(IsKeyFragment(kLineParentId, kSpanArgKeys[kArgParentId]));
static_assert(IsKeyFragment(kLineDepth, kSpanArgKeys[kArgDepth]));
static_assert(IsKeyFragment(kLineHeartbeats, kSpanArgKeys[kArgHeartbeats]));
static_assert(IsKeyFragment(kLineSite, kSpanArgKeys[kArgSite]));
static_assert(IsKeyFragment(kLineThread, kSpanArgKeys[kArgThread]));
static_assert(IsKeyFragment(kLineAllocCount, kSpanArgKeys[kArgAllocCount]));
static_assert(IsKeyFragment(kLineAllocBytes, kSpanArgKeys[kArgAllocBytes]));
static_assert(IsKeyFragment(kLineFlags.substr(0, kLineFlags.size() - 1),
                            kSpanArgKeys[kArgFlags]));
static_assert(IsKeyFragment(kLineUserArgs.substr(0, kLineUserArgs.size() - 1),
                            kSpanArgKeys[kArgUserArgs]));
static_assert(IsKeyFragment(kLineCounters.substr(0, kLineCounters.size() - 1),
                            kSpanArgKeys[kArgCounters]));

// `SiteFragments` is what an X event repeats of its site: `head` is the line
// up to the end of "cat" (`{"ph":"X","name":...,"cat":...`), `tags` the
// site's set tags in args (`,"phase":...,"module":...,"activity":...`, then
// "backend", "dtype", "device").
struct SiteFragments {
  std::string head;
  std::string tags;
};
SiteFragments RenderSiteFragments(const Site& site);

// `RenderThreadFragment()` is an X event's `,"pid":<pid>,"tid":<tid>`.
std::string RenderThreadFragment(int64_t pid, uint64_t tid);

// `AppendMicros()` appends ns as microseconds, `<ns/1000>.<3 digits>`, exactly
// (no floating point). Inline: the writer calls it twice per span.
inline void AppendMicros(std::string* out, int64_t ns) {
  // Magnitude in unsigned arithmetic, so INT64_MIN has one too.
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    out->push_back('-');
    magnitude = ~magnitude + 1;
  }
  char buffer[32];
  char* end = std::to_chars(buffer, buffer + 24, magnitude / 1000).ptr;
  const unsigned fraction = static_cast<unsigned>(magnitude % 1000);
  end[0] = '.';
  end[1] = static_cast<char>('0' + fraction / 100);
  end[2] = static_cast<char>('0' + fraction / 10 % 10);
  end[3] = static_cast<char>('0' + fraction % 10);
  out->append(buffer, static_cast<size_t>(end + 4 - buffer));
}

// `ParseMicros()` reads `-?(0|[1-9][0-9]*)(.[0-9]{1,3})?` microseconds
// exactly into nanoseconds; false on any other text or beyond int64 ns.
// Inline: the fast reader calls it twice per span.
inline bool ParseMicros(std::string_view text, int64_t* ns) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  uint64_t micros = 0;
  const auto [int_end, ec] = spanprof::internal::ParseDigits(p, end, &micros);
  if (ec != std::errc() || (*p == '0' && int_end - p > 1)) return false;
  p = int_end;
  uint64_t fraction = 0;
  if (p != end && *p == '.') {
    ++p;
    int digits = 0;
    for (; digits < 3 && p != end && *p >= '0' && *p <= '9'; ++digits, ++p) {
      fraction = fraction * 10 + static_cast<uint64_t>(*p - '0');
    }
    if (digits == 0) return false;
    for (; digits < 3; ++digits) fraction *= 10;
  }
  if (p != end) return false;  // a 4th decimal, an exponent, junk
  uint64_t magnitude = 0;
  if (__builtin_mul_overflow(micros, uint64_t{1000}, &magnitude) ||
      __builtin_add_overflow(magnitude, fraction, &magnitude)) {
    return false;
  }
  // INT64_MIN's magnitude is one more than INT64_MAX.
  const uint64_t limit = static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0);
  if (magnitude > limit) return false;
  *ns = negative ? static_cast<int64_t>(0 - magnitude)
                 : static_cast<int64_t>(magnitude);
  return true;
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_TRACE_FORMAT_H_
