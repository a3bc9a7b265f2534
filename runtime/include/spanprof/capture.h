// spanprof/capture.h — the finished capture: what the collector hands to
// analysis.
//
// A `Capture` is plain data: threads, interned sites, and spans with
// session-relative nanosecond times. The runtime's collector produces it at
// session end; the analysis library (and `ReadTrace`) consume it. It has no
// clocks, no threads and no JSON in it, so analysis stays a pure function of
// this value.
//
// clang-format off
// Example:
//
//   spanprof::Capture capture = ...;  // from the collector or ReadTrace()
//   for (const spanprof::Span& span : capture.spans) {
//     const spanprof::Site& site = capture.sites[span.site];
//     std::printf("%s %lld ns\n", site.name.c_str(),
//                 static_cast<long long>(span.end_ns - span.start_ns));
//   }
// clang-format on
#ifndef SPANPROF_CAPTURE_H_
#define SPANPROF_CAPTURE_H_

#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "spanprof/tags.h"

namespace spanprof {

// `Site` is a call site: a span name plus its optional tags. Sites are interned
// once per call site; spans refer to them by index into `Capture::sites`.
// Every field has a default (empty), so `Site{.name = "x", .dtype = "f16"}`
// names only what is set.
struct Site {
  std::string name{};
  std::string phase{};
  std::string module{};
  std::string activity{};
  std::string backend{};
  std::string dtype{};
  std::string device{};

  friend bool operator==(const Site&, const Site&) = default;
};

// `TagField` is one of the six tags: its name in every output (trace, summary,
// Perfetto category, OTLP attribute suffix, query column), the `Site` member
// that holds it and the `Tags` member a call site sets it with.
struct TagField {
  std::string_view name;
  std::string Site::*site;
  const char* Tags::*tags;
};

// `kTagFields` lists the six tags in their one order (the order of `Site`,
// `Tags` and every output). Writers, readers and the C API iterate it rather
// than spelling the tags out. A seventh tag is a line here plus its members
// in `Site`, `Tags` and analysis's `RowKey` (`kRowKeyTags`); the few places
// that must still name each tag (the recording hot path, the C API's struct,
// the trace event's argument list, the query schema) fail to compile or fail
// a test until they have it. Iterate it as
//
//   for (const spanprof::TagField& tag : spanprof::kTagFields) {
//     const std::string& value = site.*tag.site;
//     if (!value.empty()) std::cout << tag.name << "=" << value << "\n";
//   }
inline constexpr std::array<TagField, 6> kTagFields{{
    {"phase", &Site::phase, &Tags::phase},
    {"module", &Site::module, &Tags::module},
    {"activity", &Site::activity, &Tags::activity},
    {"backend", &Site::backend, &Tags::backend},
    {"dtype", &Site::dtype, &Tags::dtype},
    {"device", &Site::device, &Tags::device},
}};

// Bits of `Span::flags`.
enum SpanFlag : uint16_t {
  // The span was still open when the session stopped; `end_ns` is the stop.
  kSpanUnfinished = 1u << 0,
  // The span was left by an exception (stack unwinding).
  kSpanException = 1u << 1,
  // The span's parent was lost (ring overwrite); it was made a root.
  kSpanRerooted = 1u << 2,
  // A `complete` or `enrich` hook of the span threw (spanprof::Hooks); its
  // message is the span's string argument `hook_error`.
  kSpanHookFailed = 1u << 3,
  // The span was still open when the program ended the session early: it
  // called exit() (or returned from main) inside the session, or called
  // `spanprof::FinishSession()`. `end_ns` is that moment. A normal end of a
  // real program, unlike `kSpanUnfinished`: the capture stays complete.
  kSpanOpenAtExit = 1u << 4,
};

// The longest string argument (`SPANPROF_ARG_STR`), in bytes: longer text is
// cut at a UTF-8 boundary and marked `SpanArg::truncated`.
inline constexpr size_t kMaxArgTextBytes = 64;

// The most arguments one span keeps (`Span::arg_count` is 16 bits): the
// runtime counts the rest in `Capture::dropped_args`; readers reject more.
inline constexpr size_t kMaxSpanArgs = UINT16_MAX;

namespace internal {
// The empty text an `ArgKey` or `ArgText` reads as when it holds none
// (never destroyed: a session may end while static objects are).
inline const std::string& EmptyText() noexcept {
  static const std::string* const empty = new std::string();
  return *empty;
}
class PackedArgs;    // spanprof/internal/packed_args.h
class CompactSpans;  // spanprof/internal/compact_spans.h
}  // namespace internal

// `ArgKey` is an argument's or counter's name in 8 bytes: the text is kept
// once per process (as the sites' names are, never freed), so a capture
// holds no copy of a name per argument. It reads as a `const std::string&`
// and a `std::string_view`, and is made from any string.
class ArgKey {
 public:
  ArgKey() noexcept : name_(&internal::EmptyText()) {}
  // NOLINTBEGIN(google-explicit-constructor): a key is a string.
  ArgKey(std::string_view name) : name_(Intern(name)) {}
  ArgKey(const std::string& name) : name_(Intern(name)) {}
  ArgKey(const char* name) : name_(Intern(name)) {}
  operator const std::string&() const noexcept { return *name_; }
  operator std::string_view() const noexcept { return *name_; }
  // NOLINTEND(google-explicit-constructor)

  const std::string& str() const noexcept { return *name_; }
  const char* data() const noexcept { return name_->data(); }
  const char* c_str() const noexcept { return name_->c_str(); }
  size_t size() const noexcept { return name_->size(); }
  bool empty() const noexcept { return name_->empty(); }

  // Interned in one process-wide table, so one pointer means one name;
  // another copy of the library in the process has a table of its own,
  // hence the text comparison after the pointer's.
  friend bool operator==(const ArgKey& a, const ArgKey& b) noexcept {
    return a.name_ == b.name_ || *a.name_ == *b.name_;
  }
  friend bool operator==(const ArgKey& a, std::string_view b) noexcept {
    return *a.name_ == b;
  }
  friend bool operator==(const ArgKey& a, const std::string& b) noexcept {
    return *a.name_ == b;
  }
  friend bool operator==(const ArgKey& a, const char* b) noexcept {
    return *a.name_ == b;
  }
  friend std::string operator+(std::string text, const ArgKey& key) {
    text += key.str();
    return text;
  }
  friend std::string operator+(const ArgKey& key, std::string_view text) {
    std::string out = key.str();
    out += text;
    return out;
  }
  friend std::string operator+(const char* text, const ArgKey& key) {
    return std::string(text) + key;
  }
  template <typename Out>
  friend auto operator<<(Out& out, const ArgKey& key)
      -> decltype(out << std::declval<const std::string&>()) {
    return out << key.str();
  }
  friend std::strong_ordering operator<=>(const ArgKey& a,
                                          const ArgKey& b) noexcept {
    return a.str().compare(b.str()) <=> 0;
  }

 private:
  static const std::string* Intern(std::string_view name) {
    if (name.empty()) return &internal::EmptyText();
    // The names met last on this thread, by hash: a capture's arguments
    // repeat a few names, which then cost no lock.
    constexpr size_t kRecent = 64;
    thread_local std::array<const std::string*, kRecent> recent{};
    const size_t slot = std::hash<std::string_view>{}(name) % kRecent;
    if (recent[slot] != nullptr && *recent[slot] == name) return recent[slot];
    // Never destroyed: a session may end while static objects are.
    static std::mutex* const mu = new std::mutex();
    static auto* const names = new std::unordered_set<std::string>();
    const std::lock_guard<std::mutex> lock(*mu);
    const std::string* interned = &*names->emplace(name).first;
    recent[slot] = interned;
    return interned;
  }

  const std::string* name_;
};

// `ArgText` is a string argument's text in 8 bytes (numeric arguments and
// counters, most of them, hold none). It reads as a `const std::string&`
// and a `std::string_view`, and is made from any string.
class ArgText {
 public:
  ArgText() noexcept = default;
  // NOLINTBEGIN(google-explicit-constructor): a text is a string.
  ArgText(std::string_view text) { assign(text); }
  ArgText(const std::string& text) { assign(text); }
  ArgText(std::string&& text)
      : text_(text.empty() ? nullptr
                           : std::make_unique<std::string>(std::move(text))) {}
  ArgText(const char* text) { assign(text); }
  operator const std::string&() const noexcept { return str(); }
  operator std::string_view() const noexcept { return str(); }
  // NOLINTEND(google-explicit-constructor)
  ArgText(const ArgText& other) { assign(other.str()); }
  ArgText& operator=(const ArgText& other) {
    if (this != &other) assign(other.str());
    return *this;
  }
  ArgText(ArgText&&) noexcept = default;
  ArgText& operator=(ArgText&&) noexcept = default;
  ~ArgText() = default;

  void assign(std::string_view text) {
    text_ = text.empty() ? nullptr : std::make_unique<std::string>(text);
  }
  void assign(const char* data, size_t size) {
    assign(std::string_view(data, size));
  }
  const std::string& str() const noexcept {
    return text_ != nullptr ? *text_ : internal::EmptyText();
  }
  const char* data() const noexcept { return str().data(); }
  size_t size() const noexcept { return str().size(); }
  bool empty() const noexcept { return text_ == nullptr; }

  friend bool operator==(const ArgText& a, const ArgText& b) noexcept {
    return a.str() == b.str();
  }
  friend bool operator==(const ArgText& a, std::string_view b) noexcept {
    return a.str() == b;
  }
  friend bool operator==(const ArgText& a, const std::string& b) noexcept {
    return a.str() == b;
  }
  friend bool operator==(const ArgText& a, const char* b) noexcept {
    return a.str() == b;
  }
  template <typename Out>
  friend auto operator<<(Out& out, const ArgText& text)
      -> decltype(out << std::declval<const std::string&>()) {
    return out << text.str();
  }

 private:
  std::unique_ptr<std::string> text_;
};

// `SpanArg` is one numeric argument attached to a span (`SPANPROF_ARG`), one
// string argument (`SPANPROF_ARG_STR`, `is_string`: `text`, at most
// kMaxArgTextBytes bytes of valid UTF-8), or one named counter's self count
// (`SPANPROF_COUNT`, `is_counter`).
//
// A counter entry's `int_value` is the sum of the increments of counter `key`
// made while this span was the innermost open span of its thread (its self
// count; a span's inclusive count adds its same-thread descendants', which
// analysis computes). A span has at most one counter entry per name and none
// for a counter it did not count; counter entries follow the span's numeric
// arguments. Counter entries are never doubles.
//
// `int_value` and `double_value` share their 8 bytes: read `double_value`
// when `is_double`, `int_value` otherwise (a string argument's is 0).
struct SpanArg {
  ArgKey key;
  union {
    int64_t int_value = 0;
    double double_value;
  };
  // A string argument's text; `truncated` when the program's text was longer
  // than kMaxArgTextBytes.
  ArgText text;
  bool is_double = false;
  bool is_counter = false;
  bool is_string = false;
  bool truncated = false;

  // Equal keys, flags and texts, and equal values of the kind `is_double`
  // names (a NaN equals nothing, as a double does).
  friend bool operator==(const SpanArg& a, const SpanArg& b) {
    return a.key == b.key && a.is_double == b.is_double &&
           a.is_counter == b.is_counter && a.is_string == b.is_string &&
           a.truncated == b.truncated && a.text == b.text &&
           (a.is_double ? a.double_value == b.double_value
                        : a.int_value == b.int_value);
  }
};
// 32 bytes: a capture holds one per argument (the one a session end writes
// its outputs from holds them packed: Capture::packed_args).
static_assert(sizeof(SpanArg) == 32,
              "SpanArg is a capture's per-argument cost");

// `Span` is one retained span. Times are nanoseconds relative to the session
// start. `parent_id` is 0 for a root. A parent on another thread is a
// cross-thread parent: linked, never subtracted from the child thread's time.
//
// 56 bytes: a capture holds one per retained span (the one a session end
// writes its outputs from holds them in 40: Capture::compact_spans).
// Allocation deltas live in `Capture::span_allocs`, a column that exists only
// when allocations were measured.
struct Span {
  uint64_t id = 0;         // unique, > 0
  uint64_t parent_id = 0;  // 0 = root
  uint32_t site = 0;       // index into Capture::sites
  uint32_t thread = 0;     // index into Capture::threads
  uint32_t depth = 0;      // 0 for roots, parent depth + 1 otherwise
  uint16_t flags = 0;      // SpanFlag bits
  // Arguments are `Capture::args[first_arg, first_arg + arg_count)`; a span
  // keeps at most kMaxSpanArgs (more are counted in Capture::dropped_args).
  uint16_t arg_count = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // This thread's heartbeats between begin and end (the runtime counts them
  // in 32 bits per span).
  uint32_t heartbeats = 0;
  uint32_t first_arg = 0;

  friend bool operator==(const Span&, const Span&) = default;
};
static_assert(sizeof(Span) == 56, "Span is session end's per-span cost");

// `SpanAllocs` is one span's allocation deltas between its begin and end, as
// spanprof::alloc counted them on its thread (`Capture::span_allocs`).
struct SpanAllocs {
  int64_t count = 0;
  int64_t bytes = 0;

  friend bool operator==(const SpanAllocs&, const SpanAllocs&) = default;
};

// `ThreadInfo` is one thread that recorded at least one span.
struct ThreadInfo {
  uint64_t os_tid = 0;  // OS thread id (fits 32 bits on Linux)
  std::string name;     // SetThreadName(), or "" (shown as thread-<tid>)
  uint32_t sort_index = 0;
  // Index into `Capture::processes` of the process the thread belongs to;
  // 0, and ignored, when `processes` is empty (a single-process capture).
  uint32_t process = 0;

  friend bool operator==(const ThreadInfo&, const ThreadInfo&) = default;
};

// `ProcessResources` holds getrusage deltas over the session (peak RSS is the
// process's high-water mark at session end).
struct ProcessResources {
  int64_t user_cpu_ns = 0;
  int64_t system_cpu_ns = 0;
  int64_t peak_rss_kib = 0;
  int64_t minor_page_faults = 0;
  int64_t major_page_faults = 0;
  int64_t voluntary_context_switches = 0;
  int64_t involuntary_context_switches = 0;

  friend bool operator==(const ProcessResources&,
                         const ProcessResources&) = default;
};

// `SiteDrops` counts the spans of one site that the cap did not retain.
struct SiteDrops {
  uint32_t site = 0;  // index into Capture::sites
  uint64_t count = 0;

  friend bool operator==(const SiteDrops&, const SiteDrops&) = default;
};

// `ArgDrop` counts the arguments (`SPANPROF_ARG`, `SPANPROF_ARG_STR`) or the
// counter flushes (`SPANPROF_COUNT`) of one kind, name and span site that
// the capture lost for one reason. `reason` is one of:
//   "cap"            the span they belonged to was dropped by the event cap
//                    (its arguments and counts went with it), or
//                    overwritten by a flight recorder's ring, as were the
//                    records around them;
//   "side_budget"    the side record buffer (bounded by the same cap) was
//                    full;
//   "no_open_span"   made on a thread with no span open: nothing to attach
//                    them to (`site` is then the span that began next on
//                    that thread, where the program most likely meant them
//                    to go; empty when none did);
//   "span_left_open" attached to a span that never ended and lost with it;
//   "counter_limit"  a counter name past the process's 64 distinct names;
//   "arg_limit"      past kMaxSpanArgs arguments on one span;
//   "unknown"        the capture knows only how many (a capture recovered
//                    from a stream, or a trace written before drops were
//                    named): `name` is "" and `site` empty.
// `site` is an index into `Capture::sites` (the span they belonged to),
// empty when the runtime could not tell which one. `count` is one per argument
// or per counter flush (a flush carries a counter's increments made in one span
// between two of its children). Σ `count` over `Capture::arg_drops` is
// `Capture::dropped_args`.
struct ArgDrop {
  std::optional<uint32_t> site{};
  std::string name{};
  bool is_counter = false;
  std::string reason{};
  uint64_t count = 0;

  friend bool operator==(const ArgDrop&, const ArgDrop&) = default;
};

// `ExportedSpanId` is a span whose id left the process: a
// `Context::Traceparent()` named it, so another process may have it as its
// remote parent. `external_id` is the W3C parent-id handed out.
struct ExportedSpanId {
  uint64_t span = 0;  // Span::id
  uint64_t external_id = 0;

  friend bool operator==(const ExportedSpanId&,
                         const ExportedSpanId&) = default;
};

// `DerivedSpanId(seed, n)` is the 64-bit id usable outside the capture of
// span `n` (Span::id) in a capture whose `span_id_seed` is `seed`: a bijective
// mix (the splitmix64 finalizer) of `seed + n`, so distinct spans of one
// capture get distinct ids. Exported spans (`Capture::exported_span_ids`) use
// `seed + 2^63 + k` for the k-th export instead, a disjoint input range.
// Never 0 (the W3C all-zero id is invalid): a zero result becomes 1.
constexpr uint64_t DerivedSpanId(uint64_t seed, uint64_t n) noexcept {
  uint64_t z = seed + n;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z = z ^ (z >> 31);
  return z == 0 ? 1 : z;
}
inline constexpr uint64_t kExportedSpanIdBase = uint64_t{1} << 63;

// `ProcessInfo` is one process of a merged capture (`spanprof merge`,
// spanprof/analysis/merge.h): what its own capture said about where and when
// it ran, and how its spans were placed in the merged capture. A merged
// capture's span times are on one timeline whose time 0 is the earliest
// anchor; this process's spans were shifted by `time_offset_ns` and its span
// ids by `span_id_offset`.
struct ProcessInfo {
  int64_t pid = 0;
  std::string process_name;
  std::string host;
  std::string clock;  // "tsc" or "monotonic"
  std::string trace_id;
  // Its capture's anchor and uncertainty (Capture::wall_clock_anchor_ns).
  int64_t wall_clock_anchor_ns = 0;
  int64_t wall_clock_uncertainty_ns = 0;
  // Where its time 0 lies on the merged timeline: its anchor minus the merged
  // capture's anchor (>= 0).
  int64_t time_offset_ns = 0;
  // Its session length (Capture::window_ns).
  int64_t window_ns = 0;
  // Its capture's remote parent (Capture::remote_parent_span_id); the merge
  // made its roots children of that span when another process had it.
  uint64_t remote_parent_span_id = 0;
  // Its capture's `span_id_seed`, and what was added to its span ids to make
  // them unique in the merged capture: its span `s` had id
  // `s.id - span_id_offset` there, and its id outside is still
  // `DerivedSpanId(span_id_seed, s.id - span_id_offset)`.
  uint64_t span_id_seed = 0;
  uint64_t span_id_offset = 0;
  // Its capture's `exported_span_ids`, with `span` renumbered as the merged
  // capture's span ids (sorted by span, as Capture::exported_span_ids).
  std::vector<ExportedSpanId> exported_span_ids;

  friend bool operator==(const ProcessInfo&, const ProcessInfo&) = default;
};

// `Capture` is one finished session, or a trace read by analysis.
//
// A merged capture (`spanprof merge`) holds the threads of several processes:
// `processes` lists them and each thread names its own
// (`ThreadInfo::process`). Its links between processes are ordinary
// cross-thread parents. Its top-level fields describe the whole: `pid`,
// `process_name`, `host`, `clock` and `spanprof_version` are the first
// process's (the one that started first), `wall_clock_anchor_ns` the
// earliest anchor, `wall_clock_uncertainty_ns` the largest; docs/formats.md
// ("Merged traces") lists the rest. A single-process capture has no
// `processes`: everything about its process is in the top-level fields.
struct Capture {
  // Where the capture came from: "spanprof" (the runtime, which never changes
  // it, and spanprof's own traces) or "chrome-trace" (a foreign Chrome Trace
  // Event file read by analysis; docs/formats.md, "Foreign Chrome traces").
  // The summary records it as `source`.
  std::string source = "spanprof";
  std::string spanprof_version;
  std::string process_name;
  int64_t pid = 0;
  std::string clock;  // "tsc" or "monotonic" ("unknown" for a foreign trace)
  // Wall-clock (CLOCK_REALTIME, Unix epoch, ns) time of the session start:
  // the anchor that puts captures of several processes on one timeline.
  int64_t wall_clock_anchor_ns = 0;
  // How far the anchor may be from the wall clock at the session's time 0:
  // half the session-clock interval that bracketed the CLOCK_REALTIME read
  // (the narrowest of a few tries), ns. 0 when not measured.
  int64_t wall_clock_uncertainty_ns = 0;
  // The host the capture was recorded on (gethostname), "" when unknown.
  std::string host;
  // The W3C trace id of the session, 32 lowercase hex digits: random at
  // session start, or adopted from a remote parent
  // (`RecordingOptions::traceparent`, SPANPROF_TRACEPARENT). "" for a trace
  // written before trace ids existed, or a foreign one.
  std::string trace_id;
  // The span of another process whose child this session is (the parent-id
  // of its traceparent); 0 when the session has no remote parent. Every root
  // span of the capture is that span's child when exported.
  uint64_t remote_parent_span_id = 0;
  // Seed of the span ids usable outside: span `s` is
  // `DerivedSpanId(span_id_seed, s.id)` unless it was exported.
  uint64_t span_id_seed = 0;
  // Spans whose ids were handed out (`Context::Traceparent()`), sorted by
  // span then by export order. A span's first entry is its external id;
  // later entries of the same span are aliases that name it too (a second
  // `Traceparent()` the runtime could not tell named the same span).
  std::vector<ExportedSpanId> exported_span_ids;
  // Session length: start to stop, ns.
  int64_t window_ns = 0;
  uint64_t event_limit = 0;
  std::string overflow_policy;  // "drop" or "ring"
  // Spans not retained because of the cap, in total and per site.
  uint64_t dropped_events = 0;
  std::vector<SiteDrops> dropped_by_site;
  // Arguments and counter flushes the capture lost: refused by the side
  // budget (the same cap), belonging to a span the cap dropped, or made on a
  // thread with no span open (nothing to attribute them to); named one by
  // one in `arg_drops`.
  uint64_t dropped_args = 0;
  // `dropped_args` by site, name, kind and reason (ArgDrop), sorted by
  // count descending, then site, name, kind and reason.
  std::vector<ArgDrop> arg_drops;
  // Spans not recorded because their `prepare` hook failed (threw or
  // returned false): the body ran without a span.
  uint64_t failed_prepares = 0;
  // False when the session did not end normally (a signal, a crash, or a
  // capture recovered from a stream). exit() inside the body and
  // `spanprof::FinishSession()` are normal ends: the spans open then are
  // flagged kSpanOpenAtExit.
  bool finished_normally = true;
  // How the session ended: "finished" (through the API), "exit" (exit()
  // inside the body), "signal:SIGTERM" (SIGINT, SIGTERM or SIGHUP ended it,
  // then the signal's default action ran), "crash:SIGSEGV" (a fatal signal,
  // or "crash:terminate" for std::terminate; recovered from the stream) or
  // "lost" (recovered from a stream that has no end: the program was
  // killed). docs/formats.md lists them.
  std::string end_reason = "finished";
  // Measured cost of one span at session start, rounded to whole ns.
  int64_t overhead_ns_per_span = 0;
  // True when the program links spanprof::alloc.
  bool alloc_measured = false;
  ProcessResources process_resources;

  // The processes of a merged capture, in the order of their anchors
  // (earliest first); empty for a single-process capture.
  std::vector<ProcessInfo> processes;
  std::vector<ThreadInfo> threads;
  std::vector<Site> sites;
  std::vector<Span> spans;  // sorted by (thread, start_ns, depth)
  // Set only in the capture a session end builds for its own outputs, which
  // never reaches the program: its spans, 40 bytes each, in place of `spans`
  // (empty then). The analysis library reads both forms alike.
  std::shared_ptr<const internal::CompactSpans> compact_spans;
  // Allocation deltas, a column parallel to `spans` (`span_allocs[i]` is
  // `spans[i]`'s) when `alloc_measured`; empty otherwise. Read it with
  // `AllocsOf()`, which gives zeros for a span the column does not cover.
  std::vector<SpanAllocs> span_allocs;
  std::vector<SpanArg> args;
  // Set only in the capture a session end builds for its own outputs, which
  // never reaches the program: its arguments, packed a few bytes each, in
  // place of `args` (empty then); a span's `first_arg` is its arguments'
  // offset in them. The analysis library reads both forms alike.
  std::shared_ptr<const internal::PackedArgs> packed_args;
  // Problems a reader of a foreign trace found that no span shows (an end
  // event with nothing open, an X event with a negative duration), each
  // naming its place in the file. Analysis reports them as validation issues
  // of span 0. The runtime never sets them.
  std::vector<std::string> import_issues;

  friend bool operator==(const Capture&, const Capture&) = default;
};

// `ProcessOfThread()` is the process a thread of `capture` belongs to: its
// `processes` entry, or nullptr for a single-process capture (or an index out
// of range), whose top-level fields describe the process.
inline const ProcessInfo* ProcessOfThread(const Capture& capture,
                                          uint32_t thread) {
  if (capture.processes.empty() || thread >= capture.threads.size()) {
    return nullptr;
  }
  const uint32_t process = capture.threads[thread].process;
  return process < capture.processes.size() ? &capture.processes[process]
                                            : nullptr;
}

// `AllocsOf()` is span `index`'s allocation deltas: `span_allocs[index]`, or
// zeros when the column does not cover it (allocations not measured).
inline SpanAllocs AllocsOf(const Capture& capture, size_t index) {
  return index < capture.span_allocs.size() ? capture.span_allocs[index]
                                            : SpanAllocs{};
}

// `ThreadPid()` is the OS pid of a thread's process: its process's pid in a
// merged capture, else `capture.pid`.
inline int64_t ThreadPid(const Capture& capture, uint32_t thread) {
  const ProcessInfo* process = ProcessOfThread(capture, thread);
  return process != nullptr ? process->pid : capture.pid;
}

// `ExternalSpanId()` is the 64-bit id of `span` outside the capture (W3C
// parent-id, OTLP spanId): its first `exported_span_ids` entry, else
// `DerivedSpanId(capture.span_id_seed, span.id)`. In a merged capture the
// span's own process says it (`ProcessInfo::exported_span_ids`, `span_id_seed`
// and `span_id_offset`), so the id is the one its own capture gave it.
inline uint64_t ExternalSpanId(const Capture& capture, const Span& span) {
  const ProcessInfo* process = ProcessOfThread(capture, span.thread);
  const auto& exported = process != nullptr ? process->exported_span_ids
                                            : capture.exported_span_ids;
  auto it = std::lower_bound(
      exported.begin(), exported.end(), span.id,
      [](const ExportedSpanId& e, uint64_t id) { return e.span < id; });
  if (it != exported.end() && it->span == span.id) return it->external_id;
  if (process != nullptr) {
    return DerivedSpanId(process->span_id_seed,
                         span.id - process->span_id_offset);
  }
  return DerivedSpanId(capture.span_id_seed, span.id);
}

}  // namespace spanprof

#endif  // SPANPROF_CAPTURE_H_
