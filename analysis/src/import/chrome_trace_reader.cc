// The foreign Chrome Trace Event reader: one pass over the events, turning
// X events and B/E pairs into spans per (pid, tid), then the capture is
// assembled: threads named, times made relative to the first span, nesting
// rebuilt from the times.
#include "import/chrome_trace_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "model/capture_format.h"
#include "model/group_by_arg.h"
#include "spanprof/capture.h"
#include "status_macros.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

// At most this many import issues are kept; one more says how many were
// left out.
constexpr size_t kMaxImportIssues = 100;

// The kinds of skipped events, in the order the note lists them.
enum SkippedKind : size_t {
  kSkipInstant,
  kSkipCounter,
  kSkipFlow,
  kSkipAsync,
  kSkipObject,
  kSkipMark,
  kSkipSample,
  kSkipMemoryDump,
  kSkipClockSync,
  kSkipContext,
  kSkipOther,
  kSkipKinds,
};
constexpr std::array<std::string_view, kSkipKinds> kSkippedKindNames = {
    "instant", "counter",     "flow",       "async",   "object",       "mark",
    "sample",  "memory dump", "clock sync", "context", "unknown-phase"};

SkippedKind SkippedKindOf(std::string_view ph) {
  if (ph.size() != 1) return kSkipOther;
  switch (ph[0]) {
    case 'i':
    case 'I':
      return kSkipInstant;
    case 'C':
      return kSkipCounter;
    case 's':
    case 't':
    case 'f':
      return kSkipFlow;
    case 'b':
    case 'e':
    case 'n':
    case 'S':
    case 'T':
    case 'F':
    case 'p':
      return kSkipAsync;
    case 'N':
    case 'O':
    case 'D':
      return kSkipObject;
    case 'R':
      return kSkipMark;
    case 'P':
      return kSkipSample;
    case 'v':
    case 'V':
      return kSkipMemoryDump;
    case 'c':
      return kSkipClockSync;
    case '(':
    case ')':
      return kSkipContext;
    default:
      return kSkipOther;
  }
}

// A field of an event kept as its raw text, parsed only if the event's
// phase uses it (a skipped event's fields are never judged).
struct RawField {
  bool present = false;
  json_type type = json_type::null;
  std::string_view text;  // the raw token (a scalar's text)
  std::string_view str;   // the unescaped string, when type is string
};

// One event's fields as read.
struct RawEvent {
  RawField ph;
  RawField name;
  RawField cat;
  RawField pid;
  RawField tid;
  RawField ts;
  RawField dur;
  std::vector<SpanArg> args;  // numeric args
  std::optional<std::string_view> group_value;
  std::optional<std::string_view> meta_name;  // args.name (M events)
  std::optional<int64_t> sort_index;          // args.sort_index (M events)

  void Clear() {
    ph = name = cat = pid = tid = ts = dur = RawField();
    args.clear();
    group_value.reset();
    meta_name.reset();
    sort_index.reset();
  }
};

// A `B` or `E` event, kept until the whole file is read: a thread's pairs
// are matched in time order, not file order (writers that buffer per thread
// and flush at exit write them out of order).
struct Boundary {
  size_t event = 0;
  bool begin = false;
  int64_t ts_ns = 0;
  uint32_t site = 0;  // a B's
  std::vector<SpanArg> args;
};

// A `B` event waiting for its `E`.
struct OpenBegin {
  size_t event = 0;
  int64_t start_ns = 0;
  uint32_t site = 0;
  std::vector<SpanArg> args;
};

// A span before assembly: times are absolute (the file's), `thread` is the
// index into `ThreadKey`s in order of first appearance.
struct PendingSpan {
  uint64_t id = 0;  // event index + 1
  uint32_t thread = 0;
  uint32_t site = 0;
  uint16_t flags = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<SpanArg> args;
};

using ThreadKey = std::pair<int64_t, int64_t>;  // (pid, tid)

class ChromeTraceReader {
 public:
  ChromeTraceReader(std::string_view source, const TraceReadOptions& options)
      : json_(source),
        options_(options),
        site_of_key_(0, SiteHash{&sites_}, SiteEq{&sites_}) {}
  ChromeTraceReader(const ChromeTraceReader&) = delete;
  ChromeTraceReader& operator=(const ChromeTraceReader&) = delete;

  absl::StatusOr<Capture> Read(std::string_view text) {
    const simdjson::padded_string padded(text);
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document document;
    const JsonPath root = JsonPath::Root();
    // simdjson leaves the copy empty when it cannot allocate it.
    if (padded.size() != text.size()) {
      return json_.Simdjson(simdjson::MEMALLOC, root);
    }
    simdjson::error_code error = parser.iterate(padded).get(document);
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, root);
    json_type type;
    error = document.type().get(type);
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, root);
    if (type == json_type::array) {
      simdjson::ondemand::array events;
      error = document.get_array().get(events);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, root);
      events_path_prefix_ = "$";
      SPANPROF_RETURN_IF_ERROR(ReadEvents(events, root));
    } else {
      SPANPROF_RETURN_IF_ERROR(ReadRoot(document, root));
    }
    const char* location = nullptr;
    if (document.current_location().get(location) == simdjson::SUCCESS) {
      return json_.Error(root, "unexpected content after the top-level value");
    }
    MatchBoundaries();
    CloseUnfinished();
    return Assemble();
  }

 private:
  // `{"traceEvents": [...], ...}`: every other member is ignored.
  absl::Status ReadRoot(simdjson::ondemand::document& document,
                        const JsonPath& root) {
    object top;
    simdjson::error_code error = document.get_object().get(top);
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, root);
    bool found = false;
    // Not SPANPROF_RETURN_IF_ERROR: the lambda uses the macros (-Wshadow).
    absl::Status walked = json_.ForEachField(
        top, root, [&](std::string_view key, value& v) -> absl::Status {
          if (key != "traceEvents") return absl::OkStatus();
          if (found) {
            return json_.Error(root, "duplicate field \"traceEvents\"");
          }
          found = true;
          const JsonPath path = root.Field("traceEvents");
          SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::array events,
                                    json_.Array(v, path));
          return ReadEvents(events, path);
        });
    if (!walked.ok()) return walked;
    if (!found) {
      return json_.Error(root, "missing field \"traceEvents\" (not a trace)");
    }
    return absl::OkStatus();
  }

  absl::Status ReadEvents(simdjson::ondemand::array& events,
                          const JsonPath& path) {
    return json_.ForEachElement(
        events, path,
        [&](size_t index, value& v, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, ep));
          event_.Clear();
          SPANPROF_RETURN_IF_ERROR(ReadFields(o, ep));
          return Dispatch(index, ep);
        });
  }

  static RawField Raw(value& v) {
    RawField field;
    field.present = true;
    if (v.type().get(field.type) != simdjson::SUCCESS) {
      field.type = json_type::null;
    }
    if (field.type != json_type::object && field.type != json_type::array) {
      field.text = StrictJson::TrimRight(v.raw_json_token());
    }
    return field;
  }

  absl::Status ReadFields(object& o, const JsonPath& path) {
    return json_.ForEachField(
        o, path, [&](std::string_view key, value& v) -> absl::Status {
          RawField* raw = FieldFor(key);
          if (raw != nullptr) {
            if (raw->present) {
              return json_.Error(path, Cat("duplicate field ", Quote(key)));
            }
            *raw = Raw(v);
            if (raw->type == json_type::string) {
              SPANPROF_ASSIGN_OR_RETURN(raw->str,
                                        json_.String(v, path.Field(key)));
            }
          } else if (key == "args") {
            return ReadArgs(v, path.Field("args"));
          }
          return absl::OkStatus();
        });
  }

  RawField* FieldFor(std::string_view key) {
    if (key == "ph") return &event_.ph;
    if (key == "name") return &event_.name;
    if (key == "cat") return &event_.cat;
    if (key == "pid") return &event_.pid;
    if (key == "tid") return &event_.tid;
    if (key == "ts") return &event_.ts;
    if (key == "dur") return &event_.dur;
    return nullptr;
  }

  // Numeric members become span arguments (first of a key wins); the
  // grouping argument and M events' `name` and `sort_index` are kept; the
  // rest (strings, objects, arrays) is dropped. `args` that is not an object
  // is ignored.
  absl::Status ReadArgs(value& v, const JsonPath& path) {
    json_type type;
    if (v.type().get(type) != simdjson::SUCCESS || type != json_type::object) {
      return absl::OkStatus();
    }
    SPANPROF_ASSIGN_OR_RETURN(object args, json_.Object(v, path));
    return json_.ForEachField(
        args, path, [&](std::string_view key, value& arg) -> absl::Status {
          json_type arg_type;
          if (arg.type().get(arg_type) != simdjson::SUCCESS) {
            return absl::OkStatus();
          }
          if (arg_type == json_type::string) {
            // Every string is read (unescaped), whether used or not, so that
            // what is accepted does not depend on the grouping argument.
            SPANPROF_ASSIGN_OR_RETURN(std::string_view text,
                                      json_.String(arg, path.Field(key)));
            if (key == options_.group_by_arg && !event_.group_value) {
              event_.group_value = text;
            }
            if (key == "name" && !event_.meta_name) event_.meta_name = text;
          } else if (arg_type == json_type::number) {
            AddNumericArg(key, arg);
          }
          return absl::OkStatus();
        });
  }

  void AddNumericArg(std::string_view key, value& arg) {
    for (const SpanArg& seen : event_.args) {
      if (seen.key == key) return;
    }
    const std::string_view raw = StrictJson::TrimRight(arg.raw_json_token());
    SpanArg out;
    out.key = std::string(key);
    if (StrictJson::ParseInteger(raw, &out.int_value) !=
        StrictJson::IntegerForm::kOk) {
      if (arg.get_double().get(out.double_value) != simdjson::SUCCESS) return;
      out.is_double = true;
    }
    if (key == "sort_index" && !out.is_double) {
      event_.sort_index = out.int_value;
    }
    event_.args.push_back(std::move(out));
  }

  absl::Status Dispatch(size_t index, const JsonPath& path) {
    if (!event_.ph.present) {
      return json_.Error(path, "missing field \"ph\"");
    }
    SPANPROF_RETURN_IF_ERROR(ExpectString(event_.ph, path.Field("ph")));
    const std::string_view ph = event_.ph.str;
    if (ph == "X") return OnComplete(index, path);
    if (ph == "B") return OnBegin(index, path);
    if (ph == "E") return OnEnd(index, path);
    if (ph == "M") return OnMetadata(path);
    ++skipped_[SkippedKindOf(ph)];
    return absl::OkStatus();
  }

  absl::Status ExpectString(const RawField& field, const JsonPath& path) const {
    if (field.type == json_type::string) return absl::OkStatus();
    return json_.Error(path, Cat("expected string, got ", Describe(field)));
  }

  static std::string Describe(const RawField& field) {
    if (field.type == json_type::object) return "an object";
    if (field.type == json_type::array) return "an array";
    constexpr size_t kMax = 48;
    if (field.text.size() > kMax) return Cat(field.text.substr(0, kMax), "...");
    return std::string(field.text);
  }

  // An optional string field (name, cat): "" when absent.
  absl::StatusOr<std::string_view> OptionalString(const RawField& field,
                                                  const JsonPath& path) const {
    if (!field.present) return std::string_view();
    SPANPROF_RETURN_IF_ERROR(ExpectString(field, path));
    return field.str;
  }

  // pid and tid: integers (a missing pid is 0, a missing tid the pid).
  absl::StatusOr<int64_t> Id(const RawField& field, const JsonPath& path,
                             int64_t absent) const {
    if (!field.present) return absent;
    int64_t out = 0;
    if (field.type != json_type::number ||
        StrictJson::ParseInteger(field.text, &out) !=
            StrictJson::IntegerForm::kOk) {
      return json_.Error(path, Cat("expected integer, got ", Describe(field)));
    }
    return out;
  }

  absl::StatusOr<int64_t> Micros(const RawField& field,
                                 const JsonPath& path) const {
    if (!field.present) {
      return json_.Error(path, "missing (expected microseconds)");
    }
    int64_t ns = 0;
    if (field.type != json_type::number) {
      return json_.Error(path, Cat("expected a number of microseconds, got ",
                                   Describe(field)));
    }
    if (!ParseChromeMicros(field.text, &ns)) {
      return json_.Error(
          path, Cat("invalid or out-of-range microseconds ", Describe(field)));
    }
    return ns;
  }

  absl::StatusOr<uint32_t> Thread(const JsonPath& path) {
    SPANPROF_ASSIGN_OR_RETURN(int64_t pid,
                              Id(event_.pid, path.Field("pid"), 0));
    SPANPROF_ASSIGN_OR_RETURN(int64_t tid,
                              Id(event_.tid, path.Field("tid"), pid));
    auto [it, inserted] = thread_of_key_.emplace(
        ThreadKey{pid, tid}, static_cast<uint32_t>(thread_keys_.size()));
    if (inserted) {
      thread_keys_.emplace_back(pid, tid);
      open_.emplace_back();
      boundaries_.emplace_back();
    }
    return it->second;
  }

  // The site of the event's name and category (and grouping argument).
  absl::StatusOr<uint32_t> SiteOf(const JsonPath& path) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view name,
                              OptionalString(event_.name, path.Field("name")));
    SPANPROF_ASSIGN_OR_RETURN(std::string_view cat,
                              OptionalString(event_.cat, path.Field("cat")));
    std::string grouped_name;
    if (event_.group_value.has_value()) {
      grouped_ = true;
      // A foreign trace's values are whole: never marked truncated.
      grouped_name = GroupedSiteName(name, options_.group_by_arg,
                                     *event_.group_value, /*truncated=*/false);
      name = grouped_name;
    }
    // Looked up by views into the event: a name is copied once, into its
    // site, however many events it has.
    const auto it = site_of_key_.find(SiteKey{name, cat});
    if (it != site_of_key_.end()) return *it;
    const auto index = static_cast<uint32_t>(sites_.size());
    sites_.push_back(
        Site{.name = std::string(name), .phase = std::string(cat)});
    site_of_key_.insert(index);
    return index;
  }

  void AddIssue(std::string message) {
    ++issue_count_;
    if (issues_.size() < kMaxImportIssues)
      issues_.push_back(std::move(message));
  }

  absl::Status OnComplete(size_t index, const JsonPath& path) {
    SPANPROF_ASSIGN_OR_RETURN(int64_t start,
                              Micros(event_.ts, path.Field("ts")));
    if (!event_.dur.present) {
      AddIssue(Cat(path.ToString(), ": X event without \"dur\" (skipped)"));
      return absl::OkStatus();
    }
    SPANPROF_ASSIGN_OR_RETURN(int64_t dur,
                              Micros(event_.dur, path.Field("dur")));
    SPANPROF_ASSIGN_OR_RETURN(uint32_t thread, Thread(path));
    SPANPROF_ASSIGN_OR_RETURN(uint32_t site, SiteOf(path));
    if (dur < 0) {
      AddIssue(Cat(path.Field("dur").ToString(), ": negative duration ",
                   event_.dur.text, " us (read as 0)"));
      dur = 0;
    }
    int64_t end = 0;
    if (__builtin_add_overflow(start, dur, &end)) {
      return json_.Error(path.Field("dur"), "ts + dur is out of range");
    }
    AddSpan(index, thread, site, start, end, std::move(event_.args));
    return absl::OkStatus();
  }

  absl::Status OnBegin(size_t index, const JsonPath& path) {
    SPANPROF_ASSIGN_OR_RETURN(int64_t start,
                              Micros(event_.ts, path.Field("ts")));
    SPANPROF_ASSIGN_OR_RETURN(uint32_t thread, Thread(path));
    SPANPROF_ASSIGN_OR_RETURN(uint32_t site, SiteOf(path));
    boundaries_[thread].push_back(
        Boundary{index, true, start, site, std::move(event_.args)});
    return absl::OkStatus();
  }

  absl::Status OnEnd(size_t index, const JsonPath& path) {
    SPANPROF_ASSIGN_OR_RETURN(int64_t end, Micros(event_.ts, path.Field("ts")));
    SPANPROF_ASSIGN_OR_RETURN(uint32_t thread, Thread(path));
    boundaries_[thread].push_back(
        Boundary{index, false, end, 0, std::move(event_.args)});
    return absl::OkStatus();
  }

  // Pairs each thread's B and E events in time order (file order among equal
  // times): an E closes the innermost B open at its time; the E's name is
  // not compared (Chrome's and Perfetto's importers close it whatever it
  // says).
  void MatchBoundaries() {
    for (uint32_t thread = 0; thread < boundaries_.size(); ++thread) {
      std::vector<Boundary>& events = boundaries_[thread];
      std::stable_sort(events.begin(), events.end(),
                       [](const Boundary& a, const Boundary& b) {
                         return a.ts_ns < b.ts_ns;
                       });
      for (Boundary& event : events) {
        if (event.begin) {
          open_[thread].push_back(OpenBegin{event.event, event.ts_ns,
                                            event.site, std::move(event.args)});
        } else {
          Close(thread, event);
        }
      }
      events = {};
    }
  }

  // Closes the innermost open B of `thread` with the E `end`.
  void Close(uint32_t thread, Boundary& end) {
    std::vector<OpenBegin>& open = open_[thread];
    if (open.empty()) {
      const auto [pid, tid] = thread_keys_[thread];
      AddIssue(Cat(Path(end.event), ": E event with no open B on pid ", pid,
                   " tid ", tid, " (ignored)"));
      return;
    }
    OpenBegin begin = std::move(open.back());
    open.pop_back();
    for (SpanArg& arg : end.args) {
      const bool seen =
          std::any_of(begin.args.begin(), begin.args.end(),
                      [&](const SpanArg& a) { return a.key == arg.key; });
      if (!seen) begin.args.push_back(std::move(arg));
    }
    AddSpan(begin.event, thread, begin.site, begin.start_ns, end.ts_ns,
            std::move(begin.args));
  }

  // The path of event `index` (for messages about another event).
  std::string Path(size_t index) const {
    return Cat(events_path_prefix_, "[", index, "]");
  }

  absl::Status OnMetadata(const JsonPath& path) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view name,
                              OptionalString(event_.name, path.Field("name")));
    if (name != "process_name" && name != "thread_name" &&
        name != "thread_sort_index") {
      return absl::OkStatus();
    }
    SPANPROF_ASSIGN_OR_RETURN(int64_t pid,
                              Id(event_.pid, path.Field("pid"), 0));
    if (name == "process_name") {
      if (event_.meta_name.has_value()) {
        process_names_[pid] = std::string(*event_.meta_name);
      }
      return absl::OkStatus();
    }
    SPANPROF_ASSIGN_OR_RETURN(int64_t tid,
                              Id(event_.tid, path.Field("tid"), pid));
    if (name == "thread_name" && event_.meta_name.has_value()) {
      thread_names_[ThreadKey{pid, tid}] = std::string(*event_.meta_name);
    }
    if (name == "thread_sort_index" && event_.sort_index.has_value()) {
      thread_sort_[ThreadKey{pid, tid}] = *event_.sort_index;
    }
    return absl::OkStatus();
  }

  void AddSpan(size_t event, uint32_t thread, uint32_t site, int64_t start,
               int64_t end, std::vector<SpanArg> args) {
    PendingSpan& span = spans_.emplace_back();
    span.id = static_cast<uint64_t>(event) + 1;
    span.thread = thread;
    span.site = site;
    span.start_ns = start;
    span.end_ns = end;
    span.args = std::move(args);
    last_ns_ = std::max(last_ns_, end);
  }

  // B events never closed end at the end of the trace, flagged unfinished.
  void CloseUnfinished() {
    for (uint32_t thread = 0; thread < open_.size(); ++thread) {
      for (OpenBegin& begin : open_[thread]) {
        const auto [pid, tid] = thread_keys_[thread];
        AddIssue(Cat(Path(begin.event), ": B event on pid ", pid, " tid ", tid,
                     " never ended (closed at the end of the trace, "
                     "unfinished)"));
        AddSpan(begin.event, thread, begin.site, begin.start_ns,
                std::max(last_ns_, begin.start_ns), std::move(begin.args));
        spans_.back().flags |= kSpanUnfinished;
      }
      open_[thread].clear();
    }
  }

  absl::StatusOr<Capture> Assemble();
  void AssembleThreads(Capture& capture, std::vector<uint32_t>& thread_of);
  void AssembleProcess(Capture& capture) const;
  absl::Status MakeRelative(Capture& capture) const;
  void AddNotes() const;

  StrictJson json_;
  const TraceReadOptions& options_;
  std::string events_path_prefix_ = "$.traceEvents";
  RawEvent event_;
  std::vector<ThreadKey> thread_keys_;
  std::map<ThreadKey, uint32_t> thread_of_key_;
  std::vector<std::vector<Boundary>> boundaries_;  // by thread
  std::vector<std::vector<OpenBegin>> open_;       // by thread
  std::map<int64_t, std::string> process_names_;
  std::map<ThreadKey, std::string> thread_names_;
  std::map<ThreadKey, int64_t> thread_sort_;
  // Sites by (name, category), as indexes into sites_ hashed and compared
  // by their site's strings, so that each name is held once.
  struct SiteKey {
    std::string_view name;
    std::string_view phase;
  };
  struct SiteHash {
    using is_transparent = void;
    const std::vector<Site>* sites;
    size_t operator()(const SiteKey& k) const {
      return absl::Hash<std::pair<std::string_view, std::string_view>>{}(
          {k.name, k.phase});
    }
    size_t operator()(uint32_t site) const {
      const Site& s = (*sites)[site];
      return (*this)(SiteKey{s.name, s.phase});
    }
  };
  struct SiteEq {
    using is_transparent = void;
    const std::vector<Site>* sites;
    SiteKey Key(uint32_t site) const {
      return {(*sites)[site].name, (*sites)[site].phase};
    }
    static SiteKey Key(const SiteKey& key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const SiteKey x = Key(a);
      const SiteKey y = Key(b);
      return x.name == y.name && x.phase == y.phase;
    }
  };
  std::vector<Site> sites_;  // before site_of_key_, whose functors use it
  absl::flat_hash_set<uint32_t, SiteHash, SiteEq> site_of_key_;
  std::vector<PendingSpan> spans_;
  std::vector<std::string> issues_;
  size_t issue_count_ = 0;
  std::array<uint64_t, kSkipKinds> skipped_{};
  bool grouped_ = false;
  int64_t last_ns_ = INT64_MIN;
};

// Nesting from the times, per thread: by (start, longest first, file order)
// each span's parent is the innermost earlier span that contains it. A span
// that overlaps the innermost one without fitting in it goes to the first
// ancestor that contains it, as an overlapping sibling: ValidateForest()
// reports it.
void Nest(std::vector<Span>& spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::make_tuple(a.thread, a.start_ns, b.end_ns, a.id) <
           std::make_tuple(b.thread, b.start_ns, a.end_ns, b.id);
  });
  std::vector<size_t> stack;
  uint32_t thread = UINT32_MAX;
  for (size_t i = 0; i < spans.size(); ++i) {
    Span& span = spans[i];
    if (span.thread != thread) {
      stack.clear();
      thread = span.thread;
    }
    while (!stack.empty() && (spans[stack.back()].end_ns <= span.start_ns ||
                              spans[stack.back()].end_ns < span.end_ns)) {
      stack.pop_back();
    }
    span.parent_id = stack.empty() ? 0 : spans[stack.back()].id;
    span.depth = static_cast<uint32_t>(stack.size());
    stack.push_back(i);
  }
  // The capture's order: (thread, start, depth). Only spans that overlap
  // without nesting can break it.
  const auto capture_order = [](const Span& a, const Span& b) {
    return std::tie(a.thread, a.start_ns, a.depth) <
           std::tie(b.thread, b.start_ns, b.depth);
  };
  if (!std::is_sorted(spans.begin(), spans.end(), capture_order)) {
    std::stable_sort(spans.begin(), spans.end(), capture_order);
  }
}

// Threads with spans, by (pid, tid). With one process a thread is named by
// its thread_name (else "tid N"); with several, "PROCESS/THREAD" where
// PROCESS is its process_name (else "pid N").
void ChromeTraceReader::AssembleThreads(Capture& capture,
                                        std::vector<uint32_t>& thread_of) {
  std::vector<bool> used(thread_keys_.size(), false);
  for (const PendingSpan& span : spans_) used[span.thread] = true;
  std::vector<uint32_t> order;
  for (uint32_t t = 0; t < thread_keys_.size(); ++t) {
    if (used[t]) order.push_back(t);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return thread_keys_[a] < thread_keys_[b];
  });
  const bool many_processes =
      !order.empty() &&
      thread_keys_[order.front()].first != thread_keys_[order.back()].first;
  thread_of.assign(thread_keys_.size(), 0);
  for (const uint32_t t : order) {
    const ThreadKey& key = thread_keys_[t];
    thread_of[t] = static_cast<uint32_t>(capture.threads.size());
    ThreadInfo& info = capture.threads.emplace_back();
    info.os_tid = static_cast<uint64_t>(key.second);
    const auto name = thread_names_.find(key);
    info.name =
        name != thread_names_.end() ? name->second : Cat("tid ", key.second);
    if (many_processes) {
      const auto process = process_names_.find(key.first);
      info.name = Cat(process != process_names_.end() ? process->second
                                                      : Cat("pid ", key.first),
                      "/", info.name);
    }
    const auto sort = thread_sort_.find(key);
    if (sort != thread_sort_.end() && sort->second >= 0 &&
        sort->second <= UINT32_MAX) {
      info.sort_index = static_cast<uint32_t>(sort->second);
    }
  }
}

// The process: the lowest pid with spans (or named, when no span), named by
// its process_name, else "pid N"; further processes are listed after it.
void ChromeTraceReader::AssembleProcess(Capture& capture) const {
  std::vector<int64_t> pids;
  for (const PendingSpan& span : spans_) {
    pids.push_back(thread_keys_[span.thread].first);
  }
  if (pids.empty()) {
    for (const auto& [pid, name] : process_names_) pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  if (pids.empty()) return;
  // A negative pid (Chrome traces allow any integer) is no OS process id:
  // the capture's pid is then 0, unknown, as summaries require (its name
  // still says "pid -1").
  capture.pid = std::max<int64_t>(pids.front(), 0);
  for (const int64_t pid : pids) {
    const auto name = process_names_.find(pid);
    if (!capture.process_name.empty()) capture.process_name += ", ";
    capture.process_name +=
        name != process_names_.end() ? name->second : Cat("pid ", pid);
  }
}

// Times relative to the first span's start (the window ends at the last
// span's end).
absl::Status ChromeTraceReader::MakeRelative(Capture& capture) const {
  if (capture.spans.empty()) return absl::OkStatus();
  int64_t first = INT64_MAX;
  int64_t last = INT64_MIN;
  for (const Span& span : capture.spans) {
    first = std::min(first, span.start_ns);
    last = std::max(last, span.end_ns);
  }
  if (__builtin_sub_overflow(last, first, &capture.window_ns)) {
    return json_.Error(JsonPath::Root(),
                       "the events' times span more than int64 nanoseconds");
  }
  for (Span& span : capture.spans) {
    span.start_ns -= first;
    span.end_ns -= first;
  }
  return absl::OkStatus();
}

void ChromeTraceReader::AddNotes() const {
  if (options_.notes == nullptr) return;
  std::string skipped;
  for (size_t k = 0; k < kSkipKinds; ++k) {
    if (skipped_[k] == 0) continue;
    skipped += Cat(skipped.empty() ? "skipped " : ", ", skipped_[k], " ",
                   kSkippedKindNames[k]);
  }
  if (!skipped.empty()) {
    options_.notes->push_back(
        Cat(json_.source(), ": ", skipped,
            " events (spanprof reads X, B/E and M events of a Chrome trace)"));
  }
  if (!options_.group_by_arg.empty() && !grouped_) {
    options_.notes->push_back(Cat(json_.source(),
                                  ": no span has a string "
                                  "argument ",
                                  Quote(options_.group_by_arg),
                                  " (rows are not split by it)"));
  }
}

absl::StatusOr<Capture> ChromeTraceReader::Assemble() {
  Capture capture;
  capture.source = std::string(kSourceChromeTrace);
  capture.clock = std::string(kClockUnknown);
  capture.overflow_policy = "drop";
  std::vector<uint32_t> thread_of;
  AssembleThreads(capture, thread_of);
  AssembleProcess(capture);
  capture.sites = std::move(sites_);
  capture.spans.reserve(spans_.size());
  for (PendingSpan& pending : spans_) {
    Span& span = capture.spans.emplace_back();
    span.id = pending.id;
    span.thread = thread_of[pending.thread];
    span.site = pending.site;
    span.flags = pending.flags;
    span.start_ns = pending.start_ns;
    span.end_ns = pending.end_ns;
    span.first_arg = static_cast<uint32_t>(capture.args.size());
    // A span keeps kMaxSpanArgs arguments; the rest are counted as dropped.
    if (pending.args.size() > kMaxSpanArgs) {
      capture.dropped_args += pending.args.size() - kMaxSpanArgs;
      pending.args.resize(kMaxSpanArgs);
    }
    span.arg_count = static_cast<uint16_t>(pending.args.size());
    for (SpanArg& arg : pending.args) capture.args.push_back(std::move(arg));
  }
  SPANPROF_RETURN_IF_ERROR(MakeRelative(capture));
  Nest(capture.spans);
  capture.import_issues = std::move(issues_);
  if (issue_count_ > kMaxImportIssues) {
    capture.import_issues.push_back(Cat("... and ",
                                        issue_count_ - kMaxImportIssues,
                                        " more import issues like these"));
  }
  AddNotes();
  return capture;
}

}  // namespace

bool ParseChromeMicros(std::string_view text, int64_t* ns) {
  if (!StrictJson::IsJsonNumber(text)) return false;
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) ++i;
  // The significant digits (leading zeros dropped) and the power of ten
  // that scales them to nanoseconds.
  std::string digits;
  int64_t scale = 3;
  bool fraction = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      fraction = true;
      continue;
    }
    if (digits.empty() && text[i] == '0') {
      if (fraction) --scale;
      continue;
    }
    if (digits.size() > 40) return false;  // beyond int64 whatever follows
    digits.push_back(text[i]);
    if (fraction) --scale;
  }
  if (i < text.size()) {
    ++i;  // 'e'
    const bool negative_exponent = text[i] == '-';
    if (text[i] == '+' || text[i] == '-') ++i;
    int64_t exponent = 0;
    for (; i < text.size(); ++i) {
      exponent = std::min<int64_t>(exponent * 10 + (text[i] - '0'), 100000);
    }
    scale += negative_exponent ? -exponent : exponent;
  }
  if (scale < 0) {
    const auto drop = static_cast<size_t>(-scale);
    digits.resize(drop >= digits.size() ? 0 : digits.size() - drop);
    scale = 0;
  }
  if (digits.empty()) {
    *ns = 0;
    return true;
  }
  if (static_cast<int64_t>(digits.size()) + scale > 19) return false;
  absl::uint128 magnitude = 0;
  for (const char c : digits) {
    magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
  }
  for (int64_t k = 0; k < scale; ++k) magnitude *= 10;
  const absl::uint128 limit =
      absl::uint128(static_cast<uint64_t>(INT64_MAX)) + (negative ? 1 : 0);
  if (magnitude > limit) return false;
  const uint64_t bits = absl::Uint128Low64(magnitude);
  *ns = negative ? static_cast<int64_t>(0 - bits) : static_cast<int64_t>(bits);
  return true;
}

absl::StatusOr<Capture> ReadChromeTrace(std::string_view json,
                                        std::string_view source,
                                        const TraceReadOptions& options) {
  return ChromeTraceReader(source, options).Read(json);
}

}  // namespace spanprof::analysis::internal
