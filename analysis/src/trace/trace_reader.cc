// The strict trace reader: reads what `TraceToJson()` writes back into the
// exact `Capture`.
//
// `metadata` (threads, sites, caps, resources) is read first, with a forward
// search, so that each X event can be checked against it as it streams by:
// its name, category and tags must be those of its site, its tid that of its
// thread. `ts` and `dur` are parsed from their decimal text into integer
// nanoseconds, never through a double. The layout both this reader's fast
// path and the writer follow is described once, in trace_format.h.
#include "trace/trace_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "import/chrome_trace_reader.h"
#include "json/json_writer.h"
#include "json/strict_json.h"
#include "model/capture_order.h"
#include "model/group_by_arg.h"
#include "perfetto/perfetto_reader.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "spanprof/internal/end_reason.h"
#include "spanprof/internal/hex_id.h"
#include "spanprof/internal/parse_int.h"
#include "status_macros.h"
#include "summary/process_resources.h"
#include "trace/trace_format.h"

namespace spanprof::analysis {
namespace internal {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

// dropped_args is optional: traces written before it lack it (read as 0).
constexpr std::array<FieldSpec, kMetadataKeys.size()> kMetadataFields = [] {
  auto specs = RequiredFields(kMetadataKeys);
  specs[kMetaDroppedArgs].required = false;
  // Added with the multi-process anchors: older traces have none.
  specs[kMetaWallClockUncertaintyNs].required = false;
  specs[kMetaHost].required = false;
  // Added with span hooks and cross-process parents:
  // older traces have none.
  for (size_t f : {kMetaFailedPrepares, kMetaTraceId, kMetaRemoteParentSpanId,
                   kMetaSpanIdSeed, kMetaExportedSpanIds}) {
    specs[f].required = false;
  }
  // Only a merged capture has processes (and threads that name theirs).
  specs[kMetaProcesses].required = false;
  // Added with crash-safe streaming: older traces have none.
  specs[kMetaEndReason].required = false;
  return specs;
}();
constexpr std::array<FieldSpec, kThreadKeys.size()> kThreadFields = [] {
  auto specs = RequiredFields(kThreadKeys);
  specs[3].required = false;
  return specs;
}();
constexpr auto kProcessFields = RequiredFields(kProcessKeys);
// A site's backend, dtype and device (added with span hooks) are written
// only when set.
constexpr std::array<FieldSpec, kSiteKeys.size()> kSiteFields = [] {
  auto specs = RequiredFields(kSiteKeys);
  for (size_t f = kSiteAlwaysWritten; f < specs.size(); ++f) {
    specs[f].required = false;
  }
  return specs;
}();
constexpr std::array<FieldSpec, kDropKeys.size()> kDropFields = [] {
  auto specs = RequiredFields(kDropKeys);
  for (size_t f = kSiteAlwaysWritten + 1; f < kDropCount; ++f) {
    specs[f].required = false;
  }
  return specs;
}();
constexpr auto kExportedSpanIdFields = RequiredFields(kExportedSpanIdKeys);
constexpr auto kTruncatedTextFields = RequiredFields(kTruncatedTextKeys);

constexpr auto kRootFields = RequiredFields(kRootKeys);
constexpr auto kMetaEventFields = RequiredFields(kMetaEventKeys);

// An X event's flow binding, and all but the first six of its args, are
// optional.
constexpr std::array<FieldSpec, kSpanEventKeys.size()> kSpanEventFields = [] {
  auto specs = RequiredFields(kSpanEventKeys);
  for (size_t f : {kEvBindId, kEvFlowIn, kEvFlowOut}) {
    specs[f].required = false;
  }
  return specs;
}();
constexpr std::array<FieldSpec, kSpanArgKeys.size()> kSpanArgFields = [] {
  auto specs = RequiredFields(kSpanArgKeys);
  for (size_t f = kArgPhase; f < specs.size(); ++f) specs[f].required = false;
  return specs;
}();

template <typename T, typename U>
absl::Status Assign(absl::StatusOr<T> result, U& out) {
  if (!result.ok()) return result.status();
  out = static_cast<U>(*std::move(result));
  return absl::OkStatus();
}

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
  // Which optional tags the event carried (kTagFields order).
  std::array<std::optional<std::string_view>, kTagFields.size()> tags;
  bool has_alloc_count = false;
  bool has_alloc_bytes = false;
  SpanAllocs allocs;
};

class TraceReader {
 public:
  explicit TraceReader(std::string_view source) : json_(source) {}

  // `keep_events` false leaves `ParsedTrace::events` empty. When
  // `used_fast_path` is not null it tells whether `ReadInChunks()` read it.
  absl::StatusOr<ParsedTrace> Read(std::string_view text, bool keep_events,
                                   bool* used_fast_path = nullptr) {
    const bool fast = ReadInChunks(text, keep_events);
    if (used_fast_path != nullptr) *used_fast_path = fast;
    if (fast) return AssembleInOrder();
    capture_ = Capture();
    fast_spans_ = std::vector<Span>();
    fast_allocs_ = std::vector<SpanAllocs>();
    fast_args_ = std::vector<SpanArg>();
    events_ = std::vector<TraceEvent>();
    absl::Status status;
    {
      ParsedDocument document(text);
      status = ReadDocument(document);
    }
    if (!status.ok()) return Diagnose(text, std::move(status));
    return Assemble();
  }

 private:
  // `ChunkDocument` is one reused padded buffer and parser.
  class ChunkDocument {
   public:
    bool Load(std::string_view open, std::string_view body,
              std::string_view close) {
      const size_t size = open.size() + body.size() + close.size();
      if (size + simdjson::SIMDJSON_PADDING > capacity_) {
        capacity_ = size + simdjson::SIMDJSON_PADDING;
        buffer_ = std::make_unique<char[]>(capacity_);
      }
      char* out = buffer_.get();
      std::memcpy(out, open.data(), open.size());
      std::memcpy(out + open.size(), body.data(), body.size());
      std::memcpy(out + open.size() + body.size(), close.data(), close.size());
      std::memset(out + size, 0, simdjson::SIMDJSON_PADDING);
      return parser_.iterate(out, size, capacity_).get(document_) ==
             simdjson::SUCCESS;
    }
    simdjson::ondemand::document& document() { return document_; }

   private:
    std::unique_ptr<char[]> buffer_;
    size_t capacity_ = 0;
    simdjson::ondemand::parser parser_;
    simdjson::ondemand::document document_;
  };

  // The fast path, for a trace laid out as `TraceToJson()` writes it: one
  // event per line between `{\n"traceEvents":[\n` and a line that starts
  // with `],`. The events are parsed in chunks of whole lines, each wrapped
  // as `[...]` in one reused buffer, and `{` + the rest (displayTimeUnit and
  // metadata) is parsed first, so each event is checked against metadata as
  // it is read and only its `Span` is kept. Memory stays at one chunk's
  // worth instead of a padded copy, structural index and string buffer the
  // size of the whole trace.
  //
  // It is sound because a raw newline cannot occur inside a valid JSON
  // string: every cut is between values, and a cut inside a string (invalid
  // JSON) leaves a chunk with an unclosed string, which fails. Any failure,
  // or any other layout, returns false, and the trace is read again by the
  // one-pass reader below, which gives the error exactly as before.
  bool ReadInChunks(std::string_view text, bool keep_events) {
    if (text.size() > simdjson::SIMDJSON_MAXSIZE_BYTES ||
        text.substr(0, kTraceHead.size()) != kTraceHead) {
      return false;
    }
    const size_t events_end = FindEventsEnd(text);
    if (events_end == std::string_view::npos) return false;
    ChunkDocument chunk;
    if (!chunk.Load("{", text.substr(events_end + 3), "") ||
        !ReadTail(chunk).ok()) {
      return false;
    }
    SortTids();
    RenderExpectedText();
    // An X event is at least ~100 bytes: reserving by that bound touches
    // no memory that is not used.
    fast_spans_.reserve((events_end - kTraceHead.size()) / 100);
    const size_t spans_begin = SkipMetaEvents(text, events_end);
    size_t index = 0;
    if (!ReadMetaEvents(text.substr(0, spans_begin - 2), chunk, index,
                        keep_events)) {
      return false;
    }
    if (spans_begin >= events_end) return spans_begin == events_end + 2;
    return ReadSpanLines(text.substr(0, events_end), spans_begin, index,
                         keep_events);
  }

  // Where the line that closes traceEvents (the last one that starts with
  // "],") begins, at its '\n'; npos when there is none past the head.
  static size_t FindEventsEnd(std::string_view text) {
    size_t end = text.size();
    while (end > kTraceHead.size()) {
      const void* nl = memrchr(text.data(), '\n', end);
      if (nl == nullptr) return std::string_view::npos;
      const size_t at =
          static_cast<size_t>(static_cast<const char*>(nl) - text.data());
      if (text.substr(at + 1, 2) == "],") {
        return at <= kTraceHead.size() ? std::string_view::npos : at;
      }
      end = at;
    }
    return std::string_view::npos;
  }

  // Past the M events, which come first: where the first X event's line
  // starts (events_end + 2 when there is none).
  static size_t SkipMetaEvents(std::string_view text, size_t events_end) {
    size_t spans_begin = kTraceHead.size();
    while (spans_begin < events_end &&
           text.compare(spans_begin, kMetaEventHead.size(), kMetaEventHead) ==
               0) {
      const size_t nl = text.find(",\n", spans_begin);
      spans_begin = nl == std::string_view::npos || nl >= events_end
                        ? events_end + 2
                        : nl + 2;
    }
    return spans_begin;
  }

  // The M events, from the head up to the end of `text`, read with On
  // Demand in chunks of whole lines.
  bool ReadMetaEvents(std::string_view text, ChunkDocument& chunk,
                      size_t& index, bool keep_events) {
    constexpr size_t kChunk = size_t{256} << 10;
    const size_t meta_end = text.size();
    size_t pos = kTraceHead.size();
    while (pos < meta_end) {
      size_t cut = meta_end;  // one past the chunk's last byte
      if (meta_end - pos > kChunk) {
        // The last ",\n" at or before pos + kChunk, else the next one.
        std::string_view window = text.substr(pos, kChunk);
        size_t nl = window.rfind(",\n");
        if (nl == std::string_view::npos || nl == 0) {
          nl = text.find(",\n", pos + kChunk);
          nl = nl == std::string_view::npos ? meta_end - pos : nl - pos;
        }
        cut = pos + nl;
      }
      if (!chunk.Load("[", text.substr(pos, cut - pos), "]") ||
          !ReadEventChunk(chunk, index, keep_events).ok()) {
        return false;
      }
      pos = cut + 2;  // past ",\n"
    }
    return true;
  }

  // The X events from `begin` to the end of `text`, one line each, matched
  // against the writer's layout.
  bool ReadSpanLines(std::string_view text, size_t begin, size_t& index,
                     bool keep_events) {
    const char* p = text.data() + begin;
    const char* const spans_end = text.data() + text.size();
    while (true) {
      if (!ReadSpanLine(p, spans_end, index, keep_events)) return false;
      ++index;
      if (p == spans_end) return true;
      if (spans_end - p < 2 || p[0] != ',' || p[1] != '\n') return false;
      p += 2;
    }
  }

  // `sorted_tids_`: metadata.threads' (pid, tid), sorted, and
  // `sorted_pids_` the processes' pids, for ResolveMetaEvent().
  void SortTids() {
    sorted_tids_.clear();
    for (uint32_t t = 0; t < capture_.threads.size(); ++t) {
      sorted_tids_.emplace_back(ThreadPid(capture_, t),
                                capture_.threads[t].os_tid);
    }
    std::sort(sorted_tids_.begin(), sorted_tids_.end());
    sorted_pids_.clear();
    for (const ProcessInfo& process : capture_.processes) {
      sorted_pids_.push_back(process.pid);
    }
    if (sorted_pids_.empty()) sorted_pids_.push_back(capture_.pid);
    std::sort(sorted_pids_.begin(), sorted_pids_.end());
  }

  // What `TraceToJson()` writes for metadata's sites and threads, rendered
  // by the same functions (trace_format.h): an X event's text up to the end
  // of "cat", its tags in args, and its pid and tid. Each X line is compared
  // with these, byte for byte.
  void RenderExpectedText() {
    sites_.clear();
    sites_.reserve(capture_.sites.size());
    for (const Site& site : capture_.sites) {
      sites_.push_back(RenderSiteFragments(site));
    }
    thread_ids_.clear();
    thread_ids_.reserve(capture_.threads.size());
    for (uint32_t t = 0; t < capture_.threads.size(); ++t) {
      thread_ids_.push_back(RenderThreadFragment(ThreadPid(capture_, t),
                                                 capture_.threads[t].os_tid));
    }
  }

  // `LineCursor` matches the writer's text from `p` on; every function
  // returns false (the cursor then is anywhere) on the first byte that is
  // not the writer's layout.
  struct LineCursor {
    const char* p;
    const char* end;

    // Inlined, so that each constant literal is compared without a call.
    [[gnu::always_inline]] bool Literal(std::string_view text) {
      if (static_cast<size_t>(end - p) < text.size() ||
          std::memcmp(p, text.data(), text.size()) != 0) {
        return false;
      }
      p += text.size();
      return true;
    }
    bool Peek(char c) const { return p != end && *p == c; }
    static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

    // `-?(0|[1-9][0-9]*)` in [0, max] (no sign) or [-max - 1, max] (signed).
    [[gnu::always_inline]] bool Unsigned(uint64_t max, uint64_t* out) {
      uint64_t value = 0;
      const auto [next, ec] = spanprof::internal::ParseDigits(p, end, &value);
      if (ec != std::errc() || value > max || (*p == '0' && next - p > 1)) {
        return false;
      }
      p = next;
      *out = value;
      return true;
    }
    bool Signed(int64_t* out) {
      const bool negative = Peek('-');
      if (negative) ++p;
      constexpr auto kMax = static_cast<uint64_t>(INT64_MAX);
      uint64_t magnitude = 0;
      if (!Unsigned(negative ? kMax + 1 : kMax, &magnitude)) return false;
      *out = negative ? static_cast<int64_t>(0 - magnitude)
                      : static_cast<int64_t>(magnitude);
      return true;
    }
    template <typename T>
    bool Index(T* out) {
      uint64_t value = 0;
      if (!Unsigned(UINT32_MAX, &value)) return false;
      *out = static_cast<T>(value);
      return true;
    }
    // What `ReadMicros()` accepts, up to the next ','.
    [[gnu::always_inline]] bool Micros(int64_t* ns) {
      const char* start = p;
      while (p != end && (IsDigit(*p) || *p == '.' || *p == '-')) ++p;
      return ParseMicros(
          std::string_view(start, static_cast<size_t>(p - start)), ns);
    }
    // Past a string's closing quote, from just after its opening one. The
    // bytes skipped are checked later against the expected text.
    bool SkipString() {
      while (p != end) {
        const char c = *p++;
        if (c == '"') return true;
        if (c == '\\') {
          if (p == end) return false;
          ++p;
        }
      }
      return false;
    }
    // Digits and a sign, checked later against the expected text.
    void SkipInteger() {
      while (p != end && (IsDigit(*p) || *p == '-')) ++p;
    }
  };

  // One X event in the writer's layout into a span (and, with
  // `keep_events`, its `TraceEvent`), with the checks of `ResolveSpan()`.
  // Only what the strict reader would read to the same values is accepted.
  bool ReadSpanLine(const char*& line, const char* end, size_t index,
                    bool keep_events) {
    LineCursor in{line, end};
    Span span;
    TraceEvent event;
    if (!in.Literal(kLineHead) || !in.Literal("\"") || !in.SkipString() ||
        !in.Literal(kLineCat) || !in.Literal("\"") || !in.SkipString()) {
      return false;
    }
    const std::string_view head(line, static_cast<size_t>(in.p - line));
    const char* const ids_begin = in.p;
    if (!in.Literal(kLinePid)) return false;
    in.SkipInteger();
    if (!in.Literal(kLineTid)) return false;
    in.SkipInteger();
    const std::string_view ids(ids_begin,
                               static_cast<size_t>(in.p - ids_begin));
    if (!in.Literal(kLineTs) || !in.Micros(&event.ts_ns) ||
        !in.Literal(kLineDur) || !in.Micros(&event.dur_ns)) {
      return false;
    }
    constexpr auto kMax = static_cast<uint64_t>(INT64_MAX);
    if (in.Literal(kLineBindId) && !ReadFlowBinding(in, event)) return false;
    if (!in.Literal(kLineSpanId) || !in.Unsigned(kMax, &span.id) ||
        span.id == 0 || !in.Literal(kLineParentId) ||
        !in.Unsigned(kMax, &span.parent_id) || !in.Literal(kLineDepth) ||
        !in.Index(&span.depth) || !in.Literal(kLineHeartbeats) ||
        !in.Index(&span.heartbeats) || !in.Literal(kLineSite) ||
        !in.Index(&span.site) || !in.Literal(kLineThread) ||
        !in.Index(&span.thread)) {
      return false;
    }
    if (span.site >= capture_.sites.size() ||
        span.thread >= capture_.threads.size() ||
        head != sites_[span.site].head || ids != thread_ids_[span.thread] ||
        !in.Literal(sites_[span.site].tags)) {
      return false;
    }
    SpanAllocs allocs;
    if (capture_.alloc_measured &&
        (!in.Literal(kLineAllocCount) || !in.Signed(&allocs.count) ||
         !in.Literal(kLineAllocBytes) || !in.Signed(&allocs.bytes))) {
      return false;
    }
    if (in.Literal(kLineFlags) && !ReadFlagList(in, span.flags)) {
      return false;
    }
    const size_t first_arg = fast_args_.size();
    if ((in.Literal(kLineUserArgs) && !ReadArgList(in)) ||
        (in.Literal(kLineCounters) && !ReadCounterList(in))) {
      fast_args_.resize(first_arg);
      return false;
    }
    if (!in.Literal(kLineEnd) ||
        __builtin_add_overflow(event.ts_ns, event.dur_ns, &span.end_ns)) {
      return false;
    }
    span.start_ns = event.ts_ns;
    if (fast_args_.size() != first_arg) {
      if (fast_args_.size() > UINT32_MAX ||
          fast_args_.size() - first_arg > kMaxSpanArgs) {
        return false;
      }
      span.first_arg = static_cast<uint32_t>(first_arg);
      span.arg_count = static_cast<uint16_t>(fast_args_.size() - first_arg);
    }
    fast_spans_.push_back(span);
    if (capture_.alloc_measured) fast_allocs_.push_back(allocs);
    if (keep_events) KeepSpanEvent(event, span, index);
    line = in.p;
    return true;
  }

  // After `,"bind_id":`: the id and the flow direction.
  __attribute__((always_inline)) static bool ReadFlowBinding(
      LineCursor& in, TraceEvent& event) {
    event.has_bind_id = true;
    if (!in.Unsigned(static_cast<uint64_t>(INT64_MAX), &event.bind_id)) {
      return false;
    }
    if (in.Literal(kLineFlowIn)) {
      event.flow_in = true;
    } else if (in.Literal(kLineFlowOut)) {
      event.flow_out = true;
    } else {
      return false;
    }
    return true;
  }

  void KeepSpanEvent(TraceEvent& event, const Span& span, size_t index) {
    event.index = index;
    event.is_span = true;
    event.pid = ThreadPid(capture_, span.thread);
    event.tid = static_cast<int64_t>(capture_.threads[span.thread].os_tid);
    event.span_id = span.id;
    events_.push_back(event);
  }

  // After `"flags":[`: the flag names, none twice, and `]`.
  static bool ReadFlagList(LineCursor& in, uint16_t& flags) {
    if (in.Literal("]")) return true;
    do {
      bool known = false;
      for (const auto& [bit, name] : kFlagNames) {
        if (in.Peek('"') &&
            in.end - in.p > static_cast<ptrdiff_t>(name.size()) + 1 &&
            std::memcmp(in.p + 1, name.data(), name.size()) == 0 &&
            in.p[name.size() + 1] == '"') {
          if ((flags & bit) != 0) return false;
          flags |= bit;
          in.p += name.size() + 2;
          known = true;
          break;
        }
      }
      if (!known) return false;
    } while (in.Literal(","));
    return in.Literal("]");
  }

  // `"text"` without escapes or control characters, valid UTF-8.
  static bool ReadPlainString(LineCursor& in, std::string_view* text) {
    if (!in.Literal("\"")) return false;
    const char* start = in.p;
    bool ascii = true;
    while (in.p != in.end && *in.p != '"') {
      const auto c = static_cast<unsigned char>(*in.p);
      if (c < 0x20 || c == '\\') return false;
      ascii &= c < 0x80;
      ++in.p;
    }
    *text = std::string_view(start, static_cast<size_t>(in.p - start));
    if (!in.Literal("\"")) return false;
    return ascii || simdjson::validate_utf8(text->data(), text->size());
  }

  // `"key":` of an args or counters entry, for a key as `ReadPlainString()`
  // reads it (others go to the strict reader).
  static bool ReadEntryKey(LineCursor& in, std::string_view* key_text) {
    return ReadPlainString(in, key_text) && in.Literal(":");
  }

  // After the user `"args":{`: keys and values as `ReadUserArgs()` reads
  // them, and `}`.
  bool ReadArgList(LineCursor& in) {
    if (in.Literal("}")) return true;
    do {
      std::string_view key_text;
      if (!ReadEntryKey(in, &key_text)) return false;
      SpanArg& arg = fast_args_.emplace_back();
      arg.key.assign(key_text.data(), key_text.size());
      if (in.Literal("null")) {
        arg.is_double = true;
        arg.double_value = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      if (in.p != in.end && *in.p == '"') {
        // A string without escapes (others go to the strict reader).
        std::string_view text;
        if (!ReadPlainString(in, &text) || text.size() > kMaxArgTextBytes) {
          return false;
        }
        arg.is_string = true;
        arg.text.assign(text.data(), text.size());
        continue;
      }
      const char* start = in.p;
      while (in.p != in.end && *in.p != ',' && *in.p != '}') ++in.p;
      const std::string_view raw(start, static_cast<size_t>(in.p - start));
      if (!StrictJson::IsJsonNumber(raw)) return false;
      if (raw.find_first_of(".eE") == std::string_view::npos) {
        if (StrictJson::ParseInteger(raw, &arg.int_value) !=
            StrictJson::IntegerForm::kOk) {
          return false;
        }
        continue;
      }
      arg.is_double = true;
      const auto [last, ec] = std::from_chars(
          raw.data(), raw.data() + raw.size(), arg.double_value);
      if (ec != std::errc() || last != raw.data() + raw.size()) return false;
    } while (in.Literal(","));
    return in.Literal("}");
  }

  // After `"counters":{`: names and integer counts as `ReadCounters()`
  // accepts them (non-empty names, none twice), and `}`.
  bool ReadCounterList(LineCursor& in) {
    const size_t first = fast_args_.size();
    if (in.Literal("}")) return true;
    do {
      std::string_view key;
      if (!ReadEntryKey(in, &key) || key.empty()) return false;
      for (size_t a = first; a < fast_args_.size(); ++a) {
        if (fast_args_[a].key == key) return false;
      }
      const char* start = in.p;
      while (in.p != in.end && *in.p != ',' && *in.p != '}') ++in.p;
      const std::string_view raw(start, static_cast<size_t>(in.p - start));
      int64_t count = 0;
      if (!StrictJson::IsJsonNumber(raw) ||
          StrictJson::ParseInteger(raw, &count) !=
              StrictJson::IntegerForm::kOk) {
        return false;
      }
      SpanArg& counter = fast_args_.emplace_back();
      counter.key.assign(key.data(), key.size());
      counter.int_value = count;
      counter.is_counter = true;
    } while (in.Literal(","));
    return in.Literal("}");
  }

  static bool AtEnd(simdjson::ondemand::document& document) {
    const char* location = nullptr;
    return document.current_location().get(location) != simdjson::SUCCESS;
  }

  // `{` + what follows traceEvents: displayTimeUnit and metadata.
  absl::Status ReadTail(ChunkDocument& chunk) {
    object root;
    if (chunk.document().get_object().get(root) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("not an object");
    }
    const JsonPath path = JsonPath::Root();
    constexpr std::array<FieldSpec, 2> kTailFields = {
        {kRootFields[1], kRootFields[2]}};
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read =
            json_.ReadObject(root, path, kTailFields,
                             [&](size_t field, value& v, const JsonPath& p) {
                               return ReadRootField(field + 1, v, p);
                             });
        !read.ok())
      return read;
    if (!AtEnd(chunk.document())) {
      return absl::InvalidArgumentError("content after the object");
    }
    return absl::OkStatus();
  }

  absl::Status ReadEventChunk(ChunkDocument& chunk, size_t& index,
                              bool keep_events) {
    array events;
    if (chunk.document().get_array().get(events) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("not an array");
    }
    const JsonPath root = JsonPath::Root();
    const JsonPath path = root.Field("traceEvents");
    PendingSpan pending;
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read = json_.ForEachElement(
            events, path,
            [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
              TraceEvent event;
              bool is_span = false;
              std::vector<SpanArg> args = std::move(pending.args);
              args.clear();  // keeps its capacity for the next span
              pending = PendingSpan();
              pending.args = std::move(args);
              SPANPROF_RETURN_IF_ERROR(
                  ReadEvent(index, ev, ep, event, pending, is_span));
              if (is_span) {
                SPANPROF_RETURN_IF_ERROR(ResolveSpan(path, pending, event));
                Span& span = fast_spans_.emplace_back(pending.span);
                if (capture_.alloc_measured) {
                  fast_allocs_.push_back(pending.allocs);
                }
                if (!pending.args.empty()) {
                  if (pending.args.size() > kMaxSpanArgs) {
                    return json_.Error(ep, Cat("more than ", kMaxSpanArgs,
                                               " arguments on one span"));
                  }
                  span.first_arg = static_cast<uint32_t>(fast_args_.size());
                  span.arg_count = static_cast<uint16_t>(pending.args.size());
                  for (SpanArg& arg : pending.args) {
                    fast_args_.push_back(std::move(arg));
                  }
                  if (fast_args_.size() > UINT32_MAX) {
                    return absl::InvalidArgumentError("too many arguments");
                  }
                }
              } else {
                SPANPROF_RETURN_IF_ERROR(ResolveMetaEvent(path, event));
              }
              if (keep_events) events_.push_back(event);
              ++index;
              return absl::OkStatus();
            });
        !read.ok())
      return read;
    if (!AtEnd(chunk.document())) {
      return absl::InvalidArgumentError("content after the array");
    }
    return absl::OkStatus();
  }

  // The fast path's result: the spans were read in file order; the capture
  // wants (thread, start_ns, depth), ties by id, then file order.
  ParsedTrace AssembleInOrder() {
    ParsedTrace out;
    out.capture = std::move(capture_);
    MoveSpansInCaptureOrder(fast_spans_, fast_allocs_, fast_args_, out.capture);
    out.events = std::move(events_);
    return out;
  }

  // One pass over the document; then the checks that need metadata, while
  // the document (and so every string view) is still alive.
  absl::Status ReadDocument(ParsedDocument& document) {
    SPANPROF_ASSIGN_OR_RETURN(object root, document.Start(json_));
    const JsonPath path = JsonPath::Root();
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read =
            json_.ReadObject(root, path, kRootFields,
                             [&](size_t field, value& v, const JsonPath& p) {
                               return ReadRootField(field, v, p);
                             });
        !read.ok())
      return read;
    SPANPROF_RETURN_IF_ERROR(document.Finish(json_));
    return Resolve();
  }

  absl::Status ReadRootField(size_t field, value& v, const JsonPath& p) {
    if (field == 0) return ReadEvents(v, p);
    if (field == 2) return ReadMetadata(v, p);
    SPANPROF_ASSIGN_OR_RETURN(std::string_view unit, json_.String(v, p));
    if (unit != "ns") {
      return json_.Error(p, Cat("expected \"ns\", got ", Quote(unit)));
    }
    return absl::OkStatus();
  }

  // After a failure, a second look at the top level names a summary, or
  // another tool's trace, as such (rather than by its first odd field).
  absl::Status Diagnose(std::string_view text, absl::Status error) const {
    ParsedDocument document(text);
    absl::StatusOr<object> root = document.Start(json_);
    if (!root.ok()) return error;
    const JsonPath path = JsonPath::Root();
    bool has_events = false;
    bool has_schema = false;
    bool has_metadata = false;
    std::optional<std::string_view> schema;
    bool walked = true;
    for (auto field_result : *root) {
      simdjson::ondemand::field field;
      std::string_view key;
      if (std::move(field_result).get(field) != simdjson::SUCCESS ||
          field.unescaped_key().get(key) != simdjson::SUCCESS) {
        walked = false;
        break;
      }
      has_events |= key == "traceEvents";
      has_schema |= key == "schema";
      if (key != "metadata") continue;
      has_metadata = true;
      object metadata;
      std::string_view found;
      if (field.value().get_object().get(metadata) == simdjson::SUCCESS &&
          metadata.find_field_unordered("schema").get_string().get(found) ==
              simdjson::SUCCESS) {
        schema = found;
      }
      walked = false;  // stop here: metadata comes last in our traces
      break;
    }
    if (walked && !has_events && has_schema) {
      return json_.Error(path,
                         "this is a spanprof summary, not a trace (it has "
                         "\"schema\" and no \"traceEvents\")");
    }
    if (walked && !has_events) {
      return json_.Error(path, "missing field \"traceEvents\" (not a trace)");
    }
    if (walked && !has_metadata) {
      return json_.Error(path,
                         "missing field \"metadata\" (not a spanprof trace; "
                         "a foreign Chrome trace, which the commands that "
                         "read traces read, but validate does not check)");
    }
    if (has_metadata && !schema.has_value()) {
      return json_.Error(path.Field("metadata"),
                         "no \"schema\" string (not a spanprof trace; "
                         "spanprof reads the traces it writes)");
    }
    if (schema.has_value() && *schema != kTraceSchema) {
      const JsonPath metadata = path.Field("metadata");
      return json_.Error(
          metadata.Field("schema"),
          Cat("expected \"", kTraceSchema, "\", got ", Quote(*schema)));
    }
    return error;
  }

  // The checks against metadata: every index in range, every repeated name,
  // category, tag, pid and tid equal to what metadata says.
  absl::Status Resolve() {
    const JsonPath root = JsonPath::Root();
    const JsonPath events = root.Field("traceEvents");
    SortTids();
    for (const TraceEvent& event : events_) {
      if (event.is_span) continue;
      SPANPROF_RETURN_IF_ERROR(ResolveMetaEvent(events, event));
    }
    for (PendingSpan& pending : spans_) {
      SPANPROF_RETURN_IF_ERROR(
          ResolveSpan(events, pending, events_[pending.event]));
    }
    return absl::OkStatus();
  }

  // Needs `sorted_tids_`.
  absl::Status ResolveMetaEvent(const JsonPath& events,
                                const TraceEvent& event) const {
    const JsonPath p = events.Index(event.index);
    if (!std::binary_search(sorted_pids_.begin(), sorted_pids_.end(),
                            event.pid)) {
      return json_.Error(
          p.Field("pid"),
          capture_.processes.empty()
              ? Cat(event.pid, " != metadata.pid (", capture_.pid, ")")
              : Cat(event.pid,
                    " is not the pid of any process in "
                    "metadata.processes"));
    }
    if (event.is_process_name) {
      if (event.tid != event.pid) {
        return json_.Error(p.Field("tid"), Cat("expected the pid (", event.pid,
                                               "), got ", event.tid));
      }
    } else if (event.tid < 0 ||
               !std::binary_search(
                   sorted_tids_.begin(), sorted_tids_.end(),
                   std::pair<int64_t, uint64_t>(
                       event.pid, static_cast<uint64_t>(event.tid)))) {
      return json_.Error(
          p.Field("tid"),
          Cat(event.tid, " is not the tid of any thread in metadata.threads",
              capture_.processes.empty() ? std::string()
                                         : Cat(" of pid ", event.pid)));
    }
    return absl::OkStatus();
  }

  absl::Status ResolveSpan(const JsonPath& events, PendingSpan& pending,
                           const TraceEvent& event) {
    const JsonPath p = events.Index(event.index);
    const JsonPath args_path = p.Field("args");
    Span& span = pending.span;
    if (static_cast<uint64_t>(pending.site) >= capture_.sites.size()) {
      return json_.Error(args_path.Field("site"),
                         Cat("site index ", pending.site, " out of range (",
                             capture_.sites.size(), " sites)"));
    }
    if (static_cast<uint64_t>(pending.thread) >= capture_.threads.size()) {
      return json_.Error(args_path.Field("thread"),
                         Cat("thread index ", pending.thread, " out of range (",
                             capture_.threads.size(), " threads)"));
    }
    span.site = static_cast<uint32_t>(pending.site);
    span.thread = static_cast<uint32_t>(pending.thread);
    if (const int64_t pid = ThreadPid(capture_, span.thread);
        event.pid != pid) {
      return json_.Error(
          p.Field("pid"),
          capture_.processes.empty()
              ? Cat(event.pid, " != metadata.pid (", pid, ")")
              : Cat(event.pid, " != the pid of metadata.threads[", span.thread,
                    "]'s process (", pid, ")"));
    }
    const Site& site = capture_.sites[span.site];
    if (pending.name != site.name) {
      return json_.Error(p.Field("name"),
                         Cat(Quote(pending.name), " != metadata.sites[",
                             span.site, "].name ", Quote(site.name)));
    }
    const std::string_view expected_cat =
        site.phase.empty() ? kDefaultCategory : std::string_view(site.phase);
    if (pending.cat != expected_cat) {
      return json_.Error(p.Field("cat"),
                         Cat("expected ", Quote(expected_cat),
                             " (the site's phase), got ", Quote(pending.cat)));
    }
    for (size_t t = 0; t < kTagFields.size(); ++t) {
      const std::optional<std::string_view>& got = pending.tags[t];
      const std::string& want = site.*kTagFields[t].site;
      const bool match =
          want.empty() ? !got.has_value() : (got.has_value() && *got == want);
      if (!match) {
        return json_.Error(
            args_path.Field(kTagFields[t].name),
            Cat("does not match metadata.sites[", span.site, "].",
                kTagFields[t].name, " ", Quote(want),
                want.empty() ? " (an unset tag is left out)" : ""));
      }
    }
    if (pending.has_alloc_count != capture_.alloc_measured ||
        pending.has_alloc_bytes != capture_.alloc_measured) {
      return json_.Error(
          args_path, capture_.alloc_measured
                         ? "alloc_count and alloc_bytes are required when "
                           "metadata.alloc_measured is true"
                         : "alloc_count and alloc_bytes must be left out when "
                           "metadata.alloc_measured is false");
    }
    const uint64_t thread_tid = capture_.threads[span.thread].os_tid;
    if (event.tid < 0 || static_cast<uint64_t>(event.tid) != thread_tid) {
      return json_.Error(p.Field("tid"),
                         Cat(event.tid, " != metadata.threads[", span.thread,
                             "].tid (", thread_tid, ")"));
    }
    return absl::OkStatus();
  }

  // A `dropped_by_site` entry, checked against metadata.sites once read.
  struct RawDrop {
    int64_t site = 0;
    Site names;
    uint64_t count = 0;
  };

  absl::Status ReadMetadata(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    std::vector<RawDrop> drops;
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read = json_.ReadObject(
            o, p, kMetadataFields,
            [&](size_t field, value& fv, const JsonPath& fp) {
              return ReadMetadataField(static_cast<MetadataField>(field), fv,
                                       fp, drops);
            });
        !read.ok())
      return read;
    SPANPROF_RETURN_IF_ERROR(ResolveThreadProcesses(p));
    return ResolveDrops(p.Field(kMetadataKeys[kMetaDroppedBySite]), drops);
  }

  // A merged capture's threads each name their process; a single-process
  // capture's name none.
  absl::Status ResolveThreadProcesses(const JsonPath& metadata) const {
    const JsonPath threads = metadata.Field(kMetadataKeys[kMetaThreads]);
    const size_t processes = capture_.processes.size();
    for (size_t t = 0; t < capture_.threads.size(); ++t) {
      const JsonPath tp = threads.Index(t);
      const bool has = thread_has_process_[t] != 0;
      if (processes == 0 && has) {
        return json_.Error(tp.Field(kThreadKeys[3]),
                           "a thread names its process only in a merged "
                           "trace (one with metadata.processes)");
      }
      if (processes != 0 && !has) {
        return json_.Error(tp, Cat("missing field \"", kThreadKeys[3],
                                   "\" (the trace has metadata.processes)"));
      }
      if (processes != 0 && capture_.threads[t].process >= processes) {
        return json_.Error(tp.Field(kThreadKeys[3]),
                           Cat("process index ", capture_.threads[t].process,
                               " out of range (", processes, " processes)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadMetadataField(MetadataField field, value& fv,
                                 const JsonPath& fp,
                                 std::vector<RawDrop>& drops) {
    Capture& c = capture_;
    switch (field) {
      case kMetaSchema:
        return CheckTraceSchema(fv, fp);
      case kMetaSchemaVersion:
        return CheckTraceSchemaVersion(fv, fp);
      case kMetaSpanprofVersion:
        return ReadString(fv, fp, c.spanprof_version);
      case kMetaProcessName:
        return ReadString(fv, fp, c.process_name);
      case kMetaPid:
        return Assign(json_.NonNegative(fv, fp), c.pid);
      case kMetaClock:
        return ReadClock(fv, fp, c.clock);
      case kMetaWallClockAnchorNs:
        return Assign(json_.Int(fv, fp, INT64_MIN, INT64_MAX),
                      c.wall_clock_anchor_ns);
      case kMetaWallClockUncertaintyNs:
        return Assign(json_.NonNegative(fv, fp), c.wall_clock_uncertainty_ns);
      case kMetaHost:
        return ReadString(fv, fp, c.host);
      case kMetaTraceId:
        return ReadTraceId(fv, fp, c.trace_id);
      case kMetaRemoteParentSpanId:
        return ReadHexId(fv, fp, /*allow_zero=*/true, c.remote_parent_span_id);
      case kMetaSpanIdSeed:
        return ReadHexId(fv, fp, /*allow_zero=*/true, c.span_id_seed);
      case kMetaExportedSpanIds:
        return ReadExportedSpanIds(fv, fp, c.exported_span_ids);
      case kMetaProcesses:
        return ReadProcesses(fv, fp);
      case kMetaWindowNs:
        return Assign(json_.NonNegative(fv, fp), c.window_ns);
      case kMetaEventLimit:
        return Assign(json_.Unsigned(fv, fp), c.event_limit);
      case kMetaOverflowPolicy:
        return ReadOneOf(fv, fp, "drop", "ring", c.overflow_policy);
      case kMetaDroppedEvents:
        return Assign(json_.Unsigned(fv, fp), c.dropped_events);
      case kMetaDroppedBySite:
        return ReadDrops(fv, fp, drops);
      case kMetaDroppedArgs:
        return Assign(json_.Unsigned(fv, fp), c.dropped_args);
      case kMetaFailedPrepares:
        return Assign(json_.Unsigned(fv, fp), c.failed_prepares);
      case kMetaFinishedNormally:
        return ReadFinishedNormally(fv, fp, c);
      case kMetaEndReason:
        return ReadEndReason(fv, fp, c);
      case kMetaOverheadNsPerSpan:
        return Assign(json_.NonNegative(fv, fp), c.overhead_ns_per_span);
      case kMetaAllocMeasured:
        return Assign(json_.Bool(fv, fp), c.alloc_measured);
      case kMetaProcessResources:
        return ReadProcessResources(json_, fv, fp, c.process_resources);
      case kMetaThreads:
        return ReadThreads(fv, fp);
      case kMetaSites:
        return ReadSites(fv, fp);
    }
    return absl::InternalError("unhandled metadata field");
  }

  absl::Status CheckTraceSchema(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    if (s != kTraceSchema) {
      return json_.Error(
          p, Cat("expected \"", kTraceSchema, "\", got ", Quote(s)));
    }
    return absl::OkStatus();
  }

  absl::Status CheckTraceSchemaVersion(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(int64_t version,
                              json_.Int(v, p, INT64_MIN, INT64_MAX));
    if (version != kTraceSchemaVersion) {
      return json_.Error(
          p, Cat("unsupported schema_version ", version,
                 " (this reader reads version ", kTraceSchemaVersion, ")"));
    }
    return absl::OkStatus();
  }

  // A string that must be `a` or `b`.
  // "unknown" is a foreign capture's clock, as spanprof's own writers write
  // such a capture back (to .pftrace, say).
  absl::Status ReadClock(value& v, const JsonPath& p, std::string& out) {
    SPANPROF_RETURN_IF_ERROR(ReadString(v, p, out));
    if (out != "tsc" && out != "monotonic" && out != "unknown") {
      return json_.Error(
          p, Cat("expected \"tsc\", \"monotonic\" or \"unknown\", got ",
                 Quote(out)));
    }
    return absl::OkStatus();
  }

  // Traces written before `end_reason`: a session that did not finish
  // normally was ended by exit().
  absl::Status ReadFinishedNormally(value& v, const JsonPath& p, Capture& c) {
    SPANPROF_RETURN_IF_ERROR(Assign(json_.Bool(v, p), c.finished_normally));
    if (!c.finished_normally &&
        c.end_reason == spanprof::internal::kEndFinished) {
      c.end_reason = std::string(spanprof::internal::kEndExit);
    }
    return absl::OkStatus();
  }

  absl::Status ReadEndReason(value& v, const JsonPath& p, Capture& c) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(v, p));
    if (!spanprof::internal::IsEndReason(text)) {
      return json_.Error(p, Cat("expected \"finished\", \"exit\", "
                                "\"lost\", \"signal:NAME\" or "
                                "\"crash:NAME\", got ",
                                Quote(text)));
    }
    c.end_reason = std::string(text);
    return absl::OkStatus();
  }

  absl::Status ReadOneOf(value& v, const JsonPath& p, std::string_view a,
                         std::string_view b, std::string& out) {
    SPANPROF_RETURN_IF_ERROR(ReadString(v, p, out));
    if (out != a && out != b) {
      return json_.Error(
          p, Cat("expected \"", a, "\" or \"", b, "\", got ", Quote(out)));
    }
    return absl::OkStatus();
  }

  absl::Status ReadDrops(value& v, const JsonPath& p,
                         std::vector<RawDrop>& drops) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object eo, json_.Object(ev, ep));
          RawDrop& drop = drops.emplace_back();
          return json_.ReadObject(
              eo, ep, kDropFields,
              [&](size_t df, value& dv, const JsonPath& dp) -> absl::Status {
                if (df == kDropSite)
                  return Assign(json_.NonNegative(dv, dp), drop.site);
                if (df == kDropCount)
                  return Assign(json_.Unsigned(dv, dp), drop.count);
                return ReadString(dv, dp, SiteField(drop.names, df - 1));
              });
        });
  }

  // Drops name their site twice (index and names): both must agree.
  absl::Status ResolveDrops(const JsonPath& drops_path,
                            const std::vector<RawDrop>& drops) {
    Capture& c = capture_;
    for (size_t i = 0; i < drops.size(); ++i) {
      const RawDrop& drop = drops[i];
      const JsonPath drop_path = drops_path.Index(i);
      if (static_cast<uint64_t>(drop.site) >= c.sites.size()) {
        return json_.Error(drop_path.Field("site"),
                           Cat("site index ", drop.site, " out of range (",
                               c.sites.size(), " sites)"));
      }
      if (!(drop.names == c.sites[static_cast<size_t>(drop.site)])) {
        return json_.Error(drop_path, Cat("names do not match metadata.sites[",
                                          drop.site, "]"));
      }
      c.dropped_by_site.push_back(
          SiteDrops{static_cast<uint32_t>(drop.site), drop.count});
    }
    return absl::OkStatus();
  }

  absl::Status ReadString(value& v, const JsonPath& p, std::string& out) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    out.assign(s.data(), s.size());
    return absl::OkStatus();
  }

  // A W3C trace id (32 lowercase hex digits, not all zero), or "".
  absl::Status ReadTraceId(value& v, const JsonPath& p, std::string& out) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    if (!s.empty() && !spanprof::internal::IsTraceId(s)) {
      return json_.Error(p, Cat("expected a trace id (32 lowercase hex "
                                "digits, not all zero) or \"\", got ",
                                Quote(s)));
    }
    out = std::string(s);
    return absl::OkStatus();
  }

  // A 64-bit id as 16 lowercase hex digits.
  absl::Status ReadHexId(value& v, const JsonPath& p, bool allow_zero,
                         uint64_t& out) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    if (!spanprof::internal::ParseHexId(s, &out) || (!allow_zero && out == 0)) {
      return json_.Error(
          p, Cat(allow_zero ? "expected 16 lowercase hex digits, got "
                            : "expected 16 lowercase hex digits, not all "
                              "zero, got ",
                 Quote(s)));
    }
    return absl::OkStatus();
  }

  // metadata.exported_span_ids: sorted by span (entries of one span keep
  // their export order).
  absl::Status ReadExportedSpanIds(value& v, const JsonPath& p,
                                   std::vector<ExportedSpanId>& out) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          ExportedSpanId& e = out.emplace_back();
          if (absl::Status read = json_.ReadObject(
                  o, ep, kExportedSpanIdFields,
                  [&](size_t field, value& fv, const JsonPath& fp) {
                    if (field == 0) {
                      return Assign(json_.Int(fv, fp, 1, INT64_MAX), e.span);
                    }
                    return ReadHexId(fv, fp, /*allow_zero=*/false,
                                     e.external_id);
                  });
              !read.ok()) {
            return read;
          }
          if (out.size() > 1 && out[out.size() - 2].span > e.span) {
            return json_.Error(ep.Field(kExportedSpanIdKeys[0]),
                               "entries must be sorted by span");
          }
          return absl::OkStatus();
        });
  }

  // metadata.processes: a merged capture's processes (ProcessInfo).
  absl::Status ReadProcesses(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          ProcessInfo& process = capture_.processes.emplace_back();
          return json_.ReadObject(
              o, ep, kProcessFields,
              [&](size_t field, value& fv, const JsonPath& fp) {
                return ReadProcessField(static_cast<ProcessField>(field), fv,
                                        fp, process);
              });
        });
  }

  absl::Status ReadProcessField(ProcessField field, value& fv,
                                const JsonPath& fp, ProcessInfo& process) {
    switch (field) {
      case kProcPid:
        return Assign(json_.NonNegative(fv, fp), process.pid);
      case kProcProcessName:
        return ReadString(fv, fp, process.process_name);
      case kProcHost:
        return ReadString(fv, fp, process.host);
      case kProcClock:
        return ReadOneOf(fv, fp, "tsc", "monotonic", process.clock);
      case kProcTraceId:
        return ReadTraceId(fv, fp, process.trace_id);
      case kProcWallClockAnchorNs:
        return Assign(json_.Int(fv, fp, INT64_MIN, INT64_MAX),
                      process.wall_clock_anchor_ns);
      case kProcWallClockUncertaintyNs:
        return Assign(json_.NonNegative(fv, fp),
                      process.wall_clock_uncertainty_ns);
      case kProcTimeOffsetNs:
        return Assign(json_.NonNegative(fv, fp), process.time_offset_ns);
      case kProcWindowNs:
        return Assign(json_.NonNegative(fv, fp), process.window_ns);
      case kProcRemoteParentSpanId:
        return ReadHexId(fv, fp, /*allow_zero=*/true,
                         process.remote_parent_span_id);
      case kProcSpanIdSeed:
        return ReadHexId(fv, fp, /*allow_zero=*/true, process.span_id_seed);
      case kProcSpanIdOffset:
        return Assign(json_.Unsigned(fv, fp), process.span_id_offset);
      case kProcExportedSpanIds:
        return ReadExportedSpanIds(fv, fp, process.exported_span_ids);
    }
    return absl::InternalError("unhandled process field");
  }

  absl::Status ReadThreads(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          ThreadInfo& thread = capture_.threads.emplace_back();
          uint8_t& has_process = thread_has_process_.emplace_back(0);
          return json_.ReadObject(
              o, ep, kThreadFields,
              [&](size_t field, value& fv, const JsonPath& fp) {
                if (field == 0)
                  return Assign(json_.Unsigned(fv, fp), thread.os_tid);
                if (field == 1) return ReadString(fv, fp, thread.name);
                if (field == 3) {
                  has_process = 1;
                  return Assign(json_.Int(fv, fp, 0, UINT32_MAX),
                                thread.process);
                }
                return Assign(json_.Int(fv, fp, 0, UINT32_MAX),
                              thread.sort_index);
              });
        });
  }

  absl::Status ReadSites(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          Site& site = capture_.sites.emplace_back();
          return json_.ReadObject(
              o, ep, kSiteFields,
              [&](size_t field, value& fv, const JsonPath& fp) {
                return ReadString(fv, fp, SiteField(site, field));
              });
        });
  }

  absl::Status ReadEvents(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t index, value& ev, const JsonPath& ep) -> absl::Status {
          TraceEvent& event = events_.emplace_back();
          PendingSpan pending;
          bool is_span = false;
          SPANPROF_RETURN_IF_ERROR(
              ReadEvent(index, ev, ep, event, pending, is_span));
          if (is_span) {
            pending.event = events_.size() - 1;
            spans_.push_back(std::move(pending));
          }
          return absl::OkStatus();
        });
  }

  // One element of traceEvents into `event` and, for an X event (then
  // `is_span`), `pending`.
  absl::Status ReadEvent(size_t index, value& ev, const JsonPath& ep,
                         TraceEvent& event, PendingSpan& pending,
                         bool& is_span) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
    // "ph" decides the schema of the rest: look it up first.
    value ph_value;
    simdjson::error_code error = o.find_field_unordered("ph").get(ph_value);
    if (error == simdjson::NO_SUCH_FIELD) {
      return json_.Error(ep, "missing field \"ph\"");
    }
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, ep);
    const JsonPath ph_path = ep.Field("ph");
    SPANPROF_ASSIGN_OR_RETURN(std::string_view ph,
                              json_.String(ph_value, ph_path));
    is_span = ph == "X";
    if (!is_span && ph != "M") {
      return json_.Error(ph_path,
                         Cat("expected \"X\" or \"M\", got ", Quote(ph)));
    }
    bool reset = false;
    error = o.reset().get(reset);
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, ep);
    event.index = index;
    event.is_span = is_span;
    return is_span ? ReadSpanEvent(o, ep, event, pending)
                   : ReadMetaEvent(o, ep, event);
  }

  absl::Status ReadMicros(value& v, const JsonPath& p, int64_t* ns) {
    simdjson::ondemand::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS ||
        type != simdjson::ondemand::json_type::number) {
      return json_.Expected(v, p, "microseconds (a number)");
    }
    const std::string_view raw = StrictJson::TrimRight(v.raw_json_token());
    if (!ParseMicros(raw, ns)) {
      return json_.Error(p, Cat("expected microseconds written as "
                                "<integer>.<up to 3 digits> within int64 ns, "
                                "got ",
                                StrictJson::Describe(v)));
    }
    return absl::OkStatus();
  }

  absl::Status ReadMetaEvent(object& o, const JsonPath& p, TraceEvent& event) {
    std::string name;
    // "name" decides the schema of "args": find it first as well.
    value name_value;
    simdjson::error_code error = o.find_field_unordered("name").get(name_value);
    if (error == simdjson::NO_SUCH_FIELD) {
      return json_.Error(p, "missing field \"name\"");
    }
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
    SPANPROF_RETURN_IF_ERROR(ReadString(name_value, p.Field("name"), name));
    if (name != "process_name" && name != "thread_name" &&
        name != "thread_sort_index") {
      return json_.Error(p.Field("name"),
                         Cat("expected \"process_name\", \"thread_name\" or "
                             "\"thread_sort_index\", got ",
                             Quote(name)));
    }
    bool reset = false;
    error = o.reset().get(reset);
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
    absl::Status read = json_.ReadObject(
        o, p, kMetaEventFields,
        [&](size_t field, value& v, const JsonPath& fp) -> absl::Status {
          switch (field) {
            case 2:
              return Assign(json_.Int(v, fp, INT64_MIN, INT64_MAX), event.pid);
            case 3:
              return Assign(json_.Int(v, fp, INT64_MIN, INT64_MAX), event.tid);
            case 4:
              return ReadMicros(v, fp, &event.ts_ns);
            case 5: {
              SPANPROF_ASSIGN_OR_RETURN(object args, json_.Object(v, fp));
              const bool sort_index = name == "thread_sort_index";
              const std::array<FieldSpec, 1> spec = {
                  {{sort_index ? "sort_index" : "name"}}};
              return json_.ReadObject(
                  args, fp, spec,
                  [&](size_t, value& av, const JsonPath& ap) -> absl::Status {
                    if (sort_index) {
                      return json_.Int(av, ap, 0, UINT32_MAX).status();
                    }
                    return json_.String(av, ap).status();
                  });
            }
            default:
              return absl::OkStatus();  // ph and name: already read
          }
        });
    if (!read.ok()) return read;
    event.is_process_name = name == "process_name";
    return absl::OkStatus();
  }

  absl::Status ReadSpanEvent(object& o, const JsonPath& p, TraceEvent& event,
                             PendingSpan& pending) {
    Span& span = pending.span;
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read = json_.ReadObject(
            o, p, kSpanEventFields,
            [&](size_t field, value& v, const JsonPath& fp) -> absl::Status {
              switch (static_cast<SpanEventField>(field)) {
                case kEvPh:
                  return absl::OkStatus();
                case kEvName:
                  return Assign(json_.String(v, fp), pending.name);
                case kEvCat:
                  return Assign(json_.String(v, fp), pending.cat);
                case kEvPid:
                  return Assign(json_.Int(v, fp, INT64_MIN, INT64_MAX),
                                event.pid);
                case kEvTid:
                  return Assign(json_.Int(v, fp, INT64_MIN, INT64_MAX),
                                event.tid);
                case kEvTs:
                  return ReadMicros(v, fp, &event.ts_ns);
                case kEvDur:
                  return ReadMicros(v, fp, &event.dur_ns);
                case kEvBindId:
                  event.has_bind_id = true;
                  return Assign(json_.Unsigned(v, fp), event.bind_id);
                case kEvFlowIn:
                  return Assign(json_.Bool(v, fp), event.flow_in);
                case kEvFlowOut:
                  return Assign(json_.Bool(v, fp), event.flow_out);
                case kEvArgs:
                  return ReadSpanArgs(v, fp, pending);
              }
              return absl::InternalError("unhandled event field");
            });
        !read.ok())
      return read;
    span.start_ns = event.ts_ns;
    if (__builtin_add_overflow(event.ts_ns, event.dur_ns, &span.end_ns)) {
      return json_.Error(p.Field("dur"), "ts + dur overflows int64 ns");
    }
    event.span_id = span.id;
    // Counters follow the numeric arguments, whatever the key order was.
    for (SpanArg& counter : pending.counters) {
      pending.args.push_back(std::move(counter));
    }
    pending.counters.clear();
    return absl::OkStatus();
  }

  absl::Status ReadSpanArgs(value& v, const JsonPath& p, PendingSpan& pending) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    Span& span = pending.span;
    return json_.ReadObject(
        o, p, kSpanArgFields,
        [&](size_t field, value& fv, const JsonPath& fp) -> absl::Status {
          switch (static_cast<SpanArgField>(field)) {
            case kArgSpanId:
              SPANPROF_RETURN_IF_ERROR(Assign(json_.Unsigned(fv, fp), span.id));
              if (span.id == 0) {
                return json_.Error(fp, "span ids start at 1");
              }
              return absl::OkStatus();
            case kArgParentId:
              return Assign(json_.Unsigned(fv, fp), span.parent_id);
            case kArgDepth:
              return Assign(json_.Int(fv, fp, 0, UINT32_MAX), span.depth);
            case kArgHeartbeats:
              return Assign(json_.Int(fv, fp, 0, UINT32_MAX), span.heartbeats);
            case kArgSite:
              return Assign(json_.Int(fv, fp, 0, UINT32_MAX), pending.site);
            case kArgThread:
              return Assign(json_.Int(fv, fp, 0, UINT32_MAX), pending.thread);
            case kArgPhase:
            case kArgModule:
            case kArgActivity:
            case kArgBackend:
            case kArgDtype:
            case kArgDevice:
              return ReadTag(fv, fp, pending.tags[field - kArgPhase]);
            case kArgAllocCount:
              pending.has_alloc_count = true;
              return Assign(json_.Int(fv, fp, INT64_MIN, INT64_MAX),
                            pending.allocs.count);
            case kArgAllocBytes:
              pending.has_alloc_bytes = true;
              return Assign(json_.Int(fv, fp, INT64_MIN, INT64_MAX),
                            pending.allocs.bytes);
            case kArgFlags:
              return ReadFlags(fv, fp, span.flags);
            case kArgUserArgs:
              return ReadUserArgs(fv, fp, pending.args);
            case kArgCounters:
              return ReadCounters(fv, fp, pending.counters);
          }
          return absl::InternalError("unhandled args field");
        });
  }

  absl::Status ReadTag(value& v, const JsonPath& p,
                       std::optional<std::string_view>& out) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    out.emplace(s);
    return absl::OkStatus();
  }

  absl::Status ReadFlags(value& v, const JsonPath& p, uint16_t& flags) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(std::string_view name,
                                    json_.String(ev, ep));
          for (const auto& [bit, flag_name] : kFlagNames) {
            if (flag_name != name) continue;
            if ((flags & bit) != 0) {
              return json_.Error(ep, Cat("duplicate flag ", Quote(name)));
            }
            flags |= bit;
            return absl::OkStatus();
          }
          return json_.Error(
              ep, Cat("unknown flag ", Quote(name),
                      " (expected \"unfinished\", \"exception\", "
                      "\"rerooted\", \"hook_failed\" or \"open_at_exit\")"));
        });
  }

  // User arguments: key → integer, or a number with '.' or an exponent
  // (double), or null (a double that was NaN or infinite). Repeated keys are
  // kept: a span may record one key twice.
  absl::Status ReadUserArgs(value& v, const JsonPath& p,
                            std::vector<SpanArg>& out) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    for (auto field_result : o) {
      simdjson::ondemand::field field;
      simdjson::error_code error = std::move(field_result).get(field);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
      std::string_view key;
      error = field.unescaped_key().get(key);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
      SpanArg& arg = out.emplace_back();
      arg.key = std::string(key);
      value av = field.value();
      const JsonPath ap = p.Field(arg.key);
      simdjson::ondemand::json_type type;
      if (av.type().get(type) != simdjson::SUCCESS) {
        return json_.Expected(av, ap, "a number or null");
      }
      if (type == simdjson::ondemand::json_type::null) {
        bool is_null = false;
        if (av.is_null().get(is_null) != simdjson::SUCCESS || !is_null) {
          return json_.Expected(av, ap, "a number or null");
        }
        arg.is_double = true;
        arg.double_value = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      if (type == simdjson::ondemand::json_type::string) {
        std::string_view text;
        if (av.get_string().get(text) != simdjson::SUCCESS) {
          return json_.Expected(av, ap, "a string");
        }
        SPANPROF_RETURN_IF_ERROR(SetStringArg(text, false, ap, arg));
        continue;
      }
      if (type == simdjson::ondemand::json_type::object) {
        SPANPROF_RETURN_IF_ERROR(ReadTruncatedText(av, ap, arg));
        continue;
      }
      if (type != simdjson::ondemand::json_type::number) {
        return json_.Expected(
            av, ap, "a number, null, a string or {\"text\", \"truncated\"}");
      }
      const std::string_view raw = StrictJson::TrimRight(av.raw_json_token());
      if (!StrictJson::IsJsonNumber(raw)) {
        return json_.Error(ap,
                           Cat("invalid number ", StrictJson::Describe(av)));
      }
      if (raw.find_first_of(".eE") == std::string_view::npos) {
        if (StrictJson::ParseInteger(raw, &arg.int_value) !=
            StrictJson::IntegerForm::kOk) {
          return json_.Error(ap, Cat("integer out of range (beyond int64): ",
                                     StrictJson::Describe(av)));
        }
        continue;
      }
      arg.is_double = true;
      const auto [end, ec] = std::from_chars(
          raw.data(), raw.data() + raw.size(), arg.double_value);
      if (ec != std::errc() || end != raw.data() + raw.size()) {
        return json_.Error(
            ap, Cat("number out of double range: ", StrictJson::Describe(av)));
      }
    }
    return absl::OkStatus();
  }

  // A string argument's text: at most kMaxArgTextBytes bytes.
  absl::Status SetStringArg(std::string_view text, bool truncated,
                            const JsonPath& p, SpanArg& arg) {
    if (text.size() > kMaxArgTextBytes) {
      return json_.Error(p, Cat("a string argument has at most ",
                                kMaxArgTextBytes, " bytes, got ", text.size()));
    }
    arg.is_string = true;
    arg.text = std::string(text);
    arg.truncated = truncated;
    return absl::OkStatus();
  }

  // A truncated string argument: {"text": "...", "truncated": true}.
  absl::Status ReadTruncatedText(value& v, const JsonPath& p, SpanArg& arg) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    std::string text;
    return json_.ReadObject(
        o, p, kTruncatedTextFields,
        [&](size_t field, value& fv, const JsonPath& fp) -> absl::Status {
          if (field == 0) {
            SPANPROF_ASSIGN_OR_RETURN(std::string_view t, json_.String(fv, fp));
            return SetStringArg(t, true, fp, arg);
          }
          SPANPROF_ASSIGN_OR_RETURN(bool truncated, json_.Bool(fv, fp));
          if (!truncated) return json_.Error(fp, "expected true");
          return absl::OkStatus();
        });
  }

  // Counters: name → integer self count (never a double or null), names
  // non-empty and each at most once (the runtime keeps one entry per name
  // per span). A counter may share its name with a numeric argument: they
  // are separate namespaces.
  absl::Status ReadCounters(value& v, const JsonPath& p,
                            std::vector<SpanArg>& out) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    for (auto field_result : o) {
      simdjson::ondemand::field field;
      simdjson::error_code error = std::move(field_result).get(field);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
      std::string_view key;
      error = field.unescaped_key().get(key);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
      if (key.empty()) return json_.Error(p, "empty counter name");
      const JsonPath cp = p.Field(key);
      for (const SpanArg& seen : out) {
        if (seen.key == key) {
          return json_.Error(cp, Cat("duplicate counter ", Quote(key)));
        }
      }
      SpanArg& counter = out.emplace_back();
      counter.key = std::string(key);
      counter.is_counter = true;
      value cv = field.value();
      SPANPROF_RETURN_IF_ERROR(
          Assign(json_.Int(cv, cp, INT64_MIN, INT64_MAX), counter.int_value));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ParsedTrace> Assemble() {
    std::vector<size_t> order(spans_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    // The collector's order: (thread, start_ns, depth), ties by id.
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const Span& x = spans_[a].span;
      const Span& y = spans_[b].span;
      return std::tie(x.thread, x.start_ns, x.depth, x.id, a) <
             std::tie(y.thread, y.start_ns, y.depth, y.id, b);
    });
    ParsedTrace out;
    out.capture = std::move(capture_);
    Capture& c = out.capture;
    c.spans.reserve(spans_.size());
    if (c.alloc_measured) c.span_allocs.reserve(spans_.size());
    for (size_t i : order) {
      PendingSpan& pending = spans_[i];
      Span& span = c.spans.emplace_back(pending.span);
      if (c.alloc_measured) c.span_allocs.push_back(pending.allocs);
      if (!pending.args.empty()) {
        if (c.args.size() + pending.args.size() > UINT32_MAX) {
          return json_.Error(JsonPath::Root(), "too many span arguments");
        }
        if (pending.args.size() > kMaxSpanArgs) {
          return json_.Error(
              JsonPath::Root().Field("traceEvents").Index(pending.event),
              Cat("more than ", kMaxSpanArgs, " arguments on one span"));
        }
        span.first_arg = static_cast<uint32_t>(c.args.size());
        span.arg_count = static_cast<uint16_t>(pending.args.size());
        for (SpanArg& arg : pending.args) c.args.push_back(std::move(arg));
      }
    }
    out.events = std::move(events_);
    return out;
  }

  StrictJson json_;
  Capture capture_;
  // metadata.threads' (pid, tid) and the processes' pids, sorted.
  std::vector<std::pair<int64_t, uint64_t>> sorted_tids_;
  std::vector<int64_t> sorted_pids_;
  std::vector<uint8_t> thread_has_process_;  // per metadata.threads entry
  std::vector<PendingSpan> spans_;           // the one-pass reader's
  std::vector<Span> fast_spans_;             // the fast path's, file order
  std::vector<SpanAllocs> fast_allocs_;      // theirs, when alloc_measured
  std::vector<SpanArg> fast_args_;           // the fast path's, file order
  std::vector<SiteFragments> sites_;         // RenderExpectedText()'s
  std::vector<std::string> thread_ids_;
  std::vector<TraceEvent> events_;
};

}  // namespace

absl::StatusOr<ParsedTrace> ParseTraceDocument(std::string_view json,
                                               std::string_view source,
                                               bool* used_fast_path) {
  return TraceReader(source).Read(json, /*keep_events=*/true, used_fast_path);
}

}  // namespace internal

absl::StatusOr<Capture> ParseTrace(std::string_view json,
                                   std::string_view source) {
  return ParseTrace(json, source, TraceReadOptions());
}

namespace {

// spanprof's own traces with `--group-by-arg ARG`: a span with the string
// argument ARG (SPANPROF_ARG_STR) is keyed by GroupedSiteName (its tags
// kept), as a foreign trace's span is. A cut value and a whole one with the
// same bytes are two rows.
void GroupByStringArg(Capture& capture, std::string_view source,
                      const TraceReadOptions& options) {
  using internal::Cat;
  using internal::Quote;
  if (options.group_by_arg.empty()) return;
  std::map<std::tuple<uint32_t, std::string, bool>, uint32_t> grouped;
  bool any = false;
  for (Span& span : capture.spans) {
    const size_t begin = std::min<size_t>(span.first_arg, capture.args.size());
    const size_t end =
        std::min<size_t>(begin + span.arg_count, capture.args.size());
    for (size_t a = begin; a < end; ++a) {
      const SpanArg& arg = capture.args[a];
      if (!arg.is_string || arg.key != options.group_by_arg) continue;
      auto [it, inserted] =
          grouped.emplace(std::make_tuple(span.site, arg.text, arg.truncated),
                          static_cast<uint32_t>(capture.sites.size()));
      if (inserted) {
        Site site = capture.sites[span.site];
        site.name = internal::GroupedSiteName(site.name, options.group_by_arg,
                                              arg.text, arg.truncated);
        capture.sites.push_back(std::move(site));
      }
      span.site = it->second;
      any = true;
      break;
    }
  }
  if (!any && options.notes != nullptr) {
    options.notes->push_back(Cat(source, ": no span has a string argument ",
                                 Quote(options.group_by_arg),
                                 " (rows are not split by it)"));
  }
}

absl::StatusOr<Capture> ParseAnyTrace(std::string_view json,
                                      std::string_view source,
                                      const TraceReadOptions& options) {
  if (LooksLikePerfettoTrace(json)) {
    SPANPROF_ASSIGN_OR_RETURN(Capture capture,
                              internal::perfetto::ParsePerfettoTrace(
                                  json, source, options.allow_truncated));
    GroupByStringArg(capture, source, options);
    return capture;
  }
  absl::StatusOr<internal::ParsedTrace> parsed =
      internal::TraceReader(source).Read(json, /*keep_events=*/false);
  // Only a trace that is not spanprof's own is tried as a foreign one (a
  // broken spanprof trace keeps its error): a rule of the metadata alone.
  if (!parsed.ok() && internal::IsForeignChromeTrace(json)) {
    return internal::ReadChromeTrace(json, source, options);
  }
  if (!parsed.ok()) return std::move(parsed).status();
  GroupByStringArg(parsed->capture, source, options);
  return std::move(parsed->capture);
}

}  // namespace

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

}  // namespace spanprof::analysis
