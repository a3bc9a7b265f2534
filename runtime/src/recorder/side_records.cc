// Side records written from the program's thread: arguments, enrich hooks,
// hook failures, failed prepares and context scopes (push, pop, position).
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
#include "recorder/ring_memory.h"
#include "spanprof/span.h"

namespace spanprof::internal {

namespace {

ThreadRing* ActiveRing() {
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (epoch == 0) return nullptr;
  auto* r = static_cast<ThreadRing*>(tls_state);
  if (r == nullptr || r->epoch != epoch) return nullptr;
  return r;
}

// The calling thread's ring in the active session, binding the thread on
// its first argument: an argument made on a thread that has recorded no
// span yet is not lost without a word (with no span open, the collector
// counts it as dropped, reason "no_open_span").
ThreadRing* BoundRing() noexcept {
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (epoch == 0) return nullptr;
  auto* r = static_cast<ThreadRing*>(tls_state);
  if (SPANPROF_LIKELY(r != nullptr && r->epoch == epoch)) return r;
  const UncountedAllocations uncounted;
  return BindThread(epoch);
}

// The argument's key id, interning it on first use (once per call site).
uint32_t KeyId(SiteStatic& key) noexcept {
  const uint32_t key_id = key.id.load(std::memory_order_acquire);
  if (SPANPROF_LIKELY(key_id != 0)) return key_id;
  const UncountedAllocations uncounted;
  return InternStatic(key);
}

// An argument made inside a span the cap dropped, or inside the enrich hook
// of one: it goes with its span, counted and named after it.
void DropWithSpan(ThreadRing& r, SiteStatic& key) noexcept {
  r.CountDroppedArg(KeyId(key), false, kDropCap,
                    r.enrich_discard ? kUnknownSite : r.InnermostDroppedSite());
}

void AddArgRecord(SiteStatic& key, uint32_t kind, uint64_t bits) noexcept {
  ThreadRing* r = BoundRing();
  if (r == nullptr) return;
  if (SPANPROF_UNLIKELY(r->dropped_open > 0 || r->enrich_discard)) {
    DropWithSpan(*r, key);
    return;
  }
  // Only interning a key allocates (once per call site); AppendSide's slow
  // path guards its own allocations, so the usual call saves and restores
  // no allocation counters: a span with an argument must stay within 1.5x
  // a plain span (bench/gate checks it).
  const uint32_t key_id = KeyId(key);
  if (!AppendSide(*r, r->Position(), kind, key_id, bits)) {
    r->CountDroppedArg(key_id, false, kDropSideBudget, kSiteOfInnermost);
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
  ThreadRing* r = BoundRing();
  if (r == nullptr) return;
  if (r->dropped_open > 0 || r->enrich_discard) {
    DropWithSpan(*r, key);
    return;
  }
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
    r->CountDroppedArg(key_id, false, kDropSideBudget, kSiteOfInnermost);
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
      r->CountDroppedArg(key_id, false, kDropSideBudget, kSiteOfInnermost);
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
    // (Its enrich hook's arguments and counts are then dropped with it.)
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
    if (r->enrich_discard) {
      DropCounts(*r, kDropCap, kUnknownSite);
    } else {
      DiscardCounts(*r);
    }
    r->enrich_discard = false;
    return;
  }
  const UncountedAllocations uncounted;
  if (r->pending_count != 0) FlushCounts(*r);
  AppendSide(*r, r->Position(), kSideEnrichEnd, 0, 0);
}

void MarkHookFailed(const char* hook, const char* message) noexcept {
  static constinit SiteStatic key{"hook_error", Tags{}};
  ThreadRing* r = ActiveRing();
  if (r == nullptr || r->dropped_open > 0 || r->enrich_discard) return;
  {
    const UncountedAllocations uncounted;
    if (!AppendSide(*r, r->Position(), kSideHookFailed, 0, 0)) {
      r->CountDroppedArg(KeyId(key), false, kDropSideBudget, kSiteOfInnermost);
      return;
    }
  }
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
    // buffer. Under the ring's lock, which the stream's drain holds while it
    // reads the newest side records: it never reads the slot while the next
    // record is written into it, and it leaves a push made after the records
    // it found for a later drain (StreamWriter::Streamable).
    const UncountedAllocations uncounted;
    const std::lock_guard<std::mutex> lock(r->mu);
    r->side_published.store(n - 1, std::memory_order_release);
    return;
  }
  if (!AppendSide(*r,
                  SideRecord{position, kSideContextPop, 0, push_index, 0})) {
    // Unreachable: context records are never refused.
    r->CountDroppedArg(0, false, kDropSideBudget, kSiteOfInnermost);
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

}  // namespace spanprof::internal
