// Private state of the recorder, shared by src/recorder/ (its rooms:
// site_table.cc, ring_memory.cc, thread_ring.cc, side_records.cc,
// thread_lifecycle.cc, counters.cc, context.cc, session_start.cc),
// src/collector/, src/stream/ and the session glue
// (runtime/session/). Nothing here is visible to users.
#ifndef SPANPROF_RUNTIME_SRC_RECORDER_RECORDER_INTERNAL_H_
#define SPANPROF_RUNTIME_SRC_RECORDER_RECORDER_INTERNAL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "spanprof/internal/recorder.h"
#include "spanprof/recording.h"

namespace spanprof::internal {

// Returned by BeginSlow for a span the cap dropped: non-zero so that its end
// takes the slow path (which keeps the dropped-depth count), and never a real
// epoch (real epochs are far smaller).
inline constexpr uint32_t kDroppedEpoch = 0xFFFFFFFFu;

// Chunk sizes grow geometrically so short-lived threads stay small and busy
// threads refill rarely; a full-size chunk fills one ring block
// (ring_memory.cc), so blocks are interchangeable.
inline constexpr uint64_t kFirstChunkSpans = 64;
inline constexpr uint64_t kMaxChunkSpans = 4096;
inline constexpr uint64_t kFirstSideRecords = 16;
inline constexpr uint64_t kBlockBytes = uint64_t{128} * 1024;
inline constexpr uint64_t kBlockRecords = kBlockBytes / sizeof(Record);
static_assert(kMaxChunkSpans * 2 == kBlockRecords,
              "a full-size chunk fills one block");

// A contiguous block of records in one thread's stream.
struct Chunk {
  Record* records = nullptr;
  uint64_t capacity = 0;       // records
  uint64_t used = 0;           // records written (set when the chunk closes)
  uint64_t base_position = 0;  // stream position of records[0]
};

// Side records: arguments and context pushes/pops, ordered against the main
// stream by `position` (the main stream position when they were written).
enum SideKind : uint32_t {
  kSideArgInt = 1,
  kSideArgDouble = 2,
  kSideContextPush = 3,  // key = parent thread slot, value = parent position,
                         // side = parent side index
  kSideContextPop = 4,   // value = side index of the matching push
  kSideCounter = 5,      // key = counter id, value = the count (named
                         // counters pending at a begin or end)
  kSideArgString = 6,    // key = arg key site id, value = text size
                         // (bit 63: truncated), side = text bytes 0-7;
                         // the rest in the kSideArgText records that follow
  kSideArgText = 7,      // 20 more text bytes: key, value, side in order
  kSideEnrichBegin = 8,  // the records up to kSideEnrichEnd belong to the
                         // span that ended just before (an enrich hook)
  kSideEnrichEnd = 9,
  kSideHookFailed = 10,  // flags the span the next records attach to
};
inline constexpr uint64_t kTextTruncatedBit = uint64_t{1} << 63;
inline constexpr size_t kTextBytesInString = 8;  // in a kSideArgString
inline constexpr size_t kTextBytesInText = 20;   // in a kSideArgText

struct SideRecord {
  uint64_t position;
  uint32_t kind;
  uint32_t key;    // arg key site id, or parent thread slot
  uint64_t value;  // arg bits, or parent position
  // Context pushes: the parent thread's side index when the context was
  // taken (how many side records it had written), which says which of its
  // own context scopes was active then.
  uint64_t side;
};

// A flight recorder's side buffer, once it wrapped, overwrites its oldest
// record in place while the stream's drain may be copying it (the owner
// never waits for the drain). Both sides go field by field, atomically:
// release stores, acquire loads (plain moves on x86). A drain that read any
// field of an overwrite thereby sees the count published before it (the
// previous record's), which tells it to leave the record out
// (StreamWriter::DrainWrappedSide).
inline void StoreWrappedSide(SideRecord& slot,
                             const SideRecord& record) noexcept {
  constexpr auto kOrder = std::memory_order_release;
  std::atomic_ref<uint64_t>(slot.position).store(record.position, kOrder);
  std::atomic_ref<uint32_t>(slot.kind).store(record.kind, kOrder);
  std::atomic_ref<uint32_t>(slot.key).store(record.key, kOrder);
  std::atomic_ref<uint64_t>(slot.value).store(record.value, kOrder);
  std::atomic_ref<uint64_t>(slot.side).store(record.side, kOrder);
}

inline SideRecord LoadWrappedSide(const SideRecord& slot) noexcept {
  constexpr auto kOrder = std::memory_order_acquire;
  // atomic_ref takes no const object; the slot itself is not const.
  auto& s = const_cast<SideRecord&>(slot);  // NOLINT(*-const-cast)
  SideRecord record;
  record.position = std::atomic_ref<uint64_t>(s.position).load(kOrder);
  record.kind = std::atomic_ref<uint32_t>(s.kind).load(kOrder);
  record.key = std::atomic_ref<uint32_t>(s.key).load(kOrder);
  record.value = std::atomic_ref<uint64_t>(s.value).load(kOrder);
  record.side = std::atomic_ref<uint64_t>(s.side).load(kOrder);
  return record;
}

// `SideBuffer` holds a thread's side records in segments that never move:
// the first ones small (malloc, zeroed at once), then one ring block each
// (128 KiB, 4096 records, from the process-wide block cache that the
// prefaulter keeps faulted in). Growing never copies what is stored and never
// takes a page fault on the recording thread (a std::vector here
// cost a copy of the whole buffer per doubling plus the faults of fresh
// memory, half the cost of a span with an argument). Records are addressed by
// index; the owner's appends hit a cached segment, other lookups search.
class SideBuffer {
 public:
  SideBuffer() = default;
  ~SideBuffer() { Release(); }
  SideBuffer(const SideBuffer&) = delete;
  SideBuffer& operator=(const SideBuffer&) = delete;

  // Records that fit without another segment.
  uint64_t storage() const noexcept { return storage_; }
  // Records whose memory is held (not given back by Discard).
  uint64_t held() const noexcept;
  // The oldest record still held: a streaming ring reuses the memory of the
  // records before it, which the stream file holds (Recycle).
  uint64_t first() const noexcept {
    return segments_.empty() ? 0 : segments_.front().base;
  }
  // Makes room for `count` records; false when out of memory.
  bool Reserve(uint64_t count) noexcept;
  // Makes room for `count` records by reusing the oldest segments that lie
  // wholly before index `drained`, never the newest; Reserve adds what is
  // still missing.
  void Recycle(uint64_t drained, uint64_t count) noexcept;
  // Frees every segment.
  void Release() noexcept;
  // Gives the pages of the block segments wholly before index `end` back to
  // the kernel, keeping the segments in place (the owner thread may still
  // read the list without the lock); Release() unmaps them instead of caching
  // them. A streaming session's end calls it with the ring's lock held: the
  // stream holds those records, and the owner writes only past `end`.
  void Discard(uint64_t end) noexcept;
  // Record `i` (first() <= i < storage()) and the records after it in the
  // same segment: returns its address and sets `*count` to how many lie
  // there contiguously, itself included. Walking by runs costs one search a
  // segment instead of one a record.
  const SideRecord* Run(uint64_t i, uint64_t* count) const noexcept {
    const Segment& seg = segments_[Find(i)];
    *count = seg.base + seg.count - i;
    return seg.records + (i - seg.base);
  }
  // Copies records [from, to) (first() <= from, to <= storage()) to `out`.
  void CopyOut(uint64_t from, uint64_t to, SideRecord* out) const noexcept;

  // Record `i` (< storage()). The owner thread's form caches the segment.
  SideRecord& operator[](uint64_t i) noexcept {
    const Segment& seg = segments_[last_];
    if (i - seg.base < seg.count) return seg.records[i - seg.base];
    last_ = Find(i);
    return segments_[last_].records[i - segments_[last_].base];
  }
  const SideRecord& operator[](uint64_t i) const noexcept {
    const Segment& seg = segments_[Find(i)];
    return seg.records[i - seg.base];
  }

 private:
  struct Segment {
    SideRecord* records;
    uint64_t base;   // index of records[0]
    uint64_t count;  // records
    bool block;      // a ring block (else malloc)
    bool discarded;  // its pages went back to the kernel (Discard)
  };
  size_t Find(uint64_t i) const noexcept;

  std::vector<Segment> segments_;
  size_t last_ = 0;
  uint64_t storage_ = 0;
};

// Why an argument or a count was lost (Capture::ArgDrop's `reason`).
enum DropReason : uint8_t {
  kDropCap = 0,
  kDropSideBudget = 1,
  kDropNoOpenSpan = 2,
  kDropSpanLeftOpen = 3,
  kDropCounterLimit = 4,
  kDropArgLimit = 5,
  kDropReasonCount = 6,
};
// The names Capture::ArgDrop uses, by DropReason.
const char* DropReasonName(uint32_t reason) noexcept;
// A DropEntry's `site` when the runtime cannot tell the span (the innermost
// span began in an earlier chunk than the one the thread writes now).
inline constexpr uint32_t kUnknownSite = UINT32_MAX;

// One (span site, key, kind, reason) of a thread's lost arguments and
// counts. The owner fills the key fields before it publishes the entry
// (DropTable::used, release); after that only `count` changes, by the owner
// alone (load + store, no read-modify-write). The collector reads entries
// below `used` (acquire), possibly while a straggling owner still counts.
struct DropEntry {
  uint32_t site = 0;  // interned span site id; 0: no span; kUnknownSite
  uint32_t key = 0;   // interned argument key site id, or counter id
  bool is_counter = false;
  uint8_t reason = 0;
  std::atomic<uint64_t> count{0};
};

// A thread's lost arguments and counts, by (site, key, kind, reason): a
// fixed table filled on the drop path, so that recording a drop never takes
// a lock or allocates. Drops that find it full are counted in `overflow`
// (the capture names them "unknown").
inline constexpr uint32_t kDropTableEntries = 16;
struct DropTable {
  DropEntry entries[kDropTableEntries];
  std::atomic<uint32_t> used{0};
  std::atomic<uint64_t> overflow{0};
  // The drop path's memo of its last look for the innermost open span: the
  // main stream position it looked at and the site it found there.
  uint64_t memo_position = UINT64_MAX;
  uint32_t memo_site = kUnknownSite;
};

// A drop as the session's end gathers it from every thread (by thread slot).
struct GatheredDrop {
  uint32_t site = 0;
  uint32_t key = 0;
  bool is_counter = false;
  uint8_t reason = 0;
  uint64_t count = 0;
};

// `ThreadRing` is one thread's recorder: the hot `ThreadState` plus what the
// slow path and the collector need. The owner thread writes the hot part
// without locks; `mu` guards chunk switches against the collector.
struct ThreadRing : ThreadState {
  // Mutable: a reader that holds the ring const (the stream's drain) still
  // takes it.
  mutable std::mutex mu;
  uint32_t slot = 0;  // index in the session's ring list
  uint64_t os_tid = 0;
  char name[64] = {};

  // Main stream: closed chunks in order; the current chunk is the last one.
  std::vector<Chunk> chunks;
  Record* chunk_begin = nullptr;
  Record* chunk_end = nullptr;
  uint64_t chunk_base = 0;  // stream position of chunk_begin (owner's copy)

  // Side stream (single owner writer; published like the main cursor).
  SideBuffer side;  // bounded by the side budget
  std::atomic<uint64_t> side_published{0};
  uint64_t side_capacity = 0;
  // The side index the last CurrentContext() saw: a context scope pushed at
  // that index is not elided when it ends empty, because a context taken
  // inside it refers to it.
  uint64_t context_side_mark = UINT64_MAX;
  // The context scopes alive on this thread, innermost last, with the side
  // index of their push. Ring mode keeps them under `mu`: when the side
  // buffer wraps, the collector restores the pushes of scopes that are still
  // alive (a long-lived scope, e.g. a whole worker run under Bind).
  struct LiveScope {
    uint64_t index;
    SideRecord push;
  };
  std::vector<LiveScope> live_scopes;
  // Ring mode: scopes that ended, with the side index of their pop, while
  // that pop may still be in the side buffer. When the buffer has
  // overwritten a push but not its pop, the collector restores the push from
  // here (else every span before the pop would have lost its scope).
  struct EndedScope {
    uint64_t index;
    SideRecord push;
    uint64_t pop_index;
  };
  std::vector<EndedScope> ended_scopes;
  size_t ended_scopes_head = 0;  // entries before it are overwritten pops
  bool ring_mode = false;
  // Streaming: the session's drain thread copies this ring's records into
  // the stream file, and `drained` (under `mu`) is the main-stream position
  // up to which the stream holds them; chunks wholly before it are reused.
  bool streaming = false;
  uint64_t drained = 0;
  // The side index up to which the stream holds this ring's side records
  // (under `mu`): their memory is reused too (SideBuffer::Recycle), so a
  // capture with arguments stays flat as well.
  uint64_t side_drained = 0;
  uint64_t recycled_chunks = 0;  // chunk reuses so far (tests, benchmarks)
  bool side_wrapped = false;     // ring mode: the side buffer overwrites itself
  // Arguments and counter flushes the side budget refused, and counts lost
  // to a full counter table. Written by the owner only (load + store, no
  // read-modify-write); atomic because the collector reads it after stop
  // while a straggling owner may still be in a slow path.
  std::atomic<uint64_t> dropped_args{0};
  // The same drops, named (arg_drops.cc).
  DropTable drops;
  // Counts one lost argument (`key`: its key's site id) or counter flush
  // (`key`: the counter id) in `dropped_args` and `drops`. `site` is the
  // span it belonged to, or kSiteOfInnermost: the innermost span open on
  // this thread now, looked up in the records. The drop path: no lock, no
  // allocation, no read-modify-write.
  void CountDroppedArg(uint32_t key, bool is_counter, DropReason reason,
                       uint32_t site) noexcept;
  // The site of the innermost span open on this (the owner) thread, 0 when
  // none is, kUnknownSite when it began before the current chunk.
  uint32_t InnermostSite() noexcept;
  // Inside spans the cap dropped (`dropped_open` > 0): the sites of the
  // innermost kDroppedSites of them, by depth, so that their arguments and
  // counts are named after them.
  static constexpr uint32_t kDroppedSites = 16;
  uint32_t dropped_sites[kDroppedSites] = {};
  uint32_t InnermostDroppedSite() const noexcept {
    if (dropped_open == 0) return 0;
    return dropped_sites[std::min<uint64_t>(dropped_open, kDroppedSites) - 1];
  }

  // Drop accounting: by site id; grows on the slow path only.
  std::vector<uint64_t> drops_by_site;
  uint64_t dropped_open = 0;  // dropped spans still open on this thread
  uint64_t next_chunk_spans = 0;

  bool in_session = false;  // registered in the active session's list
  // Inside the enrich hook of a span the cap dropped: its arguments and
  // counts are dropped with it.
  bool enrich_discard = false;
  bool owner_exited = false;

  // Position in the stream of the record at `cursor` (inline: every
  // argument and every flush of counts asks for it).
  uint64_t Position() const noexcept {
    return chunk_base +
           static_cast<uint64_t>(cursor.load(std::memory_order_relaxed) -
                                 chunk_begin);
  }
};

// ThreadRing::CountDroppedArg()'s `site` for "the innermost open span".
inline constexpr uint32_t kSiteOfInnermost = UINT32_MAX - 1;

// `GatherDrops()` reads every ring's drop table (the session's end, before
// the rings go back), one entry per (slot, site, key, kind, reason), the
// tables' overflow as reason kDropReasonCount.
struct SlotDrop {
  uint32_t slot;
  GatheredDrop drop;
};
std::vector<SlotDrop> GatherDrops(const std::vector<ThreadRing*>& rings);

// A point of a thread's stream whose span id left the process
// (`Context::Traceparent()`); the collector resolves it to a span like a
// context scope's push.
struct ExportPoint {
  uint32_t slot;
  uint64_t position;
  uint64_t side;
  uint64_t external_id;
};

// Per-process recorder state for one session.
struct SessionState {
  std::mutex mu;  // guards rings and the site table changes below
  RecordingOptions options;
  bool active = false;
  uint32_t epoch = 0;
  bool use_tsc = true;
  bool count_allocs = false;
  // The drain thread streams the rings (MarkSessionStreaming): rings bound
  // from then on reuse drained chunks.
  bool streaming = false;
  std::vector<ThreadRing*> rings;
  // Drop mode: spans not yet handed to any thread.
  std::atomic<int64_t> span_budget{0};
  // Ring mode: spans of chunk memory not yet handed to any thread.
  std::atomic<int64_t> ring_budget{0};
  std::atomic<uint64_t> side_budget{0};
  // Spans whose prepare hook failed (rare: a read-modify-write is fine).
  std::atomic<uint64_t> failed_prepares{0};
  uint64_t start_tsc = 0;
  uint64_t start_mono_ns = 0;
  int64_t start_wall_ns = 0;
  int64_t start_wall_uncertainty_ns = 0;
  int64_t pid = 0;
  // The W3C trace id (random, or adopted from the traceparent), the remote
  // parent's span id (0: none) and the seed of derived span ids.
  uint64_t trace_high = 0;
  uint64_t trace_low = 0;
  uint64_t remote_parent_span_id = 0;
  uint64_t span_id_seed = 0;
  // Under `mu`: the exported points, in export order.
  std::vector<ExportPoint> exports;
  // The named drops of the session that ended last (EndActiveSession
  // gathers them while it still holds the rings).
  std::vector<SlotDrop> ended_drops;
};

// `ExportContext()` returns the external span id of the span open at
// (`slot`, `position`, `side`) in session `epoch`, registering the point for
// the collector; 0 when that session is not the active one. A point in the
// same span as the thread's previous export (checked by reading the records
// between them) gets the same id.
uint64_t ExportContext(uint32_t epoch, uint32_t slot, uint64_t position,
                       uint64_t side);

// `ParseTraceparent()` reads a W3C traceparent (ContextFromTraceparent's
// rules) into its trace id halves and parent span id.
absl::Status ParseTraceparent(std::string_view header, uint64_t* trace_high,
                              uint64_t* trace_low, uint64_t* span);
// `RenderTraceparent()` writes `00-<trace>-<span>-01`.
std::string RenderTraceparent(uint64_t trace_high, uint64_t trace_low,
                              uint64_t span);
// 64 random bits (getrandom; the clock and pid when it fails), never 0.
uint64_t RandomU64() noexcept;

SessionState& Session();

// The recorder's own allocations (rings, side records, site tables) are not
// the program's: a slow path that may allocate restores the thread's
// allocation counters (spanprof::alloc) when it is done, so span deltas count
// only what the program allocated.
class UncountedAllocations {
 public:
  UncountedAllocations() noexcept
      : count_(tls_alloc_count), bytes_(tls_alloc_bytes) {}
  ~UncountedAllocations() {
    tls_alloc_count = count_;
    tls_alloc_bytes = bytes_;
  }
  UncountedAllocations(const UncountedAllocations&) = delete;
  UncountedAllocations& operator=(const UncountedAllocations&) = delete;

 private:
  int64_t count_;
  int64_t bytes_;
};

// Appends a side record to the calling thread's ring `r`; false when the
// side budget is used up. May take `r.mu` (never call it holding that).
bool AppendSideSlow(ThreadRing& r, const SideRecord& record);
// The fast path stores the fields one by one: copying a record assembled on
// the stack reads it back with wide loads that straddle its narrower stores,
// and the failed store forwarding cost more than the rest of the append.
inline bool AppendSide(ThreadRing& r, uint64_t position, uint32_t kind,
                       uint32_t key, uint64_t value, uint64_t side = 0) {
  const uint64_t n = r.side_published.load(std::memory_order_relaxed);
  if (SPANPROF_LIKELY(n < r.side_capacity && !r.side_wrapped)) {
    SideRecord& d = r.side[n];
    d.position = position;
    d.kind = kind;
    d.key = key;
    d.value = value;
    d.side = side;
    r.side_published.store(n + 1, std::memory_order_release);
    return true;
  }
  return AppendSideSlow(r, SideRecord{position, kind, key, value, side});
}
inline bool AppendSide(ThreadRing& r, const SideRecord& record) {
  return AppendSide(r, record.position, record.kind, record.key, record.value,
                    record.side);
}

// Named counters (counters.cc). The process's counter names, by id - 1.
std::vector<std::string> SnapshotCounterNames();
// Writes the counts pending on `r` (its owner thread) as side records at the
// current stream position, where they attach to the innermost open span; a
// record the side budget refuses is counted in `dropped_args`. Inline: the
// end of every counting span flushes, and a counting span must stay within
// 1.5x a plain span (bench/gate checks it). No
// allocation guard: AppendSide allocates only on its slow path, which guards
// itself.
inline void FlushCounts(ThreadRing& r) noexcept {
  const uint32_t count = r.pending_count;
  r.pending_count = 0;
  const uint64_t position = r.Position();
  for (uint32_t i = 0; i < count; ++i) {
    const PendingCount held = r.pending[i];
    const uint64_t value = *held.slot;
    *held.slot = 0;
    if (!AppendSide(r, position, kSideCounter, held.id, value)) {
      r.CountDroppedArg(held.id, true, kDropSideBudget, kSiteOfInnermost);
    }
  }
}
// Forgets the counts pending on `r`: they belong to a dropped span.
void DiscardCounts(ThreadRing& r) noexcept;
// Forgets the counts pending on `r`, each counted as a drop for `reason` at
// span site `site` (a span the cap dropped, or no span at a thread's exit).
void DropCounts(ThreadRing& r, DropReason reason, uint32_t site) noexcept;
// The calling thread's counts pending in the active session are written
// now (the session is about to stop): they attach to its innermost open
// span, which ends unfinished or open at exit, instead of being lost.
void FlushCallerCounts(const SessionState& session) noexcept;

// The interned sites (process-wide, append-only). Id 0 is unused.
struct SiteTable {
  std::mutex mu;
  std::vector<Site> sites;  // sites[0] is a placeholder
};
SiteTable& Sites();
std::vector<Site> SnapshotSites();
// The id of a static site, interning it on first use (site_table.cc).
uint32_t InternStatic(SiteStatic& site) noexcept;

// The site of `name` + `tags` interned by content (not by address, as
// spanprof::Run's sites are): the site owns copies of the strings, so they
// need only live for the call (null tags read as ""; an empty name becomes
// "(unnamed)"). Equal strings give the same site. One entry per distinct
// site, kept for the process's life, not counted against kMaxDynamicNames.
// Takes a mutex. Session root names and the C API's sites and argument keys
// are interned here.
SiteStatic* InternSiteByContent(std::string_view name, const Tags& tags);

// The site of a session's root span named `name` (InternSiteByContent with no
// tags).
SiteStatic* InternRootSite(std::string_view name);

// The run-time name table's counts: names interned against the bound, the
// bound, and spans recorded under an overflow name (slow path only).
struct DynamicNameCounts {
  uint32_t names;
  uint32_t limit;
  uint64_t overflowed;
};
DynamicNameCounts GetDynamicNameCounts() noexcept;
// Lowers the bound of distinct run-time names (at most kMaxDynamicNames), so
// a test can reach it without interning 65,536 names.
void SetDynamicNameLimitForTesting(uint32_t limit) noexcept;
// The run-time name table's writers' mutex (held around fork()).
std::mutex& DynamicNamesMutex();

// Binds the calling thread to the active session (slow path). Returns the
// ring, or nullptr when not recording. Must be called with `epoch` read from
// g_epoch.
ThreadRing* BindThread(uint32_t epoch) noexcept;

// Context support (side_records.cc): the calling thread's stream and side
// positions, and side records that make a context the parent of the spans
// opened next.
bool CurrentPosition(uint32_t* epoch, uint32_t* slot, uint64_t* position,
                     uint64_t* side) noexcept;
bool PushContext(uint32_t parent_epoch, uint32_t parent_slot,
                 uint64_t parent_position, uint64_t parent_side) noexcept;
void PopContext(uint32_t epoch) noexcept;

// Fork support (the session layer installs the pthread_atfork handlers):
// take and release the recorder's process-wide locks around fork(), and in
// the child stop recording, leave the parent's rings alone and detach the
// forking thread's state so that spans it had open end as no-ops.
void LockForFork() noexcept;
void UnlockAfterFork() noexcept;
void ResetInForkedChild() noexcept;

// Frees a chunk's memory. A ring block goes to the process-wide cache for
// the next chunk of any session (while it has room), unless `keep_cached`
// is false: then it goes back to the kernel at once.
void FreeChunk(Chunk& chunk, bool keep_cached = true) noexcept;
// Memory for a chunk of `count` records, every page already faulted in
// (ring_memory.cc); nullptr when out of memory.
Record* AllocateRecords(uint64_t count) noexcept;
// The records that the memory AllocateRecords(`records`) returns can hold
// (a ring block holds kBlockRecords, whatever was asked of it).
uint64_t ChunkCapacity(uint64_t records) noexcept;
// Turns the active session's streaming on or off (session `epoch` only):
// on once its stream file is open; off when writing the stream failed, so
// that rings keep what the stream could not take.
void MarkSessionStreaming(uint32_t epoch, bool streaming) noexcept;
// What the block cache can hold, in bytes of ring memory.
uint64_t BlockCacheCapacityBytes() noexcept;

// The prefaulter (ring_memory.cc): `StartPrefaulting()` tells the helper thread
// (started on first use) that the session may take up to `ring_bytes` of
// ring blocks, so it keeps a few faulted in ahead; `StopPrefaulting()` at
// session end stops it from mapping more.
void StartPrefaulting(uint64_t ring_bytes) noexcept;
void StopPrefaulting() noexcept;

// Thread lifecycle (thread_lifecycle.cc): the calling thread's OS id, its
// exit hook made sure of (the hook frees or hands over its ring), and the
// name SetThreadName() gave it.
uint64_t CurrentOsTid() noexcept;
// Unused begin credit in a ring's current chunk (drop mode), returned to the
// budget when its thread exits (thread_ring.cc).
uint64_t UnusedCredit(const ThreadRing& r) noexcept;
// Guards the run-time site table (site_table.cc); taken around fork().
std::mutex& DynamicSitesMutex();
void EnsureThreadExitHook() noexcept;
// Gives the calling thread an alternate signal stack unless it has one
// (once per thread, at its first span): the crash handler then still runs
// when the thread overflowed its own stack. Freed at thread exit.
void EnsureAltStack() noexcept;
const char* CallerThreadName() noexcept;

// Allocation counting hook (spanprof::alloc sets it before main).
extern std::atomic<bool> g_alloc_counting_linked;

// Clock helpers (clock.cc).
bool TscIsInvariant() noexcept;
struct ClockPair {
  uint64_t tsc;
  uint64_t mono_ns;
};
ClockPair ReadClockPair() noexcept;

// `DefaultProcessName()` is the executable's file name (the process name
// when none is configured), "process" when it cannot be read.
std::string DefaultProcessName();

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_RECORDER_RECORDER_INTERNAL_H_
