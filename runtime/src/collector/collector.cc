// The collector: StopRecording() stops recording, takes every ring (live and
// exited threads), parses them into spans (ring_parser.cc), and assembles the
// Capture: ring-mode trimming, compaction of discarded spans, depths,
// arguments, drops and the session's metadata.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collector/assemble.h"
#include "collector/ring_parser.h"
#include "collector/ring_snapshot.h"
#include "recorder/recorder_internal.h"
#include "spanprof/internal/compact_spans.h"
#include "spanprof/internal/hex_id.h"
#include "spanprof/recording.h"

#ifndef SPANPROF_VERSION_STRING
#error \
    "SPANPROF_VERSION_STRING comes from PROJECT_VERSION (runtime/CMakeLists.txt)"
#endif

namespace spanprof {

using internal::CaptureInputs;
using internal::ClockPair;
using internal::Collector;
using internal::CompactSpans;
using internal::kNoSpan;
using internal::kRemovedFlag;
using internal::ParsedSpans;
using internal::PendingArg;
using internal::RingSnapshot;
using internal::SessionFacts;
using internal::SessionState;
using internal::SpanArgStore;
using internal::ThreadRing;
using internal::TimeBase;
using internal::ValidUtf8;

namespace internal {

bool EndActiveSession(SessionState& session, std::vector<ThreadRing*>* rings,
                      ClockPair* stop) {
  std::lock_guard<std::mutex> lock(session.mu);
  if (!session.active) return false;
  internal::FlushCallerCounts(session);
  internal::g_epoch.store(0, std::memory_order_seq_cst);
  *stop = internal::ReadClockPair();
  session.active = false;
  internal::StopPrefaulting();
  *rings = std::move(session.rings);
  session.rings.clear();
  session.ended_drops = GatherDrops(*rings);
  return true;
}

}  // namespace internal

namespace {

// Parses every snapshot in turn. Each ring goes back as soon as it is parsed,
// so that its memory is free again (or cached for the next session) before
// the next thread's spans are written: the peak is the capture plus one ring,
// not plus all. Returns, by ring slot, the snapshot index of each thread.
std::vector<uint32_t> ParseRings(Collector& collector,
                                 std::vector<RingSnapshot>& snaps,
                                 std::vector<internal::PendingArg>& reserved) {
  uint32_t slots = 0;
  for (const RingSnapshot& snap : snaps) slots = std::max(slots, snap.slot + 1);
  std::vector<uint32_t> slot_to_thread(slots, UINT32_MAX);
  for (uint32_t t = 0; t < snaps.size(); ++t) {
    slot_to_thread[snaps[t].slot] = t;
  }
  // Every side record may become an argument: one reservation instead of
  // the doublings of push_back (up to twice the arguments' memory), unless
  // they are packed as each thread is parsed (a few thousand wait at a
  // time).
  size_t side_records = 0;
  for (const RingSnapshot& snap : snaps) side_records += snap.side.size();
  if (collector.packs_args()) {
    std::vector<internal::PendingArg>().swap(reserved);
    collector.arg_store().Reserve(side_records);
  } else {
    // Storage reserved ahead is taken when it fits, as for the spans.
    internal::TakeReserved(reserved, side_records,
                           side_records + side_records / 8 + 4096,
                           collector.args());
    collector.ReserveArgs(side_records);
  }
  for (uint32_t t = 0; t < snaps.size(); ++t) {
    collector.ParseThread(t, snaps[t]);
    if (snaps[t].ring != nullptr) internal::HandBack(snaps[t]);
    snaps[t].ring = nullptr;
    snaps[t].chunks.clear();
    std::vector<internal::OwnedRecords>().swap(snaps[t].owned);
    // The copy of the thread's side records (32 bytes a record) is parsed:
    // free it now, before the capture's arguments are built, not when the
    // session end returns (the peak of a session with arguments).
    snaps[t].side.Clear();
    std::vector<uint64_t>().swap(snaps[t].side_index);
  }
  return slot_to_thread;
}

// Ring mode keeps the newest `cap` spans overall: flags the oldest of the
// retained spans (by start, then by index) as removed. Returns how many.
size_t TrimRingOverflow(std::vector<Span>& spans, size_t removed,
                        uint64_t cap) {
  if (spans.size() - removed <= cap) return 0;
  std::vector<std::pair<int64_t, size_t>> order;
  order.reserve(spans.size() - removed);
  for (size_t i = 0; i < spans.size(); ++i) {
    if (!(spans[i].flags & kRemovedFlag)) {
      order.emplace_back(spans[i].start_ns, i);
    }
  }
  const size_t excess = order.size() - cap;
  std::nth_element(order.begin(),
                   order.begin() + static_cast<ptrdiff_t>(excess - 1),
                   order.end());
  for (size_t i = 0; i < excess; ++i) {
    spans[order[i].second].flags |= kRemovedFlag;
  }
  return excess;
}

// Discarded spans count as drops (by interned site id); their children
// become roots, flagged.
void CountRemoved(const Collector& collector, std::vector<Span>& spans,
                  std::vector<uint64_t>& drops_by_site) {
  for (Span& span : spans) {
    if (span.flags & kRemovedFlag) {
      const uint32_t id = collector.SiteId(span.site);
      if (id >= drops_by_site.size()) drops_by_site.resize(id + 1, 0);
      ++drops_by_site[id];
    } else if (span.parent_id != 0 &&
               (spans[span.parent_id - 1].flags & kRemovedFlag)) {
      span.parent_id = 0;
      span.flags |= kSpanRerooted;
    }
  }
}

// Moves the retained spans down so that ids stay dense, in thread and begin
// order; threads left without spans leave the capture. Returns each old
// span's new index (kNoSpan for removed ones).
std::vector<size_t> Compact(Capture& capture) {
  std::vector<Span>& spans = capture.spans;
  std::vector<SpanAllocs>& allocs = capture.span_allocs;
  std::vector<size_t> new_index(spans.size(), kNoSpan);
  std::vector<uint32_t> thread_index(capture.threads.size(), UINT32_MAX);
  std::vector<ThreadInfo> threads;
  size_t next = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].flags & kRemovedFlag) continue;
    new_index[i] = next;
    Span& span = spans[next];
    if (next != i) {
      span = spans[i];
      if (i < allocs.size()) allocs[next] = allocs[i];
    }
    span.id = next + 1;
    uint32_t& thread = thread_index[span.thread];
    if (thread == UINT32_MAX) {
      thread = static_cast<uint32_t>(threads.size());
      threads.push_back(std::move(capture.threads[span.thread]));
      threads.back().sort_index = thread;
    }
    span.thread = thread;
    ++next;
  }
  spans.resize(next);
  if (allocs.size() > next) allocs.resize(next);
  capture.threads = std::move(threads);
  for (Span& span : spans) {
    if (span.parent_id != 0) {
      span.parent_id = new_index[span.parent_id - 1] + 1;
    }
  }
  return new_index;
}

// Recomputes every depth from the parent links (after cross-thread parents
// were linked or parents were lost). A link that would close a loop is cut.
void RecomputeDepths(std::vector<Span>& spans) {
  const size_t n = spans.size();
  std::vector<uint8_t> state(n, 0);  // 0 = unknown, 1 = on the walk, 2 = done
  std::vector<size_t> walk;
  for (size_t i = 0; i < n; ++i) {
    if (state[i] == 2) continue;
    walk.clear();
    size_t cur = i;
    uint32_t depth = 0;
    while (true) {
      if (state[cur] == 2) {
        depth = spans[cur].depth + 1;
        break;
      }
      state[cur] = 1;
      walk.push_back(cur);
      const uint64_t parent = spans[cur].parent_id;
      if (parent == 0) break;
      if (state[parent - 1] == 1) {  // a loop: make `cur` a root
        spans[cur].parent_id = 0;
        spans[cur].flags |= kSpanRerooted;
        break;
      }
      cur = static_cast<size_t>(parent - 1);
    }
    for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
      spans[*it].depth = depth++;
      state[*it] = 2;
    }
  }
}

// The sites with every name and tag made valid UTF-8: a name from the C API
// or a computed string may hold any bytes, and the outputs must not.
std::vector<Site> ValidSites(std::vector<Site> sites) {
  for (Site& site : sites) {
    for (std::string* text :
         {&site.name, &site.phase, &site.module, &site.activity, &site.backend,
          &site.dtype, &site.device}) {
      *text = ValidUtf8(*text);
    }
  }
  return sites;
}

// This machine's host name, "" when it has none.
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

// The session's description: version, process, clock, window, cap.
void DescribeSession(const SessionFacts& facts, const ClockPair& stop,
                     Capture& capture) {
  capture.spanprof_version = facts.version;
  capture.process_name = ValidUtf8(facts.process_name);
  capture.pid = facts.pid;
  capture.clock = facts.use_tsc ? "tsc" : "monotonic";
  capture.wall_clock_anchor_ns = facts.start_wall_ns;
  capture.wall_clock_uncertainty_ns = facts.start_wall_uncertainty_ns;
  capture.host = ValidUtf8(facts.host);
  capture.trace_id =
      internal::HexId(facts.trace_high) + internal::HexId(facts.trace_low);
  capture.remote_parent_span_id = facts.remote_parent_span_id;
  capture.span_id_seed = facts.span_id_seed;
  capture.window_ns =
      stop.mono_ns > facts.start_mono_ns
          ? static_cast<int64_t>(stop.mono_ns - facts.start_mono_ns)
          : 0;
  capture.event_limit = facts.max_events;
  capture.overflow_policy = OverflowPolicyName(facts.overflow);
  capture.alloc_measured = facts.count_allocs;
}

// Arguments, contiguous per span, numeric arguments first, then one entry
// per counter (Collector::AttachPending); `new_index` maps parse-time
// indices to the compacted ones (empty: nothing moved). A packed capture's
// were attached as each thread was parsed (`packed`, the collector's store):
// only those still pending, if any, are attached here.
void AttachArgs(Collector& collector, const std::vector<size_t>& new_index,
                Capture& capture, std::vector<SpanArg>& reserved,
                std::optional<SpanArgStore>& packed,
                internal::EndProgress* progress) {
  std::vector<PendingArg>& args = collector.args();
  std::optional<SpanArgStore> unpacked;
  SpanArgStore& store = packed.has_value()
                            ? *packed
                            : unpacked.emplace(capture, reserved, args.size());
  collector.AttachPending(args, new_index, store, progress, /*release=*/true);
  store.Finish();
  std::vector<PendingArg>().swap(args);
}

// The exported points' spans (`exported[k]`, parse-time index, -1: none)
// as `exported_span_ids`, sorted by span, each span's entries in export
// order. A point whose span was not retained names nothing in the capture.
void AttachExports(const std::vector<internal::ExportPoint>& points,
                   const std::vector<int64_t>& exported,
                   const std::vector<size_t>& new_index, Capture& capture) {
  for (size_t k = 0; k < points.size(); ++k) {
    if (exported[k] < 0) continue;
    const auto parsed = static_cast<size_t>(exported[k]);
    const size_t index = new_index.empty() ? parsed : new_index[parsed];
    if (index == kNoSpan) continue;
    capture.exported_span_ids.push_back(
        ExportedSpanId{capture.spans[index].id, points[k].external_id});
  }
  std::stable_sort(capture.exported_span_ids.begin(),
                   capture.exported_span_ids.end(),
                   [](const ExportedSpanId& a, const ExportedSpanId& b) {
                     return a.span < b.span;
                   });
}

// The name of a drop's key: its argument key's site name, or its counter's
// name; "" when unknown.
std::string DropName(const Collector& collector, const std::vector<Site>& sites,
                     const internal::GatheredDrop& drop) {
  if (drop.reason >= internal::kDropReasonCount) return "";
  if (drop.is_counter && drop.reason != internal::kDropCounterLimit) {
    return collector.CounterName(drop.key);
  }
  return drop.key < sites.size() ? sites[drop.key].name : "";
}

// The arguments and counts lost, named (Capture::arg_drops): the threads'
// drop tables (`in.arg_drops`), what the parse could not attach, and as
// "unknown" what the threads counted beyond their tables (a full table, a
// straggler, a recovered stream that has only the totals).
void AttachArgDrops(Collector& collector, CaptureInputs& in, Capture& capture) {
  using Key =
      std::tuple<std::optional<uint32_t>, std::string, bool, std::string>;
  std::map<Key, uint64_t> named;
  uint64_t tables = 0;
  const auto add = [&](const internal::GatheredDrop& drop) {
    const bool known = drop.reason < internal::kDropReasonCount;
    std::optional<uint32_t> site;
    if (known && drop.site != 0 && drop.site != internal::kUnknownSite) {
      site = collector.UseSite(drop.site);
    }
    named[Key{site, DropName(collector, in.sites, drop),
              known && drop.is_counter,
              internal::DropReasonName(drop.reason)}] += drop.count;
  };
  if (in.arg_drops_known) {
    for (const internal::SlotDrop& d : in.arg_drops) {
      tables += d.drop.count;
      add(d.drop);
    }
  }
  uint64_t counted = 0;
  for (const RingSnapshot& snap : in.snaps) counted += snap.dropped_args;
  if (counted > tables) {
    add(internal::GatheredDrop{0, 0, false, internal::kDropReasonCount,
                               counted - tables});
  }
  for (const internal::GatheredDrop& drop : collector.parsed_drops()) {
    add(drop);
  }
  for (const auto& [key, count] : named) {
    const auto& [site, name, is_counter, reason] = key;
    capture.dropped_args += count;
    capture.arg_drops.push_back(ArgDrop{site, name, is_counter, reason, count});
  }
  std::stable_sort(
      capture.arg_drops.begin(), capture.arg_drops.end(),
      [](const ArgDrop& a, const ArgDrop& b) { return a.count > b.count; });
}

// Drops, in total and per site (sites seen only in drops join the capture).
void AttachDrops(const std::vector<uint64_t>& drops_by_site,
                 Collector& collector, Capture& capture) {
  for (size_t s = 0; s < drops_by_site.size(); ++s) {
    if (drops_by_site[s] == 0) continue;
    capture.dropped_events += drops_by_site[s];
    capture.dropped_by_site.push_back(SiteDrops{
        collector.UseSite(static_cast<uint32_t>(s)), drops_by_site[s]});
  }
}

}  // namespace

namespace internal {

SessionFacts FactsOf(const SessionState& session) {
  SessionFacts facts;
  facts.version = SPANPROF_VERSION_STRING;
  facts.process_name = session.options.process_name;
  facts.host = HostName();
  facts.pid = session.pid;
  facts.use_tsc = session.use_tsc;
  facts.start_tsc = session.start_tsc;
  facts.start_mono_ns = session.start_mono_ns;
  facts.start_wall_ns = session.start_wall_ns;
  facts.start_wall_uncertainty_ns = session.start_wall_uncertainty_ns;
  facts.trace_high = session.trace_high;
  facts.trace_low = session.trace_low;
  facts.remote_parent_span_id = session.remote_parent_span_id;
  facts.span_id_seed = session.span_id_seed;
  facts.max_events = session.options.max_events;
  facts.overflow = session.options.overflow;
  facts.count_allocs = session.count_allocs;
  return facts;
}

namespace {

// Whether a ring lost a prefix of its records (ring mode).
bool AnyTruncated(const std::vector<RingSnapshot>& snaps) {
  return std::any_of(snaps.begin(), snaps.end(),
                     [](const RingSnapshot& snap) { return snap.truncated; });
}

// The spans of a capture that only feeds the session end's outputs go
// compact (Capture::compact_spans): those the parse moved already
// (ParsedSpans), or, when the parse kept them whole (they were linked or
// trimmed after it), all of them now, a block at a time, the whole spans'
// pages going back as the move passes them. The collector numbers spans 1,
// 2, 3, ... in order, so every span fits unless one lies deeper than
// 65,535 spans: then the capture keeps `spans`.
void MakeSpansCompact(Capture& capture, ParsedSpans& parsed,
                      std::shared_ptr<CompactSpans> compact) {
  if (!parsed.fit()) return;
  if (parsed.moving()) {
    parsed.Move();
    if (!parsed.moving()) return;  // a span did not fit: all came back
    capture.compact_spans = std::move(compact);
    return;
  }
  std::vector<Span>& spans = capture.spans;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (!CompactSpans::Fits(spans[i], i)) return;
  }
  *compact = CompactSpans();
  compact->Reserve(spans.size());
  constexpr size_t kBlock = size_t{1} << 14;
  size_t released = 0;
  for (size_t begin = 0; begin < spans.size(); begin += kBlock) {
    const size_t end = std::min(spans.size(), begin + kBlock);
    for (size_t i = begin; i < end; ++i) compact->Append(spans[i]);
    ReleaseReadPrefix(spans, end, &released);
  }
  capture.spans = std::vector<Span>();
  capture.compact_spans = std::move(compact);
}

}  // namespace

// The named steps after the rings are taken: parse every thread, link
// cross-thread parents, trim and compact (ring mode), describe the session,
// attach arguments, exports and drops.
Capture AssembleCapture(const SessionFacts& facts, CaptureInputs& in) {
  const uint64_t stop_raw = facts.use_tsc ? in.stop.tsc : in.stop.mono_ns;
  const TimeBase time(facts.use_tsc,
                      facts.use_tsc ? facts.start_tsc : facts.start_mono_ns,
                      stop_raw, facts.start_mono_ns, in.stop.mono_ns);
  std::vector<RingSnapshot>& snaps = in.snaps;
  Capture capture;
  const size_t begins = CountBegins(snaps);
  // Storage reserved ahead is taken when it fits the spans; an estimate far
  // above them (the stream could not be read) or below them (records joined
  // from the rings) is freed first.
  TakeReserved(in.spans, begins, begins + begins / 8 + 4096, capture.spans);
  if (facts.count_allocs) capture.span_allocs.reserve(begins);
  in.sites = ValidSites(std::move(in.sites));
  const bool keep_positions = NeedPositions(snaps) || !in.exports.empty();
  Collector collector(capture, in.sites, time, stop_raw, keep_positions);
  for (std::string& name : in.counter_names) name = ValidUtf8(name);
  collector.set_counter_names(std::move(in.counter_names));
  collector.set_alloc_column(facts.count_allocs);
  collector.set_release_blocks(RingBytes(snaps) > BlockCacheCapacityBytes());
  collector.set_progress(in.progress);
  // A capture that only feeds the session end's outputs holds its arguments
  // packed, attached as each thread is parsed.
  std::optional<SpanArgStore> packed;
  if (in.pack_args) collector.set_arg_store(&packed.emplace(capture));
  // Its spans go compact while the parse goes, where nothing after the
  // parse needs them whole: no positions kept (contexts, exports, side
  // records overwritten) and nothing trimmed (ring mode, a truncated ring).
  std::shared_ptr<CompactSpans> compact = std::move(in.compact_spans);
  if (in.pack_args && !keep_positions &&
      facts.overflow != OverflowPolicy::kRing && !AnyTruncated(snaps)) {
    // Storage reserved ahead, which a helper may be faulting in (ahead of
    // the parse's progress), or its own.
    if (compact == nullptr) compact = std::make_shared<CompactSpans>();
    compact->Reserve(begins);
    collector.spans().MoveInto(compact.get());
  } else {
    // Only faulted in, never read: it may go while the helper is at it.
    compact = std::make_shared<CompactSpans>();
    capture.spans.reserve(begins);
  }
  const std::vector<uint32_t> slot_to_thread =
      ParseRings(collector, snaps, in.args);
  // Before the cross-thread links: resolving walks same-thread parents.
  std::vector<int64_t> exported =
      collector.ResolvePoints(slot_to_thread, in.exports);
  bool depths_changed = collector.ResolveContexts(slot_to_thread);

  size_t removed = collector.removed();
  // What follows edits `Capture::spans` in place: none of it runs for a
  // capture whose spans moved during the parse, but should it, they come
  // back first.
  if (removed > 0 || depths_changed || !exported.empty()) {
    collector.spans().MoveBack();
  }
  if (facts.overflow == OverflowPolicy::kRing) {
    removed += TrimRingOverflow(capture.spans, removed, facts.max_events);
  }
  std::vector<size_t> new_index;
  if (removed > 0) {
    CountRemoved(collector, capture.spans, in.drops_by_site);
    new_index = Compact(capture);
    depths_changed = true;
  }
  if (depths_changed) RecomputeDepths(capture.spans);

  DescribeSession(facts, in.stop, capture);
  AttachExports(in.exports, exported, new_index, capture);
  AttachArgs(collector, new_index, capture, in.span_args, packed, in.progress);
  AttachDrops(in.drops_by_site, collector, capture);
  AttachArgDrops(collector, in, capture);
  capture.failed_prepares = in.failed_prepares;
  if (in.pack_args) {
    MakeSpansCompact(capture, collector.spans(), std::move(compact));
  }
  return capture;
}

}  // namespace internal

namespace internal {

Capture CollectEndedSession(const SessionState& session,
                            const std::vector<ThreadRing*>& rings,
                            const ClockPair& stop, bool pack_args) {
  CaptureInputs in;
  in.pack_args = pack_args;
  in.snaps = SnapshotRings(rings, &in.drops_by_site);
  AddSessionTables(session, stop, in);
  return AssembleCapture(FactsOf(session), in);
}

void AddSessionTables(const SessionState& session, const ClockPair& stop,
                      CaptureInputs& in) {
  in.sites = SnapshotSites();
  in.counter_names = SnapshotCounterNames();
  in.exports = session.exports;
  in.stop = stop;
  in.failed_prepares = session.failed_prepares.load(std::memory_order_relaxed);
  in.arg_drops = session.ended_drops;
  in.arg_drops_known = true;
}

}  // namespace internal

namespace internal {

Capture StopAndCollect(bool pack_args) {
  SessionState& session = Session();
  std::vector<ThreadRing*> rings;
  ClockPair stop{};
  if (!EndActiveSession(session, &rings, &stop)) return Capture{};
  return CollectEndedSession(session, rings, stop, pack_args);
}

}  // namespace internal

Capture StopRecording() {
  return internal::StopAndCollect(/*pack_args=*/false);
}

}  // namespace spanprof
