// Named counters (`SPANPROF_COUNT`): the process's counter table, the first
// increment of a site after a begin or end, and the flush of pending counts
// into the side stream.
//
// Each counting site has its own thread-local count (spanprof/span.h); an
// increment adds to it inline. The first increment since the thread's last
// span begin or end registers the site as pending on the thread's ring, and a
// pending site sends the next begin or end to the slow path, which writes one
// side record per pending site, positioned before the begin or end record:
// the collector attaches it to the span innermost at that position, which is
// the span that was innermost while the counts were made.
#include <algorithm>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/recorder_internal.h"

namespace spanprof::internal {
namespace {

struct CounterTable {
  std::mutex mu;
  std::vector<std::string> names;  // by id - 1
};

CounterTable& Counters() {
  // Leaked on purpose, like the site table: counters may be used from static
  // destructors and atexit handlers.
  static auto* table = new CounterTable();
  return *table;
}

// The counter's id: its index + 1 in the table, by name content (two sites
// with one name are one counter), or kMaxCounters + 1 when the table is full.
uint32_t InternCounter(CounterStatic& counter) noexcept {
  uint32_t id = counter.id.load(std::memory_order_acquire);
  if (id != 0) return id;
  CounterTable& table = Counters();
  std::lock_guard<std::mutex> lock(table.mu);
  id = counter.id.load(std::memory_order_relaxed);
  if (id != 0) return id;
  const std::string_view name = counter.name;
  const auto it = std::find(table.names.begin(), table.names.end(), name);
  if (it != table.names.end()) {
    id = static_cast<uint32_t>(it - table.names.begin()) + 1;
  } else if (table.names.size() < kMaxCounters) {
    table.names.emplace_back(name);
    id = static_cast<uint32_t>(table.names.size());
  } else {
    id = kMaxCounters + 1;
  }
  counter.id.store(id, std::memory_order_release);
  return id;
}

}  // namespace

std::vector<std::string> SnapshotCounterNames() {
  CounterTable& table = Counters();
  std::lock_guard<std::mutex> lock(table.mu);
  return table.names;
}

void CountFirst(CounterStatic& counter, uint64_t& slot, uint64_t n) noexcept {
  if (n == 0) return;  // nothing to hold: the slot stays unregistered
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (epoch == 0) return;
  const UncountedAllocations uncounted;
  const uint32_t id = InternCounter(counter);
  ThreadRing* r = BindThread(epoch);
  if (r == nullptr) return;
  if (id > kMaxCounters) {
    // A 65th counter name: nowhere to keep its count. Named by a site of
    // its name (the counter table has no id for it).
    SiteStatic* name = FindOrInternDynamicSite(counter.name, Tags{});
    const uint32_t key = name == nullptr ? 0 : InternStatic(*name);
    r->CountDroppedArg(key, true, kDropCounterLimit, kSiteOfInnermost);
    return;
  }
  // More sites than the thread can hold: write the held counts now. They
  // attach to the same innermost span as they would at its end.
  if (r->pending_count == kMaxPendingCounts) FlushCounts(*r);
  r->pending[r->pending_count++] = PendingCount{&slot, id};
  slot = n;
}

void DiscardCounts(ThreadRing& r) noexcept {
  for (uint32_t i = 0; i < r.pending_count; ++i) *r.pending[i].slot = 0;
  r.pending_count = 0;
}

}  // namespace spanprof::internal
