// spanprof::alloc — per-thread allocation counters.
//
// Linking this library replaces the global operator new/delete with versions
// that count allocations and bytes in thread-local counters; spans record the
// deltas between their begin and end, and summary rows report `alloc_count`
// and `alloc_bytes` (null in programs that do not link it). Deletes are not
// subtracted: the counters measure allocation traffic, not live bytes.
#include <cstdlib>
#include <new>

#include "recorder/recorder_internal.h"

// Referenced by the link options of spanprof::alloc (runtime/CMakeLists.txt)
// so that this object is always linked, whatever else defines operator new.
extern "C" {
extern const int spanprof_alloc_anchor;
const int spanprof_alloc_anchor = 1;
}

namespace spanprof::internal {
namespace {

// Runs before main: tells sessions that allocation counting is linked in.
const bool kRegistered = [] {
  g_alloc_counting_linked.store(true, std::memory_order_relaxed);
  return true;
}();

inline void Count(std::size_t size) noexcept {
  tls_alloc_count += 1;
  tls_alloc_bytes += static_cast<int64_t>(size);
}

void* Allocate(std::size_t size) {
  Count(size);
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* AllocateAligned(std::size_t size, std::align_val_t align) {
  Count(size);
  const auto alignment = static_cast<std::size_t>(align);
  const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace
}  // namespace spanprof::internal

using spanprof::internal::Allocate;
using spanprof::internal::AllocateAligned;

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align) {
  return AllocateAligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return AllocateAligned(size, align);
}
// The aligned nothrow forms too: left to the default, they may come from a
// library that allocates differently (a sanitizer runtime does), and the
// matching delete below would then free memory it did not allocate.
void* operator new(std::size_t size, std::align_val_t align,
                   const std::nothrow_t&) noexcept {
  try {
    return AllocateAligned(size, align);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t align,
                     const std::nothrow_t&) noexcept {
  try {
    return AllocateAligned(size, align);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t,
                     const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t,
                       const std::nothrow_t&) noexcept {
  std::free(p);
}
