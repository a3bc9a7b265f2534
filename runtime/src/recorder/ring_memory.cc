// Ring memory: the blocks that hold records and side records. Chunks up to
// kSmallChunkBytes come from malloc; full-size chunks take one block from a
// process-wide cache that a prefaulter thread keeps faulted in, so the span
// path never takes a page fault. Also the side buffer's segments.
#include "recorder/ring_memory.h"

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
#include "spanprof/span.h"

namespace spanprof::internal {

namespace {

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
constexpr size_t kMaxCachedBlocks = 512;  // 64 MiB

}  // namespace

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
    Segment seg{nullptr, storage_, 0, false, false};
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
    if (seg.discarded) {
      munmap(seg.records, kBlockBytes);  // not faulted in: not for the cache
    } else if (seg.block) {
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

void SideBuffer::Discard(uint64_t end) noexcept {
  for (size_t k = 0; k + 1 < segments_.size(); ++k) {
    Segment& seg = segments_[k];
    if (seg.base + seg.count > end) break;
    if (!seg.block || seg.discarded) continue;
    madvise(seg.records, kBlockBytes, MADV_DONTNEED);
    seg.discarded = true;
  }
}

uint64_t SideBuffer::held() const noexcept {
  uint64_t held = 0;
  for (const Segment& seg : segments_) {
    if (!seg.discarded) held += seg.count;
  }
  return held;
}

void SideBuffer::Recycle(uint64_t drained, uint64_t count) noexcept {
  while (storage_ < count && segments_.size() >= 2) {
    Segment seg = segments_.front();
    if (seg.base + seg.count > drained) break;
    segments_.erase(segments_.begin());
    seg.base = storage_;
    segments_.push_back(seg);
    storage_ += seg.count;
  }
  last_ = segments_.empty() ? 0 : segments_.size() - 1;
}

void SideBuffer::CopyOut(uint64_t from, uint64_t to,
                         SideRecord* out) const noexcept {
  for (const Segment& seg : segments_) {
    if (seg.base >= to) break;
    const uint64_t begin = std::max(from, seg.base);
    const uint64_t end = std::min(to, seg.base + seg.count);
    if (begin >= end) continue;
    std::memcpy(out + (begin - from), seg.records + (begin - seg.base),
                (end - begin) * sizeof(SideRecord));
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

void TrimCachedBlocks(uint64_t keep) noexcept {
  BlockCache& cache = Blocks();
  std::lock_guard<std::mutex> lock(cache.mu);
  if (cache.count <= keep) return;
  // The oldest go: the newest are the warmest in the CPU cache.
  const size_t drop = cache.count - static_cast<size_t>(keep);
  for (size_t i = 0; i < drop; ++i) munmap(cache.blocks[i], kBlockBytes);
  std::memmove(cache.blocks, cache.blocks + drop, keep * sizeof(void*));
  cache.count = static_cast<size_t>(keep);
}

uint64_t ReadyBlocks() noexcept { return kReadyBlocks; }

uint64_t ChunkCapacity(uint64_t records) noexcept {
  return ChunkBytes(records) == kBlockBytes ? kBlockRecords : records;
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

}  // namespace spanprof::internal
