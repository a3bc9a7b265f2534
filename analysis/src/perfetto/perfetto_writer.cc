// The Perfetto protobuf trace writer: see docs/formats.md ("Perfetto protobuf
// trace") for the layout and perfetto_format.h for the field numbers.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "io/file_io_internal.h"
#include "perfetto/perfetto_format.h"
#include "perfetto/proto_encoder.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "status_macros.h"
#include "trace/trace_format.h"

namespace spanprof::analysis {
namespace {

namespace pf = internal::perfetto;
using internal::ProtoEncoder;
using Flush = std::function<absl::Status(std::string_view)>;

int64_t SatAdd(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result)) {
    return b < 0 ? INT64_MIN : INT64_MAX;
  }
  return result;
}

// The category of a site: its set tags as `phase=…,module=…,activity=…`
// (Perfetto joins an event's categories with commas the same way), or ""
// when it has none.
std::string SiteCategory(const Site& site) {
  std::string out;
  const std::pair<std::string_view, const std::string*> tags[] = {
      {"phase", &site.phase},
      {"module", &site.module},
      {"activity", &site.activity}};
  for (const auto& [key, value] : tags) {
    if (value->empty()) continue;
    if (!out.empty()) out.push_back(',');
    out.append(key);
    out.push_back('=');
    out.append(*value);
  }
  return out;
}

// Every string the trace interns, with its iid (iids start at 1; an iid is
// the index + 1). Names: one per site (iid = site index + 1; the last is the
// invalid site). Categories: one per distinct tag set. Annotation names: the
// user's argument keys, counter names and spanprof's own.
class Interning {
 public:
  explicit Interning(const Capture& capture) {
    for (const Site& site : capture.sites) names_.push_back(site.name);
    names_.emplace_back(internal::kInvalidSiteName);
    absl::flat_hash_map<std::string, uint64_t> category_iids;
    site_category_.reserve(names_.size());
    for (size_t i = 0; i <= capture.sites.size(); ++i) {
      const std::string category =
          i < capture.sites.size() ? SiteCategory(capture.sites[i]) : "";
      if (category.empty()) {
        site_category_.push_back(0);
        continue;
      }
      auto [it, inserted] =
          category_iids.try_emplace(category, categories_.size() + 1);
      if (inserted) categories_.push_back(category);
      site_category_.push_back(it->second);
    }
  }

  const std::string& name(uint64_t iid) const { return names_[iid - 1]; }
  const std::string& category(uint64_t iid) const {
    return categories_[iid - 1];
  }
  const std::string& annotation(uint64_t iid) const {
    return annotations_[iid - 1];
  }
  size_t name_count() const { return names_.size(); }
  size_t category_count() const { return categories_.size(); }
  size_t annotation_count() const { return annotations_.size(); }
  // 0 when the site has no tags.
  uint64_t SiteCategoryIid(size_t site) const { return site_category_[site]; }

  uint64_t AnnotationIid(std::string_view name) {
    // Debian's abseil has its own string_view (not std's).
    auto it = annotation_iids_.find(absl::string_view(name.data(), name.size()));
    if (it != annotation_iids_.end()) return it->second;
    annotations_.emplace_back(name);
    annotation_iids_.emplace(std::string(name), annotations_.size());
    return annotations_.size();
  }

 private:
  std::vector<std::string> names_;
  std::vector<uint64_t> site_category_;
  std::vector<std::string> categories_;
  std::vector<std::string> annotations_;
  absl::flat_hash_map<std::string, uint64_t> annotation_iids_;
};

// Cross-thread parent links. Each link is one flow whose id is the child's
// span id (unique, so one id per link): the parent's begin lists it in
// `flow_ids`, the child's begin in `terminating_flow_ids`.
struct FlowPlan {
  // Span i starts flows out_ids[out_begin[i], out_begin[i + 1]); empty
  // vectors when the capture has no cross-thread link.
  std::vector<uint32_t> out_begin;
  std::vector<uint64_t> out_ids;
  std::vector<uint8_t> terminates;
};

// The index of every span's parent, or UINT32_MAX when it has none in the
// capture. Consecutive ids (as the collector writes them) index directly.
std::vector<uint32_t> ParentIndexes(const std::vector<Span>& spans) {
  const size_t n = spans.size();
  std::vector<uint32_t> parent(n, UINT32_MAX);
  if (n == 0) return parent;
  const uint64_t first = spans[0].id;
  bool consecutive = true;
  for (size_t i = 0; i < n && consecutive; ++i) {
    consecutive = spans[i].id == first + i;
  }
  absl::flat_hash_map<uint64_t, uint32_t> by_id;
  if (!consecutive) {
    by_id.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      by_id.try_emplace(spans[i].id, static_cast<uint32_t>(i));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const uint64_t id = spans[i].parent_id;
    if (id == 0) continue;
    if (consecutive) {
      if (id >= first && id - first < n) {
        parent[i] = static_cast<uint32_t>(id - first);
      }
    } else if (auto it = by_id.find(id); it != by_id.end()) {
      parent[i] = it->second;
    }
  }
  return parent;
}

FlowPlan PlanFlows(const Capture& capture) {
  const std::vector<Span>& spans = capture.spans;
  const std::vector<uint32_t> parent = ParentIndexes(spans);
  const size_t n = spans.size();
  FlowPlan plan;
  std::vector<uint32_t> count;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t p = parent[i];
    if (p == UINT32_MAX || spans[p].thread == spans[i].thread) continue;
    if (plan.terminates.empty()) {
      plan.terminates.assign(n, 0);
      count.assign(n + 1, 0);
    }
    plan.terminates[i] = 1;
    ++count[p + 1];
  }
  if (plan.terminates.empty()) return plan;
  for (size_t i = 0; i < n; ++i) count[i + 1] += count[i];
  plan.out_begin = count;
  plan.out_ids.resize(count[n]);
  for (size_t i = 0; i < n; ++i) {
    if (plan.terminates[i] != 0) {
      plan.out_ids[count[parent[i]]++] = spans[i].id;
    }
  }
  return plan;
}

// The spans in the order their threads' slices are written: by thread, then
// start, then depth (a same-thread parent first), then id (record order).
// The collector's capture is already in this order, checked in one pass.
std::vector<uint32_t> SliceOrder(const std::vector<Span>& spans,
                                 uint32_t thread_count) {
  auto thread_of = [&](const Span& s) { return std::min(s.thread, thread_count); };
  auto less = [&](uint32_t a, uint32_t b) {
    const Span& x = spans[a];
    const Span& y = spans[b];
    if (thread_of(x) != thread_of(y)) return thread_of(x) < thread_of(y);
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.depth != y.depth) return x.depth < y.depth;
    if (x.id != y.id) return x.id < y.id;
    return a < b;
  };
  std::vector<uint32_t> order(spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  bool sorted = true;
  for (size_t i = 1; i < order.size() && sorted; ++i) {
    sorted = less(order[i - 1], order[i]);
  }
  if (!sorted) std::sort(order.begin(), order.end(), less);
  return order;
}

// One debug annotation of a slice.
struct Annotation {
  enum Kind : uint8_t { kInt, kDouble, kBool };
  uint64_t name_iid;
  Kind kind;
  int64_t int_value;
  double double_value;
};

// Renders the trace packet by packet into `*out`, handing it to `flush`
// whenever it holds `chunk` bytes (see RenderTrace in trace_writer.cc).
class PerfettoRenderer {
 public:
  PerfettoRenderer(const Capture& capture, std::string* out, size_t chunk,
                   Flush flush)
      : capture_(capture),
        out_(out),
        chunk_(chunk),
        flush_(std::move(flush)),
        interning_(capture),
        flows_(PlanFlows(capture)) {}

  absl::Status Render();

 private:
  uint32_t thread_count() const {
    return static_cast<uint32_t>(capture_.threads.size());
  }
  void WriteDescriptorSequence(bool invalid_thread);
  void WriteThreadDescriptor(uint32_t thread);
  absl::Status WriteThread(uint32_t thread, const uint32_t* begin,
                           const uint32_t* end);
  void StartThreadSequence(uint32_t thread);
  void WriteBegin(uint32_t index);
  void WriteEnd(uint32_t index);
  void StartEventPacket(int64_t ns);
  void CollectAnnotations(const Span& span);
  void WriteInterned(size_t site, uint64_t category);
  void WriteTrackEvent(uint32_t index, size_t site, uint64_t category);
  void FinishPacket();
  template <typename Seen>
  bool FirstUse(Seen& seen, uint64_t iid);

  const Capture& capture_;
  std::string* out_;
  size_t chunk_;
  Flush flush_;
  Interning interning_;
  FlowPlan flows_;
  std::string packet_;  // the packet being built
  ProtoEncoder packet_encoder_{&packet_};
  uint32_t sequence_ = 0;
  uint64_t last_ts_ = 0;  // the incremental clock's value on this sequence
  // Per iid, the last sequence that interned it (so each sequence interns a
  // string once, in the packet that first uses it).
  std::vector<uint32_t> name_seen_;
  std::vector<uint32_t> category_seen_;
  std::vector<uint32_t> annotation_seen_;
  std::vector<Annotation> annotations_;  // of the slice being written
  std::vector<uint32_t> stack_;          // open slices of the thread
};

// Wraps `packet_` as one `Trace.packet` field of the output.
void PerfettoRenderer::FinishPacket() {
  char key_and_length[11];
  key_and_length[0] = static_cast<char>(
      internal::FieldKey(pf::kTracePacket, internal::kWireLengthDelimited));
  out_->append(key_and_length,
               internal::WriteVarint(key_and_length + 1, packet_.size()));
  out_->append(packet_);
  packet_.clear();
}

// Sequence 1: the clock snapshot that makes REALTIME the trace's clock, the
// process track and every thread track. None of it is incremental state.
void PerfettoRenderer::WriteDescriptorSequence(bool invalid_thread) {
  ProtoEncoder& e = packet_encoder_;
  e.Varint(pf::kPacketSequenceId, pf::kDescriptorSequenceId);
  const size_t snapshot = e.BeginNested(pf::kPacketClockSnapshot);
  const size_t clock = e.BeginNested(pf::kSnapshotClocks);
  e.Varint(pf::kClockId, pf::kBuiltinClockRealtime);
  e.Varint(pf::kClockTimestamp,
           static_cast<uint64_t>(std::max<int64_t>(0, capture_.wall_clock_anchor_ns)));
  e.EndNested(clock);
  e.Varint(pf::kSnapshotPrimaryTraceClock, pf::kBuiltinClockRealtime);
  e.EndNested(snapshot);
  FinishPacket();

  e.Varint(pf::kPacketSequenceId, pf::kDescriptorSequenceId);
  const size_t track = e.BeginNested(pf::kPacketTrackDescriptor);
  e.Varint(pf::kTrackUuid, pf::ProcessTrackUuid(capture_.pid));
  const size_t process = e.BeginNested(pf::kTrackProcess);
  e.Int(pf::kProcessPid, capture_.pid);
  e.Bytes(pf::kProcessName, capture_.process_name);
  e.EndNested(process);
  e.EndNested(track);
  FinishPacket();

  for (uint32_t t = 0; t < thread_count(); ++t) WriteThreadDescriptor(t);
  if (invalid_thread) WriteThreadDescriptor(thread_count());
}

// A thread's track; index thread_count() stands for spans whose thread index
// is out of range (tid 0).
void PerfettoRenderer::WriteThreadDescriptor(uint32_t thread) {
  const ThreadInfo fallback{};
  const ThreadInfo& info =
      thread < thread_count() ? capture_.threads[thread] : fallback;
  ProtoEncoder& e = packet_encoder_;
  e.Varint(pf::kPacketSequenceId, pf::kDescriptorSequenceId);
  const size_t track = e.BeginNested(pf::kPacketTrackDescriptor);
  e.Varint(pf::kTrackUuid, pf::ThreadTrackUuid(capture_.pid, thread));
  e.Varint(pf::kTrackParentUuid, pf::ProcessTrackUuid(capture_.pid));
  const size_t descriptor = e.BeginNested(pf::kTrackThread);
  e.Int(pf::kThreadPid, capture_.pid);
  e.Int(pf::kThreadTid, static_cast<int64_t>(info.os_tid));
  e.Bytes(pf::kThreadName, ThreadLabel(info));
  e.EndNested(descriptor);
  e.EndNested(track);
  FinishPacket();
}

// The first packet of a thread's sequence clears its incremental state and
// sets it up: the incremental clock (a snapshot equating it with REALTIME at
// the anchor) as the default timestamp clock, and the thread's track as the
// default track of its events.
void PerfettoRenderer::StartThreadSequence(uint32_t thread) {
  sequence_ = pf::ThreadSequenceId(thread);
  last_ts_ = static_cast<uint64_t>(std::max<int64_t>(0, capture_.wall_clock_anchor_ns));
  ProtoEncoder& e = packet_encoder_;
  e.Varint(pf::kPacketSequenceId, sequence_);
  e.Varint(pf::kPacketSequenceFlags, pf::kSeqIncrementalStateCleared);
  const size_t snapshot = e.BeginNested(pf::kPacketClockSnapshot);
  for (const uint64_t id : {pf::kBuiltinClockRealtime, pf::kIncrementalClockId}) {
    const size_t clock = e.BeginNested(pf::kSnapshotClocks);
    e.Varint(pf::kClockId, id);
    e.Varint(pf::kClockTimestamp, last_ts_);
    if (id == pf::kIncrementalClockId) e.Varint(pf::kClockIsIncremental, 1);
    e.EndNested(clock);
  }
  e.Varint(pf::kSnapshotPrimaryTraceClock, pf::kBuiltinClockRealtime);
  e.EndNested(snapshot);
  const size_t defaults = e.BeginNested(pf::kPacketTracePacketDefaults);
  e.Varint(pf::kDefaultsTimestampClockId, pf::kIncrementalClockId);
  const size_t event_defaults = e.BeginNested(pf::kDefaultsTrackEventDefaults);
  e.Varint(pf::kEventDefaultsTrackUuid, pf::ThreadTrackUuid(capture_.pid, thread));
  e.EndNested(event_defaults);
  e.EndNested(defaults);
  FinishPacket();
}

// The common head of a slice packet: the timestamp, the sequence and the
// flag saying that it depends on the sequence's incremental state (the
// interned strings and the packet defaults). A timestamp that goes back in
// time (a corrupt capture) cannot be a delta: it is written absolute on
// REALTIME and leaves the incremental clock where it was.
void PerfettoRenderer::StartEventPacket(int64_t ns) {
  ProtoEncoder& e = packet_encoder_;
  const int64_t absolute = SatAdd(capture_.wall_clock_anchor_ns, ns);
  const uint64_t ts = static_cast<uint64_t>(std::max<int64_t>(0, absolute));
  if (ts >= last_ts_) {
    e.Varint(pf::kPacketTimestamp, ts - last_ts_);
    last_ts_ = ts;
  } else {
    e.Varint(pf::kPacketTimestamp, ts);
    e.Varint(pf::kPacketTimestampClockId, pf::kBuiltinClockRealtime);
  }
  e.Varint(pf::kPacketSequenceId, sequence_);
  e.Varint(pf::kPacketSequenceFlags, pf::kSeqNeedsIncrementalState);
}

template <typename Seen>
bool PerfettoRenderer::FirstUse(Seen& seen, uint64_t iid) {
  if (seen.size() <= iid) seen.resize(iid + 1, 0);
  if (seen[iid] == sequence_) return false;
  seen[iid] = sequence_;
  return true;
}

// What a slice shows besides its name: the user's arguments, its counters,
// heartbeats (when any), allocation deltas (when measured) and flags.
void PerfettoRenderer::CollectAnnotations(const Span& span) {
  annotations_.clear();
  const size_t begin = std::min<size_t>(span.first_arg, capture_.args.size());
  const size_t end =
      std::min<size_t>(begin + span.arg_count, capture_.args.size());
  std::string counter_name;
  for (size_t a = begin; a < end; ++a) {
    const SpanArg& arg = capture_.args[a];
    uint64_t iid;
    if (arg.is_counter) {
      counter_name.assign(pf::kCounterPrefix);
      counter_name.append(arg.key);
      iid = interning_.AnnotationIid(counter_name);
    } else {
      iid = interning_.AnnotationIid(arg.key);
    }
    const bool is_double = arg.is_double && !arg.is_counter;
    annotations_.push_back({iid, is_double ? Annotation::kDouble : Annotation::kInt,
                            arg.int_value, arg.double_value});
  }
  auto add_int = [&](std::string_view name, int64_t value) {
    annotations_.push_back(
        {interning_.AnnotationIid(name), Annotation::kInt, value, 0.0});
  };
  if (span.heartbeats != 0) {
    add_int(pf::kAnnotationHeartbeats, static_cast<int64_t>(span.heartbeats));
  }
  if (capture_.alloc_measured) {
    add_int(pf::kAnnotationAllocCount, span.alloc_count);
    add_int(pf::kAnnotationAllocBytes, span.alloc_bytes);
  }
  for (const auto& [bit, name] : internal::kFlagNames) {
    if ((span.flags & bit) == 0) continue;
    annotations_.push_back(
        {interning_.AnnotationIid(name), Annotation::kBool, 1, 0.0});
  }
}

// The strings of this slice that its sequence has not interned yet.
void PerfettoRenderer::WriteInterned(size_t site, uint64_t category) {
  const uint64_t name_iid = site + 1;
  const bool new_name = FirstUse(name_seen_, name_iid);
  const bool new_category = category != 0 && FirstUse(category_seen_, category);
  bool new_annotation = false;
  for (const Annotation& a : annotations_) {
    if (annotation_seen_.size() <= a.name_iid ||
        annotation_seen_[a.name_iid] != sequence_) {
      new_annotation = true;
    }
  }
  if (!new_name && !new_category && !new_annotation) return;
  ProtoEncoder& e = packet_encoder_;
  auto entry = [&](uint32_t field, uint64_t iid, const std::string& name) {
    const size_t mark = e.BeginNested(field);
    e.Varint(pf::kInternedIid, iid);
    e.Bytes(pf::kInternedName, name);
    e.EndNested(mark);
  };
  const size_t interned = e.BeginNested(pf::kPacketInternedData);
  if (new_category) {
    entry(pf::kInternedEventCategories, category, interning_.category(category));
  }
  if (new_name) {
    entry(pf::kInternedEventNames, name_iid, interning_.name(name_iid));
  }
  for (const Annotation& a : annotations_) {
    if (FirstUse(annotation_seen_, a.name_iid)) {
      entry(pf::kInternedAnnotationNames, a.name_iid,
            interning_.annotation(a.name_iid));
    }
  }
  e.EndNested(interned);
}

void PerfettoRenderer::WriteTrackEvent(uint32_t index, size_t site,
                                       uint64_t category) {
  ProtoEncoder& e = packet_encoder_;
  const size_t event = e.BeginNested(pf::kPacketTrackEvent);
  e.Varint(pf::kEventType, pf::kTypeSliceBegin);
  e.Varint(pf::kEventNameIid, site + 1);
  if (category != 0) e.Varint(pf::kEventCategoryIids, category);
  for (const Annotation& a : annotations_) {
    const size_t mark = e.BeginNested(pf::kEventDebugAnnotations);
    e.Varint(pf::kAnnotationNameIid, a.name_iid);
    switch (a.kind) {
      case Annotation::kInt:
        e.Int(pf::kAnnotationInt, a.int_value);
        break;
      case Annotation::kDouble:
        e.Double(pf::kAnnotationDouble, a.double_value);
        break;
      case Annotation::kBool:
        e.Varint(pf::kAnnotationBool, 1);
        break;
    }
    e.EndNested(mark);
  }
  if (!flows_.out_begin.empty()) {
    for (uint32_t k = flows_.out_begin[index]; k < flows_.out_begin[index + 1];
         ++k) {
      e.Fixed64(pf::kEventFlowIds, flows_.out_ids[k]);
    }
    if (flows_.terminates[index] != 0) {
      e.Fixed64(pf::kEventTerminatingFlowIds, capture_.spans[index].id);
    }
  }
  e.EndNested(event);
}

void PerfettoRenderer::WriteBegin(uint32_t index) {
  const Span& span = capture_.spans[index];
  const size_t site = std::min<size_t>(span.site, capture_.sites.size());
  const uint64_t category = interning_.SiteCategoryIid(site);
  CollectAnnotations(span);
  StartEventPacket(span.start_ns);
  WriteInterned(site, category);
  WriteTrackEvent(index, site, category);
  FinishPacket();
}

void PerfettoRenderer::WriteEnd(uint32_t index) {
  StartEventPacket(capture_.spans[index].end_ns);
  ProtoEncoder& e = packet_encoder_;
  const size_t event = e.BeginNested(pf::kPacketTrackEvent);
  e.Varint(pf::kEventType, pf::kTypeSliceEnd);
  e.EndNested(event);
  FinishPacket();
}

// One thread's slices, nested with a stack: before a span begins, every open
// span that ended by then (and is not its parent) ends.
absl::Status PerfettoRenderer::WriteThread(uint32_t thread,
                                           const uint32_t* begin,
                                           const uint32_t* end) {
  const std::vector<Span>& spans = capture_.spans;
  StartThreadSequence(thread);
  stack_.clear();
  for (const uint32_t* it = begin; it != end; ++it) {
    const Span& span = spans[*it];
    while (!stack_.empty()) {
      const Span& top = spans[stack_.back()];
      if (top.id == span.parent_id || top.end_ns > span.start_ns) break;
      WriteEnd(stack_.back());
      stack_.pop_back();
    }
    WriteBegin(*it);
    stack_.push_back(*it);
    if (out_->size() >= chunk_) {
      SPANPROF_RETURN_IF_ERROR(flush_(*out_));
      out_->clear();
    }
  }
  while (!stack_.empty()) {
    WriteEnd(stack_.back());
    stack_.pop_back();
  }
  return absl::OkStatus();
}

absl::Status PerfettoRenderer::Render() {
  const std::vector<Span>& spans = capture_.spans;
  const std::vector<uint32_t> order = SliceOrder(spans, thread_count());
  const bool invalid_thread =
      !order.empty() && spans[order.back()].thread >= thread_count();
  WriteDescriptorSequence(invalid_thread);
  size_t first = 0;
  while (first < order.size()) {
    const uint32_t thread = std::min(spans[order[first]].thread, thread_count());
    size_t last = first;
    while (last < order.size() &&
           std::min(spans[order[last]].thread, thread_count()) == thread) {
      ++last;
    }
    SPANPROF_RETURN_IF_ERROR(
        WriteThread(thread, order.data() + first, order.data() + last));
    first = last;
  }
  return flush_(*out_);
}

}  // namespace

bool IsPerfettoTracePath(std::string_view path) {
  if (internal::EndsWithGz(path)) path.remove_suffix(3);
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.substr(path.size() - suffix.size()) == suffix;
  };
  return ends_with(".pftrace") || ends_with(".perfetto-trace");
}

bool LooksLikePerfettoTrace(std::string_view bytes) {
  return pf::LooksLikeProtobufTrace(bytes);
}

std::string CaptureToPerfetto(const Capture& capture) {
  std::string out;
  out.reserve(4096 + capture.threads.size() * 128 + capture.spans.size() * 32);
  // Rendering into one string cannot fail.
  PerfettoRenderer(capture, &out, SIZE_MAX,
                   [](std::string_view) { return absl::OkStatus(); })
      .Render()
      .IgnoreError();
  return out;
}

absl::Status WritePerfettoTrace(const Capture& capture,
                                const std::string& path) {
  constexpr size_t kChunk = size_t{1} << 20;
  SPANPROF_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::OutputFile> file,
      internal::OutputFile::Create(path, internal::EndsWithGz(path)));
  std::string buffer;
  buffer.reserve(kChunk + size_t{64} * 1024);
  SPANPROF_RETURN_IF_ERROR(
      PerfettoRenderer(capture, &buffer, kChunk,
                       [&](std::string_view bytes) {
                         return file->Write(bytes);
                       })
          .Render());
  return file->Commit();
}

}  // namespace spanprof::analysis
