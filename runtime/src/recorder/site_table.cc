// The site table: call sites interned once per process (static sites by
// their `SiteStatic`, `Run` sites and argument keys by their strings'
// addresses, run-time names by content in a bounded table, root names and
// the C API's sites and keys by content in InternSiteByContent). Ids index
// the table; id 0 means "not interned".
#include <cxxabi.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>

#include "recorder/recorder_internal.h"
#include "recorder/ring_memory.h"
#include "spanprof/capture.h"
#include "spanprof/span.h"

namespace spanprof::internal {

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

const char* OrEmpty(const char* text) { return text != nullptr ? text : ""; }

// Whether `a` and `b` point at the same tag strings (call sites' literals
// are compared by address, never read).
bool SameTagPointers(const Tags& a, const Tags& b) {
  return std::all_of(
      kTagFields.begin(), kTagFields.end(),
      [&](const TagField& tag) { return a.*tag.tags == b.*tag.tags; });
}

uint32_t InternSiteLocked(SiteTable& table, const char* name,
                          const Tags& tags) {
  Site site{.name = OrEmpty(name)};
  for (const TagField& tag : kTagFields)
    site.*tag.site = OrEmpty(tags.*tag.tags);
  table.sites.push_back(std::move(site));
  return static_cast<uint32_t>(table.sites.size() - 1);
}

}  // namespace

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

namespace {

struct DynamicKey {
  const char* name;
  Tags tags;
  bool operator==(const DynamicKey& other) const {
    return name == other.name && SameTagPointers(tags, other.tags);
  }
};
struct DynamicKeyHash {
  size_t operator()(const DynamicKey& k) const noexcept {
    auto mix = [](size_t h, const void* p) {
      return (h ^ reinterpret_cast<uintptr_t>(p)) * 0x9E3779B97F4A7C15ull;
    };
    size_t h = mix(0, k.name);
    for (const TagField& tag : kTagFields) h = mix(h, k.tags.*tag.tags);
    return h;
  }
};

}  // namespace

std::mutex& DynamicSitesMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}

SiteStatic* FindOrInternDynamicSite(const char* name,
                                    const Tags& tags) noexcept {
  // Dynamic sites are keyed by the addresses of their strings (literals), so
  // the lookup never reads the strings. Interned sites are never freed.
  const UncountedAllocations uncounted;
  std::mutex* mu = &DynamicSitesMutex();
  static auto* table =
      new std::unordered_map<DynamicKey, SiteStatic*, DynamicKeyHash>();
  const DynamicKey key{name, tags};
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

namespace {

// A site interned by content: it owns its strings (the name, then the tags
// in kTagFields order), which its `SiteStatic` points into.
struct OwnedSite {
  std::array<std::string, 1 + kTagFields.size()> strings;
  SiteStatic site;
};

}  // namespace

SiteStatic* InternSiteByContent(std::string_view name, const Tags& tags) {
  const UncountedAllocations uncounted;
  static auto* sites =
      new std::map<std::array<std::string, 1 + kTagFields.size()>,
                   OwnedSite*>();
  std::array<std::string, 1 + kTagFields.size()> strings;
  // An empty name is shown as "(unnamed)": outputs need a name.
  strings[0] = name.empty() ? std::string_view("(unnamed)") : name;
  for (size_t i = 0; i < kTagFields.size(); ++i) {
    strings[i + 1] = OrEmpty(tags.*kTagFields[i].tags);
  }
  // The dynamic sites' mutex: held around fork() like the other tables'.
  const std::lock_guard<std::mutex> lock(DynamicSitesMutex());
  auto it = sites->find(strings);
  if (it != sites->end()) return &it->second->site;
  // Never freed: an interned site lives as long as the process.
  auto* owned = new OwnedSite{std::move(strings), {}};
  owned->site.name = owned->strings[0].c_str();
  for (size_t i = 0; i < kTagFields.size(); ++i) {
    owned->site.tags.*kTagFields[i].tags = owned->strings[i + 1].c_str();
  }
  sites->emplace(owned->strings, owned);
  return &owned->site;
}

std::atomic<DynamicName*> g_dynamic_names[kDynamicNameSlots];

namespace {

// The writers' side of the run-time name table. Readers probe
// `g_dynamic_names` without it; a writer publishes a complete entry with a
// release store into an empty slot, and entries are never moved or freed.
struct DynamicNameWriters {
  std::mutex mu;
  uint32_t names = 0;  // run-time names interned (root names not counted)
  uint32_t limit = kMaxDynamicNames;
  uint32_t used_slots = 0;
  std::atomic<uint64_t> overflowed{0};  // spans recorded under an overflow
  bool warned = false;
};

DynamicNameWriters& Writers() {
  static auto* writers = new DynamicNameWriters();
  return *writers;
}

}  // namespace

std::mutex& DynamicNamesMutex() { return Writers().mu; }

namespace {

// The entry for `name` + `tags` (`hash`), or the empty slot where it would
// go (`*slot`), probing linearly from its home slot.
DynamicName* ProbeDynamicName(std::string_view name, const Tags& tags,
                              uint64_t hash, uint32_t* slot) noexcept {
  for (uint32_t i = 0; i < kDynamicNameSlots; ++i) {
    const auto at = static_cast<uint32_t>((hash + i) & (kDynamicNameSlots - 1));
    DynamicName* entry = g_dynamic_names[at].load(std::memory_order_acquire);
    if (entry == nullptr) {
      *slot = at;
      return nullptr;
    }
    if (SameDynamicName(*entry, hash, name, tags)) return entry;
  }
  *slot = kDynamicNameSlots;
  return nullptr;
}

// Copies `name` into a new entry (its bytes right after it) and publishes it
// at `slot`. Called with the writers' mutex held.
DynamicName* PublishDynamicName(std::string_view name, const Tags& tags,
                                uint64_t hash, uint32_t slot) {
  const UncountedAllocations uncounted;
  void* memory = ::operator new(sizeof(DynamicName) + name.size() + 1);
  char* copy = static_cast<char*>(memory) + sizeof(DynamicName);
  if (!name.empty()) std::memcpy(copy, name.data(), name.size());
  copy[name.size()] = '\0';
  // An empty name is shown as "(unnamed)": outputs need a name. The key
  // compared on lookup stays the bytes after the entry.
  auto* entry = new (memory)
      DynamicName{SiteStatic{name.empty() ? "(unnamed)" : copy, tags}, hash,
                  static_cast<uint32_t>(name.size())};
  g_dynamic_names[slot].store(entry, std::memory_order_release);
  ++Writers().used_slots;
  return entry;
}

// Interns an overflow name (not counted against the bound); the writers'
// mutex held.
SiteStatic* InternUnboundedLocked(std::string_view name, const Tags& tags) {
  const uint64_t hash = HashDynamicName(name, tags);
  uint32_t slot = 0;
  DynamicName* entry = ProbeDynamicName(name, tags, hash, &slot);
  if (entry != nullptr) return &entry->site;
  // Run-time names fill at most half the table; overflow names, a few per
  // process, take from the other half, which never fills in practice.
  if (slot == kDynamicNameSlots ||
      Writers().used_slots + 1 >= kDynamicNameSlots) {
    static auto* full = new SiteStatic{"(name table full)", Tags{}};
    return full;
  }
  return &PublishDynamicName(name, tags, hash, slot)->site;
}

// The overflow site of call site `site` for `tags`: "<file>:<line>
// (overflow)", or "<label> (overflow)" for a label without a path. Called
// with the writers' mutex held.
SiteStatic* OverflowSiteLocked(DynamicSite& site, const Tags& tags) {
  DynamicNameWriters& w = Writers();
  if (!w.warned) {
    w.warned = true;
    std::fprintf(stderr,
                 "spanprof: %u distinct run-time span names reached; new "
                 "names are recorded under each site's \"(overflow)\" "
                 "name\n",
                 w.limit);
  }
  SiteStatic* cached = site.overflow.load(std::memory_order_acquire);
  if (cached != nullptr && SameTagPointers(cached->tags, tags)) return cached;
  std::string_view label = site.label != nullptr ? site.label : "dynamic";
  const size_t slash = label.rfind('/');
  if (slash != std::string_view::npos) label.remove_prefix(slash + 1);
  const UncountedAllocations uncounted;
  const std::string name = std::string(label) + " (overflow)";
  SiteStatic* overflow = InternUnboundedLocked(name, tags);
  site.overflow.store(overflow, std::memory_order_release);
  return overflow;
}

}  // namespace

SiteStatic* InternDynamicName(DynamicSite* site, std::string_view name,
                              Tags tags, uint64_t hash) noexcept {
  uint32_t slot = 0;
  // Lock-free first: a name interned earlier but not in its home slot.
  if (DynamicName* entry = ProbeDynamicName(name, tags, hash, &slot)) {
    return &entry->site;
  }
  DynamicNameWriters& w = Writers();
  std::lock_guard<std::mutex> lock(w.mu);
  DynamicName* entry = ProbeDynamicName(name, tags, hash, &slot);
  if (entry != nullptr) return &entry->site;
  if (w.names >= w.limit || slot == kDynamicNameSlots) {
    w.overflowed.fetch_add(1, std::memory_order_relaxed);
    return OverflowSiteLocked(*site, tags);
  }
  ++w.names;
  return &PublishDynamicName(name, tags, hash, slot)->site;
}

SiteStatic* InternRootSite(std::string_view name) {
  // By content: the caller's string may be freed (or its address reused for
  // another name) after the session starts.
  return InternSiteByContent(name, Tags{});
}

DynamicNameCounts GetDynamicNameCounts() noexcept {
  DynamicNameWriters& w = Writers();
  std::lock_guard<std::mutex> lock(w.mu);
  return DynamicNameCounts{w.names, w.limit,
                           w.overflowed.load(std::memory_order_relaxed)};
}

void SetDynamicNameLimitForTesting(uint32_t limit) noexcept {
  DynamicNameWriters& w = Writers();
  std::lock_guard<std::mutex> lock(w.mu);
  w.limit = std::min(limit, kMaxDynamicNames);
}

}  // namespace spanprof::internal
