// spanprof/internal/recorder.h — the inline recording fast path.
//
// Nothing outside the runtime includes this header directly; the public
// headers (span.h, context.h) do. Internal types here are never part of a
// public function's signature.
//
// The design card (docs/performance.md has the measurements):
//   * each thread appends 16-byte begin/end records to its own chunked ring;
//   * the per-span path touches only thread-local state: no lock, no
//     read-modify-write atomic, no allocation, no string;
//   * the only store another thread may read is the release store of the
//     thread's own cursor (the collector reads records before it);
//   * a begin reserves room for its end (the limit moves down), so every
//     retained begin has its end and an end never checks for space;
//   * the global span cap is handed to threads in chunks on the slow path.
#ifndef SPANPROF_INTERNAL_RECORDER_H_
#define SPANPROF_INTERNAL_RECORDER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <string_view>

#include "spanprof/tags.h"

#define SPANPROF_LIKELY(x) __builtin_expect(!!(x), 1)
#define SPANPROF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SPANPROF_ALWAYS_INLINE_ __attribute__((always_inline)) inline

namespace spanprof {
namespace internal {

// Record kinds, stored in the top 4 bits of `Record::word`.
enum RecordKind : uint32_t {
  kBeginRecord = 1,         // word low bits: site id
  kEndRecord = 2,           //
  kEndExceptionRecord = 3,  // end of a span left by unwinding
  kAllocRecord = 4,         // follows a begin or precedes an end when
                            // allocation counting is on: time = count,
                            // word low bits + heartbeats = bytes (60 bits)
  kEndCountRecord = 5,      // an end that also carries the span's one
                            // pending named count: word low bits = counter
                            // id << kEndCountValueBits | count
};
inline constexpr uint32_t kKindShift = 28;
inline constexpr uint32_t kSiteMask = (1u << kKindShift) - 1;
// A kEndCountRecord's count is below 2^21 and its counter id below 2^7
// (ids go to kMaxCounters, 64); larger counts are side records.
inline constexpr uint32_t kEndCountValueBits = 21;
inline constexpr uint32_t kEndCountValueMask = (1u << kEndCountValueBits) - 1;

// `Record` is one fixed-size ring entry.
struct Record {
  uint64_t time;        // raw clock: TSC ticks or CLOCK_MONOTONIC ns
  uint32_t word;        // kind << 28 | site id
  uint32_t heartbeats;  // low 32 bits of the thread's heartbeat counter
};
static_assert(sizeof(Record) == 16, "records must stay 16 bytes");

// `SiteStatic` is the one static record of a call site. Constant-initialized,
// so the hot path reads `id` without any guard; 0 means not interned yet.
struct SiteStatic {
  const char* name;
  Tags tags;
  std::atomic<uint32_t> id{0};
};

// Named counters (`SPANPROF_COUNT`): at most this many distinct names per
// process; increments of later names are counted as lost.
inline constexpr uint32_t kMaxCounters = 64;
static_assert(kMaxCounters < (1u << (kKindShift - kEndCountValueBits)),
              "a counter id must fit a kEndCountRecord");
// Counting sites whose counts a thread holds between two span begins or ends;
// one more flushes the held counts first.
inline constexpr uint32_t kMaxPendingCounts = 32;

// `CounterStatic` is the one static record of a counting site. `id` is the
// counter's index + 1 in the process's counter table (0: not interned yet;
// kMaxCounters + 1: the table was full).
struct CounterStatic {
  const char* name;
  std::atomic<uint32_t> id{0};
};

// A counting site's thread-local count that is not yet in the ring.
struct PendingCount {
  uint64_t* slot;  // the site's thread-local count
  uint32_t id;     // its counter
};

constexpr Tags MakeTags() { return Tags{}; }
constexpr Tags MakeTags(Tags tags) { return tags; }

// Global recording epoch: 0 when no session records. Otherwise bit 0 says the
// clock is CLOCK_MONOTONIC (1) or the TSC (0), and the other bits count
// sessions, so a thread's cached state from an older session never matches.
extern std::atomic<uint32_t> g_epoch;

// Per-thread recording state. Written on the fast path by its thread only.
struct alignas(64) ThreadState {
  std::atomic<Record*> cursor{nullptr};  // next free record; release-stored
  Record* limit = nullptr;  // a begin is allowed while cursor < limit
  uint32_t epoch = 0;       // the g_epoch this state records for
  uint32_t end_slots = 1;   // records per end: 1, or 2 counting allocations
  // This thread's count of exceptions in flight (the Itanium C++ ABI's
  // __cxa_eh_globals::uncaughtExceptions), cached at bind time so an end can
  // tell that it runs during unwinding with one load.
  const unsigned int* uncaught = nullptr;
  // Named counters: the counting sites whose thread-local counts hold
  // increments not yet written to the ring. Non-zero sends the next begin or
  // end to the slow path, which writes them as side records of the innermost
  // open span.
  uint32_t pending_count = 0;
  PendingCount pending[kMaxPendingCounts] = {};
};

// The calling thread's state (nullptr until its first span). Initial-exec TLS:
// one instruction to reach it, also from a shared library.
// `__thread` (not thread_local): plain-old-data with constant initialization,
// so no TLS wrapper call or init guard is emitted at the use site.
extern __thread ThreadState* tls_state
    __attribute__((tls_model("initial-exec")));
// The calling thread's heartbeat counter (Heartbeat() adds to it).
extern __thread uint64_t tls_heartbeats
    __attribute__((tls_model("initial-exec")));
// Allocation counters, maintained by spanprof::alloc when it is linked.
extern __thread int64_t tls_alloc_count
    __attribute__((tls_model("initial-exec")));
extern __thread int64_t tls_alloc_bytes
    __attribute__((tls_model("initial-exec")));

// The builtin behind <x86intrin.h>'s __rdtsc() (GCC and Clang), so that user
// files do not pull in every x86 intrinsic through span.h.
inline uint64_t ReadTsc() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return 0;
#endif
}

inline uint64_t ReadMonotonicNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

// Raw timestamp in the clock that `epoch` selects.
inline uint64_t ReadClock(uint32_t epoch) noexcept {
  return SPANPROF_LIKELY((epoch & 1u) == 0) ? ReadTsc() : ReadMonotonicNs();
}

// Slow paths (thread_ring.cc): intern the site, bind the thread to the session,
// take a new chunk and span credit, or count a drop. Return the epoch the
// span was recorded in, or 0 when it was not recorded.
uint32_t BeginSlow(SiteStatic& site, uint32_t epoch) noexcept;
void EndSlow(ThreadState* state, uint32_t begin_epoch, bool exception) noexcept;

inline uint32_t WriteBegin(ThreadState* s, Record* c, uint32_t id,
                           uint32_t epoch) noexcept {
  c->time = ReadClock(epoch);
  c->word = (kBeginRecord << kKindShift) | id;
  c->heartbeats = static_cast<uint32_t>(tls_heartbeats);
  s->limit -= 1;  // reserve the end's slot
  s->cursor.store(c + 1, std::memory_order_release);
  return epoch;
}

// Begins a span at `site` in `epoch`, a non-zero value just read from
// g_epoch. Returns the session epoch it was recorded in, or 0.
inline uint32_t BeginSpanInEpoch(SiteStatic& site, uint32_t epoch) noexcept {
  const uint32_t id = site.id.load(std::memory_order_relaxed);
  ThreadState* s = tls_state;
  if (SPANPROF_UNLIKELY(id == 0 || s == nullptr || s->epoch != epoch ||
                        s->end_slots != 1 || s->pending_count != 0)) {
    return BeginSlow(site, epoch);
  }
  Record* c = s->cursor.load(std::memory_order_relaxed);
  if (SPANPROF_UNLIKELY(c >= s->limit)) return BeginSlow(site, epoch);
  return WriteBegin(s, c, id, epoch);
}

// Begins a span at `site`. Returns the session epoch it was recorded in, or 0.
inline uint32_t BeginSpan(SiteStatic& site) noexcept {
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (SPANPROF_LIKELY(epoch == 0)) return 0;
  return BeginSpanInEpoch(site, epoch);
}

// Ends the span that `BeginSpan()` returned `begin_epoch` for. A span ended
// while an exception unwinds the stack is flagged as left by an exception.
inline void EndSpan(uint32_t begin_epoch) noexcept {
  if (SPANPROF_LIKELY(begin_epoch == 0)) return;
  ThreadState* s = tls_state;
  if (SPANPROF_UNLIKELY(s->epoch != begin_epoch || s->end_slots != 1 ||
                        s->pending_count != 0 || *s->uncaught != 0)) {
    EndSlow(s, begin_epoch, *s->uncaught != 0);
    return;
  }
  Record* c = s->cursor.load(std::memory_order_relaxed);
  c->time = ReadClock(begin_epoch);
  c->word = kEndRecord << kKindShift;
  c->heartbeats = static_cast<uint32_t>(tls_heartbeats);
  s->limit += 1;
  s->cursor.store(c + 1, std::memory_order_release);
}

// Interns a run-time site (name + tags by pointer identity) for
// spanprof::Run and argument keys: a per-instantiation cache makes repeated
// calls free. Takes a process-wide mutex; the first call with a new pointer
// allocates an entry that lives as long as the process, so the strings must
// have static storage duration.
SiteStatic* FindOrInternDynamicSite(const char* name,
                                    const Tags& tags) noexcept;

// Run-time span names (`SPANPROF_SCOPE_DYNAMIC`, `spanprof::RunDynamic`)
// are interned by content (name bytes + tag pointers) into one process-wide
// open-addressing table: at most kMaxDynamicNames
// distinct run-time names, each copied once and kept for the process's life.
// A lookup of a name already interned reads the table without a lock,
// allocates nothing and writes nothing shared; only a new name takes the
// mutex. Past the bound, each call site records its new names under one
// overflow name ("<file>:<line> (overflow)", or "dynamic (overflow)" for
// `RunDynamic`), counted and reported once on stderr.
inline constexpr uint32_t kMaxDynamicNames = 65536;
// Slots of the table: a power of two, twice the bound, so probe sequences
// stay short (1 MiB of pointers, touched as names arrive).
inline constexpr uint32_t kDynamicNameSlots = 2 * kMaxDynamicNames;

// One interned name, its bytes stored right after it (NUL-terminated).
// Immutable once published, except `site.id`.
struct DynamicName {
  SiteStatic site;  // `site.name` points at the bytes after this struct
  uint64_t hash;
  uint32_t size;  // bytes of the name (it may hold a NUL)
};

// The static record of one run-time-name call site: its label for the
// overflow name, and the overflow site once the table is full.
struct DynamicSite {
  const char* label;
  std::atomic<SiteStatic*> overflow{nullptr};
};

extern std::atomic<DynamicName*> g_dynamic_names[kDynamicNameSlots];

SPANPROF_ALWAYS_INLINE_ uint64_t LoadWord(const char* p) noexcept {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}
SPANPROF_ALWAYS_INLINE_ uint32_t LoadHalfWord(const char* p) noexcept {
  uint32_t word;
  std::memcpy(&word, p, 4);
  return word;
}

// The table's hash of `name` + `tags`: one multiply per eight bytes, then a
// final mix. Tags are hashed by address (they are literals), so constant
// tags fold away.
SPANPROF_ALWAYS_INLINE_ uint64_t HashDynamicName(std::string_view name,
                                                 const Tags& tags) noexcept {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  const char* p = name.data();
  const size_t size = name.size();
  uint64_t h = kMul ^ size;
  uint64_t last = 0;
  if (size >= 8) {
    // Whole words, the last one overlapping the one before it.
    for (size_t at = 0; at + 8 < size; at += 8) {
      h = (h ^ LoadWord(p + at)) * kMul;
    }
    last = LoadWord(p + size - 8);
  } else if (size >= 4) {
    last = (static_cast<uint64_t>(LoadHalfWord(p + size - 4)) << 32) |
           LoadHalfWord(p);
  } else {
    for (size_t i = 0; i < size; ++i) {
      last |= static_cast<uint64_t>(static_cast<unsigned char>(p[i]))
              << (8 * i);
    }
  }
  h = (h ^ last) * 0xFF51AFD7ED558CCDull;
  const uint64_t tag_sum = reinterpret_cast<uintptr_t>(tags.phase) * 3 +
                           reinterpret_cast<uintptr_t>(tags.module) * 5 +
                           reinterpret_cast<uintptr_t>(tags.activity) * 7 +
                           reinterpret_cast<uintptr_t>(tags.backend) * 11 +
                           reinterpret_cast<uintptr_t>(tags.dtype) * 13 +
                           reinterpret_cast<uintptr_t>(tags.device) * 17;
  h = (h ^ (h >> 32) ^ tag_sum) * kMul;
  return h ^ (h >> 29);
}

// `size` bytes at `a` and `b` are equal (inline: names are short).
SPANPROF_ALWAYS_INLINE_ bool SameBytes(const char* a, const char* b,
                                       size_t size) noexcept {
  if (size >= 8) {
    for (size_t at = 0; at + 8 < size; at += 8) {
      if (LoadWord(a + at) != LoadWord(b + at)) return false;
    }
    return LoadWord(a + size - 8) == LoadWord(b + size - 8);
  }
  if (size >= 4) {
    return LoadHalfWord(a) == LoadHalfWord(b) &&
           LoadHalfWord(a + size - 4) == LoadHalfWord(b + size - 4);
  }
  for (size_t i = 0; i < size; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// The hot path compares and hashes the six tag pointers one by one (constants
// in registers; capture.h's kTagFields is not included into every program):
// a new tag must be added to HashDynamicName, SameDynamicName and span.h's
// CachedDynamicSite.
static_assert(sizeof(Tags) == 6 * sizeof(const char*),
              "a new tag: update the hot path's tag comparisons");

SPANPROF_ALWAYS_INLINE_ bool SameDynamicName(const DynamicName& entry,
                                             uint64_t hash,
                                             std::string_view name,
                                             const Tags& tags) noexcept {
  const Tags& t = entry.site.tags;
  return entry.hash == hash && entry.size == name.size() &&
         t.phase == tags.phase && t.module == tags.module &&
         t.activity == tags.activity && t.backend == tags.backend &&
         t.dtype == tags.dtype && t.device == tags.device &&
         SameBytes(reinterpret_cast<const char*>(&entry + 1), name.data(),
                   name.size());
}

// The slow path of `FindDynamicName` (site_table.cc): probes the table,
// and interns `name` when it is new (`site`'s overflow name past the bound).
// `tags` by value: the hot path's constant tags never have their address
// taken, so the compiler folds them.
SiteStatic* InternDynamicName(DynamicSite* site, std::string_view name,
                              Tags tags, uint64_t hash) noexcept;

// The site of run-time name `name` + `tags` at call site `site`: one hash of
// the name, one load and one compare when the name sits in its home slot.
SPANPROF_ALWAYS_INLINE_ SiteStatic* FindDynamicName(DynamicSite& site,
                                                    std::string_view name,
                                                    const Tags& tags) noexcept {
  const uint64_t hash = HashDynamicName(name, tags);
  DynamicName* entry = g_dynamic_names[hash & (kDynamicNameSlots - 1)].load(
      std::memory_order_acquire);
  if (SPANPROF_LIKELY(entry != nullptr &&
                      SameDynamicName(*entry, hash, name, tags))) {
    return &entry->site;
  }
  return InternDynamicName(&site, name, tags, hash);
}

// Begins a span named `name` at run-time-name call site `site`.
inline uint32_t BeginDynamicSpan(DynamicSite& site, const Tags& tags,
                                 std::string_view name) noexcept {
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (SPANPROF_LIKELY(epoch == 0)) return 0;
  return BeginSpanInEpoch(*FindDynamicName(site, name, tags), epoch);
}

void AddIntArg(SiteStatic& key, int64_t value) noexcept;
void AddDoubleArg(SiteStatic& key, double value) noexcept;
// A string argument of the innermost open span: up to kMaxArgTextBytes
// bytes (capture.h) are copied into the thread's side buffer.
void AddStringArg(SiteStatic& key, const char* text, size_t size) noexcept;

// Hooks (spanprof::Hooks). `BeginEnrich(span_epoch)` / `EndEnrich` bracket
// an enrich hook run after the end of the span `span_epoch` (what its begin
// returned): arguments and counts made between them belong to that span.
void BeginEnrich(uint32_t span_epoch) noexcept;
void EndEnrich(uint32_t span_epoch) noexcept;
// Flags the span that arguments would attach to now (the innermost open
// span, or the span being enriched) as kSpanHookFailed and gives it the
// string argument `hook_error` = "<hook>: <message>".
void MarkHookFailed(const char* hook, const char* message) noexcept;
// Counts a span not recorded because its prepare hook failed.
void CountFailedPrepare() noexcept;

// The first increment of a site's count since the thread's last begin or end
// (`slot` is 0): binds the thread, interns the counter and registers the slot
// as pending (counters.cc).
void CountFirst(CounterStatic& counter, uint64_t& slot, uint64_t n) noexcept;

// Adds `n` to the calling thread's count `slot` of counting site `counter`.
// Each `SPANPROF_COUNT` site has its own thread-local slot, so an increment
// is one add at a constant TLS offset; the first one after a begin or end
// registers the slot, and the next begin or end writes it to the ring.
inline void AddCount(CounterStatic& counter, uint64_t& slot,
                     uint64_t n) noexcept {
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (SPANPROF_LIKELY(epoch == 0)) return;
  if (SPANPROF_UNLIKELY(slot == 0)) {
    // Registering the slot on the thread's bound ring, inline when the
    // counter is interned and there is room; else the out-of-line path.
    ThreadState* s = tls_state;
    const uint32_t id = counter.id.load(std::memory_order_relaxed);
    if (s != nullptr && s->epoch == epoch && id != 0 && id <= kMaxCounters &&
        s->pending_count < kMaxPendingCounts && n != 0) {
      s->pending[s->pending_count++] = PendingCount{&slot, id};
      slot = n;
      return;
    }
    CountFirst(counter, slot, n);
    return;
  }
  slot += n;
}

}  // namespace internal
}  // namespace spanprof

#endif  // SPANPROF_INTERNAL_RECORDER_H_
