// The drain bell (drain_bell.h).
#include "recorder/drain_bell.h"

#include <pthread.h>

#include <new>

namespace spanprof::internal {

void DrainBell::Ring() noexcept {
  if (rung_.exchange(true, std::memory_order_acq_rel)) return;
  // Without the mutex: a recording thread's slow path takes no lock here
  // (nor could a signal that lands meanwhile find one taken). A waiter that
  // checked `rung_` just before the exchange misses the notification and
  // finds the bell rung at its timeout: one timed pass late, never lost.
  cv_.notify_one();
}

bool DrainBell::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout,
               [this] { return rung_.load(std::memory_order_acquire); });
  return rung_.exchange(false, std::memory_order_acq_rel);
}

bool DrainBell::Clear() noexcept {
  return rung_.exchange(false, std::memory_order_acq_rel);
}

namespace {

DrainBell* g_bell = nullptr;

// A thread that held the bell's mutex at fork() does not exist in the child:
// the child starts with a bell of its own (its own sessions' helper waits on
// it).
void ResetBellInForkedChild() { g_bell = new (g_bell) DrainBell(); }

}  // namespace

DrainBell& TheDrainBell() noexcept {
  // Leaked: outlives exit(), when threads may still record.
  static DrainBell* const bell = [] {
    g_bell = new DrainBell();
    pthread_atfork(nullptr, nullptr, ResetBellInForkedChild);
    return g_bell;
  }();
  return *bell;
}

}  // namespace spanprof::internal
