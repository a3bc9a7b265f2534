// The session glue: Profile() joins the recorder (runtime) and the analysis
// library (summary, trace, table) and writes the outputs.
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/internal/compact_spans.h"
#include "spanprof/internal/end_reason.h"
#include "spanprof/session.h"

// Private to the runtime component (runtime/src is a private include dir).
#include "collector/assemble.h"
#include "output_paths.h"
#include "path_template.h"
#include "recorder/recorder_internal.h"
#include "report.h"
#include "session_internal.h"
#include "session_watch.h"
#include "stream/stream_end.h"
#include "stream/stream_writer.h"

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
  // The helper thread (stream drain, signals); null when neither is on.
  std::unique_ptr<SessionWatcher> watcher;
};

std::mutex& RunningMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
RunningSession*& Running() {
  static RunningSession* running = nullptr;
  return running;
}
// Held by the thread that ends the session (collects and writes) for as long
// as that takes: an exit() or a session end elsewhere waits for it, so that
// the process never ends, nor the caller return, half-way through writing.
std::mutex& FinishMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
// Set when a session was ended by another thread than the one that opened
// it (exit() elsewhere, a termination signal): its CloseSession returns
// quietly.
bool& EndedElsewhere() {
  static bool ended = false;
  return ended;
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

// The step `Finish()` is at, for the line that says where memory ran out.
struct FinishStep {
  const char* what = "collecting the capture";
  const char* path = "";
};

// Summarize(capture) on a thread of its own while the caller writes the
// trace: both only read the capture, so on a machine with two cores the
// session end takes the longer of the two instead of their sum. When no
// thread can be started, the summary is made in Take(), on the caller's.
// An exception (std::bad_alloc) leaves Take() as it would have left
// Summarize().
class BackgroundSummary {
 public:
  BackgroundSummary(const Capture& capture, bool start_thread)
      : capture_(capture) {
    if (!start_thread) return;
    try {
      thread_ = std::thread([this] { Run(); });
    } catch (const std::system_error&) {
      // No thread: Take() summarizes.
    }
  }
  BackgroundSummary(const BackgroundSummary&) = delete;
  BackgroundSummary& operator=(const BackgroundSummary&) = delete;
  ~BackgroundSummary() {
    if (thread_.joinable()) thread_.join();
  }

  analysis::Summary Take() {
    if (thread_.joinable()) {
      thread_.join();
    } else {
      Run();
    }
    if (error_ != nullptr) std::rethrow_exception(error_);
    return std::move(summary_);
  }

 private:
  void Run() {
    try {
      summary_ = analysis::Summarize(capture_);
    } catch (...) {
      error_ = std::current_exception();
    }
  }

  const Capture& capture_;
  analysis::Summary summary_;
  std::exception_ptr error_;
  std::thread thread_;
};

// Writes the trace while the summary is made (BackgroundSummary), then the
// summary; an empty path (`off`) writes nothing. Both are attempted; the
// error names every output that failed, and the path of a failed output is
// cleared, so that the table names only files that were written.
absl::Status WriteOutputs(const Capture& capture, BackgroundSummary& background,
                          analysis::Summary& summary, std::string& trace_path,
                          std::string& summary_path, FinishStep& step) {
  std::string errors;
  const auto note = [&errors](const absl::Status& s, std::string& path) {
    if (s.ok()) return;
    if (!errors.empty()) errors += "; ";
    errors += std::string(s.message());
    path.clear();
  };
  if (!trace_path.empty()) {
    step = {"writing the trace", trace_path.c_str()};
    note(analysis::WriteTrace(capture, trace_path), trace_path);
  }
  step = {"summarizing the capture", ""};
  summary = background.Take();
  if (!summary_path.empty()) {
    step = {"writing the summary", summary_path.c_str()};
    note(analysis::WriteSummary(summary, summary_path), summary_path);
  }
  if (errors.empty()) return absl::OkStatus();
  return absl::UnavailableError("spanprof: could not write outputs: " + errors);
}

// The large trace that a session end's new one replaces, held open from
// before the new one is renamed over it until a thread of its own closes
// it: the rename then only unlinks it, and the kernel frees its pages at
// that close instead of inside rename() (26 ms for a 124 MB trace, on the
// thread that writes the outputs). Only a regular file at the path itself
// (lstat: no link, device or FIFO is opened).
class ReplacedTrace {
 public:
  explicit ReplacedTrace(const std::string& path) {
    constexpr off_t kLarge = off_t{16} << 20;
    struct stat info {};
    if (path.empty() || ::lstat(path.c_str(), &info) != 0 ||
        !S_ISREG(info.st_mode) || info.st_size < kLarge) {
      return;
    }
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  }
  ReplacedTrace(const ReplacedTrace&) = delete;
  ReplacedTrace& operator=(const ReplacedTrace&) = delete;
  ~ReplacedTrace() {
    if (fd_ >= 0) CloseOnItsOwnThread(fd_);
  }

 private:
  int fd_ = -1;
};

// Frees a large capture on a thread of its own: giving back the memory of
// millions of spans took 30 ms of a 5 M-span session end (5%), which the
// program need not wait for (the removed stream's descriptor is closed the
// same way). A small capture, or one when no thread can be started, is
// freed here.
void FreeCapture(Capture capture) {
  constexpr size_t kLarge = size_t{1} << 20;
  const size_t spans = capture.compact_spans != nullptr
                           ? capture.compact_spans->size()
                           : capture.spans.size();
  if (spans < kLarge) return;
  try {
    std::thread([freed = std::move(capture)] {}).detach();
  } catch (const std::system_error&) {
    // Freed here, as the lambda that held it is destroyed.
  }
}

// A session the program ended early (exit(), a return from main,
// FinishSession()) ended normally: the spans still open then end then, as
// the program's own end, not as a loss (unfinished).
uint16_t OpenAtExit(uint16_t flags) {
  return static_cast<uint16_t>((flags & ~kSpanUnfinished) | kSpanOpenAtExit);
}
void MarkOpenAtExit(Capture& capture) {
  for (Span& span : capture.spans) {
    if ((span.flags & kSpanUnfinished) != 0)
      span.flags = OpenAtExit(span.flags);
  }
  if (capture.compact_spans == nullptr) return;
  // The capture is this session end's own (nothing else holds its spans).
  internal::CompactSpans& compact =
      *std::const_pointer_cast<internal::CompactSpans>(capture.compact_spans);
  for (size_t i = 0; i < compact.size(); ++i) {
    const uint16_t flags = compact.flags(i);
    if ((flags & kSpanUnfinished) != 0) compact.set_flags(i, OpenAtExit(flags));
  }
}

// Collects, analyses and writes one session, and prints the table where
// `Config::report` says (report.h). Returns the output errors; the caller
// reports them (once).
absl::Status CollectAndWrite(const RunningSession& running,
                             const std::string& end_reason, bool ended_early,
                             StreamWriter* stream, FinishStep& step) {
  // The capture only feeds the outputs below: its arguments are packed.
  Capture capture =
      stream != nullptr
          ? StopRecordingThroughStream(*stream, end_reason, /*pack_args=*/true)
          : StopAndCollect(/*pack_args=*/true);
  if (ended_early) MarkOpenAtExit(capture);
  capture.finished_normally = end_reason == kEndFinished || ended_early;
  capture.end_reason = end_reason;
  capture.process_resources = ResourcesSince(running.start_usage);
  capture.overhead_ns_per_span = running.overhead_ns;
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
  const ReplacedTrace replaced(trace_path);
  BackgroundSummary background(capture,
                               /*start_thread=*/!trace_path.empty());
  analysis::Summary summary;
  absl::Status written = WriteOutputs(capture, background, summary, trace_path,
                                      summary_path, step);
  if (!ReportIsOff(running.config)) {
    step = {"printing the table", ""};
    const std::string table =
        analysis::FormatTable(summary, {.trace_path = trace_path,
                                        .summary_path = summary_path,
                                        .capture = &capture});
    const absl::Status reported = WriteReport(running.config, table, fields);
    if (!reported.ok() && written.ok()) written = reported;
    PrintLargeTraceHint(trace_path);
  }
  if (stream != nullptr) {
    // The outputs hold everything the stream had; when one could not be
    // written, the stream stays for `spanprof recover`.
    const bool keep = running.config.keep_stream || !written.ok();
    stream->Close(/*remove=*/!keep);
    if (!running.config.keep_stream && keep) {
      std::fprintf(stderr,
                   "spanprof: the stream %s is kept: spanprof recover %s\n",
                   stream->path().c_str(), stream->path().c_str());
    }
  }
  FreeCapture(std::move(capture));
  return written;
}

// `CollectAndWrite()`, where running out of memory is one line on stderr
// instead of an exception: session end is the profiler's business, so the
// program's own result or exception leaves `Profile()` as it would have.
// Every output is written atomically, so a file written before memory ran
// out is complete and one being written is not there at all. The line is
// built without allocating.
// The stream is removed first (unless kept): the outputs hold everything
// it had.
// `ended_early`: the program ended the session (exit(), FinishSession())
// while spans were open (MarkOpenAtExit).
absl::Status Finish(RunningSession& running, const std::string& end_reason,
                    bool ended_early = false) {
  const std::lock_guard<std::mutex> finishing(FinishMutex());
  // A streaming session reads its capture back from the stream, which its
  // rings no longer hold whole.
  std::unique_ptr<StreamWriter> stream;
  // A flight recorder ends from its rings. Ending on a signal, it keeps its
  // stream until the outputs are written: a second signal, which stops the
  // program at once, then leaves the stream for `spanprof recover`.
  std::string flight_stream;
  if (running.watcher != nullptr &&
      running.config.recording.overflow == OverflowPolicy::kRing) {
    const bool from_signal = end_reason.rfind(kEndSignalPrefix, 0) == 0;
    const bool remove = !running.config.keep_stream && !from_signal;
    running.watcher->Stop(/*remove_stream=*/remove, end_reason);
    if (!running.config.keep_stream && from_signal) {
      flight_stream = running.watcher->stream_path();
    }
  } else if (running.watcher != nullptr) {
    stream = running.watcher->StopAndTakeWriter();
  }
  FinishStep step;
  absl::Status written;
  try {
    written =
        CollectAndWrite(running, end_reason, ended_early, stream.get(), step);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "spanprof: out of memory at session end while %s%s%s "
                 "(std::bad_alloc); outputs written before are complete, "
                 "the rest were not written\n",
                 step.what, step.path[0] != '\0' ? " " : "", step.path);
    return absl::OkStatus();
  }
  if (!flight_stream.empty() && written.ok())
    RemoveStreamFiles(flight_stream, /*rotated=*/true);
  return written;
}

// Reports an output error that no exception carries (the body's exception
// won, or the process is exiting) on stderr.
void PrintOutputError(const absl::Status& status) {
  if (status.ok()) return;
  const std::string message(status.message());
  std::fprintf(stderr, "%s\n", message.c_str());
}

// A helper that must never be destroyed: the thread it runs on is the
// caller (a signal's session end), or does not exist (a forked child, where
// its std::thread would end the process if destroyed). Kept reachable, so
// that leak checkers see it held, not lost.
void KeepForever(std::unique_ptr<SessionWatcher> watcher) {
  static std::vector<std::unique_ptr<SessionWatcher>>* kept =
      new std::vector<std::unique_ptr<SessionWatcher>>();
  if (watcher != nullptr) kept->push_back(std::move(watcher));
}

// Takes the running session of this process for a thread that did not open
// it; nullptr when there is none (never started, or another thread is
// ending it).
std::unique_ptr<RunningSession> TakeRunningElsewhere() {
  std::lock_guard<std::mutex> lock(RunningMutex());
  if (Running() == nullptr || Running()->pid != getpid()) return nullptr;
  std::unique_ptr<RunningSession> running(Running());
  Running() = nullptr;
  EndedElsewhere() = true;
  return running;
}

// Ends the running session now, from any thread (exit(), FinishSession()):
// a normal end whose open spans are flagged open_at_exit. When another
// thread is ending the session right now, waits until its outputs are
// written: the process must not end under it. Output errors go to stderr
// (there is no caller to throw to).
void FinishEarly(std::string_view end_reason) {
  std::unique_ptr<RunningSession> running = TakeRunningElsewhere();
  if (running == nullptr) {
    const std::lock_guard<std::mutex> wait(FinishMutex());
    return;
  }
  PrintOutputError(
      Finish(*running, std::string(end_reason), /*ended_early=*/true));
  RaiseDeferredSignal();
}

// exit() (or a return from main) inside a session: a normal end.
void FinishAtExit() { FinishEarly(kEndExit); }

// SIGINT, SIGTERM or SIGHUP (on the helper thread): end the session
// normally, then let the signal's default action end the process, so that
// its exit status is what the shell expects. When another thread is ending
// the session already, that thread raises the signal when it is done.
void FinishFromSignal(int sig) {
  std::unique_ptr<RunningSession> running = TakeRunningElsewhere();
  if (running == nullptr) {
    DeferSignal(sig);
    return;
  }
  if (!ReportIsOff(running->config)) {
    std::fprintf(stderr,
                 "spanprof: %s: ending the session and writing its outputs; "
                 "%s again stops at once\n",
                 SignalName(sig), SignalName(sig));
  }
  PrintOutputError(
      Finish(*running, std::string(kEndSignalPrefix) + SignalName(sig)));
  // This runs on the helper thread, which Finish let go: its object must
  // outlive this call.
  KeepForever(std::move(running->watcher));
  RaiseWithDefaultAction(sig);
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
  // hands it over), and nothing in the child finishes it. Its helper thread
  // does not exist here: the object is left alone, and so are the parent's
  // stream and signal handlers.
  ResetSignalsInForkedChild();
  if (Running() != nullptr) KeepForever(std::move(Running()->watcher));
  delete Running();
  Running() = nullptr;
  RunningMutex().unlock();
}

void InstallProcessHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit(FinishAtExit);
    std::at_quick_exit(FinishAtExit);
    pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
  });
}

// The stream file of a session: `Config::stream_path` expanded, or by
// default the trace path (else the summary path) with ".stream" added; ""
// when streaming is off. A flight recorder's (ring mode's) stream is
// bounded like its rings (StreamGenerationBytes).
std::string StreamPath(const Config& config, const PathFields& fields) {
  if (config.stream_path == "off") return "";
  if (!config.stream_path.empty()) {
    return ExpandPathTemplate(config.stream_path, fields);
  }
  for (const std::string* output : {&config.trace_path, &config.summary_path}) {
    if (*output != kOutputOff && *output != "-") {
      return ExpandPathTemplate(*output, fields) + ".stream";
    }
  }
  return "";  // no output file to put it beside: nothing to recover into
}

// Opens the stream (when on) and starts the helper thread (when the stream
// or the signal handlers need one). Called with recording started; an error
// names the stream's path.
absl::Status StartWatcher(RunningSession& running) {
  const Config& config = running.config;
  const SessionFacts facts = FactsOf(Session());
  const PathFields fields{.pid = facts.pid,
                          .host = facts.host,
                          .process_name = facts.process_name,
                          .start_wall_ns = facts.start_wall_ns};
  // A writer killed before its rename (an earlier run's session end, cut
  // short) left its temporary file beside the output: it goes now.
  for (const std::string* output : {&config.trace_path, &config.summary_path}) {
    if (*output != kOutputOff) {
      analysis::RemoveStaleTemporaryFiles(ExpandPathTemplate(*output, fields));
    }
  }
  const std::string path = StreamPath(config, fields);
  std::unique_ptr<StreamWriter> writer;
  if (!path.empty()) {
    const std::filesystem::path parent =
        std::filesystem::path(path).parent_path();
    std::error_code error;
    if (!parent.empty()) std::filesystem::create_directories(parent, error);
    absl::StatusOr<std::unique_ptr<StreamWriter>> opened = StreamWriter::Open(
        path, facts,
        {.trace_path = config.trace_path == kOutputOff
                           ? ""
                           : ExpandPathTemplate(config.trace_path, fields),
         .summary_path =
             config.summary_path == kOutputOff
                 ? ""
                 : ExpandPathTemplate(config.summary_path, fields)});
    if (opened.ok()) {
      writer = std::move(*opened);
    } else if (!config.stream_path.empty()) {
      return absl::InvalidArgumentError(
          "SPANPROF_STREAM / Config::stream_path: " +
          std::string(opened.status().message()));
    } else {
      // The default stream sits beside the trace: a trace directory that
      // cannot be written is an output error reported at the end (as
      // before streaming), not a reason to refuse the session.
      std::fprintf(stderr,
                   "spanprof: %s; recording without a stream (a crash or a "
                   "kill will lose this session)\n",
                   std::string(opened.status().message()).c_str());
    }
  }
  // From here on the rings reuse what the stream holds (a flight recorder's
  // rings overwrite their oldest spans as before: its stream is what a crash
  // or a kill leaves, its outputs come from the rings).
  if (writer != nullptr && config.recording.overflow != OverflowPolicy::kRing) {
    MarkSessionStreaming(Session().epoch, true);
  }
  if (writer == nullptr && !config.signals) return absl::OkStatus();
  running.watcher = std::make_unique<SessionWatcher>(
      std::move(writer), Session().epoch, config.signals, FinishFromSignal);
  running.watcher->Start();
  return absl::OkStatus();
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
                                    {"summary_path", &config.summary_path},
                                    {"stream_path", &config.stream_path}}) {
    if (path->empty() || *path == "off") continue;
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
    if (absl::Status watching = StartWatcher(*running); !watching.ok()) {
      static_cast<void>(StopRecording());
      return watching;
    }
    Running() = running.get();
  }
  running->overhead_ns =
      static_cast<int64_t>(std::llround(MeasureSpanOverheadNs()));
  if (!ReportIsOff(config)) {
    const uint64_t bytes = PredictedMemoryBytes(config.recording.max_events,
                                                config.recording.overflow);
    const std::string stream =
        running->watcher != nullptr ? running->watcher->stream_path() : "";
    const std::string streamed =
        stream.empty() ? std::string(
                             "; no stream: a crash or a kill loses "
                             "the session")
                       : "; streamed to " + stream +
                             " every 10 ms (a kill loses about the last "
                             "10 ms)";
    std::fprintf(
        stderr,
        "spanprof: recording up to %llu spans (%s), worst-case ring "
        "memory %.1f MiB, committed as spans arrive (a helper "
        "thread keeps up to 2 MiB faulted in ahead)%s%s\n",
        static_cast<unsigned long long>(config.recording.max_events),
        OverflowPolicyName(config.recording.overflow),
        static_cast<double>(bytes) / (1024.0 * 1024.0), streamed.c_str(),
        TraceSizeForecast(config.trace_path, config.recording.max_events)
            .c_str());
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
    if (current == nullptr && EndedElsewhere()) {
      EndedElsewhere() = false;
    } else if (current == nullptr || current->pid != getpid()) {
      return absl::FailedPreconditionError("no session is active");
    } else if (pthread_equal(current->thread, pthread_self()) == 0) {
      return absl::FailedPreconditionError(
          "the session must be stopped on the thread that started it (its "
          "root span is open there)");
    } else {
      running.reset(current);
      Running() = nullptr;
    }
  }
  if (running == nullptr) {
    // Ended by another thread (exit(), a termination signal): wait until
    // its outputs are written; there is nothing left to do here.
    const std::lock_guard<std::mutex> wait(FinishMutex());
    return absl::OkStatus();
  }
  if (running->root_epoch != 0) {
    if (body_threw) {
      EndSlow(tls_state, running->root_epoch, /*exception=*/true);
    } else {
      EndSpan(running->root_epoch);
    }
  }
  absl::Status written = Finish(*running, "finished");
  RaiseDeferredSignal();
  return written;
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

namespace spanprof {

void FinishSession() { internal::FinishEarly(internal::kEndFinished); }

}  // namespace spanprof
