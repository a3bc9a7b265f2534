// A thread's life: its name, its ring's fate at thread exit, and fork().
#include <cxxabi.h>
#include <pthread.h>
#include <signal.h>
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

// Destroys the thread's ring at thread exit, or hands it to the session when
// the session still needs its data.
struct ThreadExitHook {
  ~ThreadExitHook();
};
thread_local ThreadExitHook tls_exit_hook;
thread_local char tls_thread_name[64] = {};

}  // namespace

namespace {

// The alternate signal stack this runtime gave the thread (nullptr: none,
// or the thread had one of its own).
thread_local void* tls_alt_stack = nullptr;
thread_local size_t tls_alt_stack_bytes = 0;

size_t AltStackBytes() {
  const long minimum = sysconf(_SC_SIGSTKSZ);
  return std::max<size_t>(size_t{64} * 1024,
                          minimum > 0 ? static_cast<size_t>(minimum) : 0);
}

// Gives the alternate stack back at thread exit (disabled first: the
// kernel must not deliver onto unmapped memory).
void FreeAltStack() noexcept {
  if (tls_alt_stack == nullptr) return;
  stack_t off{};
  off.ss_flags = SS_DISABLE;
  sigaltstack(&off, nullptr);
  munmap(tls_alt_stack, tls_alt_stack_bytes);
  tls_alt_stack = nullptr;
}

}  // namespace

void EnsureAltStack() noexcept {
  if (tls_alt_stack != nullptr) return;
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0) return;
  if ((current.ss_flags & SS_DISABLE) == 0) return;  // the thread's own
  const size_t bytes = AltStackBytes();
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) return;
  stack_t ours{};
  ours.ss_sp = p;
  ours.ss_size = bytes;
  if (sigaltstack(&ours, nullptr) != 0) {
    munmap(p, bytes);
    return;
  }
  tls_alt_stack = p;
  tls_alt_stack_bytes = bytes;
}

uint64_t CurrentOsTid() noexcept {
  return static_cast<uint64_t>(syscall(SYS_gettid));
}

void EnsureThreadExitHook() noexcept { static_cast<void>(&tls_exit_hook); }

const char* CallerThreadName() noexcept { return tls_thread_name; }

namespace {

ThreadExitHook::~ThreadExitHook() {
  FreeAltStack();
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
        for (uint32_t i = 0; i < r->pending_count; ++i) {
          r->CountDroppedArg(r->pending[i].id, true, kDropNoOpenSpan, 0);
        }
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
  DynamicNamesMutex().lock();
}

void UnlockAfterFork() noexcept {
  DynamicNamesMutex().unlock();
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
