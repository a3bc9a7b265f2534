// The drain bell: how a streaming ring that runs out of drained memory wakes
// the session's helper thread before its timer does (private to the runtime).
//
// A streaming ring reuses the chunks and side records that the stream holds;
// it takes new memory only when the drain is behind it. Between two timed
// drains (every 10 ms) a burst of spans would grow the ring by the whole
// burst: 131,072 spans with three arguments took 22 MiB before the first
// drain. So the recorder rings the bell wherever it takes new memory for a
// streaming ring (a chunk or a side segment, on the slow path, never per
// span), and the helper thread, which waits on the bell with its timer as
// the timeout, drains at once.
//
// Example:
//
//   DrainBell& bell = TheDrainBell();
//   bell.Ring();                                     // a recording thread
//   bool early = bell.Wait(std::chrono::milliseconds(10));  // the helper
#ifndef SPANPROF_RUNTIME_SRC_RECORDER_DRAIN_BELL_H_
#define SPANPROF_RUNTIME_SRC_RECORDER_DRAIN_BELL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace spanprof::internal {

class DrainBell {
 public:
  DrainBell() = default;
  DrainBell(const DrainBell&) = delete;
  DrainBell& operator=(const DrainBell&) = delete;

  // Wakes the waiter, or the next Wait when none waits. Any thread, no lock;
  // rings made before the waiter takes them count once, so a burst costs one
  // wake.
  void Ring() noexcept;
  // Waits until the bell rings or `timeout` passes; true when it rang (and
  // then clears it).
  bool Wait(std::chrono::milliseconds timeout);
  // Clears the bell; true when it had rung since it was last cleared or
  // waited on.
  bool Clear() noexcept;

 private:
  std::atomic<bool> rung_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

// The process's bell. Never destroyed, so a thread that records while the
// process exits can still ring it.
DrainBell& TheDrainBell() noexcept;

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_RECORDER_DRAIN_BELL_H_
