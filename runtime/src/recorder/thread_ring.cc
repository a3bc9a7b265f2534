// A thread's ring: binding a thread to the session, chunk switches and span
// credit, drop accounting, and the slow paths of begin, end and side
// records. The fast path lives in spanprof/internal/recorder.h; everything
// here runs at most once per chunk (thousands of spans), once per site or
// once per thread, except the drop path, which is a thread-local increment.
#include <cxxabi.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>

#include "recorder/drain_bell.h"
#include "recorder/recorder_internal.h"
#include "recorder/ring_memory.h"
#include "spanprof/span.h"

namespace spanprof::internal {

std::atomic<uint32_t> g_epoch{0};
std::atomic<bool> g_alloc_counting_linked{false};

__thread ThreadState* tls_state __attribute__((tls_model("initial-exec"))) =
    nullptr;
__thread uint64_t tls_heartbeats __attribute__((tls_model("initial-exec"))) = 0;
__thread int64_t tls_alloc_count __attribute__((tls_model("initial-exec"))) = 0;
__thread int64_t tls_alloc_bytes __attribute__((tls_model("initial-exec"))) = 0;

SessionState& Session() {
  // Leaked on purpose: the session must outlive static destructors because
  // exit() can finish a session from an atexit handler.
  static SessionState* state = new SessionState();
  return *state;
}

namespace {

uint64_t BeginSlots(const ThreadRing& r) { return r.end_slots; }

// Slots reserved for the ends of spans still open, derived from the limit:
// limit = chunk_end - reserved - (b + e) + 1.
uint64_t ReservedSlots(const ThreadRing& r) {
  if (r.chunk_end == nullptr) return 0;
  const uint64_t b = BeginSlots(r);
  const uint64_t e = r.end_slots;
  return static_cast<uint64_t>(r.chunk_end - r.limit) + 1 - (b + e);
}

void SetLimit(ThreadRing& r, uint64_t reserved) {
  const uint64_t b = BeginSlots(r);
  const uint64_t e = r.end_slots;
  r.limit = r.chunk_end - reserved - (b + e) + 1;
}

// Counts the begins in a chunk about to be overwritten (ring mode) as drops.
void CountOverwritten(ThreadRing& r, const Chunk& chunk) {
  for (uint64_t i = 0; i < chunk.used; ++i) {
    const Record& rec = chunk.records[i];
    if ((rec.word >> kKindShift) == kBeginRecord) {
      const uint32_t site = rec.word & kSiteMask;
      if (site >= r.drops_by_site.size()) r.drops_by_site.resize(site + 64, 0);
      ++r.drops_by_site[site];
    }
  }
}

// Streaming: the oldest chunk once the stream holds all of it (the drain
// thread's position has passed its end) is overwritten by the next grant,
// so a ring that the drain keeps up with touches no new memory after its
// first few chunks, however long the session runs. Drained chunks too small
// for `needed` (the first, small ones) are freed on the way. Called with
// r.mu held (the drain thread moves `drained` under it).
bool TakeDrainedChunk(ThreadRing& r, uint64_t needed, Chunk* out) {
  if (!r.streaming) return false;
  while (r.chunks.size() >= 2) {
    Chunk& oldest = r.chunks.front();
    if (r.drained < oldest.base_position + oldest.used) return false;
    if (oldest.capacity >= needed) {
      *out = oldest;
      r.chunks.erase(r.chunks.begin());
      ++r.recycled_chunks;
      return true;
    }
    FreeChunk(oldest);
    r.chunks.erase(r.chunks.begin());
  }
  return false;
}

// Switches the ring to a chunk with room for `spans` new spans. Called with
// r.mu held and the session active. Returns false when out of memory.
bool SwitchChunk(ThreadRing& r, uint64_t spans, bool recycle_oldest) {
  const uint64_t reserved = ReservedSlots(r);
  const uint64_t b = BeginSlots(r);
  const uint64_t e = r.end_slots;
  const uint64_t needed = spans * (b + e) + reserved;
  uint64_t position = 0;
  if (!r.chunks.empty() && r.chunks.back().records == nullptr) {
    r.chunks.pop_back();  // the empty placeholder a thread starts with
  } else if (!r.chunks.empty()) {
    Chunk& current = r.chunks.back();
    current.used = static_cast<uint64_t>(
        r.cursor.load(std::memory_order_relaxed) - r.chunk_begin);
    position = current.base_position + current.used;
  }
  Chunk next;
  if (recycle_oldest && r.chunks.size() >= 2 &&
      r.chunks.front().capacity >= needed) {
    next = r.chunks.front();
    CountOverwritten(r, next);
    r.chunks.erase(r.chunks.begin());
  } else if (!TakeDrainedChunk(r, needed, &next)) {
    // A streaming ring takes new memory only when the drain is behind it:
    // wake the drain now rather than at its next timed pass.
    if (r.streaming) TheDrainBell().Ring();
    next.records = AllocateRecords(needed);
    if (next.records == nullptr) return false;
    // A streaming ring reuses its chunks for any later grant: it records
    // what the memory can hold.
    next.capacity = r.streaming ? ChunkCapacity(needed) : needed;
  }
  next.used = 0;
  next.base_position = position;
  r.chunks.push_back(next);
  r.chunk_begin = next.records;
  r.chunk_base = position;
  // Only `needed` slots of a recycled chunk are used, so a recycled chunk
  // carries exactly the credit it was granted.
  r.chunk_end = next.records + needed;
  SetLimit(r, reserved);
  r.cursor.store(next.records, std::memory_order_release);
  return true;
}

uint64_t NextChunkSpans(ThreadRing& r) {
  const uint64_t spans = r.next_chunk_spans;
  r.next_chunk_spans = std::min(kMaxChunkSpans, spans * 2);
  // Keep a chunk within one block when the ends it must reserve (spans still
  // open) or the allocation records would make it spill over.
  const uint64_t per_span = BeginSlots(r) + r.end_slots;
  const uint64_t reserved = ReservedSlots(r);
  if (spans * per_span + reserved > kBlockRecords &&
      reserved + per_span <= kBlockRecords) {
    return (kBlockRecords - reserved) / per_span;
  }
  return spans;
}

// Takes up to `want` spans of credit from the global budget; 0 when none is
// left. Near the end of the budget, grants shrink so that idle threads do
// not sit on credit that busy threads could use.
uint64_t TakeCredit(std::atomic<int64_t>& budget, uint64_t want) {
  int64_t left = budget.load(std::memory_order_relaxed);
  while (left > 0) {
    const int64_t share = std::max<int64_t>(1, left / 8);
    const int64_t grant = std::min<int64_t>(static_cast<int64_t>(want), share);
    if (budget.compare_exchange_weak(left, left - grant,
                                     std::memory_order_relaxed)) {
      return static_cast<uint64_t>(grant);
    }
  }
  return 0;
}

void CountDrop(ThreadRing& r, uint32_t site) {
  if (site >= r.drops_by_site.size()) r.drops_by_site.resize(site + 64, 0);
  ++r.drops_by_site[site];
  ++r.dropped_open;
  if (r.dropped_open <= ThreadRing::kDroppedSites) {
    r.dropped_sites[r.dropped_open - 1] = site;
  }
}

// Makes room for one more begin. Called with r.mu held while recording.
// Returns false when the span must be dropped.
bool Refill(ThreadRing& r) {
  SessionState& session = Session();
  const uint64_t want = NextChunkSpans(r);
  if (session.options.overflow == OverflowPolicy::kDropNewest) {
    const uint64_t credit = TakeCredit(session.span_budget, want);
    if (credit == 0) return false;
    return SwitchChunk(r, credit, /*recycle_oldest=*/false);
  }
  const uint64_t credit = TakeCredit(session.ring_budget, want);
  if (credit > 0) return SwitchChunk(r, credit, /*recycle_oldest=*/false);
  // Ring budget used up: overwrite this thread's oldest chunk. A thread keeps
  // at least two chunks so that its newest spans survive a recycle.
  const uint64_t reuse = r.chunks.size() >= 2 ? r.chunks.front().capacity : 0;
  const uint64_t b = BeginSlots(r);
  const uint64_t e = r.end_slots;
  const uint64_t reserved = ReservedSlots(r);
  if (reuse > reserved + b + e) {
    return SwitchChunk(r, (reuse - reserved) / (b + e),
                       /*recycle_oldest=*/true);
  }
  if (reuse > 0) {
    // The oldest chunk is too small for the ends this thread must reserve
    // now (a tail grant of the budget, nesting deeper than when it was
    // filled). It is overwritten all the same: freed, and a small chunk takes
    // its place, so the number of chunks, and the memory, stay bounded however
    // long the run. (Allocating beside it would leave it first in line at
    // every refill and grow the ring by a chunk each time.)
    CountOverwritten(r, r.chunks.front());
    FreeChunk(r.chunks.front());
    r.chunks.erase(r.chunks.begin());
  }
  return SwitchChunk(r, std::min<uint64_t>(want, kFirstChunkSpans),
                     /*recycle_oldest=*/false);
}

void WriteAllocRecord(Record* c) noexcept {
  const auto bytes = static_cast<uint64_t>(tls_alloc_bytes);
  c->time = static_cast<uint64_t>(tls_alloc_count);
  c->word = (kAllocRecord << kKindShift) |
            static_cast<uint32_t>((bytes >> 32) & kSiteMask);
  c->heartbeats = static_cast<uint32_t>(bytes);
}

}  // namespace

// Unused begin credit in the current chunk (drop mode), returned to the
// budget when a thread exits.
uint64_t UnusedCredit(const ThreadRing& r) noexcept {
  if (r.chunk_end == nullptr) return 0;
  const uint64_t b = BeginSlots(r);
  const uint64_t e = r.end_slots;
  const Record* c = r.cursor.load(std::memory_order_relaxed);
  if (c >= r.limit) return 0;
  return static_cast<uint64_t>(r.limit - c - 1) / (b + e) + 1;
}

ThreadRing* BindThread(uint32_t epoch) noexcept {
  SessionState& session = Session();
  auto* ring = static_cast<ThreadRing*>(tls_state);
  if (ring != nullptr && ring->epoch == epoch) return ring;
  // Make sure the exit hook is constructed (its destructor runs at exit).
  EnsureThreadExitHook();
  if (ring != nullptr) {
    // Rebinding after an earlier session: its collector is done with the
    // chunk this thread kept; start afresh.
    std::lock_guard<std::mutex> lock(ring->mu);
    if (ring->in_session) return nullptr;  // still owned by a collector
    for (Chunk& chunk : ring->chunks) FreeChunk(chunk);
    ring->chunks.clear();
  } else {
    ring = new (std::nothrow) ThreadRing();
    if (ring == nullptr) return nullptr;
    ring->os_tid = CurrentOsTid();
    EnsureAltStack();
    // Itanium C++ ABI: the per-thread exception globals (<cxxabi.h>).
    auto* eh = reinterpret_cast<unsigned int*>(abi::__cxa_get_globals());
    // __cxa_eh_globals is { __cxa_exception* caughtExceptions;
    //                       unsigned int uncaughtExceptions; }.
    ring->uncaught = reinterpret_cast<const unsigned int*>(
        reinterpret_cast<char*>(eh) + sizeof(void*));
    tls_state = ring;
  }
  std::lock_guard<std::mutex> session_lock(session.mu);
  if (!session.active || session.epoch != epoch) return nullptr;
  std::lock_guard<std::mutex> lock(ring->mu);
  ring->epoch = epoch;
  ring->end_slots = session.count_allocs ? 2 : 1;
  ring->chunk_begin = nullptr;
  ring->chunk_end = nullptr;
  ring->chunk_base = 0;
  ring->limit = nullptr;
  ring->cursor.store(nullptr, std::memory_order_relaxed);
  ring->side.Release();
  ring->side_capacity = 0;
  ring->side_wrapped = false;
  ring->side_published.store(0, std::memory_order_relaxed);
  ring->dropped_args.store(0, std::memory_order_relaxed);
  ring->drops.used.store(0, std::memory_order_relaxed);
  ring->drops.overflow.store(0, std::memory_order_relaxed);
  ring->drops.memo_position = UINT64_MAX;
  // Counts held from an earlier session (or made before this thread's
  // first span of this one, with no span to attach them to) are forgotten.
  DiscardCounts(*ring);
  ring->context_side_mark = UINT64_MAX;
  ring->live_scopes.clear();
  ring->ended_scopes.clear();
  ring->ended_scopes_head = 0;
  ring->ring_mode = session.options.overflow == OverflowPolicy::kRing;
  ring->streaming = session.streaming;
  ring->drained = 0;
  ring->side_drained = 0;
  ring->recycled_chunks = 0;
  ring->drops_by_site.clear();
  ring->dropped_open = 0;
  ring->next_chunk_spans = kFirstChunkSpans;
  std::memcpy(ring->name, CallerThreadName(), sizeof(ring->name));
  ring->slot = static_cast<uint32_t>(session.rings.size());
  ring->in_session = true;
  session.rings.push_back(ring);
  // An empty first chunk: the first begin refills with real credit.
  Chunk empty;
  ring->chunks.push_back(empty);
  return ring;
}

uint32_t BeginSlow(SiteStatic& site, uint32_t epoch) noexcept {
  ThreadRing* r = nullptr;
  Record* c = nullptr;
  uint32_t id = 0;
  bool dropped = false;
  {
    const UncountedAllocations uncounted;
    id = InternStatic(site);
    r = BindThread(epoch);
    if (r == nullptr) return 0;
    std::lock_guard<std::mutex> lock(r->mu);
    if (g_epoch.load(std::memory_order_relaxed) != epoch) return 0;
    // Inside a dropped span everything is dropped: a span is never kept
    // without its parent, even when credit came back (a thread exited).
    // The counts pending belong to the dropped span and go with it.
    if (r->dropped_open > 0) {
      DropCounts(*r, kDropCap, r->InnermostDroppedSite());
      CountDrop(*r, id);
      return kDroppedEpoch;
    }
    c = r->cursor.load(std::memory_order_relaxed);
    if (c == nullptr || c >= r->limit) {
      dropped = !Refill(*r);
      if (dropped) CountDrop(*r, id);
      c = r->cursor.load(std::memory_order_relaxed);
    }
  }
  // Counts made since the last begin or end belong to the enclosing span:
  // written before this begin, they attach to it.
  if (r->pending_count != 0) FlushCounts(*r);
  if (dropped) return kDroppedEpoch;
  if (r->end_slots == 1) return WriteBegin(r, c, id, epoch);
  c[0].time = ReadClock(epoch);
  c[0].word = (kBeginRecord << kKindShift) | id;
  c[0].heartbeats = static_cast<uint32_t>(tls_heartbeats);
  WriteAllocRecord(&c[1]);
  r->limit -= r->end_slots;
  r->cursor.store(c + 2, std::memory_order_release);
  return epoch;
}

void EndSlow(ThreadState* state, uint32_t begin_epoch,
             bool exception) noexcept {
  auto* r = static_cast<ThreadRing*>(state);
  if (begin_epoch == kDroppedEpoch) {
    if (r != nullptr && r->dropped_open > 0) {
      // The dropped span's own counts go with it.
      DropCounts(*r, kDropCap, r->InnermostDroppedSite());
      --r->dropped_open;
    }
    return;
  }
  if (r == nullptr || r->epoch != begin_epoch) return;  // an older session
  // The span's own counts since its last child: written before its end, or,
  // the usual case of one small count, in the end record itself (no side
  // record: a counting span writes 32 bytes, as a plain one, not 64).
  uint32_t word = (exception ? kEndExceptionRecord : kEndRecord) << kKindShift;
  if (r->pending_count == 1 && !exception &&
      *r->pending[0].slot <= kEndCountValueMask) {
    const PendingCount held = r->pending[0];
    word = (kEndCountRecord << kKindShift) | (held.id << kEndCountValueBits) |
           static_cast<uint32_t>(*held.slot);
    *held.slot = 0;
    r->pending_count = 0;
  } else if (r->pending_count != 0) {
    FlushCounts(*r);
  }
  Record* c = r->cursor.load(std::memory_order_relaxed);
  c[0].time = ReadClock(begin_epoch);
  c[0].word = word;
  c[0].heartbeats = static_cast<uint32_t>(tls_heartbeats);
  if (r->end_slots == 2) WriteAllocRecord(&c[1]);
  r->limit += r->end_slots;
  r->cursor.store(c + r->end_slots, std::memory_order_release);
}

// Appends a side record; false when the side budget is used up. Drop mode
// never refuses a context record: empty scopes are elided (PopContext), so
// context records only surround retained records and the span cap bounds
// them; refusing one would silently cut a cross-thread link.
bool AppendSideSlow(ThreadRing& r, const SideRecord& record) {
  const uint64_t n = r.side_published.load(std::memory_order_relaxed);
  if (r.side_wrapped) {
    // Flight recorder: overwrite the oldest side record.
    StoreWrappedSide(r.side[n % r.side_capacity], record);
    r.side_published.store(n + 1, std::memory_order_release);
    return true;
  }
  if (n == r.side_capacity) {
    const UncountedAllocations uncounted;
    SessionState& session = Session();
    std::lock_guard<std::mutex> lock(r.mu);
    if (g_epoch.load(std::memory_order_relaxed) != r.epoch) return false;
    // Grants double, except on a streaming ring: it reuses the memory the
    // stream holds a block at a time, so that what it holds stays flat.
    const uint64_t grow = std::max<uint64_t>(
        kFirstSideRecords,
        r.streaming && !r.ring_mode
            ? std::min<uint64_t>(n, kBlockBytes / sizeof(SideRecord))
            : n);
    uint64_t grant = 0;
    uint64_t left = session.side_budget.load(std::memory_order_relaxed);
    while (left > 0) {
      // Near the end of the budget grants shrink (as span credit does), so
      // that one thread does not hold records that another needs.
      grant = std::min(
          {left, grow, std::max<uint64_t>(kFirstSideRecords, left / 8)});
      if (session.side_budget.compare_exchange_weak(
              left, left - grant, std::memory_order_relaxed)) {
        break;
      }
      grant = 0;
    }
    if (session.options.overflow == OverflowPolicy::kRing &&
        r.side_capacity == 0) {
      grant = std::max(grant, kFirstSideRecords);  // a thread keeps a few
    }
    if (grant == 0) {
      const bool context =
          record.kind == kSideContextPush || record.kind == kSideContextPop;
      if (session.options.overflow != OverflowPolicy::kRing) {
        if (!context) return false;
        grant = std::max<uint64_t>(kFirstSideRecords, n / 8);
      } else if (r.side_capacity == 0) {
        grant = kFirstSideRecords;  // a thread may always keep a few
      } else {
        r.side_wrapped = true;
        StoreWrappedSide(r.side[n % r.side_capacity], record);
        r.side_published.store(n + 1, std::memory_order_release);
        return true;
      }
    }
    // Streaming: the memory of the side records the stream holds is reused
    // first, so that arguments keep the ring's memory flat too. The record
    // before `n` stays where it is: an empty context scope may withdraw it
    // (PopContext).
    if (r.streaming && !r.ring_mode && n > 0) {
      r.side.Recycle(std::min(r.side_drained, n - 1), n + grant);
    }
    // New memory for a streaming ring: the drain is behind (SwitchChunk).
    if (r.streaming && r.side.storage() < n + grant) TheDrainBell().Ring();
    // Segments never move, so small grants near the end of the budget cost
    // no copy.
    if (!r.side.Reserve(n + grant)) return false;
    r.side_capacity = n + grant;
  }
  r.side[n] = record;
  r.side_published.store(n + 1, std::memory_order_release);
  return true;
}

void MarkSessionStreaming(uint32_t epoch, bool streaming) noexcept {
  SessionState& session = Session();
  std::lock_guard<std::mutex> lock(session.mu);
  if (!session.active || session.epoch != epoch) return;
  session.streaming = streaming;
  for (ThreadRing* ring : session.rings) {
    std::lock_guard<std::mutex> ring_lock(ring->mu);
    ring->streaming = streaming;
  }
}

}  // namespace spanprof::internal
