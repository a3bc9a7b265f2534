// The session's helper thread and its signal handlers (private to the
// runtime component).
//
// While a session runs, one helper thread drains the rings into the stream
// file every kDrainInterval (stream_writer.h), and at once when a ring had to
// take new memory (recorder/drain_bell.h), and acts on the signals that
// the handlers only note: a termination signal (SIGINT, SIGTERM, SIGHUP)
// ends the session normally on this thread, then the signal's default action
// runs; a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) or
// std::terminate makes it drain once more and write the stream's end, while
// the crashing thread waits (bounded), names the stream on stderr and lets
// the signal kill the program as before.
//
// Example:
//
//   SessionWatcher watcher(std::move(writer), epoch, /*signals=*/true,
//                          [](int sig) { FinishFromSignal(sig); });
//   watcher.Start();
//   ...
//   watcher.Stop(/*remove_stream=*/true);
#ifndef SPANPROF_RUNTIME_SESSION_SESSION_WATCH_H_
#define SPANPROF_RUNTIME_SESSION_SESSION_WATCH_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "stream/stream_writer.h"

namespace spanprof::internal {

// How often the helper thread drains the rings: what a SIGKILL can lose at
// most (plus what the kernel had not yet taken of the last write, nothing on
// a live machine: the page cache outlives the process).
inline constexpr std::chrono::milliseconds kDrainInterval{10};

class SessionWatcher {
 public:
  // `writer` may be null (streaming off): the thread then only watches
  // signals. With `signals`, the handlers are installed for every handled
  // signal whose action is still the default one (a program's own handler
  // stays). `on_signal` runs on the helper thread for a termination signal.
  SessionWatcher(std::unique_ptr<StreamWriter> writer, uint32_t epoch,
                 bool signals, std::function<void(int)> on_signal);
  ~SessionWatcher();
  SessionWatcher(const SessionWatcher&) = delete;
  SessionWatcher& operator=(const SessionWatcher&) = delete;

  void Start();
  // Restores the signal actions, stops the thread (joins it, or lets it go
  // when called on it), and closes the stream: removed when `remove_stream`,
  // else drained once more and ended with `end_reason` (a kept stream then
  // recovers to the same capture as the outputs). Idempotent.
  void Stop(bool remove_stream, const std::string& end_reason = "lost");
  // Stops like Stop() but hands the stream over, open, to the session's end,
  // which drains it once more and reads the capture back from it. Null when
  // streaming is off or the watcher was stopped already.
  std::unique_ptr<StreamWriter> StopAndTakeWriter();

  // The stream's path, "" when streaming is off.
  std::string stream_path() const;

 private:
  // Restores the signal actions and stops the thread (when the backlog is
  // abandoned, a drain in progress stops at its next chunk). False when
  // stopped already.
  bool StopThread(bool abandon_backlog);
  bool Stopping();
  void Loop();
  void HandleCrash();

  std::unique_ptr<StreamWriter> writer_;
  uint32_t epoch_;
  bool signals_;
  std::function<void(int)> on_signal_;
  std::mutex mu_;  // guards stop_ and stopped_
  bool stop_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

// A termination signal that arrived while the session was being ended by
// another thread: `DeferSignal()` notes it, and the thread that finishes the
// session calls `RaiseDeferredSignal()` when its outputs are written.
void DeferSignal(int sig);
void RaiseDeferredSignal();
// In a forked child: no helper thread runs there, so the handlers go.
void ResetSignalsInForkedChild();
// Restores `sig`'s default action and raises it (the process ends with it).
[[noreturn]] void RaiseWithDefaultAction(int sig);
// The name of a handled signal ("SIGTERM").
const char* SignalName(int sig);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SESSION_SESSION_WATCH_H_
