// The Perfetto protobuf trace writer: see docs/formats.md ("Perfetto protobuf
// trace") for the layout and perfetto_format.h for the field numbers.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "io/file_io_internal.h"
#include "model/capture_format.h"
#include "model/span_args.h"
#include "model/span_list.h"
#include "perfetto/perfetto_format.h"
#include "perfetto/proto_encoder.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "status_macros.h"

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

// Every string the trace interns, with its iid (iids start at 1; an iid is
// the index + 1). Names: one per site (iid = site index + 1; the last is the
// invalid site). Categories: one per distinct tag set. Annotation names: the
// user's argument keys, counter names and spanprof's own.
class Interning {
 public:
  explicit Interning(const Capture& capture) {
    // spanprof's own annotation names first: iids 1 to 3 + the flags.
    AnnotationIid(pf::kAnnotationHeartbeats);
    AnnotationIid(pf::kAnnotationAllocCount);
    AnnotationIid(pf::kAnnotationAllocBytes);
    for (const auto& flag : internal::kFlagNames) AnnotationIid(flag.name);
    for (const Site& site : capture.sites) names_.push_back(site.name);
    names_.emplace_back(internal::kInvalidSiteName);
    absl::flat_hash_map<std::string, uint64_t> category_iids;
    site_category_.reserve(names_.size());
    for (size_t i = 0; i <= capture.sites.size(); ++i) {
      const std::string category =
          i < capture.sites.size() ? pf::SiteCategory(capture.sites[i]) : "";
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
    auto it =
        annotation_iids_.find(absl::string_view(name.data(), name.size()));
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

// The iids of spanprof's own annotations (see Interning's constructor).
constexpr uint64_t kHeartbeatsIid = 1;
constexpr uint64_t kAllocCountIid = 2;
constexpr uint64_t kAllocBytesIid = 3;
constexpr uint64_t kFirstFlagIid = 4;

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

// Finds a span's index by its id. Consecutive ids (as the collector writes
// them) index directly, with no table.
class SpanIndex {
 public:
  explicit SpanIndex(const internal::SpanList& spans) {
    if (spans.empty()) return;
    first_ = spans[0].id;
    for (size_t i = 0; i < spans.size() && consecutive_; ++i) {
      consecutive_ = spans[i].id == first_ + i;
    }
    size_ = spans.size();
    if (consecutive_) return;
    by_id_.reserve(spans.size());
    for (size_t i = 0; i < spans.size(); ++i) {
      by_id_.try_emplace(spans[i].id, static_cast<uint32_t>(i));
    }
  }

  // UINT32_MAX when no span has `id` (0 included).
  uint32_t Find(uint64_t id) const {
    if (id == 0) return UINT32_MAX;
    if (consecutive_) {
      return id >= first_ && id - first_ < size_
                 ? static_cast<uint32_t>(id - first_)
                 : UINT32_MAX;
    }
    auto it = by_id_.find(id);
    return it == by_id_.end() ? UINT32_MAX : it->second;
  }

 private:
  uint64_t first_ = 0;
  size_t size_ = 0;
  bool consecutive_ = true;
  absl::flat_hash_map<uint64_t, uint32_t> by_id_;
};

FlowPlan PlanFlows(const Capture& capture) {
  const internal::SpanList spans(capture);
  const SpanIndex index(spans);
  const size_t n = spans.size();
  FlowPlan plan;
  std::vector<uint32_t> count;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t p = index.Find(spans[i].parent_id);
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
      plan.out_ids[count[index.Find(spans[i].parent_id)]++] = spans[i].id;
    }
  }
  return plan;
}

// Slice order: by thread (out-of-range indexes share the last track), then
// start, then depth (a same-thread parent first), then id (record order).
bool InSliceOrder(const Span& x, const Span& y, uint32_t thread_count) {
  const uint32_t tx = std::min(x.thread, thread_count);
  const uint32_t ty = std::min(y.thread, thread_count);
  if (tx != ty) return tx < ty;
  if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
  if (x.depth != y.depth) return x.depth < y.depth;
  return x.id < y.id;
}

// What one pass over the spans tells (a capture is ~80 bytes a span, so each
// pass over it costs memory bandwidth): whether they are in slice order
// already (the collector's are), and whether any may have a parent on
// another thread (never, when the ids are consecutive, as the collector
// writes them, and every parent found by id is on its child's thread).
struct CaptureShape {
  bool sorted = true;
  bool may_have_links = false;
};

CaptureShape ScanCapture(const internal::SpanList& spans,
                         uint32_t thread_count) {
  CaptureShape shape;
  const size_t n = spans.size();
  if (n == 0) return shape;
  const uint64_t first = spans[0].id;
  bool consecutive = true;
  for (size_t i = 0; i < n; ++i) {
    const Span& span = spans[i];
    if (i > 0 && !InSliceOrder(spans[i - 1], span, thread_count)) {
      shape.sorted = false;
    }
    consecutive = consecutive && span.id == first + i;
    const uint64_t parent = span.parent_id - first;
    if (span.parent_id >= first && parent < n &&
        spans[parent].thread != span.thread) {
      shape.may_have_links = true;
    }
  }
  shape.may_have_links = shape.may_have_links || !consecutive;
  return shape;
}

// The spans in slice order: empty when `sorted` (the identity), else sorted
// indexes.
std::vector<uint32_t> SliceOrder(const internal::SpanList& spans,
                                 uint32_t thread_count, bool sorted) {
  std::vector<uint32_t> order;
  if (sorted) return order;
  order.resize(spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (InSliceOrder(spans[a], spans[b], thread_count)) return true;
    if (InSliceOrder(spans[b], spans[a], thread_count)) return false;
    return a < b;
  });
  return order;
}

// The one-byte key of a field numbered below 16.
constexpr char ShortKey(uint32_t field, internal::WireType type) {
  return static_cast<char>(internal::FieldKey(field, type));
}

// One debug annotation of a slice.
struct Annotation {
  enum Kind : uint8_t { kInt, kDouble, kBool, kString };
  uint64_t name_iid;
  Kind kind;
  int64_t int_value;
  double double_value;
  const std::string* text = nullptr;  // kString
};

// What a slice begin's TrackEvent holds: its name and category (0: none)
// iids, annotations, the flows it starts and the one it ends.
struct SliceBegin {
  uint64_t name_iid = 0;
  uint64_t category_iid = 0;
  std::span<const Annotation> annotations = {};
  std::span<const uint64_t> flow_ids = {};
  bool terminates_flow = false;
  uint64_t terminating_flow_id = 0;
};

// One debug annotation of a slice begin. Out of line, taking and returning
// the encoder by value (one pointer, in a register): inlined, its cases would
// crowd the per-span loop that the plain path runs in.
template <typename Encoder>
[[gnu::noinline]] Encoder EncodeAnnotation(Encoder e, const Annotation& a) {
  const auto mark = e.BeginNested(pf::kEventDebugAnnotations);
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
    case Annotation::kString:
      e.Bytes(pf::kAnnotationString, *a.text);
      break;
  }
  e.EndNested(mark);
  return e;
}

// The one encoding of a slice begin (TracePacket.track_event), into a
// `ProtoEncoder` (the general path) or a `SmallEncoder` (the fast paths, whose
// callers bound the size): every kind of begin writes the same bytes for the
// same fields. Always inlined: on the fast paths the encoder's cursor then
// stays in a register.
template <typename Encoder>
[[gnu::always_inline]] inline void EncodeSliceBegin(Encoder& e,
                                                    const SliceBegin& begin) {
  const auto event = e.BeginNested(pf::kPacketTrackEvent);
  e.Varint(pf::kEventType, pf::kTypeSliceBegin);
  e.Varint(pf::kEventNameIid, begin.name_iid);
  if (begin.category_iid != 0) {
    e.Varint(pf::kEventCategoryIids, begin.category_iid);
  }
  for (const Annotation& a : begin.annotations) e = EncodeAnnotation(e, a);
  for (const uint64_t id : begin.flow_ids) e.Fixed64(pf::kEventFlowIds, id);
  if (begin.terminates_flow) {
    e.Fixed64(pf::kEventTerminatingFlowIds, begin.terminating_flow_id);
  }
  e.EndNested(event);
}

// The most bytes a plain slice begin or a slice end takes, the Trace.packet
// key and length included. Both are written in place in the output: built
// on the stack and copied whole, each packet's vector copy waited on the
// byte stores just made (a failed store forward), which cost a quarter of
// the writer's time.
constexpr size_t kSmallPacketBytes = 64;

// Renders the trace packet by packet into `*out`, handing it to `flush`
// whenever it holds `chunk` bytes (see RenderTrace in trace_writer.cc).
class PerfettoRenderer {
 public:
  PerfettoRenderer(const Capture& capture, std::string* out, size_t chunk,
                   Flush flush)
      : capture_(capture),
        spans_(capture),
        out_(out),
        chunk_(chunk),
        flush_(std::move(flush)),
        interning_(capture) {}

  absl::Status Render();

 private:
  uint32_t thread_count() const {
    return static_cast<uint32_t>(capture_.threads.size());
  }
  [[gnu::noinline]] void WriteDescriptorSequence(bool invalid_thread);
  void WriteProcessDescriptor(uint64_t uuid, int64_t pid,
                              const std::string& name);
  void WriteThreadDescriptor(uint32_t thread);
  absl::Status WriteTrace(const std::vector<uint32_t>& order, bool check);
  absl::StatusOr<size_t> WriteThread(uint32_t thread,
                                     const std::vector<uint32_t>& order,
                                     size_t k, bool check);
  bool KeepsAssumedShape(const Span& span, size_t k, size_t run_begin) const;
  void Restart();
  absl::Status Finish();
  [[gnu::noinline]] void StartThreadSequence(uint32_t thread);
  // The general path, kept out of the per-span loop so that the compiler
  // does not spill the loop's registers for it.
  [[gnu::noinline]] void WriteBegin(uint32_t index);
  void WriteEnd(uint32_t index);
  uint64_t Timestamp(int64_t ns) const;
  bool ExactTimestamp(int64_t ns, uint64_t* ts) const;
  // Inlined into the per-span loop: two calls a span otherwise.
  [[gnu::always_inline]] inline char* WriteEventHead(char* p, uint64_t ts);
  void StartEventPacket(int64_t ns);
  void FinishSmallPacket(char* buf, char* end);
  bool TryWriteSmallBegin(uint32_t index, size_t site, uint64_t category);
  bool IsPlain(const Span& span, uint32_t index) const;
  bool TryWritePlainBegin(uint32_t index);
  bool HasFlows(uint32_t index) const {
    return !flows_.out_begin.empty() &&
           (flows_.terminates[index] != 0 ||
            flows_.out_begin[index] != flows_.out_begin[index + 1]);
  }
  bool Seen(const std::vector<uint32_t>& seen, uint64_t iid) const {
    return iid < seen.size() && seen[iid] == sequence_;
  }
  void CollectAnnotations(uint32_t index);
  uint64_t ArgAnnotationIid(const SpanArg& arg);
  void CollectOverrides(uint32_t index);
  bool TimeFits(int64_t ns) const {
    uint64_t ts;
    return ExactTimestamp(ns, &ts);
  }
  void WriteMetadata();
  void WriteEndPacket();
  // Built on first use: most captures never need to find a span by id.
  const SpanIndex& Index() {
    if (!index_.has_value()) index_.emplace(spans_);
    return *index_;
  }
  void WriteInterned(size_t site, uint64_t category);
  void WriteTrackEvent(uint32_t index, size_t site, uint64_t category);
  void FinishPacket();
  bool FirstUse(std::vector<uint32_t>& seen, uint64_t iid) const;

  const Capture& capture_;
  const internal::SpanList spans_;
  // Bytes [0, used_) of *out_ are the output; the rest is room to write
  // packets in place (std::string cannot grow without writing its bytes,
  // so it grows in large steps and is cut to used_ at the end).
  char* Reserve(size_t n) {
    if (out_->size() - used_ < n) Grow(n);
    return out_->data() + used_;
  }
  void Grow(size_t n);
  void Commit(const char* end) {
    used_ = static_cast<size_t>(end - out_->data());
  }

  std::string* out_;
  size_t used_ = 0;
  size_t flushed_ = 0;  // bytes handed to flush_ before out_'s
  size_t chunk_;
  Flush flush_;
  Interning interning_;
  FlowPlan flows_;
  std::optional<SpanIndex> index_;
  bool shape_broken_ = false;  // see Render()
  uint64_t last_id_ = 0;       // the span id of the previous begin
  std::string packet_;         // the packet being built
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
  // Recent arguments' annotation iids by the key's interned text (one
  // address, one text, for the capture's lifetime) and prefix: the name is
  // built and hashed once per key, not once per argument.
  struct CachedIid {
    const std::string* key = nullptr;
    uint32_t prefix = 0;
    uint64_t iid = 0;
  };
  static constexpr size_t kIidCacheSize = 64;
  std::array<CachedIid, kIidCacheSize> iid_cache_{};
};

// Wraps `packet_` as one `Trace.packet` field of the output.
void PerfettoRenderer::FinishPacket() {
  char key_and_length[11];
  key_and_length[0] = static_cast<char>(
      internal::FieldKey(pf::kTracePacket, internal::kWireLengthDelimited));
  char* p = Reserve(packet_.size() + sizeof key_and_length);
  const char* end = internal::WriteVarint(key_and_length + 1, packet_.size());
  std::memcpy(p, key_and_length, static_cast<size_t>(end - key_and_length));
  p += end - key_and_length;
  std::memcpy(p, packet_.data(), packet_.size());
  Commit(p + packet_.size());
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
  e.Varint(pf::kClockTimestamp, static_cast<uint64_t>(std::max<int64_t>(
                                    0, capture_.wall_clock_anchor_ns)));
  e.EndNested(clock);
  e.Varint(pf::kSnapshotPrimaryTraceClock, pf::kBuiltinClockRealtime);
  e.EndNested(snapshot);
  FinishPacket();

  if (capture_.processes.empty()) {
    WriteProcessDescriptor(pf::ProcessTrackUuid(capture_.pid), capture_.pid,
                           capture_.process_name);
  }
  for (uint32_t k = 0; k < capture_.processes.size(); ++k) {
    WriteProcessDescriptor(pf::MergedProcessTrackUuid(k),
                           capture_.processes[k].pid,
                           capture_.processes[k].process_name);
  }
  WriteMetadata();

  for (uint32_t t = 0; t < thread_count(); ++t) WriteThreadDescriptor(t);
  if (invalid_thread) WriteThreadDescriptor(thread_count());
}

// A process's track.
void PerfettoRenderer::WriteProcessDescriptor(uint64_t uuid, int64_t pid,
                                              const std::string& name) {
  ProtoEncoder& e = packet_encoder_;
  e.Varint(pf::kPacketSequenceId, pf::kDescriptorSequenceId);
  const size_t track = e.BeginNested(pf::kPacketTrackDescriptor);
  e.Varint(pf::kTrackUuid, uuid);
  const size_t process = e.BeginNested(pf::kTrackProcess);
  e.Int(pf::kProcessPid, pid);
  e.Bytes(pf::kProcessName, name);
  e.EndNested(process);
  e.EndNested(track);
  FinishPacket();
}

// The capture without its spans and arguments: what the metadata packet
// carries.
Capture MetadataOf(const Capture& capture) {
  Capture out;
  out.spanprof_version = capture.spanprof_version;
  out.process_name = capture.process_name;
  out.pid = capture.pid;
  out.clock = capture.clock;
  out.wall_clock_anchor_ns = capture.wall_clock_anchor_ns;
  out.wall_clock_uncertainty_ns = capture.wall_clock_uncertainty_ns;
  out.host = capture.host;
  out.trace_id = capture.trace_id;
  out.remote_parent_span_id = capture.remote_parent_span_id;
  out.span_id_seed = capture.span_id_seed;
  out.exported_span_ids = capture.exported_span_ids;
  out.window_ns = capture.window_ns;
  out.event_limit = capture.event_limit;
  out.overflow_policy = capture.overflow_policy;
  out.dropped_events = capture.dropped_events;
  out.dropped_by_site = capture.dropped_by_site;
  out.dropped_args = capture.dropped_args;
  out.arg_drops = capture.arg_drops;
  out.failed_prepares = capture.failed_prepares;
  out.finished_normally = capture.finished_normally;
  out.end_reason = capture.end_reason;
  out.overhead_ns_per_span = capture.overhead_ns_per_span;
  out.alloc_measured = capture.alloc_measured;
  out.process_resources = capture.process_resources;
  out.processes = capture.processes;
  out.threads = capture.threads;
  out.sites = capture.sites;
  return out;
}

// The metadata packet (perfetto_format.h): an instant event on the process
// track at the anchor, its one annotation the JSON trace of the capture
// without spans. Not interned: sequence 1 has no incremental state.
void PerfettoRenderer::WriteMetadata() {
  ProtoEncoder& e = packet_encoder_;
  e.Varint(pf::kPacketTimestamp, static_cast<uint64_t>(std::max<int64_t>(
                                     0, capture_.wall_clock_anchor_ns)));
  e.Varint(pf::kPacketSequenceId, pf::kDescriptorSequenceId);
  const size_t event = e.BeginNested(pf::kPacketTrackEvent);
  e.Varint(pf::kEventType, pf::kTypeInstant);
  e.Varint(pf::kEventTrackUuid, pf::ProcessTrackUuidOf(capture_, 0));
  e.Bytes(pf::kEventName, pf::kMetadataEventName);
  const size_t annotation = e.BeginNested(pf::kEventDebugAnnotations);
  e.Bytes(pf::kAnnotationName, pf::kMetadataAnnotation);
  e.Bytes(pf::kAnnotationString, TraceToJson(MetadataOf(capture_)));
  e.EndNested(annotation);
  e.EndNested(event);
  FinishPacket();
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
  // An out-of-range thread (index thread_count()) goes under process 0.
  const uint32_t process = thread < thread_count() ? info.process : 0;
  e.Varint(pf::kTrackUuid, pf::ThreadTrackUuid(capture_.pid, thread));
  e.Varint(pf::kTrackParentUuid, pf::ProcessTrackUuidOf(capture_, process));
  const size_t descriptor = e.BeginNested(pf::kTrackThread);
  e.Int(pf::kThreadPid, ThreadPid(capture_, thread));
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
  last_ts_ = static_cast<uint64_t>(
      std::max<int64_t>(0, capture_.wall_clock_anchor_ns));
  ProtoEncoder& e = packet_encoder_;
  e.Varint(pf::kPacketSequenceId, sequence_);
  e.Varint(pf::kPacketSequenceFlags, pf::kSeqIncrementalStateCleared);
  const size_t snapshot = e.BeginNested(pf::kPacketClockSnapshot);
  for (const uint64_t id :
       {pf::kBuiltinClockRealtime, pf::kIncrementalClockId}) {
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
  e.Varint(pf::kEventDefaultsTrackUuid,
           pf::ThreadTrackUuid(capture_.pid, thread));
  e.EndNested(event_defaults);
  e.EndNested(defaults);
  FinishPacket();
}

// The timestamp of a slice event at `ns`: anchor + ns on REALTIME, clamped at
// 0 and saturated (only a corrupt capture needs either).
uint64_t PerfettoRenderer::Timestamp(int64_t ns) const {
  const int64_t absolute = SatAdd(capture_.wall_clock_anchor_ns, ns);
  return static_cast<uint64_t>(std::max<int64_t>(0, absolute));
}

// The timestamp of `ns` when it gives `ns` back (neither clamped nor
// saturated); false when the reader needs the time as an override.
bool PerfettoRenderer::ExactTimestamp(int64_t ns, uint64_t* ts) const {
  int64_t absolute;
  if (__builtin_add_overflow(capture_.wall_clock_anchor_ns, ns, &absolute) ||
      absolute < 0) {
    return false;
  }
  *ts = static_cast<uint64_t>(absolute);
  return true;
}

// The common head of a slice packet, written at `p` (returns the end): the
// timestamp and the sequence. No sequence_flags: see docs/formats.md
// ("Sequence flags") for why SEQ_NEEDS_INCREMENTAL_STATE is left out. A
// timestamp that goes back in time (a corrupt capture) cannot be a delta: it
// is written absolute on REALTIME and leaves the incremental clock where it
// was. At most 22 bytes.
inline char* PerfettoRenderer::WriteEventHead(char* p, uint64_t ts) {
  *p++ = ShortKey(pf::kPacketTimestamp, internal::kWireVarint);
  if (ts >= last_ts_) {
    p = internal::WriteVarint(p, ts - last_ts_);
    last_ts_ = ts;
  } else {
    p = internal::WriteVarint(p, ts);
    p = internal::WriteVarint(p, internal::FieldKey(pf::kPacketTimestampClockId,
                                                    internal::kWireVarint));
    *p++ = static_cast<char>(pf::kBuiltinClockRealtime);
  }
  *p++ = ShortKey(pf::kPacketSequenceId, internal::kWireVarint);
  return internal::WriteVarint(p, sequence_);
}

void PerfettoRenderer::StartEventPacket(int64_t ns) {
  char head[32];
  packet_.append(head, WriteEventHead(head, Timestamp(ns)));
}

// Room for `n` more bytes. std::string zero-fills what it grows by, so it
// grows in 64 KiB steps (zeroed while they are written, in cache) rather
// than to its whole capacity at once; past its capacity it doubles.
void PerfettoRenderer::Grow(size_t n) {
  constexpr size_t kStep = size_t{64} * 1024;
  out_->resize(std::max(used_ + n, out_->size() + kStep));
}

// Completes the packet written in place at `buf[2, end)` (from `Reserve()`,
// at most 127 bytes) with its key and length in `buf[0, 2)`.
void PerfettoRenderer::FinishSmallPacket(char* buf, char* end) {
  buf[0] = ShortKey(pf::kTracePacket, internal::kWireLengthDelimited);
  buf[1] = static_cast<char>(end - buf - 2);
  Commit(end);
}

// The common slice begin, written straight into a stack buffer: no flows,
// at most two annotations, and every string already interned on this
// sequence. This path decides the writer's speed. False when the slice needs
// the general path.
bool PerfettoRenderer::TryWriteSmallBegin(uint32_t index, size_t site,
                                          uint64_t category) {
  if (annotations_.size() > 2 || HasFlows(index) ||
      !Seen(name_seen_, site + 1) ||
      (category != 0 && !Seen(category_seen_, category))) {
    return false;
  }
  for (const Annotation& a : annotations_) {
    if (a.kind == Annotation::kString) return false;
    if (!Seen(annotation_seen_, a.name_iid)) return false;
  }
  // Head 22 + event key, length, type 4 + name and category 22 + two
  // annotations 48: 96 bytes, so both lengths fit one byte.
  char* buf = Reserve(128);
  internal::SmallEncoder e(
      WriteEventHead(buf + 2, Timestamp(spans_[index].start_ns)));
  EncodeSliceBegin(e, {.name_iid = site + 1,
                       .category_iid = category,
                       .annotations = annotations_});
  FinishSmallPacket(buf, e.end());
  return true;
}

bool PerfettoRenderer::FirstUse(std::vector<uint32_t>& seen,
                                uint64_t iid) const {
  if (seen.size() <= iid) seen.resize(iid + 1, 0);
  if (seen[iid] == sequence_) return false;
  seen[iid] = sequence_;
  return true;
}

// What a slice shows besides its name: the user's arguments, its counters,
// heartbeats (when any), allocation deltas (when measured) and flags.
void PerfettoRenderer::CollectAnnotations(uint32_t index) {
  const Span& span = spans_[index];
  annotations_.clear();
  for (const SpanArg& arg : internal::ArgsOf(capture_, span)) {
    const uint64_t iid = ArgAnnotationIid(arg);
    if (arg.is_string && !arg.is_counter) {
      annotations_.push_back(
          {iid, Annotation::kString, 0, 0.0, &arg.text.str()});
      continue;
    }
    const bool is_double = arg.is_double && !arg.is_counter;
    annotations_.push_back({iid,
                            is_double ? Annotation::kDouble : Annotation::kInt,
                            arg.int_value, arg.double_value});
  }
  auto add_int = [&](uint64_t iid, int64_t value) {
    annotations_.push_back({iid, Annotation::kInt, value, 0.0});
  };
  if (span.heartbeats != 0) {
    add_int(kHeartbeatsIid, static_cast<int64_t>(span.heartbeats));
  }
  if (capture_.alloc_measured) {
    const SpanAllocs allocs = AllocsOf(capture_, index);
    add_int(kAllocCountIid, allocs.count);
    add_int(kAllocBytesIid, allocs.bytes);
  }
  uint64_t flag_iid = kFirstFlagIid;
  for (const auto& flag : internal::kFlagNames) {
    if ((span.flags & flag.bit) != 0) {
      annotations_.push_back({flag_iid, Annotation::kBool, 1, 0.0});
    }
    ++flag_iid;
  }
}

// An argument's annotation name is its key behind a prefix that says what it
// is (a counter, a truncated text, an argument).
uint64_t PerfettoRenderer::ArgAnnotationIid(const SpanArg& arg) {
  const uint32_t prefix = arg.is_counter                   ? 0
                          : arg.is_string && arg.truncated ? 1
                                                           : 2;
  const std::string* key = &arg.key.str();
  const auto address = reinterpret_cast<uintptr_t>(key);
  CachedIid& cached =
      iid_cache_[((address >> 4) ^ (address >> 12) ^ prefix) % kIidCacheSize];
  if (cached.key == key && cached.prefix == prefix) return cached.iid;
  std::string name(prefix == 0   ? pf::kCounterPrefix
                   : prefix == 1 ? pf::kTruncatedArgPrefix
                                 : pf::kArgPrefix);
  name.append(*key);
  cached = {key, prefix, interning_.AnnotationIid(name)};
  return cached.iid;
}

// What the reader cannot derive from the slice's place: the span id when it
// is not the previous begin's + 1, the parent when it is neither the open
// slice below (same thread) nor the start of the flow the slice ends, the
// depth when it is not the parent's + 1 (0 without a parent), a time that
// its timestamp cannot hold (clamped at 0 or saturated). Only corrupt or
// hand-made captures and ids out of slice order need any of them.
void PerfettoRenderer::CollectOverrides(uint32_t index) {
  const Span& span = spans_[index];
  auto add_int = [&](std::string_view name, int64_t value) {
    annotations_.push_back(
        {interning_.AnnotationIid(name), Annotation::kInt, value, 0.0});
  };
  if (span.id != last_id_ + 1) {
    add_int(pf::kAnnotationSpanId, static_cast<int64_t>(span.id));
  }
  last_id_ = span.id;
  uint32_t parent = UINT32_MAX;
  uint64_t derived_parent_id = 0;
  if (!flows_.terminates.empty() && flows_.terminates[index] != 0) {
    derived_parent_id = span.parent_id;  // the flow's start
    parent = Index().Find(span.parent_id);
  } else if (!stack_.empty()) {
    parent = stack_.back();
    derived_parent_id = spans_[parent].id;
  }
  if (span.parent_id != derived_parent_id) {
    add_int(pf::kAnnotationParentId, static_cast<int64_t>(span.parent_id));
    parent = Index().Find(span.parent_id);
  }
  const uint32_t derived_depth =
      parent == UINT32_MAX ? 0 : spans_[parent].depth + 1;
  if (span.depth != derived_depth) add_int(pf::kAnnotationDepth, span.depth);
  if (!TimeFits(span.start_ns)) add_int(pf::kAnnotationStartNs, span.start_ns);
  if (!TimeFits(span.end_ns)) add_int(pf::kAnnotationEndNs, span.end_ns);
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
    entry(pf::kInternedEventCategories, category,
          interning_.category(category));
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
  SliceBegin begin{.name_iid = site + 1,
                   .category_iid = category,
                   .annotations = annotations_};
  if (!flows_.out_begin.empty()) {
    begin.flow_ids =
        std::span<const uint64_t>(flows_.out_ids)
            .subspan(flows_.out_begin[index],
                     flows_.out_begin[index + 1] - flows_.out_begin[index]);
    begin.terminates_flow = flows_.terminates[index] != 0;
    begin.terminating_flow_id = spans_[index].id;
  }
  EncodeSliceBegin(packet_encoder_, begin);
}

// Whether the slice carries nothing but its name, category, times and
// heartbeats: no arguments, counters, allocations or flags, no flows, and
// none of the overrides (its id, parent and depth are the derived ones and
// its times fit its timestamps). Most spans of a real capture.
bool PerfettoRenderer::IsPlain(const Span& span, uint32_t index) const {
  if (span.arg_count != 0 || span.flags != 0 || capture_.alloc_measured ||
      span.site >= capture_.sites.size() || span.id != last_id_ + 1 ||
      HasFlows(index)) {
    return false;
  }
  if (stack_.empty()) {
    if (span.parent_id != 0 || span.depth != 0) return false;
  } else {
    const Span& parent = spans_[stack_.back()];
    if (span.parent_id != parent.id || span.depth != parent.depth + 1) {
      return false;
    }
  }
  return TimeFits(span.end_ns);
}

// The plain slice begin (IsPlain) whose strings this sequence has interned,
// written straight into the output with no intermediate list: this path
// decides the writer's speed. False, having written nothing, when the slice
// needs the general path.
bool PerfettoRenderer::TryWritePlainBegin(uint32_t index) {
  const Span& span = spans_[index];
  uint64_t ts;
  if (!IsPlain(span, index) || !ExactTimestamp(span.start_ns, &ts) ||
      ts < last_ts_) {
    return false;
  }
  const uint64_t category = interning_.SiteCategoryIid(span.site);
  if (!Seen(name_seen_, uint64_t{span.site} + 1) ||
      (category != 0 && !Seen(category_seen_, category)) ||
      (span.heartbeats != 0 && !Seen(annotation_seen_, kHeartbeatsIid))) {
    return false;
  }
  // Head 22 + event key, length, type 4 + name and category 22 + heartbeats
  // 14: 62 bytes, so both lengths fit one byte.
  const Annotation heartbeats{kHeartbeatsIid, Annotation::kInt,
                              static_cast<int64_t>(span.heartbeats), 0.0};
  char* const buf = Reserve(kSmallPacketBytes);
  internal::SmallEncoder e(WriteEventHead(buf + 2, ts));
  EncodeSliceBegin(
      e, {.name_iid = uint64_t{span.site} + 1,
          .category_iid = category,
          .annotations = std::span(
              &heartbeats, span.heartbeats != 0 ? size_t{1} : size_t{0})});
  FinishSmallPacket(buf, e.end());
  last_id_ = span.id;
  return true;
}

void PerfettoRenderer::WriteBegin(uint32_t index) {
  const Span& span = spans_[index];
  const size_t site = std::min<size_t>(span.site, capture_.sites.size());
  const uint64_t category = interning_.SiteCategoryIid(site);
  CollectAnnotations(index);
  CollectOverrides(index);
  if (TryWriteSmallBegin(index, site, category)) return;
  StartEventPacket(span.start_ns);
  WriteInterned(site, category);
  WriteTrackEvent(index, site, category);
  FinishPacket();
}

void PerfettoRenderer::WriteEnd(uint32_t index) {
  const uint64_t ts = Timestamp(spans_[index].end_ns);
  char* const buf = Reserve(kSmallPacketBytes);
  char* p = WriteEventHead(buf + 2, ts);
  *p++ = ShortKey(pf::kPacketTrackEvent, internal::kWireLengthDelimited);
  *p++ = 2;
  *p++ = ShortKey(pf::kEventType, internal::kWireVarint);
  *p++ = static_cast<char>(pf::kTypeSliceEnd);
  FinishSmallPacket(buf, p);
}

// Whether the k-th span (index k, unsorted) keeps the shape Render()
// assumes of an unsorted capture: in slice order after the previous span
// of its thread run, ids consecutive, and no parent on another thread.
bool PerfettoRenderer::KeepsAssumedShape(const Span& span, size_t k,
                                         size_t run_begin) const {
  const internal::SpanList spans(capture_);
  if (k > run_begin && !InSliceOrder(spans[k - 1], span, thread_count())) {
    return false;
  }
  const uint64_t first = spans[0].id;
  const uint64_t parent = span.parent_id - first;
  return span.id == first + k &&
         (span.parent_id < first || parent >= spans.size() ||
          spans[parent].thread == span.thread);
}

// One thread's slices: the spans in slice order from the k-th while their
// thread is `thread`; returns where its run ends. Nested with a stack:
// before a span begins, every open span that ended by then (and is not its
// parent) ends. With `check`, stops (setting shape_broken_) at a span that
// does not keep the assumed shape.
absl::StatusOr<size_t> PerfettoRenderer::WriteThread(
    uint32_t thread, const std::vector<uint32_t>& order, size_t k, bool check) {
  const internal::SpanList spans(capture_);
  StartThreadSequence(thread);
  stack_.clear();
  const size_t run_begin = k;
  for (; k < spans.size(); ++k) {
    const uint32_t index = order.empty() ? static_cast<uint32_t>(k) : order[k];
    const Span& span = spans[index];
    if (std::min(span.thread, thread_count()) != thread) break;
    if (check && !KeepsAssumedShape(span, k, run_begin)) {
      shape_broken_ = true;
      return k;
    }
    while (!stack_.empty()) {
      const Span& top = spans[stack_.back()];
      if (top.id == span.parent_id || top.end_ns > span.start_ns) break;
      WriteEnd(stack_.back());
      stack_.pop_back();
    }
    if (!TryWritePlainBegin(index)) WriteBegin(index);
    stack_.push_back(index);
    if (used_ >= chunk_) {
      SPANPROF_RETURN_IF_ERROR(flush_(std::string_view(out_->data(), used_)));
      flushed_ += used_;
      used_ = 0;
    }
  }
  while (!stack_.empty()) {
    WriteEnd(stack_.back());
    stack_.pop_back();
  }
  return k;
}

// The whole trace, the spans in `order` (empty: as they are). With `check`,
// stops early (shape_broken_) when they turn out not to be in slice order
// or to have cross-thread links.
absl::Status PerfettoRenderer::WriteTrace(const std::vector<uint32_t>& order,
                                          bool check) {
  const internal::SpanList spans(capture_);
  const size_t n = spans.size();
  // The thread of the k-th span in slice order (out-of-range ones share the
  // last track).
  auto thread_at = [&](size_t k) {
    return std::min(spans[order.empty() ? k : order[k]].thread, thread_count());
  };
  WriteDescriptorSequence(n > 0 && thread_at(n - 1) == thread_count());
  size_t k = 0;
  uint32_t last_thread = 0;
  while (k < n && !shape_broken_) {
    const uint32_t thread = thread_at(k);
    if (check && k > 0 && thread <= last_thread) {
      shape_broken_ = true;
      break;
    }
    last_thread = thread;
    SPANPROF_ASSIGN_OR_RETURN(k, WriteThread(thread, order, k, check));
  }
  return absl::OkStatus();
}

// Forgets what an abandoned WriteTrace() wrote.
void PerfettoRenderer::Restart() {
  used_ = 0;
  flushed_ = 0;
  packet_.clear();
  last_id_ = 0;
  sequence_ = 0;
  name_seen_.clear();
  category_seen_.clear();
  annotation_seen_.clear();
  // Annotation iids are handed out in order of first use: start over, so
  // that the trace is the one WritePerfettoTrace() writes, byte for byte.
  interning_ = Interning(capture_);
  iid_cache_ = {};  // its iids were the old interning's
  shape_broken_ = false;
}

absl::Status PerfettoRenderer::Render() {
  const internal::SpanList spans(capture_);
  // Rendering in memory (nothing handed to flush_ before the end), the spans
  // are first taken as the collector writes them (in slice order, ids
  // consecutive, parents on their child's thread) and checked while they
  // are written: one pass over the capture (80 bytes a span) rather than
  // three. A capture that is not is written again from the start.
  if (chunk_ == SIZE_MAX) {
    SPANPROF_RETURN_IF_ERROR(WriteTrace({}, /*check=*/true));
    if (!shape_broken_) return Finish();
    Restart();
  }
  const CaptureShape shape = ScanCapture(spans, thread_count());
  if (shape.may_have_links) flows_ = PlanFlows(capture_);
  SPANPROF_RETURN_IF_ERROR(WriteTrace(
      SliceOrder(spans, thread_count(), shape.sorted), /*check=*/false));
  return Finish();
}

// The end packet (perfetto_format.h): what precedes it, so that a reader
// can tell a whole trace from one cut at a packet boundary.
void PerfettoRenderer::WriteEndPacket() {
  const int64_t end_ns =
      SatAdd(std::max<int64_t>(0, capture_.wall_clock_anchor_ns),
             std::max<int64_t>(0, capture_.window_ns));
  const size_t bytes_before = flushed_ + used_;
  ProtoEncoder& e = packet_encoder_;
  e.Varint(pf::kPacketTimestamp, static_cast<uint64_t>(end_ns));
  e.Varint(pf::kPacketSequenceId, pf::kDescriptorSequenceId);
  const size_t event = e.BeginNested(pf::kPacketTrackEvent);
  e.Varint(pf::kEventType, pf::kTypeInstant);
  e.Varint(pf::kEventTrackUuid, pf::ProcessTrackUuidOf(capture_, 0));
  e.Bytes(pf::kEventName, pf::kEndEventName);
  const std::pair<std::string_view, uint64_t> counts[] = {
      {pf::kEndSpans, internal::SpanCount(capture_)},
      {pf::kEndBytes, bytes_before}};
  for (const auto& [name, value] : counts) {
    const size_t annotation = e.BeginNested(pf::kEventDebugAnnotations);
    e.Bytes(pf::kAnnotationName, name);
    e.Varint(pf::kAnnotationInt, value);
    e.EndNested(annotation);
  }
  e.EndNested(event);
  FinishPacket();
}

absl::Status PerfettoRenderer::Finish() {
  WriteEndPacket();
  out_->resize(used_);
  return flush_(*out_);
}

}  // namespace

bool IsPerfettoTracePath(std::string_view path) {
  if (internal::EndsWithGz(path)) path.remove_suffix(3);
  return HasExtension(path, ".pftrace") ||
         HasExtension(path, ".perfetto-trace");
}

bool LooksLikePerfettoTrace(std::string_view bytes) {
  return pf::LooksLikeProtobufTrace(bytes);
}

std::string CaptureToPerfetto(const Capture& capture) {
  std::string out;
  out.reserve(4096 + capture.threads.size() * 128 +
              internal::SpanCount(capture) * 32);
  // Rendering into one string cannot fail.
  PerfettoRenderer(capture, &out, SIZE_MAX,
                   [](std::string_view) { return absl::OkStatus(); })
      .Render()
      .IgnoreError();
  return out;
}

absl::Status WritePerfettoTrace(const Capture& capture,
                                const std::string& path) {
  constexpr size_t kChunk = size_t{256} << 10;
  SPANPROF_ASSIGN_OR_RETURN(
      std::unique_ptr<internal::OutputFile> file,
      internal::OutputFile::Create(path, internal::EndsWithGz(path)));
  std::string buffer;
  buffer.reserve(kChunk + size_t{64} * 1024);
  SPANPROF_RETURN_IF_ERROR(
      PerfettoRenderer(capture, &buffer, kChunk, [&](std::string_view bytes) {
        return file->Write(bytes);
      }).Render());
  return file->Commit();
}

}  // namespace spanprof::analysis
