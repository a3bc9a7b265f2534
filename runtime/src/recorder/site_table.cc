// The site table: call sites interned once per process (static sites by
// their `SiteStatic`, run-time sites by their strings' addresses, root
// sites by content). Ids index the table; id 0 means "not interned".
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

}  // namespace spanprof::internal
