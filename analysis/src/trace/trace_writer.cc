// The Chrome Trace Event writer: see docs/formats.md ("Trace") for the format
// and the reasons behind the flow encoding.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "io/file_io_internal.h"
#include "json/json_writer.h"
#include "model/span_args.h"
#include "model/span_list.h"
#include "resources/process_resources.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "spanprof/internal/hex_id.h"
#include "status_macros.h"
#include "trace/trace_format.h"

namespace spanprof::analysis {
namespace {

using internal::AppendMicros;
using internal::kInvalidSiteName;
using internal::kTraceSchema;
using internal::kTraceSchemaVersion;

// Durations of corrupt captures (say start_ns = INT64_MIN) saturate instead of
// overflowing.
int64_t SatSub(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_sub_overflow(a, b, &result)) {
    return b < 0 ? INT64_MAX : INT64_MIN;
  }
  return result;
}

// How a span's X event takes part in a cross-thread flow.
enum FlowRole : uint8_t { kNoFlow, kFlowIn, kFlowOut };

// Chooses, per span, at most one flow binding (an X event carries one
// `bind_id`): a cross-thread parent binds `flow_out` with its own id and its
// cross-thread children bind `flow_in` with that id, which Perfetto draws as
// one arrow per child. A span that is both a cross-thread child and a
// cross-thread parent can take only one role; a tree dynamic program picks
// the roles that draw the most arrows (ties favour the incoming arrow).
std::vector<uint8_t> PlanFlows(const Capture& capture, const Forest& forest) {
  const internal::SpanList spans(capture);
  const size_t n = spans.size();
  std::vector<uint8_t> role(n, kNoFlow);

  // A link is drawable when Perfetto imports the parent before the child: it
  // sorts X events by ts, then longer first, then file order (which is ours).
  auto drawable = [&](size_t child) {
    const uint32_t p = forest.parent(child);
    if (p == Forest::kNone) return false;
    const Span& parent = spans[p];
    const Span& span = spans[child];
    if (parent.thread == span.thread) return false;
    if (parent.start_ns != span.start_ns) {
      return parent.start_ns < span.start_ns;
    }
    return SatSub(parent.end_ns, parent.start_ns) >=
           SatSub(span.end_ns, span.start_ns);
  };
  bool any = false;
  std::vector<uint8_t> linked(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (drawable(i)) {
      linked[i] = 1;
      any = true;
    }
  }
  if (!any) return role;

  // Parents before children: breadth-first from the roots.
  std::vector<uint32_t> topo(forest.roots().begin(), forest.roots().end());
  topo.reserve(n);
  for (size_t k = 0; k < topo.size(); ++k) {
    for (uint32_t c : forest.children(topo[k])) topo.push_back(c);
  }

  // gain_out[v]: arrows drawable in v's cross-thread subtree when v binds
  // flow_out; gain_in[v]: the same when v binds flow_in (so its children
  // cannot bind to it).
  std::vector<uint64_t> gain_out(n, 0);
  std::vector<uint64_t> gain_in(n, 0);
  for (size_t k = topo.size(); k-- > 0;) {
    const uint32_t v = topo[k];
    for (uint32_t c : forest.children(v)) {
      if (!linked[c]) continue;
      gain_out[v] += std::max(gain_in[c] + 1, gain_out[c]);
      gain_in[v] += gain_out[c];
    }
  }
  std::vector<uint32_t> in_children(n, 0);
  for (uint32_t v : topo) {
    const uint32_t p = forest.parent(v);
    if (linked[v] && role[p] == kFlowOut && gain_in[v] + 1 >= gain_out[v]) {
      role[v] = kFlowIn;
      ++in_children[p];
    } else if (gain_out[v] > 0) {
      role[v] = kFlowOut;
    }
  }
  // A flow_out that no child binds to would start a flow with no arrow.
  for (size_t v = 0; v < n; ++v) {
    if (role[v] == kFlowOut && in_children[v] == 0) role[v] = kNoFlow;
  }
  return role;
}

// False when no span can have a parent on another thread, proven in one pass
// without building a Forest (~24 bytes per span): the ids are consecutive (as
// the collector writes them), so a parent id is an index, and every parent
// found that way is on its child's thread. Otherwise true: PlanFlows decides.
bool MayHaveCrossThreadParents(const Capture& capture) {
  const internal::SpanList spans(capture);
  if (spans.empty()) return false;
  const uint64_t first = spans[0].id;
  const size_t n = spans.size();
  for (size_t i = 0; i < n; ++i) {
    if (spans[i].id != first + i) return true;
  }
  // NOLINTNEXTLINE(readability-use-anyofallof): reads better as a loop.
  for (const Span& span : spans) {
    if (span.parent_id < first || span.parent_id - first >= n) continue;
    if (spans[static_cast<size_t>(span.parent_id - first)].thread !=
        span.thread) {
      return true;
    }
  }
  return false;
}

// The order of the X events: by ts, then longer first, then depth, then id,
// then array index (a total order, so the output is deterministic).
//
// The events are yielded by merging the ascending runs of the span array
// with a heap of run heads: O(n log r) for r runs and O(r) memory. The
// collector's capture is sorted per thread, so a trace has about one run
// per thread, and no per-span key array (32 bytes a span) is needed.
class EventOrder {
 public:
  explicit EventOrder(const internal::SpanList& spans) : spans_(spans) {
    const size_t n = spans.size();
    size_t begin = 0;
    for (size_t i = 1; i <= n; ++i) {
      if (i == n || Less(i, i - 1)) {
        heap_.push_back(Run{begin, i});
        begin = i;
      }
    }
    std::make_heap(heap_.begin(), heap_.end(), Later{this});
  }

  // The next event's span index; false when every event was yielded.
  bool Next(size_t* index) {
    if (heap_.empty()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), Later{this});
    Run& run = heap_.back();
    *index = run.next++;
    if (run.next == run.end) {
      heap_.pop_back();
    } else {
      std::push_heap(heap_.begin(), heap_.end(), Later{this});
    }
    return true;
  }

 private:
  struct Run {
    size_t next;
    size_t end;
  };
  // Heap order: the run whose head comes later sinks.
  struct Later {
    const EventOrder* order;
    bool operator()(const Run& a, const Run& b) const {
      return order->Less(b.next, a.next);
    }
  };

  bool Less(size_t a, size_t b) const {
    const Span& x = spans_[a];
    const Span& y = spans_[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    const int64_t x_neg_dur = SatSub(x.start_ns, x.end_ns);
    const int64_t y_neg_dur = SatSub(y.start_ns, y.end_ns);
    if (x_neg_dur != y_neg_dur) return x_neg_dur < y_neg_dur;
    if (x.depth != y.depth) return x.depth < y.depth;
    if (x.id != y.id) return x.id < y.id;
    return a < b;
  }

  const internal::SpanList& spans_;
  std::vector<Run> heap_;
};

void WriteSiteFields(JsonWriter& w, const Site& site) {
  for (size_t i = 0; i < internal::kSiteKeys.size(); ++i) {
    const std::string& value = internal::SiteField(site, i);
    if (i >= internal::kSiteAlwaysWritten && value.empty()) continue;
    w.Key(internal::kSiteKeys[i]);
    w.String(value);
  }
}

// The site of a drop or span whose index is out of range.
Site InvalidSite() { return Site{.name = std::string(kInvalidSiteName)}; }

void WriteDroppedBySite(JsonWriter& w, const Capture& capture) {
  w.BeginArray();
  for (const SiteDrops& drops : capture.dropped_by_site) {
    const Site fallback = InvalidSite();
    const Site& site = drops.site < capture.sites.size()
                           ? capture.sites[drops.site]
                           : fallback;
    w.BeginObject();
    w.Key(internal::kDropKeys[internal::kDropSite]);
    w.Uint(drops.site);
    WriteSiteFields(w, site);
    w.Key(internal::kDropKeys[internal::kDropCount]);
    w.Uint(drops.count);
    w.EndObject();
  }
  w.EndArray();
}

void WriteArgDrops(JsonWriter& w, const Capture& capture) {
  w.BeginArray();
  for (const ArgDrop& drop : capture.arg_drops) {
    w.BeginObject();
    w.Key(internal::kArgDropKeys[0]);
    if (drop.site.has_value()) {
      w.Uint(*drop.site);
    } else {
      w.Null();
    }
    w.Key(internal::kArgDropKeys[1]);
    w.String(drop.name);
    w.Key(internal::kArgDropKeys[2]);
    w.String(drop.is_counter ? "count" : "arg");
    w.Key(internal::kArgDropKeys[3]);
    w.String(drop.reason);
    w.Key(internal::kArgDropKeys[4]);
    w.Uint(drop.count);
    w.EndObject();
  }
  w.EndArray();
}

void WriteExportedSpanIds(JsonWriter& w,
                          const std::vector<ExportedSpanId>& exported) {
  w.BeginArray();
  for (const ExportedSpanId& e : exported) {
    w.BeginObject();
    w.Key(internal::kExportedSpanIdKeys[0]);
    w.Uint(e.span);
    w.Key(internal::kExportedSpanIdKeys[1]);
    w.String(spanprof::internal::HexId(e.external_id));
    w.EndObject();
  }
  w.EndArray();
}

// A merged capture's processes (metadata.processes), in ProcessInfo's order.
void WriteProcesses(JsonWriter& w, const Capture& capture) {
  using internal::kProcessKeys;
  w.BeginArray();
  for (const ProcessInfo& p : capture.processes) {
    w.BeginObject();
    w.Key(kProcessKeys[internal::kProcPid]);
    w.Int(p.pid);
    w.Key(kProcessKeys[internal::kProcProcessName]);
    w.String(p.process_name);
    w.Key(kProcessKeys[internal::kProcHost]);
    w.String(p.host);
    w.Key(kProcessKeys[internal::kProcClock]);
    w.String(p.clock);
    w.Key(kProcessKeys[internal::kProcTraceId]);
    w.String(p.trace_id);
    w.Key(kProcessKeys[internal::kProcWallClockAnchorNs]);
    w.Int(p.wall_clock_anchor_ns);
    w.Key(kProcessKeys[internal::kProcWallClockUncertaintyNs]);
    w.Int(p.wall_clock_uncertainty_ns);
    w.Key(kProcessKeys[internal::kProcTimeOffsetNs]);
    w.Int(p.time_offset_ns);
    w.Key(kProcessKeys[internal::kProcWindowNs]);
    w.Int(p.window_ns);
    w.Key(kProcessKeys[internal::kProcRemoteParentSpanId]);
    w.String(spanprof::internal::HexId(p.remote_parent_span_id));
    w.Key(kProcessKeys[internal::kProcSpanIdSeed]);
    w.String(spanprof::internal::HexId(p.span_id_seed));
    w.Key(kProcessKeys[internal::kProcSpanIdOffset]);
    w.Uint(p.span_id_offset);
    w.Key(kProcessKeys[internal::kProcExportedSpanIds]);
    WriteExportedSpanIds(w, p.exported_span_ids);
    w.EndObject();
  }
  w.EndArray();
}

// A thread's "process" is written exactly when the capture is merged.
void WriteThreads(JsonWriter& w, const Capture& capture) {
  const bool merged = !capture.processes.empty();
  w.BeginArray();
  for (const ThreadInfo& thread : capture.threads) {
    w.BeginObject();
    w.Key(internal::kThreadKeys[0]);
    w.Uint(thread.os_tid);
    w.Key(internal::kThreadKeys[1]);
    w.String(thread.name);
    w.Key(internal::kThreadKeys[2]);
    w.Uint(thread.sort_index);
    if (merged) {
      w.Key(internal::kThreadKeys[3]);
      w.Uint(thread.process);
    }
    w.EndObject();
  }
  w.EndArray();
}

void WriteSites(JsonWriter& w, const Capture& capture) {
  w.BeginArray();
  for (const Site& site : capture.sites) {
    w.BeginObject();
    WriteSiteFields(w, site);
    w.EndObject();
  }
  w.EndArray();
}

void WriteMetadata(JsonWriter& w, const Capture& capture) {
  using internal::MetadataField;
  const Capture& c = capture;
  auto key = [&](MetadataField field) {
    w.Key(internal::kMetadataKeys[field]);
  };
  w.BeginObject();
  key(internal::kMetaSchema);
  w.String(kTraceSchema);
  key(internal::kMetaSchemaVersion);
  w.Int(kTraceSchemaVersion);
  key(internal::kMetaSpanprofVersion);
  w.String(c.spanprof_version);
  key(internal::kMetaProcessName);
  w.String(c.process_name);
  key(internal::kMetaPid);
  w.Int(c.pid);
  key(internal::kMetaClock);
  w.String(c.clock);
  key(internal::kMetaWallClockAnchorNs);
  w.Int(c.wall_clock_anchor_ns);
  key(internal::kMetaWallClockUncertaintyNs);
  w.Int(c.wall_clock_uncertainty_ns);
  key(internal::kMetaHost);
  w.String(c.host);
  key(internal::kMetaTraceId);
  w.String(c.trace_id);
  key(internal::kMetaRemoteParentSpanId);
  w.String(spanprof::internal::HexId(c.remote_parent_span_id));
  key(internal::kMetaSpanIdSeed);
  w.String(spanprof::internal::HexId(c.span_id_seed));
  key(internal::kMetaExportedSpanIds);
  WriteExportedSpanIds(w, c.exported_span_ids);
  key(internal::kMetaWindowNs);
  w.Int(c.window_ns);
  key(internal::kMetaEventLimit);
  w.Uint(c.event_limit);
  key(internal::kMetaOverflowPolicy);
  w.String(c.overflow_policy);
  key(internal::kMetaDroppedEvents);
  w.Uint(c.dropped_events);
  key(internal::kMetaDroppedBySite);
  WriteDroppedBySite(w, c);
  key(internal::kMetaDroppedArgs);
  w.Uint(c.dropped_args);
  key(internal::kMetaArgDrops);
  WriteArgDrops(w, c);
  key(internal::kMetaFailedPrepares);
  w.Uint(c.failed_prepares);
  key(internal::kMetaFinishedNormally);
  w.Bool(c.finished_normally);
  key(internal::kMetaEndReason);
  w.String(c.end_reason);
  key(internal::kMetaOverheadNsPerSpan);
  w.Int(c.overhead_ns_per_span);
  key(internal::kMetaAllocMeasured);
  w.Bool(c.alloc_measured);
  key(internal::kMetaProcessResources);
  internal::WriteProcessResources(w, c.process_resources);
  if (!c.processes.empty()) {
    key(internal::kMetaProcesses);
    WriteProcesses(w, c);
  }
  key(internal::kMetaThreads);
  WriteThreads(w, c);
  key(internal::kMetaSites);
  WriteSites(w, c);
  w.EndObject();
}

// What each X event repeats of its site and thread, rendered once. The last
// entry of each stands for an index out of range.
struct EventFragments {
  std::vector<internal::SiteFragments> sites;
  std::vector<std::string> threads;
};

EventFragments RenderFragments(const Capture& capture) {
  EventFragments out;
  out.sites.reserve(capture.sites.size() + 1);
  for (const Site& site : capture.sites) {
    out.sites.push_back(internal::RenderSiteFragments(site));
  }
  out.sites.push_back(internal::RenderSiteFragments(InvalidSite()));
  out.threads.reserve(capture.threads.size() + 1);
  for (uint32_t t = 0; t < capture.threads.size(); ++t) {
    out.threads.push_back(internal::RenderThreadFragment(
        ThreadPid(capture, t), capture.threads[t].os_tid));
  }
  out.threads.push_back(internal::RenderThreadFragment(capture.pid, 0));
  return out;
}

// One M event; `write_arg` writes its one argument's key and value.
template <typename WriteTid, typename WriteArg>
void WriteMetaEvent(JsonWriter& w, std::string_view name, int64_t pid,
                    WriteTid write_tid, WriteArg write_arg) {
  using internal::kMetaEventKeys;
  w.BeginObject();
  w.Key(kMetaEventKeys[0]);
  w.String("M");
  w.Key(kMetaEventKeys[1]);
  w.String(name);
  w.Key(kMetaEventKeys[2]);
  w.Int(pid);
  w.Key(kMetaEventKeys[3]);
  write_tid();
  w.Key(kMetaEventKeys[4]);
  w.Int(0);
  w.Key(kMetaEventKeys[5]);
  w.BeginObject();
  write_arg();
  w.EndObject();
  w.EndObject();
}

// The M events: the process's name (each process's, in a merged capture),
// then each thread's name and sort index, under its own process's pid.
void WriteMetaEvents(JsonWriter& w, const Capture& capture) {
  auto process_name = [&](int64_t pid, const std::string& name) {
    WriteMetaEvent(
        w, "process_name", pid, [&] { w.Int(pid); },
        [&] {
          w.Key("name");
          w.String(name);
        });
  };
  if (capture.processes.empty()) {
    process_name(capture.pid, capture.process_name);
  }
  for (const ProcessInfo& process : capture.processes) {
    process_name(process.pid, process.process_name);
  }
  for (uint32_t t = 0; t < capture.threads.size(); ++t) {
    const ThreadInfo& thread = capture.threads[t];
    const int64_t pid = ThreadPid(capture, t);
    WriteMetaEvent(
        w, "thread_name", pid, [&] { w.Uint(thread.os_tid); },
        [&] {
          w.Key("name");
          w.String(ThreadLabel(thread));
        });
    WriteMetaEvent(
        w, "thread_sort_index", pid, [&] { w.Uint(thread.os_tid); },
        [&] {
          w.Key("sort_index");
          w.Uint(thread.sort_index);
        });
  }
}

void AppendFlow(std::string* o, const Span& span, uint8_t flow) {
  switch (flow) {
    case kFlowIn:
      o->append(internal::kLineBindId);
      AppendUint(o, span.parent_id);
      o->append(internal::kLineFlowIn);
      break;
    case kFlowOut:
      o->append(internal::kLineBindId);
      AppendUint(o, span.id);
      o->append(internal::kLineFlowOut);
      break;
    default:
      break;
  }
}

void AppendFlags(std::string* o, uint16_t flags) {
  o->append(internal::kLineFlags);
  bool first = true;
  for (const auto& [bit, name] : internal::kFlagNames) {
    if ((flags & bit) == 0) continue;
    if (!first) o->push_back(',');
    first = false;
    o->push_back('"');
    o->append(name);
    o->push_back('"');
  }
  o->push_back(']');
}

// The entries of `args` with `is_counter == counters`, in order, as
// `"key":value,...` (a counter's count is always an integer).
void AppendArgEntries(std::string* o, std::span<const SpanArg> args,
                      bool counters) {
  bool first = true;
  for (const SpanArg& arg : args) {
    if (arg.is_counter != counters) continue;
    if (!first) o->push_back(',');
    first = false;
    AppendJsonString(o, arg.key);
    o->push_back(':');
    if (arg.is_string && !counters) {
      if (arg.truncated) {
        o->append("{\"text\":");
        AppendJsonString(o, arg.text);
        o->append(",\"truncated\":true}");
      } else {
        AppendJsonString(o, arg.text);
      }
    } else if (arg.is_double && !counters) {
      AppendDouble(o, arg.double_value);
    } else {
      AppendInt(o, arg.int_value);
    }
  }
  o->push_back('}');
}

// A span's numeric arguments (nested "args") and counters (nested
// "counters"), each object only when it has an entry. The collector puts
// counters after the arguments; the writer does not rely on it.
void AppendArgsAndCounters(std::string* o, std::span<const SpanArg> args) {
  size_t counters = 0;
  for (const SpanArg& arg : args) counters += arg.is_counter ? 1 : 0;
  if (counters < args.size()) {
    o->append(internal::kLineUserArgs);
    AppendArgEntries(o, args, /*counters=*/false);
  }
  if (counters > 0) {
    o->append(internal::kLineCounters);
    AppendArgEntries(o, args, /*counters=*/true);
  }
}

// One X event, in the order trace_format.h describes.
[[gnu::always_inline]] inline void AppendSpanEvent(
    std::string* o, const Capture& capture, size_t index, uint8_t flow,
    const EventFragments& fragments) {
  const Span& span = internal::SpanList(capture)[index];
  const size_t site = std::min<size_t>(span.site, capture.sites.size());
  const size_t thread = std::min<size_t>(span.thread, capture.threads.size());
  o->append(fragments.sites[site].head);
  o->append(fragments.threads[thread]);
  o->append(internal::kLineTs);
  AppendMicros(o, span.start_ns);
  o->append(internal::kLineDur);
  AppendMicros(o, SatSub(span.end_ns, span.start_ns));
  AppendFlow(o, span, flow);
  o->append(internal::kLineSpanId);
  AppendUint(o, span.id);
  o->append(internal::kLineParentId);
  AppendUint(o, span.parent_id);
  o->append(internal::kLineDepth);
  AppendUint(o, span.depth);
  o->append(internal::kLineHeartbeats);
  AppendUint(o, span.heartbeats);
  o->append(internal::kLineSite);
  AppendUint(o, span.site);
  o->append(internal::kLineThread);
  AppendUint(o, span.thread);
  o->append(fragments.sites[site].tags);
  if (capture.alloc_measured) {
    o->append(internal::kLineAllocCount);
    const SpanAllocs allocs = AllocsOf(capture, index);
    AppendInt(o, allocs.count);
    o->append(internal::kLineAllocBytes);
    AppendInt(o, allocs.bytes);
  }
  if ((span.flags & internal::kKnownFlags) != 0) AppendFlags(o, span.flags);
  const std::span<const SpanArg> args = internal::ArgsOf(capture, span);
  if (!args.empty()) AppendArgsAndCounters(o, args);
  o->append(internal::kLineEnd);
}

// Renders the trace into `*out`. Whenever `*out` holds at least `chunk` bytes
// it is handed to `flush` and cleared, so a caller that streams to a file
// keeps one chunk in memory. Returns the first error of `flush`.
absl::Status RenderTrace(
    const Capture& capture, std::string* out, size_t chunk,
    const std::function<absl::Status(std::string_view)>& flush) {
  const internal::SpanList spans(capture);
  const std::vector<uint8_t> flows =
      MayHaveCrossThreadParents(capture)
          ? PlanFlows(capture, Forest(capture))
          : std::vector<uint8_t>(spans.size(), kNoFlow);
  const EventFragments fragments = RenderFragments(capture);

  JsonWriter w(out, {.indent = internal::kTraceIndent,
                     .line_depth = internal::kTraceLineDepth});
  w.BeginObject();
  w.Key(internal::kRootKeys[0]);
  w.BeginArray();
  WriteMetaEvents(w, capture);
  EventOrder order(spans);
  for (size_t index = 0; order.Next(&index);) {
    AppendSpanEvent(w.RawValue(), capture, index, flows[index], fragments);
    if (out->size() >= chunk) {
      SPANPROF_RETURN_IF_ERROR(flush(*out));
      out->clear();
    }
  }
  w.EndArray();
  w.Key(internal::kRootKeys[1]);
  w.String("ns");
  w.Key(internal::kRootKeys[2]);
  WriteMetadata(w, capture);
  w.EndObject();
  w.Newline();
  return flush(*out);
}

}  // namespace

std::string ThreadLabel(const ThreadInfo& thread) {
  if (!thread.name.empty()) return thread.name;
  return "thread-" + std::to_string(thread.os_tid);
}

std::string TraceToJson(const Capture& capture) {
  std::string out;
  out.reserve(4096 + capture.threads.size() * 160 + capture.sites.size() * 96 +
              internal::SpanCount(capture) * 220);
  // Rendering into one string cannot fail.
  RenderTrace(capture, &out, SIZE_MAX, [](std::string_view) {
    return absl::OkStatus();
  }).IgnoreError();
  return out;
}

absl::Status WriteTrace(const Capture& capture, const std::string& path) {
  if (IsPerfettoTracePath(path)) return WritePerfettoTrace(capture, path);
  // Streams 256 KiB chunks to the file (through gzip for `.gz`), so memory does
  // not grow with the trace.
  constexpr size_t kChunk = size_t{256} << 10;
  SPANPROF_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::OutputFile> file,
      internal::OutputFile::Create(path, internal::EndsWithGz(path)));
  std::string buffer;
  buffer.reserve(kChunk + size_t{64} * 1024);
  SPANPROF_RETURN_IF_ERROR(
      RenderTrace(capture, &buffer, kChunk,
                  [&](std::string_view bytes) { return file->Write(bytes); }));
  return file->Commit();
}

}  // namespace spanprof::analysis
