// The fast line reader: a trace in the writer's layout, one event per line.
// Its tail (displayTimeUnit and metadata) is read first by the metadata
// reader; the M events, few and first, by the strict event reader in chunks
// of lines; each X line by matching the writer's text.
#include "trace/fast_line_reader.h"

#include <simdjson.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "model/capture_order.h"
#include "spanprof/capture.h"
#include "status_macros.h"
#include "trace/line_cursor.h"
#include "trace/span_resolver.h"
#include "trace/strict_event_reader.h"
#include "trace/trace_format.h"
#include "trace/trace_metadata_reader.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

// What follows traceEvents: displayTimeUnit and metadata.
constexpr std::array<FieldSpec, 2> kTailFields = [] {
  constexpr auto kRootFields = RequiredFields(kRootKeys);
  return std::array<FieldSpec, 2>{{kRootFields[1], kRootFields[2]}};
}();

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

// Where the line that closes traceEvents (the last one that starts with
// "],") begins, at its '\n'; npos when there is none past the head.
size_t FindEventsEnd(std::string_view text) {
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
size_t SkipMetaEvents(std::string_view text, size_t events_end) {
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

bool AtEnd(simdjson::ondemand::document& document) {
  const char* location = nullptr;
  return document.current_location().get(location) != simdjson::SUCCESS;
}

// After `,"bind_id":`: the id and the flow direction.
__attribute__((always_inline)) inline bool ReadFlowBinding(LineCursor& in,
                                                           TraceEvent& event) {
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

// After `"flags":[`: the flag names, none twice, and `]`.
bool ReadFlagList(LineCursor& in, uint16_t& flags) {
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
bool ReadPlainString(LineCursor& in, std::string_view* text) {
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
bool ReadEntryKey(LineCursor& in, std::string_view* key_text) {
  return ReadPlainString(in, key_text) && in.Literal(":");
}

// `FastLineReader` reads one trace; it is used once.
class FastLineReader {
 public:
  explicit FastLineReader(std::string_view source) : json_(source) {}

  std::optional<ParsedTrace> Read(std::string_view text, bool keep_events) {
    if (!ReadInChunks(text, keep_events)) return std::nullopt;
    return AssembleInOrder();
  }

 private:
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
  // strict reader (strict_trace_reader.h), which gives the error.
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
    RenderExpectedText();
    // An X event is at least ~100 bytes: reserving by that bound touches
    // no memory that is not used.
    spans_.reserve((events_end - kTraceHead.size()) / 100);
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
    const size_t first_arg = args_.size();
    if ((in.Literal(kLineUserArgs) && !ReadArgList(in)) ||
        (in.Literal(kLineCounters) && !ReadCounterList(in))) {
      args_.resize(first_arg);
      return false;
    }
    if (!in.Literal(kLineEnd) ||
        __builtin_add_overflow(event.ts_ns, event.dur_ns, &span.end_ns)) {
      return false;
    }
    span.start_ns = event.ts_ns;
    if (args_.size() != first_arg) {
      if (args_.size() > UINT32_MAX ||
          args_.size() - first_arg > kMaxSpanArgs) {
        return false;
      }
      span.first_arg = static_cast<uint32_t>(first_arg);
      span.arg_count = static_cast<uint16_t>(args_.size() - first_arg);
    }
    spans_.push_back(span);
    if (capture_.alloc_measured) allocs_.push_back(allocs);
    if (keep_events) KeepSpanEvent(event, span, index);
    line = in.p;
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

  // After the user `"args":{`: keys and values as `ReadUserArgs()` reads
  // them, and `}`.
  bool ReadArgList(LineCursor& in) {
    if (in.Literal("}")) return true;
    do {
      std::string_view key_text;
      if (!ReadEntryKey(in, &key_text)) return false;
      SpanArg& arg = args_.emplace_back();
      arg.key = key_text;
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
    const size_t first = args_.size();
    if (in.Literal("}")) return true;
    do {
      std::string_view key;
      if (!ReadEntryKey(in, &key) || key.empty()) return false;
      for (size_t a = first; a < args_.size(); ++a) {
        if (args_[a].key == key) return false;
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
      SpanArg& counter = args_.emplace_back();
      counter.key = key;
      counter.int_value = count;
      counter.is_counter = true;
    } while (in.Literal(","));
    return in.Literal("}");
  }

  // `{` + what follows traceEvents: displayTimeUnit and metadata.
  absl::Status ReadTail(ChunkDocument& chunk) {
    object root;
    if (chunk.document().get_object().get(root) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("not an object");
    }
    const JsonPath path = JsonPath::Root();
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read = json_.ReadObject(
            root, path, kTailFields,
            [&](size_t field, value& v, const JsonPath& p) {
              return field == 0
                         ? CheckDisplayTimeUnit(json_, v, p)
                         : ReadTraceMetadata(json_.source(), v, p, metadata_);
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
    const SpanResolver resolver(json_.source(), metadata_);
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
              SPANPROF_RETURN_IF_ERROR(ReadTraceEvent(
                  json_.source(), index, ev, ep, event, pending, is_span));
              if (is_span) {
                SPANPROF_RETURN_IF_ERROR(
                    resolver.ResolveSpan(path, pending, event));
                Span& span = spans_.emplace_back(pending.span);
                if (capture_.alloc_measured) {
                  allocs_.push_back(pending.allocs);
                }
                if (!pending.args.empty()) {
                  if (pending.args.size() > kMaxSpanArgs) {
                    return json_.Error(ep, Cat("more than ", kMaxSpanArgs,
                                               " arguments on one span"));
                  }
                  span.first_arg = static_cast<uint32_t>(args_.size());
                  span.arg_count = static_cast<uint16_t>(pending.args.size());
                  for (SpanArg& arg : pending.args) {
                    args_.push_back(std::move(arg));
                  }
                  if (args_.size() > UINT32_MAX) {
                    return absl::InvalidArgumentError("too many arguments");
                  }
                }
              } else {
                SPANPROF_RETURN_IF_ERROR(
                    resolver.ResolveMetaEvent(path, event));
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
    out.capture = std::move(metadata_.capture);
    MoveSpansInCaptureOrder(spans_, allocs_, args_, out.capture);
    out.events = std::move(events_);
    return out;
  }

  StrictJson json_;
  TraceMetadata metadata_;
  Capture& capture_ = metadata_.capture;
  std::vector<Span> spans_;           // in file order
  std::vector<SpanAllocs> allocs_;    // theirs, when alloc_measured
  std::vector<SpanArg> args_;         // in file order
  std::vector<SiteFragments> sites_;  // RenderExpectedText()'s
  std::vector<std::string> thread_ids_;
  std::vector<TraceEvent> events_;
};

}  // namespace

std::optional<ParsedTrace> ReadTraceLines(std::string_view text,
                                          std::string_view source,
                                          bool keep_events) {
  return FastLineReader(source).Read(text, keep_events);
}

}  // namespace spanprof::analysis::internal
