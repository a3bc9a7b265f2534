// Named drops of arguments and counts: a thread's fixed drop table, the
// look-up of the span a lost argument belonged to, and the gathering of
// every thread's table at the session's end.
//
// A drop is the rare path (the cap or the side budget ran out, or nothing
// was open to attach to), but it may repeat for every argument once a
// budget is spent, so it takes no lock and allocates nothing: the entry for
// (site, key, kind, reason) is found by a linear search of at most
// kDropTableEntries entries and counted with a load and a store.
#include <cstdint>
#include <iterator>
#include <mutex>
#include <vector>

#include "recorder/recorder_internal.h"

namespace spanprof::internal {

const char* DropReasonName(uint32_t reason) noexcept {
  static constexpr const char* kNames[] = {
      "cap",           "side_budget", "no_open_span", "span_left_open",
      "counter_limit", "arg_limit",
  };
  static_assert(std::size(kNames) == kDropReasonCount);
  return reason < kDropReasonCount ? kNames[reason] : "unknown";
}

namespace {

// One backward walk over the records of a thread's stream: the first begin
// not matched by a later end is the innermost open span.
struct BackwardWalk {
  uint64_t closed = 0;  // ends seen whose begins are not seen yet
  uint64_t memo_position;
  uint32_t memo_site;
  bool memo_usable;

  // Walks `records` (stream positions [base, base + count)) from the end.
  // Returns true with `*site` set when the walk is decided.
  bool Walk(const Record* records, uint64_t base, uint64_t count,
            uint32_t* site) {
    for (uint64_t q = base + count;; --q) {
      if (memo_usable && q == memo_position && closed == 0) {
        *site = memo_site;
        return true;
      }
      if (q == base) return false;
      const Record& rec = records[q - 1 - base];
      const uint32_t kind = rec.word >> kKindShift;
      if (kind == kBeginRecord) {
        if (closed == 0) {
          *site = rec.word & kSiteMask;
          return true;
        }
        --closed;
      } else if (kind == kEndRecord || kind == kEndExceptionRecord ||
                 kind == kEndCountRecord) {
        ++closed;
      }
    }
  }
};

}  // namespace

// Walks back from the cursor: the current chunk first, then the thread's
// older chunks while they are contiguous (under `mu`, and only while the
// session records: the collector frees chunks once it has stopped). The
// walk stops early at the position of the previous look when every span
// begun since has ended (the answer is then the previous one), so a run of
// drops costs the records written between them.
uint32_t ThreadRing::InnermostSite() noexcept {
  const Record* c = cursor.load(std::memory_order_relaxed);
  if (chunk_begin == nullptr || c == nullptr) return 0;  // nothing recorded
  const uint64_t position = Position();
  BackwardWalk walk{
      0, drops.memo_position, drops.memo_site,
      drops.memo_position != UINT64_MAX && drops.memo_position <= position};
  uint32_t site = kUnknownSite;
  bool decided =
      walk.Walk(chunk_begin, chunk_base, position - chunk_base, &site);
  if (!decided && chunk_base == 0) {
    site = 0;  // the whole stream walked: no span open
    decided = true;
  }
  if (!decided) {
    std::lock_guard<std::mutex> lock(mu);
    if (g_epoch.load(std::memory_order_relaxed) == epoch) {
      uint64_t next_base = chunk_base;
      // chunks.back() is the current chunk; the others are closed, in order.
      for (size_t k = chunks.size(); k-- > 1 && !decided;) {
        const Chunk& chunk = chunks[k - 1];
        if (chunk.records == nullptr ||
            chunk.base_position + chunk.used != next_base) {
          break;  // reused (ring mode, streaming): the rest is gone
        }
        decided =
            walk.Walk(chunk.records, chunk.base_position, chunk.used, &site);
        next_base = chunk.base_position;
        if (!decided && next_base == 0) {
          site = 0;
          decided = true;
        }
      }
    }
  }
  drops.memo_position = position;
  drops.memo_site = site;
  return site;
}

void ThreadRing::CountDroppedArg(uint32_t key, bool is_counter,
                                 DropReason reason, uint32_t site) noexcept {
  dropped_args.store(dropped_args.load(std::memory_order_relaxed) + 1,
                     std::memory_order_relaxed);
  if (site == kSiteOfInnermost) site = InnermostSite();
  const uint32_t used = drops.used.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < used; ++i) {
    DropEntry& e = drops.entries[i];
    if (e.site == site && e.key == key && e.is_counter == is_counter &&
        e.reason == reason) {
      e.count.store(e.count.load(std::memory_order_relaxed) + 1,
                    std::memory_order_relaxed);
      return;
    }
  }
  if (used == kDropTableEntries) {
    drops.overflow.store(drops.overflow.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
    return;
  }
  DropEntry& e = drops.entries[used];
  e.site = site;
  e.key = key;
  e.is_counter = is_counter;
  e.reason = static_cast<uint8_t>(reason);
  e.count.store(1, std::memory_order_relaxed);
  drops.used.store(used + 1, std::memory_order_release);
}

void DropCounts(ThreadRing& r, DropReason reason, uint32_t site) noexcept {
  for (uint32_t i = 0; i < r.pending_count; ++i) {
    if (*r.pending[i].slot != 0) {
      r.CountDroppedArg(r.pending[i].id, true, reason, site);
    }
  }
  DiscardCounts(r);
}

void FlushCallerCounts(const SessionState& session) noexcept {
  auto* r = static_cast<ThreadRing*>(tls_state);
  if (r == nullptr || !session.active || r->epoch != session.epoch ||
      r->pending_count == 0) {
    return;
  }
  if (r->dropped_open > 0 || r->enrich_discard) {
    DropCounts(*r, kDropCap, r->InnermostDroppedSite());
    return;
  }
  const UncountedAllocations uncounted;
  FlushCounts(*r);
}

std::vector<SlotDrop> GatherDrops(const std::vector<ThreadRing*>& rings) {
  std::vector<SlotDrop> out;
  for (const ThreadRing* r : rings) {
    const uint32_t used = r->drops.used.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < used; ++i) {
      const DropEntry& e = r->drops.entries[i];
      out.push_back(SlotDrop{
          r->slot, GatheredDrop{e.site, e.key, e.is_counter, e.reason,
                                e.count.load(std::memory_order_relaxed)}});
    }
    const uint64_t overflow = r->drops.overflow.load(std::memory_order_relaxed);
    if (overflow > 0) {
      out.push_back(SlotDrop{
          r->slot, GatheredDrop{0, 0, false, kDropReasonCount, overflow}});
    }
  }
  return out;
}

}  // namespace spanprof::internal
