// The recorder's slow paths: site interning, binding a thread to the session,
// chunk and credit refills, drop accounting, arguments, thread lifecycle.
//
// The fast path lives in spanprof/internal/recorder.h. Everything here runs at
// most once per chunk (thousands of spans), once per site or once per thread,
// except the drop path, which is a thread-local increment.
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

#include "recorder/recorder_internal.h"
#include "spanprof/internal/ring_memory.h"
#include "spanprof/span.h"

namespace spanprof::internal {

std::atomic<uint32_t> g_epoch{0};
std::atomic<bool> g_alloc_counting_linked{false};

__thread ThreadState* tls_state __attribute__((tls_model("initial-exec"))) =
    nullptr;
__thread uint64_t tls_heartbeats __attribute__((tls_model("initial-exec"))) = 0;
__thread int64_t tls_alloc_count __attribute__((tls_model("initial-exec"))) = 0;
__thread int64_t tls_alloc_bytes __attribute__((tls_model("initial-exec"))) = 0;

namespace {

thread_local char tls_thread_name[64] = {};

// Chunk sizes grow geometrically so short-lived threads stay small and busy
// threads refill rarely.
constexpr uint64_t kFirstChunkSpans = 64;
constexpr uint64_t kMaxChunkSpans = 4096;
constexpr uint64_t kFirstSideRecords = 16;

// Chunk memory (docs/performance.md, "Ring memory"). Chunks up to
// kSmallChunkBytes come from malloc and are zeroed at once; larger ones take
// a block of exactly kBlockBytes, mapped with MAP_POPULATE so that no page
// fault happens on the span path. A full-size chunk fills one block, so blocks
// are interchangeable: a freed block goes to a process-wide cache (at most
// kMaxCachedBlocks) and the next chunk of any session reuses it, already
// faulted in. First touch of fresh memory costs 0.8-2.7 us per 4 KiB page,
// 6-21 ns per retained span: as much as the span itself. The cache makes it a
// once-per-process cost instead of a once-per-session one.
constexpr uint64_t kPageBytes = 4096;
constexpr uint64_t kSmallChunkBytes = uint64_t{64} * 1024;
constexpr uint64_t kBlockBytes = uint64_t{128} * 1024;
constexpr uint64_t kBlockRecords = kBlockBytes / sizeof(Record);
constexpr size_t kMaxCachedBlocks = 512;  // 64 MiB
static_assert(kMaxChunkSpans * 2 == kBlockRecords,
              "a full-size chunk fills one block");

// Destroys the thread's ring at thread exit, or hands it to the session when
// the session still needs its data.
struct ThreadExitHook {
  ~ThreadExitHook();
};
thread_local ThreadExitHook tls_exit_hook;

uint64_t CurrentOsTid() noexcept {
  return static_cast<uint64_t>(syscall(SYS_gettid));
}

}  // namespace

SessionState& Session() {
  // Leaked on purpose: the session must outlive static destructors because
  // exit() can finish a session from an atexit handler.
  static SessionState* state = new SessionState();
  return *state;
}

SiteTable& Sites() {
  static SiteTable* table = [] {
    auto* t = new SiteTable();
    t->sites.emplace_back();  // id 0: "not interned"
    return t;
  }();
  return *table;
}

std::vector<Site> SnapshotSites() {
  SiteTable& table = Sites();
  std::lock_guard<std::mutex> lock(table.mu);
  return table.sites;
}

namespace {

uint32_t InternSiteLocked(SiteTable& table, const char* name,
                          const Tags& tags) {
  auto text = [](const char* s) { return s != nullptr ? s : ""; };
  table.sites.push_back(Site{text(name), text(tags.phase), text(tags.module),
                             text(tags.activity), text(tags.backend),
                             text(tags.dtype), text(tags.device)});
  return static_cast<uint32_t>(table.sites.size() - 1);
}

uint32_t InternStatic(SiteStatic& site) noexcept {
  uint32_t id = site.id.load(std::memory_order_acquire);
  if (id != 0) return id;
  SiteTable& table = Sites();
  std::lock_guard<std::mutex> lock(table.mu);
  id = site.id.load(std::memory_order_relaxed);
  if (id == 0) {
    id = InternSiteLocked(table, site.name, site.tags);
    site.id.store(id, std::memory_order_release);
  }
  return id;
}

struct DynamicKey {
  const char* name;
  const char* phase;
  const char* module;
  const char* activity;
  const char* backend;
  const char* dtype;
  const char* device;
  bool operator==(const DynamicKey&) const = default;
};
struct DynamicKeyHash {
  size_t operator()(const DynamicKey& k) const noexcept {
    auto mix = [](size_t h, const void* p) {
      return (h ^ reinterpret_cast<uintptr_t>(p)) * 0x9E3779B97F4A7C15ull;
    };
    size_t h = mix(mix(mix(mix(0, k.name), k.phase), k.module), k.activity);
    return mix(mix(mix(h, k.backend), k.dtype), k.device);
  }
};

}  // namespace

namespace {

std::mutex& DynamicSitesMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}

}  // namespace

SiteStatic* FindOrInternDynamicSite(const char* name,
                                    const Tags& tags) noexcept {
  // Dynamic sites are keyed by the addresses of their strings (literals), so
  // the lookup never reads the strings. Interned sites are never freed.
  const UncountedAllocations uncounted;
  std::mutex* mu = &DynamicSitesMutex();
  static auto* table =
      new std::unordered_map<DynamicKey, SiteStatic*, DynamicKeyHash>();
  const DynamicKey key{name,         tags.phase, tags.module, tags.activity,
                       tags.backend, tags.dtype, tags.device};
  std::lock_guard<std::mutex> lock(*mu);
  auto it = table->find(key);
  if (it != table->end()) return it->second;
  auto* site = new SiteStatic{name, tags};
  table->emplace(key, site);
  return site;
}

SiteStatic* InternArgKey(const char* key) noexcept {
  return FindOrInternDynamicSite(key, Tags{});
}

SiteStatic* InternRootSite(std::string_view name) {
  // Keyed by content, unlike the sites above: the caller's string may be
  // freed (or its address reused for another name) after the session starts.
  // The map owns each name, so the site's pointer stays valid; it grows by
  // one entry per distinct root name.
  const UncountedAllocations uncounted;
  static auto* mu = new std::mutex();
  static auto* table = new std::unordered_map<std::string, SiteStatic*>();
  std::lock_guard<std::mutex> lock(*mu);
  auto it = table->find(std::string(name));
  if (it == table->end()) {
    it = table->emplace(std::string(name), nullptr).first;
    it->second = new SiteStatic{it->first.c_str(), Tags{}};
  }
  return it->second;
}

namespace {

// Bytes of record memory handed to rings since the process started (chunk
// accounting). Kept off g_epoch's cache line: it changes once per chunk.
alignas(64) std::atomic<uint64_t> g_ring_bytes_allocated{0};

// The prefaulter (docs/performance.md, "First session"): a helper thread that
// keeps up to kReadyBlocks populated blocks in the cache ahead of the rings,
// so that a recording thread that needs a fresh block takes one already
// faulted in instead of paying 32 page faults (MAP_POPULATE) itself. It maps
// only what the session can still use (`needed`, from the cap), so it commits
// at most kReadyBlocks blocks (2 MiB) beyond what the rings hold.
constexpr size_t kReadyBlocks = 16;

// Freed and prefaulted blocks, newest last (the warmest in the CPU cache is
// reused first).
struct BlockCache {
  std::mutex mu;
  std::condition_variable refill;  // the prefaulter waits here
  size_t count = 0;
  void* blocks[kMaxCachedBlocks] = {};
  // Blocks the session may still take (0 outside a session): the prefaulter
  // keeps min(kReadyBlocks, needed) blocks ready.
  uint64_t needed = 0;
  bool prefaulter_started = false;
};

// Whether the prefaulter should map another block. Called with mu held.
bool WantsRefill(const BlockCache& cache) {
  return cache.count < std::min<uint64_t>(kReadyBlocks, cache.needed);
}

void ResetBlocksInForkedChild();

BlockCache& Blocks() {
  // Leaked: outlives exit().
  static BlockCache* cache = [] {
    auto* created = new BlockCache();
    pthread_atfork(nullptr, nullptr, ResetBlocksInForkedChild);
    return created;
  }();
  return *cache;
}

// A thread that held the cache's lock at fork() does not exist in the child:
// the lock would stay taken forever and the list may be half-updated, so the
// child starts with an empty cache (those blocks stay unreachable there).
// Taking the lock around fork() instead would order it against the other
// recorder locks the fork handlers take.
void ResetBlocksInForkedChild() {
  BlockCache& cache = Blocks();
  // The prefaulter thread does not exist in the child: the next session
  // there starts its own. Its condition variable may have had a waiter.
  cache.prefaulter_started = false;
  cache.needed = 0;
  new (&cache.refill) std::condition_variable();
  if (cache.mu.try_lock()) {
    cache.mu.unlock();
    return;
  }
  new (&cache.mu) std::mutex();
  cache.count = 0;
}

// Bytes a chunk of `capacity` records occupies, by size class.
uint64_t ChunkBytes(uint64_t capacity) noexcept {
  const uint64_t bytes = capacity * sizeof(Record);
  if (bytes <= kSmallChunkBytes) return bytes;
  if (bytes <= kBlockBytes) return kBlockBytes;
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}

void* MapPopulated(uint64_t bytes) noexcept {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// The prefaulter's loop: maps and populates blocks while the session wants
// them, sleeps otherwise. Runs for the life of the process.
void PrefaultLoop() {
  pthread_setname_np(pthread_self(), "spanprof-fault");
  BlockCache& cache = Blocks();
  std::unique_lock<std::mutex> lock(cache.mu);
  for (;;) {
    cache.refill.wait(lock, [&] { return WantsRefill(cache); });
    lock.unlock();
    void* p = MapPopulated(kBlockBytes);
    lock.lock();
    if (p == nullptr) {
      cache.needed = 0;  // out of memory: leave it to the rings to report
    } else if (cache.count < kMaxCachedBlocks) {
      cache.blocks[cache.count++] = p;
    } else {
      munmap(p, kBlockBytes);
    }
  }
}

}  // namespace

void StartPrefaulting(uint64_t ring_bytes) noexcept {
  BlockCache& cache = Blocks();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    cache.needed = (ring_bytes + kBlockBytes - 1) / kBlockBytes;
    if (!cache.prefaulter_started) {
      pthread_t thread;
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      // Without a helper thread, rings fault their blocks in themselves.
      cache.prefaulter_started = pthread_create(
                                     &thread, &attr,
                                     [](void*) -> void* {
                                       PrefaultLoop();
                                       return nullptr;
                                     },
                                     nullptr) == 0;
      pthread_attr_destroy(&attr);
    }
  }
  cache.refill.notify_one();
}

void StopPrefaulting() noexcept {
  BlockCache& cache = Blocks();
  std::lock_guard<std::mutex> lock(cache.mu);
  cache.needed = 0;
}

uint64_t RingBytesAllocated() noexcept {
  return g_ring_bytes_allocated.load(std::memory_order_relaxed);
}

namespace {

constexpr uint64_t kBlockSideRecords = kBlockBytes / sizeof(SideRecord);
static_assert(kBlockSideRecords * sizeof(SideRecord) == kBlockBytes,
              "side records tile a block");

Record* AllocateRecords(uint64_t count) noexcept;

// A block for a side buffer, faulted in (from the cache when it has one).
// `RingBytesAllocated()` counts span records only, so the side block is not
// charged to it.
void* TakeBlock() noexcept {
  void* block = AllocateRecords(kBlockRecords);
  if (block != nullptr) {
    g_ring_bytes_allocated.fetch_sub(kBlockBytes, std::memory_order_relaxed);
  }
  return block;
}

}  // namespace

bool SideBuffer::Reserve(uint64_t count) noexcept {
  while (storage_ < count) {
    Segment seg{nullptr, storage_, 0, false};
    if (storage_ < kBlockSideRecords) {
      // Small segments double the storage up to one block's worth.
      seg.count = std::min(
          kBlockSideRecords - storage_,
          std::max({count - storage_, storage_, uint64_t{kFirstSideRecords}}));
      seg.records =
          static_cast<SideRecord*>(std::calloc(seg.count, sizeof(SideRecord)));
    } else {
      seg.count = kBlockSideRecords;
      seg.block = true;
      seg.records = static_cast<SideRecord*>(TakeBlock());
    }
    if (seg.records == nullptr) return false;
    segments_.push_back(seg);
    storage_ += seg.count;
  }
  return true;
}

void SideBuffer::Release() noexcept {
  for (const Segment& seg : segments_) {
    if (seg.block) {
      Chunk chunk{reinterpret_cast<Record*>(seg.records), kBlockRecords, 0, 0};
      FreeChunk(chunk);
    } else {
      std::free(seg.records);
    }
  }
  segments_.clear();
  segments_.shrink_to_fit();
  last_ = 0;
  storage_ = 0;
}

void SideBuffer::CopyOut(uint64_t count, SideRecord* out) const noexcept {
  for (const Segment& seg : segments_) {
    if (seg.base >= count) break;
    const uint64_t n = std::min(seg.count, count - seg.base);
    std::memcpy(out + seg.base, seg.records, n * sizeof(SideRecord));
  }
}

size_t SideBuffer::Find(uint64_t i) const noexcept {
  // The last segment whose base is <= i.
  const auto it = std::upper_bound(
      segments_.begin(), segments_.end(), i,
      [](uint64_t index, const Segment& seg) { return index < seg.base; });
  return static_cast<size_t>(it - segments_.begin()) - 1;
}

uint64_t CachedBlocks() noexcept {
  BlockCache& cache = Blocks();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.count;
}

void ReleaseCachedChunks() noexcept {
  BlockCache& cache = Blocks();
  std::lock_guard<std::mutex> lock(cache.mu);
  for (size_t i = 0; i < cache.count; ++i) munmap(cache.blocks[i], kBlockBytes);
  cache.count = 0;
}

uint64_t BlockCacheCapacityBytes() noexcept {
  return kMaxCachedBlocks * kBlockBytes;
}

void FreeChunk(Chunk& chunk, bool keep_cached) noexcept {
  if (chunk.records == nullptr) return;
  const uint64_t bytes = ChunkBytes(chunk.capacity);
  if (bytes <= kSmallChunkBytes) {
    std::free(chunk.records);
  } else if (bytes == kBlockBytes && keep_cached) {
    BlockCache& cache = Blocks();
    std::unique_lock<std::mutex> lock(cache.mu);
    if (cache.count < kMaxCachedBlocks) {
      cache.blocks[cache.count++] = chunk.records;
    } else {
      lock.unlock();
      munmap(chunk.records, kBlockBytes);
    }
  } else {
    munmap(chunk.records, bytes);
  }
  chunk.records = nullptr;
}

namespace {

// Memory for a chunk of `count` records, every page already faulted in.
Record* AllocateRecords(uint64_t count) noexcept {
  const uint64_t bytes = ChunkBytes(count);
  void* p = nullptr;
  if (bytes <= kSmallChunkBytes) {
    p = std::malloc(bytes);
    if (p != nullptr) std::memset(p, 0, bytes);  // pre-fault off the span path
  } else if (bytes == kBlockBytes) {
    BlockCache& cache = Blocks();
    bool refill = false;
    {
      std::lock_guard<std::mutex> lock(cache.mu);
      if (cache.count > 0) p = cache.blocks[--cache.count];
      if (cache.needed > 0) --cache.needed;
      refill = cache.prefaulter_started && WantsRefill(cache);
    }
    if (refill) cache.refill.notify_one();
    // The prefaulter fell behind (or there is none): fault it in here.
    if (p == nullptr) p = MapPopulated(bytes);
  } else {
    p = MapPopulated(bytes);
  }
  if (p != nullptr) {
    g_ring_bytes_allocated.fetch_add(bytes, std::memory_order_relaxed);
  }
  return static_cast<Record*>(p);
}

// Slots each span needs at begin (b) and end (e).
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
  } else {
    next.records = AllocateRecords(needed);
    if (next.records == nullptr) return false;
    next.capacity = needed;
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

// Unused begin credit in the current chunk (drop mode), returned to the
// budget when a thread exits.
uint64_t UnusedCredit(const ThreadRing& r) {
  if (r.chunk_end == nullptr) return 0;
  const uint64_t b = BeginSlots(r);
  const uint64_t e = r.end_slots;
  const Record* c = r.cursor.load(std::memory_order_relaxed);
  if (c >= r.limit) return 0;
  return static_cast<uint64_t>(r.limit - c - 1) / (b + e) + 1;
}

void CountDrop(ThreadRing& r, uint32_t site) {
  if (site >= r.drops_by_site.size()) r.drops_by_site.resize(site + 64, 0);
  ++r.drops_by_site[site];
  ++r.dropped_open;
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

ThreadRing* BindThread(uint32_t epoch) noexcept {
  SessionState& session = Session();
  auto* ring = static_cast<ThreadRing*>(tls_state);
  if (ring != nullptr && ring->epoch == epoch) return ring;
  // Make sure the exit hook is constructed (its destructor runs at exit).
  static_cast<void>(&tls_exit_hook);
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
  // Counts held from an earlier session (or made before this thread's
  // first span of this one, with no span to attach them to) are forgotten.
  DiscardCounts(*ring);
  ring->context_side_mark = UINT64_MAX;
  ring->live_scopes.clear();
  ring->ended_scopes.clear();
  ring->ended_scopes_head = 0;
  ring->ring_mode = session.options.overflow == OverflowPolicy::kRing;
  ring->drops_by_site.clear();
  ring->dropped_open = 0;
  ring->next_chunk_spans = kFirstChunkSpans;
  std::memcpy(ring->name, tls_thread_name, sizeof(ring->name));
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
      CountDrop(*r, id);
      DiscardCounts(*r);
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
      --r->dropped_open;
      DiscardCounts(*r);  // the dropped span's own counts
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
    r.side[n % r.side_capacity] = record;
    r.side_published.store(n + 1, std::memory_order_release);
    return true;
  }
  if (n == r.side_capacity) {
    const UncountedAllocations uncounted;
    SessionState& session = Session();
    std::lock_guard<std::mutex> lock(r.mu);
    if (g_epoch.load(std::memory_order_relaxed) != r.epoch) return false;
    const uint64_t grow = std::max<uint64_t>(kFirstSideRecords, n);
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
        r.side[n % r.side_capacity] = record;
        r.side_published.store(n + 1, std::memory_order_release);
        return true;
      }
    }
    // Segments never move, so small grants near the end of the budget cost
    // no copy.
    if (!r.side.Reserve(n + grant)) return false;
    r.side_capacity = n + grant;
  }
  r.side[n] = record;
  r.side_published.store(n + 1, std::memory_order_release);
  return true;
}

namespace {

ThreadRing* ActiveRing() {
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (epoch == 0) return nullptr;
  auto* r = static_cast<ThreadRing*>(tls_state);
  if (r == nullptr || r->epoch != epoch) return nullptr;
  return r;
}

void AddArgRecord(SiteStatic& key, uint32_t kind, uint64_t bits) noexcept {
  ThreadRing* r = ActiveRing();
  if (r == nullptr) return;
  if (r->dropped_open > 0) return;  // the innermost span was dropped
  // Only interning a key allocates (once per call site); AppendSide's slow
  // path guards its own allocations, so the usual call saves and restores
  // no allocation counters: a span with an argument must stay within 1.5x
  // a plain span (bench/gate checks it).
  uint32_t key_id = key.id.load(std::memory_order_acquire);
  if (SPANPROF_UNLIKELY(key_id == 0)) {
    const UncountedAllocations uncounted;
    key_id = InternStatic(key);
  }
  if (!AppendSide(*r, r->Position(), kind, key_id, bits)) {
    r->CountDroppedArg();
  }
}

}  // namespace

void AddIntArg(SiteStatic& key, int64_t value) noexcept {
  AddArgRecord(key, kSideArgInt, static_cast<uint64_t>(value));
}

void AddDoubleArg(SiteStatic& key, double value) noexcept {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  AddArgRecord(key, kSideArgDouble, bits);
}

void AddStringArg(SiteStatic& key, const char* text, size_t size) noexcept {
  ThreadRing* r = ActiveRing();
  if (r == nullptr || r->dropped_open > 0 || r->enrich_discard) return;
  const UncountedAllocations uncounted;
  const uint32_t key_id = InternStatic(key);
  if (text == nullptr) size = 0;
  uint64_t flags = 0;
  if (size > kMaxArgTextBytes) {
    // Cut at a UTF-8 boundary: never inside a character.
    size = kMaxArgTextBytes;
    while (size > 0 &&
           (static_cast<unsigned char>(text[size]) & 0xC0u) == 0x80u) {
      --size;
    }
    flags = kTextTruncatedBit;
  }
  // The text in 8 + 20k bytes: the string record, then text records. A
  // record the side budget refuses ends the argument (counted once); the
  // collector drops an argument whose text records are missing. Bytes past
  // the text are zero.
  auto take = [text, size](size_t at, void* out, size_t n) {
    std::memset(out, 0, n);
    if (at < size) std::memcpy(out, text + at, std::min(n, size - at));
  };
  const uint64_t position = r->Position();
  uint64_t head = 0;
  take(0, &head, sizeof(head));
  if (!AppendSide(*r, position, kSideArgString, key_id, size | flags, head)) {
    r->CountDroppedArg();
    return;
  }
  for (size_t at = kTextBytesInString; at < size; at += kTextBytesInText) {
    uint32_t k = 0;
    uint64_t v = 0;
    uint64_t w = 0;
    take(at, &k, sizeof(k));
    take(at + 4, &v, sizeof(v));
    take(at + 12, &w, sizeof(w));
    if (!AppendSide(*r, position, kSideArgText, k, v, w)) {
      r->CountDroppedArg();
      return;
    }
  }
}

void BeginEnrich(uint32_t span_epoch) noexcept {
  ThreadRing* r = ActiveRing();
  if (r == nullptr) return;
  // Counts made before the hook belong to the enclosing span.
  if (r->pending_count != 0) FlushCounts(*r);
  if (span_epoch != r->epoch) {  // the span was dropped (or not recorded)
    r->enrich_discard = true;
    return;
  }
  const UncountedAllocations uncounted;
  // Not budgeted like arguments: the bracket must stay balanced.
  AppendSide(*r, r->Position(), kSideEnrichBegin, 0, 0);
}

void EndEnrich(uint32_t span_epoch) noexcept {
  ThreadRing* r = ActiveRing();
  if (r == nullptr) return;
  if (r->enrich_discard || span_epoch != r->epoch) {
    DiscardCounts(*r);
    r->enrich_discard = false;
    return;
  }
  const UncountedAllocations uncounted;
  if (r->pending_count != 0) FlushCounts(*r);
  AppendSide(*r, r->Position(), kSideEnrichEnd, 0, 0);
}

void MarkHookFailed(const char* hook, const char* message) noexcept {
  ThreadRing* r = ActiveRing();
  if (r == nullptr || r->dropped_open > 0 || r->enrich_discard) return;
  {
    const UncountedAllocations uncounted;
    if (!AppendSide(*r, r->Position(), kSideHookFailed, 0, 0)) {
      r->CountDroppedArg();
      return;
    }
  }
  static constinit SiteStatic key{"hook_error", Tags{}};
  char text[kMaxArgTextBytes + 1] = {};
  const size_t hook_size = std::strlen(hook);
  const size_t message_size = message == nullptr ? 0 : std::strlen(message);
  // "<hook>: <message>", cut like any string argument.
  size_t n = 0;
  auto put = [&](const char* s, size_t size) {
    const size_t take = std::min(size, sizeof(text) - n);
    std::memcpy(text + n, s, take);
    n += take;
  };
  put(hook, hook_size);
  put(": ", 2);
  put(message == nullptr ? "" : message, message_size);
  const bool longer = hook_size + 2 + message_size > n;
  AddStringArg(key, text, longer ? kMaxArgTextBytes + 1 : n);
}

void CountFailedPrepare() noexcept {
  if (g_epoch.load(std::memory_order_relaxed) == 0) return;
  Session().failed_prepares.fetch_add(1, std::memory_order_relaxed);
}

bool PushContext(uint32_t parent_epoch, uint32_t parent_slot,
                 uint64_t parent_position, uint64_t parent_side) noexcept {
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (epoch == 0 || epoch != parent_epoch) return false;
  const UncountedAllocations uncounted;
  ThreadRing* r = BindThread(epoch);
  if (r == nullptr) return false;
  const uint64_t index = r->side_published.load(std::memory_order_relaxed);
  const SideRecord push{r->Position(), kSideContextPush, parent_slot,
                        parent_position, parent_side};
  if (!AppendSide(*r, push)) return false;
  std::unique_lock<std::mutex> lock(r->mu, std::defer_lock);
  if (r->ring_mode) lock.lock();
  r->live_scopes.push_back(ThreadRing::LiveScope{index, push});
  return true;
}

void PopContext(uint32_t epoch) noexcept {
  ThreadRing* r = ActiveRing();
  if (r == nullptr || r->epoch != epoch) return;
  if (r->live_scopes.empty()) return;
  const ThreadRing::LiveScope scope = r->live_scopes.back();
  const uint64_t push_index = scope.index;
  {
    std::unique_lock<std::mutex> lock(r->mu, std::defer_lock);
    if (r->ring_mode) lock.lock();
    r->live_scopes.pop_back();
  }
  const uint64_t position = r->Position();
  const uint64_t n = r->side_published.load(std::memory_order_relaxed);
  if (push_index + 1 == n && n != r->context_side_mark &&
      r->side[push_index % r->side_capacity].position == position) {
    // A scope that recorded nothing (no record since its push, no context
    // taken inside it) leaves no trace: its push is withdrawn. This keeps
    // thread pools that run many unprofiled tasks from filling the side
    // buffer.
    r->side_published.store(n - 1, std::memory_order_release);
    return;
  }
  if (!AppendSide(*r,
                  SideRecord{position, kSideContextPop, 0, push_index, 0})) {
    r->CountDroppedArg();  // unreachable: context records are never refused
  }
  if (r->ring_mode) {
    // Keep the push while its pop may outlive it in the wrapping buffer.
    const UncountedAllocations uncounted;
    std::lock_guard<std::mutex> lock(r->mu);
    const uint64_t published =
        r->side_published.load(std::memory_order_relaxed);
    const uint64_t oldest =
        published > r->side_capacity ? published - r->side_capacity : 0;
    auto& ended = r->ended_scopes;
    while (r->ended_scopes_head < ended.size() &&
           ended[r->ended_scopes_head].pop_index < oldest) {
      ++r->ended_scopes_head;  // its pop is overwritten: no longer needed
    }
    if (r->ended_scopes_head > 64 && r->ended_scopes_head * 2 > ended.size()) {
      ended.erase(ended.begin(),
                  ended.begin() + static_cast<ptrdiff_t>(r->ended_scopes_head));
      r->ended_scopes_head = 0;
    }
    ended.push_back(
        ThreadRing::EndedScope{push_index, scope.push, published - 1});
  }
}

bool CurrentPosition(uint32_t* epoch, uint32_t* slot, uint64_t* position,
                     uint64_t* side) noexcept {
  ThreadRing* r = ActiveRing();
  if (r == nullptr) return false;
  *epoch = r->epoch;
  *slot = r->slot;
  *position = r->Position();
  *side = r->side_published.load(std::memory_order_relaxed);
  r->context_side_mark = *side;
  return true;
}

namespace {

ThreadExitHook::~ThreadExitHook() {
  auto* r = static_cast<ThreadRing*>(tls_state);
  if (r == nullptr) return;
  tls_state = nullptr;
  bool destroy = false;
  {
    std::lock_guard<std::mutex> lock(r->mu);
    if (r->in_session) {
      // The collector still needs this thread's data; give back the credit
      // this thread will never use and leave the ring to the session.
      SessionState& session = Session();
      if (g_epoch.load(std::memory_order_relaxed) == r->epoch &&
          session.options.overflow == OverflowPolicy::kDropNewest) {
        const uint64_t unused = UnusedCredit(*r);
        if (unused > 0) {
          session.span_budget.fetch_add(static_cast<int64_t>(unused),
                                        std::memory_order_relaxed);
          r->limit = r->cursor.load(std::memory_order_relaxed);
        }
      }
      // Counts made after the thread's last span ended: no span to attach
      // them to, so they are reported as lost.
      if (g_epoch.load(std::memory_order_relaxed) == r->epoch) {
        for (uint32_t i = 0; i < r->pending_count; ++i) r->CountDroppedArg();
      }
      r->owner_exited = true;
    } else {
      destroy = true;
    }
  }
  if (destroy) {
    for (Chunk& chunk : r->chunks) FreeChunk(chunk);
    delete r;
  }
}

}  // namespace

}  // namespace spanprof::internal

namespace spanprof::internal {

void LockForFork() noexcept {
  Session().mu.lock();
  Sites().mu.lock();
  DynamicSitesMutex().lock();
}

void UnlockAfterFork() noexcept {
  DynamicSitesMutex().unlock();
  Sites().mu.unlock();
  Session().mu.unlock();
}

void ResetInForkedChild() noexcept {
  UnlockAfterFork();
  g_epoch.store(0, std::memory_order_relaxed);
  SessionState& session = Session();
  session.active = false;
  // The rings are the parent's (copies of its memory, some of them locked by
  // threads that do not exist here): never touch them, keep them reachable.
  static auto* abandoned = new std::vector<ThreadRing*>();
  abandoned->insert(abandoned->end(), session.rings.begin(),
                    session.rings.end());
  session.rings.clear();
  auto* ring = static_cast<ThreadRing*>(tls_state);
  if (ring == nullptr) return;
  // This thread's counting slots are its own memory (here too): zeroed, so
  // that a session of the child registers them afresh.
  DiscardCounts(*ring);
  if (!ring->in_session) abandoned->push_back(ring);
  // Spans this thread had open at the fork still end here: a fresh state
  // whose epoch matches no session turns those ends into no-ops, and lets
  // the child start a session of its own.
  auto* fresh = new (std::nothrow) ThreadRing();
  if (fresh == nullptr) {
    ring->epoch = 0;
    return;
  }
  fresh->os_tid = CurrentOsTid();
  fresh->uncaught = ring->uncaught;
  std::memcpy(fresh->name, ring->name, sizeof(fresh->name));
  tls_state = fresh;
}

}  // namespace spanprof::internal

namespace spanprof {

void SetThreadName(const char* name) noexcept {
  if (name == nullptr) name = "";
  std::strncpy(internal::tls_thread_name, name,
               sizeof(internal::tls_thread_name) - 1);
  auto* r = static_cast<internal::ThreadRing*>(internal::tls_state);
  if (r != nullptr) {
    std::lock_guard<std::mutex> lock(r->mu);
    std::memcpy(r->name, internal::tls_thread_name, sizeof(r->name));
  }
}

}  // namespace spanprof
