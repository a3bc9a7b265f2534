// The session's helper thread and signal handlers (session_watch.h).
//
// The handlers only do what is async-signal-safe: atomics, sigaction, raise,
// nanosleep and write. Everything else (draining, ending the session) runs on
// the helper thread.
#include "session_watch.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <iterator>
#include <string>
#include <thread>
#include <utility>

#include "recorder/drain_bell.h"

namespace spanprof::internal {
namespace {

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
// How long a crashing thread waits for the helper's last drain.
constexpr int kCrashWaitMs = 2000;

// The state the handlers share with the helper thread. Constant-initialised:
// a handler never runs a constructor.
struct SignalState {
  std::atomic<int> pending{0};   // the termination signal noted, 0: none
  std::atomic<int> deferred{0};  // one to raise after a session end
  std::atomic<int> crash{0};     // 0 none, 1 drain requested, 2 drained
  std::atomic<const char*> crash_reason{nullptr};
  std::atomic<bool> watching{false};  // a helper thread is running
  pthread_t helper{};                 // set before `watching`
  struct sigaction saved[NSIG] = {};
  bool installed[NSIG] = {};
  std::terminate_handler saved_terminate = nullptr;
  bool terminate_installed = false;
  // The rest of the crash line after the reason, rendered at session start.
  char message[4200] = {};
  size_t message_size = 0;
  // The rest of the line a second termination signal writes after its name
  // (the session was ending on the first one), rendered at session start.
  char again[4200] = {};
  size_t again_size = 0;
};
SignalState g_signals;

const char* CrashReason(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "crash:SIGSEGV";
    case SIGBUS:
      return "crash:SIGBUS";
    case SIGILL:
      return "crash:SIGILL";
    case SIGFPE:
      return "crash:SIGFPE";
    case SIGABRT:
      return "crash:SIGABRT";
    default:
      return "crash:signal";
  }
}

void WriteStderr(const char* text, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, size);
    if (n <= 0) return;
    text += n;
    size -= static_cast<size_t>(n);
  }
}

void SleepOneMs() {
  timespec ts{0, 1'000'000};
  nanosleep(&ts, nullptr);
}

// The first crash asks the helper for a last drain and waits for it (not on
// the helper itself, which would wait for itself), then names the stream.
void CrashOnce(const char* reason) {
  int expected = 0;
  if (!g_signals.crash.compare_exchange_strong(expected, 1)) return;
  g_signals.crash_reason.store(reason);
  if (g_signals.watching.load() &&
      pthread_equal(pthread_self(), g_signals.helper) == 0) {
    for (int i = 0; i < kCrashWaitMs && g_signals.crash.load() != 2; ++i) {
      SleepOneMs();
    }
  }
  WriteStderr("spanprof: ", 10);
  WriteStderr(reason, std::strlen(reason));
  WriteStderr(g_signals.message, g_signals.message_size);
}

void RestoreSaved(int sig) {
  if (g_signals.installed[sig]) {
    sigaction(sig, &g_signals.saved[sig], nullptr);
  } else {
    signal(sig, SIG_DFL);
  }
}

void OnFatalSignal(int sig, siginfo_t*, void*) {
  CrashOnce(CrashReason(sig));
  // The action the program had (the default) takes over: a fault returns to
  // the faulting instruction and faults again; a sent signal is raised again
  // and delivered when this handler returns.
  RestoreSaved(sig);
  raise(sig);
}

void OnTerminationSignal(int sig, siginfo_t*, void*) {
  int expected = 0;
  if (g_signals.watching.load() &&
      g_signals.pending.compare_exchange_strong(expected, sig)) {
    return;  // the helper thread ends the session, then raises it
  }
  // A second signal (the user insists while the first one's session end
  // writes the outputs), or nobody to act on it: the default action now.
  // After a first one, a line says what that leaves and where.
  if (g_signals.pending.load() != 0) {
    const char* name = SignalName(sig);  // a switch: safe here
    WriteStderr("spanprof: ", 10);
    WriteStderr(name, std::strlen(name));
    WriteStderr(g_signals.again, g_signals.again_size);
  }
  RestoreSaved(sig);
  raise(sig);
}

void OnTerminate() {
  CrashOnce("crash:terminate");
  const std::terminate_handler previous = g_signals.saved_terminate;
  if (previous != nullptr) previous();
  std::abort();
}

bool IsOurs(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) != 0 &&
         (action.sa_sigaction == OnFatalSignal ||
          action.sa_sigaction == OnTerminationSignal);
}

// Installs `handler` for `sig` when the program left the default action.
void Install(int sig, void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction current {};
  if (sigaction(sig, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) {
    return;  // the program's own handler (or SIG_IGN) stays
  }
  struct sigaction ours {};
  ours.sa_sigaction = handler;
  // SA_ONSTACK: on the alternate stack the recorder gives each recording
  // thread, so that a stack overflow's SIGSEGV still gets its last drain.
  ours.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  if (sigaction(sig, &ours, &g_signals.saved[sig]) == 0) {
    g_signals.installed[sig] = true;
  }
}

void InstallAll() {
  for (const int sig : kTerminationSignals) Install(sig, OnTerminationSignal);
  for (const int sig : kFatalSignals) Install(sig, OnFatalSignal);
  const std::terminate_handler previous = std::get_terminate();
  if (previous != OnTerminate) {
    g_signals.saved_terminate = previous;
    std::set_terminate(OnTerminate);
    g_signals.terminate_installed = true;
  }
}

// `keep_termination`: the termination signals' handler stays (a session
// ending on one of them: a second one then says what it leaves).
void RestoreAll(bool keep_termination = false) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (!g_signals.installed[sig]) continue;
    if (keep_termination && std::find(std::begin(kTerminationSignals),
                                      std::end(kTerminationSignals),
                                      sig) != std::end(kTerminationSignals)) {
      continue;
    }
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && IsOurs(current)) {
      sigaction(sig, &g_signals.saved[sig], nullptr);
    }
    g_signals.installed[sig] = false;
  }
  if (g_signals.terminate_installed) {
    if (std::get_terminate() == OnTerminate) {
      std::set_terminate(g_signals.saved_terminate);
    }
    g_signals.terminate_installed = false;
  }
}

// Copies `text` into a line buffer that a handler writes as it is (cut to
// fit).
template <size_t N>
void Keep(const std::string& text, char (&buffer)[N], size_t* size) {
  *size = std::min(text.size(), N - 1);
  std::memcpy(buffer, text.data(), *size);
}

// The lines the handlers write, which name the stream: rendered at session
// start (a handler allocates nothing).
void RenderMessage(const std::string& stream_path) {
  const std::string recover =
      "\nspanprof: recover them with: spanprof recover " + stream_path + "\n";
  Keep(stream_path.empty()
           ? ": the session's spans are lost (streaming is off: "
             "SPANPROF_STREAM)\n"
           : "; the spans drained until then (all but the last few ms) are "
             "in " +
                 stream_path + recover,
       g_signals.message, &g_signals.message_size);
  const std::string again =
      " again while the session was ending: its outputs are not written";
  Keep(stream_path.empty() ? again + " (streaming is off: SPANPROF_STREAM)\n"
                           : again + "; the stream " + stream_path +
                                 " holds the spans" + recover,
       g_signals.again, &g_signals.again_size);
}

}  // namespace

const char* SignalName(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return CrashReason(sig) + 6;
  }
}

void RaiseWithDefaultAction(int sig) {
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  // A signal whose default action does not end the process: end it as the
  // shell would report it.
  _exit(128 + sig);
}

void RaiseDeferredSignal() {
  if (const int sig = g_signals.deferred.exchange(0); sig != 0) {
    RaiseWithDefaultAction(sig);
  }
}

SessionWatcher::SessionWatcher(std::unique_ptr<StreamWriter> writer,
                               uint32_t epoch, bool signals,
                               std::function<void(int)> on_signal)
    : writer_(std::move(writer)),
      epoch_(epoch),
      signals_(signals),
      on_signal_(std::move(on_signal)) {}

SessionWatcher::~SessionWatcher() { Stop(/*remove_stream=*/false); }

std::string SessionWatcher::stream_path() const {
  return writer_ != nullptr ? writer_->path() : std::string();
}

void SessionWatcher::Start() {
  g_signals.pending.store(0);
  g_signals.deferred.store(0);
  g_signals.crash.store(0);
  RenderMessage(stream_path());
  thread_ = std::thread([this] { Loop(); });
  g_signals.helper = thread_.native_handle();
  g_signals.watching.store(true);
  if (signals_) InstallAll();
}

bool SessionWatcher::StopThread(bool abandon_backlog) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return false;
    stopped_ = stop_ = true;
  }
  if (abandon_backlog && writer_ != nullptr) writer_->Abandon();
  TheDrainBell().Ring();  // the loop waits on the bell
  // Stopped on the helper thread itself: a termination signal ends the
  // session (FinishFromSignal), and the process ends with it. Its handler
  // stays meanwhile, so that a second signal says what it leaves.
  const bool on_helper =
      thread_.joinable() && thread_.get_id() == std::this_thread::get_id();
  if (signals_) RestoreAll(/*keep_termination=*/on_helper);
  g_signals.watching.store(false);
  if (thread_.joinable()) {
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
  return true;
}

void SessionWatcher::Stop(bool remove_stream, const std::string& end_reason) {
  if (!StopThread(remove_stream)) return;
  if (writer_ != nullptr) {
    if (!remove_stream) {
      writer_->Drain(epoch_, /*last=*/true);
      writer_->WriteEnd(end_reason);
    }
    writer_->Close(remove_stream);
  }
}

std::unique_ptr<StreamWriter> SessionWatcher::StopAndTakeWriter() {
  if (!StopThread(/*abandon_backlog=*/false)) return nullptr;
  return std::move(writer_);
}

void SessionWatcher::HandleCrash() {
  if (writer_ != nullptr) {
    writer_->Drain(epoch_, /*last=*/true);
    writer_->WriteEnd(g_signals.crash_reason.load());
  }
  g_signals.crash.store(2);
}

void SessionWatcher::Loop() {
  // Named for debuggers and top; it records no spans itself.
  pthread_setname_np(pthread_self(), "spanprof-drain");
  bool signal_handled = false;
  DrainBell& bell = TheDrainBell();
  while (!Stopping()) {
    // Behind the rings: drain again at once (the rings reuse only what was
    // drained; otherwise they grow). Otherwise wait for the timer, or for a
    // ring that had to take new memory to ring the bell.
    if (writer_ == nullptr || !writer_->BehindAfterLastDrain()) {
      bell.Wait(kDrainInterval);
    }
    if (Stopping()) break;
    if (g_signals.crash.load() == 1) {
      HandleCrash();
    } else if (writer_ != nullptr) {
      writer_->Drain(epoch_);
    }
    const int sig = g_signals.pending.load();
    if (sig != 0 && !signal_handled) {
      signal_handled = true;
      on_signal_(sig);
    }
  }
}

bool SessionWatcher::Stopping() {
  const std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

void DeferSignal(int sig) { g_signals.deferred.store(sig); }

void ResetSignalsInForkedChild() {
  g_signals.watching.store(false);
  RestoreAll();
}

}  // namespace spanprof::internal
