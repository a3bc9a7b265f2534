// The session glue: Profile() joins the recorder (runtime) and the analysis
// library (summary, trace, table) and writes the outputs.
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/session.h"

// Private to the runtime component (runtime/src is a private include dir).
#include "output_paths.h"
#include "path_template.h"
#include "recorder/recorder_internal.h"
#include "session_internal.h"

namespace spanprof::internal {
namespace {

int64_t TimevalNs(const timeval& tv) {
  return static_cast<int64_t>(tv.tv_sec) * 1'000'000'000 +
         static_cast<int64_t>(tv.tv_usec) * 1000;
}

// The one running session of this process (Profile or RunScheduled).
struct RunningSession {
  Config config;
  uint32_t root_epoch = 0;  // the root span's, on `thread`
  pid_t pid = 0;
  pthread_t thread{};
  rusage start_usage{};
  int64_t overhead_ns = 0;
};

std::mutex& RunningMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
RunningSession*& Running() {
  static RunningSession* running = nullptr;
  return running;
}

ProcessResources ResourcesSince(const rusage& start) {
  rusage now{};
  getrusage(RUSAGE_SELF, &now);
  ProcessResources r;
  r.user_cpu_ns = TimevalNs(now.ru_utime) - TimevalNs(start.ru_utime);
  r.system_cpu_ns = TimevalNs(now.ru_stime) - TimevalNs(start.ru_stime);
  r.peak_rss_kib = now.ru_maxrss;
  r.minor_page_faults = now.ru_minflt - start.ru_minflt;
  r.major_page_faults = now.ru_majflt - start.ru_majflt;
  r.voluntary_context_switches = now.ru_nvcsw - start.ru_nvcsw;
  r.involuntary_context_switches = now.ru_nivcsw - start.ru_nivcsw;
  return r;
}

// Writes the trace and the summary; an empty path (`off`) writes nothing.
// Both are attempted; the error names every output that failed, and the
// path of a failed output is cleared, so that the table names only files
// that were written.
absl::Status WriteOutputs(const Capture& capture,
                          const analysis::Summary& summary,
                          std::string& trace_path, std::string& summary_path) {
  std::string errors;
  const auto note = [&errors](const absl::Status& s, std::string& path) {
    if (s.ok()) return;
    if (!errors.empty()) errors += "; ";
    errors += std::string(s.message());
    path.clear();
  };
  if (!trace_path.empty()) {
    note(analysis::WriteTrace(capture, trace_path), trace_path);
  }
  if (!summary_path.empty()) {
    note(analysis::WriteSummary(summary, summary_path), summary_path);
  }
  if (errors.empty()) return absl::OkStatus();
  return absl::UnavailableError("spanprof: could not write outputs: " + errors);
}

// Collects, analyses and writes one session, and prints the table unless
// quiet. Returns the output errors; the caller reports them (once).
absl::Status Finish(const RunningSession& running, bool finished_normally) {
  Capture capture = StopRecording();
  capture.finished_normally = finished_normally;
  capture.process_resources = ResourcesSince(running.start_usage);
  capture.overhead_ns_per_span = running.overhead_ns;
  const analysis::Summary summary = analysis::Summarize(capture);
  // The paths' fields (%p %h %n %t) from the capture itself: its pid, host,
  // process name and session start.
  const PathFields fields{.pid = capture.pid,
                          .host = capture.host,
                          .process_name = capture.process_name,
                          .start_wall_ns = capture.wall_clock_anchor_ns};
  const auto expand = [&fields](const std::string& path) {
    return path == kOutputOff ? std::string()
                              : ExpandPathTemplate(path, fields);
  };
  std::string trace_path = expand(running.config.trace_path);
  std::string summary_path = expand(running.config.summary_path);
  absl::Status written =
      WriteOutputs(capture, summary, trace_path, summary_path);
  if (!running.config.quiet) {
    const std::string table = analysis::FormatTable(
        summary, {.trace_path = trace_path, .summary_path = summary_path});
    std::fwrite(table.data(), 1, table.size(), stdout);
    std::fflush(stdout);
  }
  return written;
}

// Reports an output error that no exception carries (the body's exception
// won, or the process is exiting) on stderr.
void PrintOutputError(const absl::Status& status) {
  if (status.ok()) return;
  const std::string message(status.message());
  std::fprintf(stderr, "%s\n", message.c_str());
}

// exit() inside a session: finish it with complete: false.
void FinishAtExit() {
  std::unique_ptr<RunningSession> running;
  {
    std::lock_guard<std::mutex> lock(RunningMutex());
    if (Running() == nullptr || Running()->pid != getpid()) return;
    running.reset(Running());
    Running() = nullptr;
  }
  PrintOutputError(Finish(*running, /*finished_normally=*/false));
}

// fork(): the locks a child may need are taken around the fork, so none is
// inherited locked by a thread that does not exist in the child.
void PrepareFork() {
  RunningMutex().lock();
  LockForFork();
}

void ParentAfterFork() {
  UnlockAfterFork();
  RunningMutex().unlock();
}

// A forked child records nothing into the parent's capture and writes no
// files for it: recording stops in the child at once, spans it had open end
// as no-ops, and the parent's session is not the child's to finish (its
// RunSession frame and FinishAtExit check the pid). The child may start a
// session of its own.
void ChildAfterFork() {
  ResetInForkedChild();
  // The child's copy of the parent's session: Running() owns it (OpenSession
  // hands it over), and nothing in the child finishes it.
  delete Running();
  Running() = nullptr;
  RunningMutex().unlock();
}

void InstallProcessHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit(FinishAtExit);
    pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
  });
}

}  // namespace

[[noreturn]] void ThrowConfigError(const absl::Status& status) {
  throw Error("spanprof: " + std::string(status.message()));
}

absl::Status OpenSession(const Config& config, const char* root) {
  // A bad path template fails here, before the body runs, like a bad
  // environment value (ConfigFromEnvironment checks its own variables).
  for (const auto& [field, path] : {std::pair<const char*, const std::string*>{
                                        "trace_path", &config.trace_path},
                                    {"summary_path", &config.summary_path}}) {
    if (const absl::Status s = CheckPathTemplate(*path); !s.ok()) {
      return absl::InvalidArgumentError("Config::" + std::string(field) + " '" +
                                        *path +
                                        "': " + std::string(s.message()));
    }
  }
  // So is an output that cannot be written (output_paths.h).
  if (absl::Status s = CheckOutputPaths(config); !s.ok()) return s;
  InstallProcessHooks();
  auto running = std::make_unique<RunningSession>();
  running->config = config;
  running->pid = getpid();
  running->thread = pthread_self();
  {
    std::lock_guard<std::mutex> lock(RunningMutex());
    if (Running() != nullptr) {
      return absl::AlreadyExistsError(
          "a session is already active in this process; sessions cannot "
          "nest or overlap");
    }
    if (absl::Status started = StartRecording(config.recording);
        !started.ok()) {
      // Recording started without a session (StartRecording) is a conflict
      // too; anything else is the configuration's fault.
      if (IsRecording()) return absl::AlreadyExistsError(started.message());
      return started;
    }
    Running() = running.get();
  }
  running->overhead_ns =
      static_cast<int64_t>(std::llround(MeasureSpanOverheadNs()));
  if (!config.quiet) {
    const uint64_t bytes = PredictedMemoryBytes(config.recording.max_events,
                                                config.recording.overflow);
    std::fprintf(stderr,
                 "spanprof: recording up to %llu spans (%s), worst-case ring "
                 "memory %.1f MiB, committed as spans arrive (a helper "
                 "thread keeps up to 2 MiB faulted in ahead)\n",
                 static_cast<unsigned long long>(config.recording.max_events),
                 OverflowPolicyName(config.recording.overflow),
                 static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  getrusage(RUSAGE_SELF, &running->start_usage);
  SiteStatic* root_site = InternRootSite(root != nullptr ? root : "");
  running->root_epoch = BeginSpan(*root_site);
  // Owned by Running() from here on: CloseSession or FinishAtExit frees it.
  static_cast<void>(running.release());
  return absl::OkStatus();
}

absl::Status CloseSession(bool body_threw) {
  std::unique_ptr<RunningSession> running;
  {
    std::lock_guard<std::mutex> lock(RunningMutex());
    RunningSession* current = Running();
    if (current == nullptr || current->pid != getpid()) {
      return absl::FailedPreconditionError("no session is active");
    }
    if (pthread_equal(current->thread, pthread_self()) == 0) {
      return absl::FailedPreconditionError(
          "the session must be stopped on the thread that started it (its "
          "root span is open there)");
    }
    running.reset(current);
    Running() = nullptr;
  }
  if (running->root_epoch != 0) {
    if (body_threw) {
      EndSlow(tls_state, running->root_epoch, /*exception=*/true);
    } else {
      EndSpan(running->root_epoch);
    }
  }
  return Finish(*running, /*finished_normally=*/true);
}

void RunSession(const Config& config, const char* root,
                const std::function<void()>& body) {
  if (!config.enabled) {
    body();
    return;
  }
  if (const absl::Status opened = OpenSession(config, root); !opened.ok()) {
    throw Error("spanprof: " + std::string(opened.message()));
  }
  const pid_t pid = getpid();
  std::exception_ptr error;
  try {
    body();
  } catch (...) {
    error = std::current_exception();
  }
  if (getpid() != pid) {
    // A forked child finishing the body: nothing to collect or write.
    if (error) std::rethrow_exception(error);
    return;
  }
  const absl::Status written = CloseSession(error != nullptr);
  // One report per failure: the exception that leaves this function carries
  // the output error; only when the body's exception wins is it printed.
  if (error) {
    PrintOutputError(written);
    std::rethrow_exception(error);
  }
  if (!written.ok()) throw OutputError(std::string(written.message()));
}

}  // namespace spanprof::internal
