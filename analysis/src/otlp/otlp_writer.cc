// The OTLP/JSON writer: captures → one ExportTraceServiceRequest.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/cat.h"
#include "json/json_writer.h"
#include "model/span_args.h"
#include "otlp/otlp_format.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/otlp.h"
#include "spanprof/capture.h"
#include "status_macros.h"

namespace spanprof::analysis {
namespace {

using internal::Cat;

constexpr char kHexDigits[] = "0123456789abcdef";

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// FNV-1a over `bytes`, continuing from `hash`.
uint64_t Fnv1a(uint64_t hash, std::string_view bytes) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// One input, checked, with what every span of it needs.
struct PreparedCapture {
  const OtlpInput* input = nullptr;
  std::string trace_id;  // the capture's, or derived
  // The remote parent of the capture's roots after alias rewriting; 0: none.
  uint64_t remote_parent = 0;
  // Span::id → index into capture.spans.
  absl::flat_hash_map<uint64_t, size_t> index_of;
};

// (trace id, alias external id) → the aliased span's primary external id.
using AliasMap =
    absl::flat_hash_map<std::pair<std::string, uint64_t>, uint64_t>;

absl::Status CheckInput(const OtlpInput& input) {
  if (input.capture == nullptr) {
    return absl::InvalidArgumentError(Cat(input.path, ": no capture"));
  }
  const Capture& capture = *input.capture;
  if (capture.wall_clock_anchor_ns <= 0) {
    return absl::FailedPreconditionError(
        Cat(input.path,
            ": the capture has no wall-clock anchor (a foreign trace, or one "
            "written before spanprof recorded the anchor); OTLP times are "
            "wall-clock times, so it cannot be exported"));
  }
  if (!capture.trace_id.empty() && !IsOtlpTraceId(capture.trace_id)) {
    return absl::InvalidArgumentError(
        Cat(input.path, ": malformed trace id \"", capture.trace_id,
            "\" (expected 32 lowercase hex digits, not all zero)"));
  }
  return absl::OkStatus();
}

bool SameCapture(const PreparedCapture& a, const PreparedCapture& b) {
  const Capture& x = *a.input->capture;
  const Capture& y = *b.input->capture;
  return a.trace_id == b.trace_id && x.span_id_seed == y.span_id_seed &&
         x.pid == y.pid && x.host == y.host &&
         x.wall_clock_anchor_ns == y.wall_clock_anchor_ns;
}

absl::StatusOr<std::vector<PreparedCapture>> Prepare(
    std::span<const OtlpInput> inputs, std::vector<std::string>& notes) {
  if (inputs.empty()) return absl::InvalidArgumentError("no capture to export");
  std::vector<PreparedCapture> prepared;
  prepared.reserve(inputs.size());
  for (const OtlpInput& input : inputs) {
    SPANPROF_RETURN_IF_ERROR(CheckInput(input));
    PreparedCapture p;
    p.input = &input;
    p.trace_id = input.capture->trace_id;
    if (p.trace_id.empty()) {
      p.trace_id = DerivedTraceId(*input.capture);
      notes.push_back(Cat(input.path,
                          ": no trace id (written before spanprof recorded "
                          "one); exported under trace id ",
                          p.trace_id,
                          ", derived from its host, pid and "
                          "wall-clock anchor"));
    }
    for (const PreparedCapture& earlier : prepared) {
      if (SameCapture(earlier, p)) {
        return absl::InvalidArgumentError(
            Cat(input.path, ": the same capture as ", earlier.input->path,
                " (same trace id, span id seed, host, pid and wall-clock "
                "anchor); give each capture once"));
      }
    }
    p.remote_parent = input.capture->remote_parent_span_id;
    const std::vector<Span>& spans = input.capture->spans;
    p.index_of.reserve(spans.size());
    for (size_t i = 0; i < spans.size(); ++i) p.index_of[spans[i].id] = i;
    prepared.push_back(std::move(p));
  }
  return prepared;
}

// Every later `exported_span_ids` entry of a span is an alias of its first.
AliasMap CollectAliases(const std::vector<PreparedCapture>& prepared) {
  AliasMap aliases;
  for (const PreparedCapture& p : prepared) {
    const std::vector<ExportedSpanId>& exported =
        p.input->capture->exported_span_ids;
    size_t first = 0;  // the first entry of the current span
    for (size_t i = 1; i < exported.size(); ++i) {
      if (exported[i].span != exported[first].span) {
        first = i;
        continue;
      }
      aliases.emplace(std::make_pair(p.trace_id, exported[i].external_id),
                      exported[first].external_id);
    }
  }
  return aliases;
}

// Roots whose remote parent is an alias name the span's primary id instead.
uint64_t RewriteAliasedRemoteParents(std::vector<PreparedCapture>& prepared,
                                     const AliasMap& aliases) {
  uint64_t rewritten = 0;
  for (PreparedCapture& p : prepared) {
    if (p.remote_parent == 0) continue;
    auto it = aliases.find(std::make_pair(p.trace_id, p.remote_parent));
    if (it == aliases.end()) continue;
    p.remote_parent = it->second;
    ++rewritten;
  }
  return rewritten;
}

void NoteTraceIds(const std::vector<PreparedCapture>& prepared,
                  OtlpExport& out) {
  std::string listing;
  for (const PreparedCapture& p : prepared) {
    bool seen = false;
    for (const std::string& id : out.trace_ids) seen = seen || id == p.trace_id;
    if (!seen) out.trace_ids.push_back(p.trace_id);
    if (!listing.empty()) listing += ", ";
    listing += Cat(p.trace_id, " in ", p.input->path);
  }
  if (out.trace_ids.size() > 1) {
    out.notes.push_back(Cat("the captures belong to ", out.trace_ids.size(),
                            " different traces (", listing,
                            "); each span keeps its capture's trace id"));
  }
}

// --- JSON -----------------------------------------------------------------

void BeginAttribute(JsonWriter& w, std::string_view key) {
  w.BeginObject();
  w.Key("key");
  w.String(key);
  w.Key("value");
  w.BeginObject();
}

void EndAttribute(JsonWriter& w) {
  w.EndObject();
  w.EndObject();
}

void StringAttribute(JsonWriter& w, std::string_view key,
                     std::string_view value) {
  BeginAttribute(w, key);
  w.Key("stringValue");
  w.String(value);
  EndAttribute(w);
}

// int64 values are decimal strings in OTLP/JSON (the proto3 JSON rule).
void IntAttribute(JsonWriter& w, std::string_view key, int64_t value) {
  BeginAttribute(w, key);
  w.Key("intValue");
  w.String(std::to_string(value));
  EndAttribute(w);
}

void BoolAttribute(JsonWriter& w, std::string_view key, bool value) {
  BeginAttribute(w, key);
  w.Key("boolValue");
  w.Bool(value);
  EndAttribute(w);
}

// Non-finite doubles are the proto3 JSON strings "NaN", "Infinity",
// "-Infinity" (JSON has no such numbers).
void DoubleAttribute(JsonWriter& w, std::string_view key, double value) {
  BeginAttribute(w, key);
  w.Key("doubleValue");
  if (std::isnan(value)) {
    w.String("NaN");
  } else if (std::isinf(value)) {
    w.String(value > 0 ? "Infinity" : "-Infinity");
  } else {
    w.Double(value);
  }
  EndAttribute(w);
}

// The process one `resourceSpans` stands for: a single-process capture's
// top-level fields, or one process of a merged capture (its own name, host,
// pid, clock, trace id and remote parent), with the indexes of its spans.
struct Resource {
  std::string_view process_name;
  std::string_view host;
  int64_t pid = 0;
  std::string_view clock;
  std::string trace_id;
  uint64_t remote_parent = 0;  // of its roots, after alias rewriting; 0: none
  bool merged = false;         // one process of a merged capture
  std::vector<size_t> spans;
};

// One resource per process: the capture's own fields when it has one
// process, else each `ProcessInfo` with the spans of its threads (a span whose
// thread names no process goes with the first).
std::vector<Resource> ResourcesOf(const PreparedCapture& p,
                                  const AliasMap& aliases) {
  const Capture& capture = *p.input->capture;
  std::vector<Resource> resources;
  if (capture.processes.empty()) {
    Resource& r = resources.emplace_back();
    r = {capture.process_name, capture.host,    capture.pid, capture.clock,
         p.trace_id,           p.remote_parent, false,       {}};
  }
  for (const ProcessInfo& process : capture.processes) {
    Resource& r = resources.emplace_back();
    r = {process.process_name,
         process.host,
         process.pid,
         process.clock,
         IsOtlpTraceId(process.trace_id) ? process.trace_id : p.trace_id,
         process.remote_parent_span_id,
         true,
         {}};
    auto alias = aliases.find(std::make_pair(r.trace_id, r.remote_parent));
    if (r.remote_parent != 0 && alias != aliases.end()) {
      r.remote_parent = alias->second;
    }
  }
  for (size_t i = 0; i < capture.spans.size(); ++i) {
    const ProcessInfo* process =
        ProcessOfThread(capture, capture.spans[i].thread);
    const size_t k =
        process == nullptr
            ? 0
            : static_cast<size_t>(process - capture.processes.data());
    resources[k].spans.push_back(i);
  }
  return resources;
}

void WriteResource(JsonWriter& w, const Capture& capture,
                   const Resource& resource) {
  w.Key("resource");
  w.BeginObject();
  w.Key("attributes");
  w.BeginArray();
  StringAttribute(w, otlp::kServiceName,
                  resource.process_name.empty() ? otlp::kUnknownService
                                                : resource.process_name);
  if (!resource.host.empty()) {
    StringAttribute(w, otlp::kHostName, resource.host);
  }
  IntAttribute(w, otlp::kProcessPid, resource.pid);
  StringAttribute(w, otlp::kSdkName, otlp::kScopeName);
  StringAttribute(w, otlp::kSdkLanguage, otlp::kSdkLanguageCpp);
  if (!capture.spanprof_version.empty()) {
    StringAttribute(w, otlp::kSdkVersion, capture.spanprof_version);
  }
  if (!resource.clock.empty()) {
    StringAttribute(w, otlp::kClock, resource.clock);
  }
  // A merged capture counts its drops for all processes together: written on
  // each process's resource, they would be summed once per process.
  if (!resource.merged) {
    IntAttribute(w, otlp::kDroppedEvents,
                 static_cast<int64_t>(capture.dropped_events));
  }
  BoolAttribute(w, otlp::kComplete, capture.finished_normally);
  w.EndArray();
  w.EndObject();
}

// The attribute key of each tag (kTagFields order): "spanprof.phase", ...
const std::array<std::string, kTagFields.size()>& TagAttributeKeys() {
  static const auto* keys = [] {
    auto* out = new std::array<std::string, kTagFields.size()>();
    for (size_t i = 0; i < kTagFields.size(); ++i) {
      (*out)[i] = std::string(otlp::kTagAttributePrefix);
      (*out)[i].append(kTagFields[i].name);
    }
    return out;
  }();
  return *keys;
}

void WriteSpanAttributes(JsonWriter& w, const Capture& capture, size_t index) {
  const Span& span = capture.spans[index];
  w.Key("attributes");
  w.BeginArray();
  if (span.thread < capture.threads.size()) {
    const ThreadInfo& thread = capture.threads[span.thread];
    IntAttribute(w, otlp::kThreadId, static_cast<int64_t>(thread.os_tid));
    if (!thread.name.empty()) {
      StringAttribute(w, otlp::kThreadName, thread.name);
    }
  }
  if (span.site < capture.sites.size()) {
    const Site& site = capture.sites[span.site];
    for (size_t i = 0; i < kTagFields.size(); ++i) {
      const std::string& value = site.*kTagFields[i].site;
      if (!value.empty()) StringAttribute(w, TagAttributeKeys()[i], value);
    }
  }
  if (span.heartbeats != 0) {
    IntAttribute(w, otlp::kHeartbeats, static_cast<int64_t>(span.heartbeats));
  }
  if (capture.alloc_measured) {
    const SpanAllocs allocs = AllocsOf(capture, index);
    IntAttribute(w, otlp::kAllocCount, allocs.count);
    IntAttribute(w, otlp::kAllocBytes, allocs.bytes);
  }
  if ((span.flags & kSpanUnfinished) != 0) {
    BoolAttribute(w, otlp::kUnfinished, true);
  }
  if ((span.flags & kSpanOpenAtExit) != 0) {
    BoolAttribute(w, otlp::kOpenAtExit, true);
  }
  if ((span.flags & kSpanRerooted) != 0)
    BoolAttribute(w, otlp::kRerooted, true);
  if ((span.flags & kSpanException) != 0) {
    BoolAttribute(w, otlp::kException, true);
  }
  for (const SpanArg& arg : internal::ArgsOf(capture, span)) {
    const std::string key =
        Cat(arg.is_counter ? otlp::kCountPrefix : otlp::kArgPrefix, arg.key);
    if (arg.is_string && !arg.is_counter) {
      StringAttribute(w, key, arg.text);
      if (arg.truncated) BoolAttribute(w, Cat(key, ".truncated"), true);
    } else if (arg.is_double) {
      DoubleAttribute(w, key, arg.double_value);
    } else {
      IntAttribute(w, key, arg.int_value);
    }
  }
  if ((span.flags & kSpanHookFailed) != 0) {
    BoolAttribute(w, otlp::kHookFailed, true);
  }
  w.EndArray();
}

// `anchor + ns` as OTLP's fixed64 Unix nanoseconds, a decimal string.
absl::StatusOr<std::string> UnixNanos(const OtlpInput& input, const Span& span,
                                      int64_t ns) {
  int64_t absolute = 0;
  if (__builtin_add_overflow(input.capture->wall_clock_anchor_ns, ns,
                             &absolute) ||
      absolute < 0) {
    return absl::InvalidArgumentError(
        Cat(input.path, ": span ", span.id, " has time ", ns,
            " ns, which with the wall-clock anchor ",
            input.capture->wall_clock_anchor_ns,
            " ns is outside the Unix-epoch nanoseconds OTLP can carry"));
  }
  return std::to_string(absolute);
}

absl::Status WriteSpan(JsonWriter& w, const PreparedCapture& p,
                       const Resource& resource, size_t index,
                       uint64_t& orphans) {
  const Capture& capture = *p.input->capture;
  const Span& span = capture.spans[index];
  SPANPROF_ASSIGN_OR_RETURN(std::string start,
                            UnixNanos(*p.input, span, span.start_ns));
  SPANPROF_ASSIGN_OR_RETURN(std::string end,
                            UnixNanos(*p.input, span, span.end_ns));
  uint64_t parent = resource.remote_parent;
  if (span.parent_id != 0) {
    auto it = p.index_of.find(span.parent_id);
    if (it != p.index_of.end()) {
      parent = ExternalSpanId(capture, capture.spans[it->second]);
    } else {
      ++orphans;
    }
  }
  w.BeginObject();
  w.Key("traceId");
  w.String(resource.trace_id);
  w.Key("spanId");
  w.String(OtlpSpanIdHex(ExternalSpanId(capture, span)));
  if (parent != 0) {
    w.Key("parentSpanId");
    w.String(OtlpSpanIdHex(parent));
  }
  w.Key("name");
  w.String(span.site < capture.sites.size() ? capture.sites[span.site].name
                                            : std::string());
  w.Key("kind");
  w.Int(otlp::kSpanKindInternal);
  w.Key("startTimeUnixNano");
  w.String(start);
  w.Key("endTimeUnixNano");
  w.String(end);
  WriteSpanAttributes(w, capture, index);
  if ((span.flags & kSpanException) != 0) {
    w.Key("status");
    w.BeginObject();
    w.Key("code");
    w.Int(otlp::kStatusCodeError);
    w.Key("message");
    w.String(otlp::kExceptionStatusMessage);
    w.EndObject();
  }
  w.EndObject();
  return absl::OkStatus();
}

absl::Status WriteResourceSpans(JsonWriter& w, const PreparedCapture& p,
                                const Resource& resource, uint64_t& orphans) {
  const Capture& capture = *p.input->capture;
  w.BeginObject();
  WriteResource(w, capture, resource);
  w.Key("scopeSpans");
  w.BeginArray();
  w.BeginObject();
  w.Key("scope");
  w.BeginObject();
  w.Key("name");
  w.String(otlp::kScopeName);
  if (!capture.spanprof_version.empty()) {
    w.Key("version");
    w.String(capture.spanprof_version);
  }
  w.EndObject();
  w.Key("spans");
  w.BeginArray();
  for (const size_t i : resource.spans) {
    SPANPROF_RETURN_IF_ERROR(WriteSpan(w, p, resource, i, orphans));
  }
  w.EndArray();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return absl::OkStatus();
}

// One `resourceSpans` per process of the capture.
absl::Status WriteCapture(JsonWriter& w, const PreparedCapture& p,
                          const AliasMap& aliases, OtlpExport& out) {
  uint64_t orphans = 0;
  for (const Resource& resource : ResourcesOf(p, aliases)) {
    SPANPROF_RETURN_IF_ERROR(WriteResourceSpans(w, p, resource, orphans));
  }
  out.span_count += p.input->capture->spans.size();
  if (orphans != 0) {
    out.notes.push_back(Cat(p.input->path, ": ", orphans,
                            " span(s) name a parent that is not in the "
                            "capture (see `spanprof validate`); exported as "
                            "roots"));
  }
  return absl::OkStatus();
}

std::string SpanLabel(const Capture& capture, const Span& span) {
  return Cat("span ", span.id, " '",
             span.site < capture.sites.size() ? capture.sites[span.site].name
                                              : std::string(),
             "'");
}

}  // namespace

std::string OtlpSpanIdHex(uint64_t id) {
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i) {
    hex[static_cast<size_t>(i)] = kHexDigits[id & 0xf];
    id >>= 4;
  }
  return hex;
}

bool IsOtlpTraceId(std::string_view id) {
  if (id.size() != 32) return false;
  bool nonzero = false;
  for (const char c : id) {
    const bool digit = c >= '0' && c <= '9';
    const bool lower = c >= 'a' && c <= 'f';
    if (!digit && !lower) return false;
    nonzero = nonzero || c != '0';
  }
  return nonzero;
}

std::string DerivedTraceId(const Capture& capture) {
  uint64_t hash = Fnv1a(0xcbf29ce484222325ull, capture.host);
  hash = Fnv1a(hash, std::string_view("\0", 1));
  hash = Fnv1a(hash, std::to_string(capture.pid));
  hash = Fnv1a(hash, std::string_view("\0", 1));
  hash = Fnv1a(hash, std::to_string(capture.wall_clock_anchor_ns));
  const uint64_t high = Mix64(hash);
  const uint64_t low = Mix64(hash ^ 0x9e3779b97f4a7c15ull);
  // Mix64 is a bijection: at most one of the halves can be 0 for a given
  // hash, so the id is never all zero.
  return OtlpSpanIdHex(high) + OtlpSpanIdHex(low);
}

std::vector<std::string> InvalidOtlpSpans(std::span<const OtlpInput> inputs) {
  std::vector<std::string> problems;
  for (const OtlpInput& input : inputs) {
    if (input.capture == nullptr) continue;
    const Capture& capture = *input.capture;
    const Forest forest(capture);
    std::vector<std::pair<uint64_t, std::string>> found;
    for (const Span& span : capture.spans) {
      if (span.end_ns < span.start_ns) {
        found.emplace_back(
            span.id,
            Cat(SpanLabel(capture, span), " ends before it starts (start ",
                span.start_ns, " ns, end ", span.end_ns, " ns)"));
      }
    }
    for (const uint32_t cut : forest.cycle_cuts()) {
      const Span& span = capture.spans[cut];
      found.emplace_back(
          span.id, span.parent_id == span.id
                       ? Cat(SpanLabel(capture, span), " is its own parent")
                       : Cat(SpanLabel(capture, span),
                             ": its parent chain loops back to it (parent ",
                             span.parent_id, ")"));
    }
    std::stable_sort(
        found.begin(), found.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [id, text] : found) {
      problems.push_back(Cat(input.path, ": ", text));
    }
  }
  return problems;
}

absl::StatusOr<OtlpExport> ExportOtlp(std::span<const OtlpInput> inputs) {
  OtlpExport out;
  SPANPROF_ASSIGN_OR_RETURN(std::vector<PreparedCapture> prepared,
                            Prepare(inputs, out.notes));
  const AliasMap aliases = CollectAliases(prepared);
  out.rewritten_remote_parents = RewriteAliasedRemoteParents(prepared, aliases);
  NoteTraceIds(prepared, out);

  size_t spans = 0;
  for (const OtlpInput& input : inputs) spans += input.capture->spans.size();
  out.json.reserve(256 + spans * 480);
  JsonWriter w(&out.json);
  w.BeginObject();
  w.Key("resourceSpans");
  w.BeginArray();
  for (const PreparedCapture& p : prepared) {
    SPANPROF_RETURN_IF_ERROR(WriteCapture(w, p, aliases, out));
  }
  w.EndArray();
  w.EndObject();
  w.Newline();
  return out;
}

}  // namespace spanprof::analysis
