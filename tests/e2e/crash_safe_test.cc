// A capture that survives its program: the real service_example, stopped
// with real signals, crashed and killed, and its stream recovered with the
// real `spanprof recover`.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::ProcessResult;
using spanprof::testing::ReadText;
using spanprof::testing::RunProcess;
using spanprof::testing::SpawnProcess;
using spanprof::testing::TempDir;
using spanprof::testing::WaitProcess;
using ::testing::HasSubstr;

constexpr char kService[] = SPANPROF_TEST_BIN_DIR "/service_example";
constexpr char kSpanprof[] = SPANPROF_TEST_BIN_DIR "/spanprof";
constexpr int kWorkers = 2;
// A service the test stops runs at most this many requests a worker (tens
// of seconds), so that a test that fails before its kill leaves no process
// running for long.
constexpr char kRequestBound[] = "3000000";

// Kills and reaps the child when the test leaves early (a failed ASSERT).
class ChildGuard {
 public:
  explicit ChildGuard(pid_t pid) : pid_(pid) {}
  ~ChildGuard() {
    if (pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;

 private:
  pid_t pid_;
};

std::map<std::string, std::string> Env(const TempDir& dir) {
  return {{"SPANPROF", "1"},
          {"SPANPROF_OUT", dir.File("trace.json")},
          {"SPANPROF_SUMMARY_OUT", dir.File("summary.json")}};
}

// The requests each worker finished, as the service's progress file says.
// Read with pread (the file is the service's shared mapping, so the page
// cache has its latest stores); a file not yet sized reads as zeros.
std::vector<uint64_t> Progress(const std::string& path) {
  std::vector<uint64_t> counts(kWorkers, 0);
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return counts;
  const ssize_t n = pread(fd, counts.data(), kWorkers * sizeof(uint64_t), 0);
  close(fd);
  if (n != static_cast<ssize_t>(kWorkers * sizeof(uint64_t))) {
    std::fill(counts.begin(), counts.end(), 0);
  }
  return counts;
}

// Polls every millisecond, for at most a minute, until `done()` holds;
// false when the process died first or the minute passed.
template <typename Done>
bool PollWhileAlive(pid_t pid, Done done) {
  for (int i = 0; i < 60000; ++i) {
    if (done()) return true;
    if (kill(pid, 0) != 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Polls until every worker finished at least `n` requests (the service is
// running and recording), or the process died; false then.
bool WaitForProgress(pid_t pid, const std::string& path, uint64_t n) {
  return PollWhileAlive(pid, [&] {
    const std::vector<uint64_t> counts = Progress(path);
    return counts[0] >= n && counts[1] >= n;
  });
}

// The stream file's inode and size: a drain that writes changes the size,
// and a flight recorder's rotation gives the path a new file.
std::pair<ino_t, off_t> StreamState(const std::string& path) {
  struct stat st = {};
  if (stat(path.c_str(), &st) != 0) return {0, 0};
  return {st.st_ino, st.st_size};
}

// Polls until the program's drains changed `stream` `drains` times, or the
// process died; false then.
bool WaitForDrains(pid_t pid, const std::string& stream, int drains) {
  std::pair<ino_t, off_t> seen = StreamState(stream);
  return PollWhileAlive(pid, [&] {
    const std::pair<ino_t, off_t> now = StreamState(stream);
    if (now != seen) {
      seen = now;
      --drains;
    }
    return drains == 0;
  });
}

// For each worker thread, the request numbers of its finished
// request.handle spans; also checks that every request.parse span has a
// request.handle parent on its own thread.
std::map<std::string, std::vector<bool>> FinishedRequests(const Capture& c) {
  std::map<std::string, std::vector<bool>> seen;
  for (const Span& span : c.spans) {
    const std::string& name = c.sites[span.site].name;
    if (name == "request.parse") {
      EXPECT_NE(span.parent_id, 0u);
      if (span.parent_id != 0) {
        const Span& parent = c.spans[span.parent_id - 1];
        EXPECT_EQ(c.sites[parent.site].name, "request.handle");
        EXPECT_EQ(parent.thread, span.thread);
      }
    }
    if (name != "request.handle" || (span.flags & kSpanUnfinished) != 0) {
      continue;
    }
    int64_t request = -1;
    for (uint32_t a = 0; a < span.arg_count; ++a) {
      const SpanArg& arg = c.args[span.first_arg + a];
      if (arg.key == "request") request = arg.int_value;
    }
    EXPECT_GE(request, 0);
    if (request < 0) continue;
    std::vector<bool>& ids = seen[c.threads[span.thread].name];
    if (ids.size() <= static_cast<size_t>(request)) ids.resize(request + 1);
    ids[static_cast<size_t>(request)] = true;
  }
  return seen;
}

// The requests of `thread` in `c` form an unbroken run from 0: nothing
// lost in the middle. Returns its length.
uint64_t UnbrokenRequests(const Capture& c, const std::string& thread) {
  std::map<std::string, std::vector<bool>> seen = FinishedRequests(c);
  const std::vector<bool>& ids = seen[thread];
  uint64_t run = 0;
  while (run < ids.size() && ids[run]) ++run;
  EXPECT_EQ(run, ids.size()) << thread << ": a request missing in the middle";
  return run;
}

// Every request a worker finished (per the progress file) is in `c`.
void ExpectAllFinishedRequests(const Capture& c,
                               const std::vector<uint64_t>& finished) {
  std::map<std::string, std::vector<bool>> seen = FinishedRequests(c);
  for (int w = 0; w < kWorkers; ++w) {
    const std::string thread = "worker-" + std::to_string(w);
    const std::vector<bool>& ids = seen[thread];
    uint64_t missing = 0;
    for (uint64_t r = 0; r < finished[w]; ++r) {
      if (r >= ids.size() || !ids[r]) ++missing;
    }
    EXPECT_EQ(missing, 0u) << thread << " finished " << finished[w];
  }
}

// Starts the service in `dir` (stdout and stderr to dir/out and dir/err),
// bounded to kRequestBound requests a worker and writing its progress file.
pid_t StartService(const TempDir& dir,
                   const std::map<std::string, std::string>& env) {
  return SpawnProcess({kService, "--requests", kRequestBound, "--progress-file",
                       dir.File("progress")},
                      env, dir.path().string(), dir.File("out"),
                      dir.File("err"));
}

class TerminationSignalTest : public ::testing::TestWithParam<int> {};

// Ctrl-C, kill and a closed terminal end the session normally (outputs
// written, every finished request in them), then the signal ends the
// program as the shell expects.
TEST_P(TerminationSignalTest, EndsTheSessionThenTakesTheDefaultAction) {
  const int sig = GetParam();
  TempDir dir;
  const pid_t pid = StartService(dir, Env(dir));
  ASSERT_GT(pid, 0);
  const ChildGuard guard(pid);
  ASSERT_TRUE(WaitForProgress(pid, dir.File("progress"), 500));
  // Finished before the signal, so before the session ended. (The workers
  // go on while the session ends: what they finish then is not recorded.)
  const std::vector<uint64_t> finished = Progress(dir.File("progress"));
  ASSERT_EQ(kill(pid, sig), 0);
  const ProcessResult result =
      WaitProcess(pid, dir.File("out"), dir.File("err"));
  EXPECT_EQ(result.term_signal, sig) << result.err;

  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status() << result.err;
  EXPECT_EQ(summary->end_reason, std::string("signal:SIG") + sigabbrev_np(sig));
  absl::StatusOr<Capture> trace = analysis::ReadTrace(dir.File("trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->end_reason, summary->end_reason);
  ExpectAllFinishedRequests(*trace, finished);
  EXPECT_FALSE(std::filesystem::exists(dir.File("trace.json.stream")));
}

INSTANTIATE_TEST_SUITE_P(Signals, TerminationSignalTest,
                         ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const auto& info) {
                           return std::string(sigabbrev_np(info.param));
                         });

// A second Ctrl-C while the first one's session end writes the outputs
// (a user who will not wait) stops the program at once, as the shell
// expects, and says what that leaves and where: the stream, which
// `spanprof recover` turns into a trace of the requests finished before.
TEST(SecondSignalTest, StopsAtOnceAndNamesTheStreamToRecover) {
  TempDir dir;
  const pid_t pid = StartService(dir, Env(dir));
  ASSERT_GT(pid, 0);
  const ChildGuard guard(pid);
  // 800,000 spans: their session end takes a while (writing a 170 MB
  // trace). Under a sanitizer everything runs several times slower, the
  // end too: a third as many.
#ifdef SPANPROF_TEST_SANITIZED
  constexpr uint64_t kRequests = 35000;
#else
  constexpr uint64_t kRequests = 100000;
#endif
  ASSERT_TRUE(WaitForProgress(pid, dir.File("progress"), kRequests));
  const std::vector<uint64_t> finished = Progress(dir.File("progress"));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  // The first signal's line: the session end has begun.
  ASSERT_TRUE(PollWhileAlive(pid, [&dir] {
    return ReadText(dir.File("err")).find("SIGINT: ending the session") !=
           std::string::npos;
  }));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  const ProcessResult result =
      WaitProcess(pid, dir.File("out"), dir.File("err"));
  EXPECT_EQ(result.term_signal, SIGINT) << result.err;
  const std::string stream = dir.File("trace.json.stream");
  EXPECT_THAT(result.err,
              HasSubstr("spanprof: SIGINT again while the session was "
                        "ending: its outputs are not written"));
  EXPECT_THAT(result.err, HasSubstr("spanprof recover " + stream));
  EXPECT_FALSE(std::filesystem::exists(dir.File("summary.json")));

  const ProcessResult recovered = RunProcess(
      {kSpanprof, "recover", stream, "-o", dir.File("recovered.json")});
  ASSERT_EQ(recovered.exit_code, 0) << recovered.err;
  absl::StatusOr<Capture> trace =
      analysis::ReadTrace(dir.File("recovered.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  // Each worker's requests from the first without a gap, as far as the
  // drain had written them: it runs beside two busy workers on the test
  // machine's cores, so it may be a few hundred milliseconds behind.
  for (int w = 0; w < kWorkers; ++w) {
    const std::string thread = "worker-" + std::to_string(w);
    EXPECT_GE(UnbrokenRequests(*trace, thread), finished[w] / 4) << thread;
  }
}

struct CrashCase {
  const char* mode;
  int signal;
  const char* end_reason;
};

class CrashTest : public ::testing::TestWithParam<CrashCase> {};

// A crash kills the program as before (same signal, core dumps unchanged),
// names the stream on stderr, and `spanprof recover` gives back every
// request the crashing thread finished, and the other thread's without a
// gap (it goes on while the crash handler drains, so how far it got before
// the crash is not known outside).
TEST_P(CrashTest, LeavesAStreamThatRecoversEveryFinishedSpan) {
  const CrashCase& c = GetParam();
#ifdef SPANPROF_TEST_SANITIZED
  // A sanitizer's own SIGSEGV handler is there before the session starts,
  // and a program's own handler stays: spanprof does not take SIGSEGV then.
  if (c.signal == SIGSEGV) GTEST_SKIP() << "the sanitizer handles SIGSEGV";
#endif
  TempDir dir;
  const ProcessResult result =
      RunProcess({kService, "--crash", c.mode, "--crash-after", "3000",
                  "--progress-file", dir.File("progress")},
                 Env(dir), dir.path().string());
  EXPECT_EQ(result.term_signal, c.signal) << result.err;
  const std::string stream = dir.File("trace.json.stream");
  EXPECT_THAT(result.err, HasSubstr(std::string("spanprof: ") + c.end_reason));
  EXPECT_THAT(result.err, HasSubstr("spanprof recover " + stream));
  EXPECT_FALSE(std::filesystem::exists(dir.File("trace.json")));
  const std::vector<uint64_t> finished = Progress(dir.File("progress"));
  EXPECT_EQ(finished[0], 3000u);

  const ProcessResult recovered = RunProcess(
      {kSpanprof, "recover", stream, "-o", dir.File("recovered.json"),
       "--summary-out", dir.File("recovered-summary.json")});
  ASSERT_EQ(recovered.exit_code, 0) << recovered.err;
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("recovered-summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->end_reason, c.end_reason);
  EXPECT_FALSE(summary->complete);
  absl::StatusOr<Capture> trace =
      analysis::ReadTrace(dir.File("recovered.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(UnbrokenRequests(*trace, "worker-0"), 3000u);
  EXPECT_GT(UnbrokenRequests(*trace, "worker-1"), 0u);
  const ProcessResult valid =
      RunProcess({kSpanprof, "validate", dir.File("recovered-summary.json")});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

INSTANTIATE_TEST_SUITE_P(
    Crashes, CrashTest,
    ::testing::Values(CrashCase{"segv", SIGSEGV, "crash:SIGSEGV"},
                      // A stack overflow: the handler runs on the
                      // alternate stack the recorder gave the thread.
                      CrashCase{"stack", SIGSEGV, "crash:SIGSEGV"},
                      CrashCase{"abort", SIGABRT, "crash:SIGABRT"},
                      CrashCase{"terminate", SIGABRT, "crash:terminate"}),
    [](const auto& info) { return std::string(info.param.mode); });

// SIGKILL: nothing runs in the program. Every request finished 100 ms
// before the kill (ten drain intervals) comes back from the stream, with its
// name, parent and argument; and no request that ended at all comes back
// without its argument. The kill comes the moment the stream grows, so it
// often lands inside a drain, between the writes of its chunks.
TEST(KillTest, RecoversEverySpanThatEndedBeforeTheLastDrain) {
  TempDir dir;
  const pid_t pid = StartService(dir, Env(dir));
  ASSERT_GT(pid, 0);
  const ChildGuard guard(pid);
  ASSERT_TRUE(WaitForProgress(pid, dir.File("progress"), 2000));
  const std::vector<uint64_t> before = Progress(dir.File("progress"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(WaitForDrains(pid, dir.File("trace.json.stream"), 1));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  const ProcessResult result =
      WaitProcess(pid, dir.File("out"), dir.File("err"));
  EXPECT_EQ(result.term_signal, SIGKILL);

  const ProcessResult recovered =
      RunProcess({kSpanprof, "recover", dir.File("trace.json.stream")});
  ASSERT_EQ(recovered.exit_code, 0) << recovered.err;
  // Written where the program would have written them.
  EXPECT_THAT(recovered.err, HasSubstr("end_reason lost"));
  absl::StatusOr<Capture> trace = analysis::ReadTrace(dir.File("trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->end_reason, "lost");
  ExpectAllFinishedRequests(*trace, before);
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->validation_issues.empty());
}

// Starts the service as a flight recorder (ring mode) of `cap` spans.
pid_t StartFlightRecorder(const TempDir& dir, uint64_t cap) {
  std::map<std::string, std::string> env = Env(dir);
  env["SPANPROF_OVERFLOW"] = "ring";
  env["SPANPROF_MAX_EVENTS"] = std::to_string(cap);
  return StartService(dir, env);
}

// A flight recorder (ring mode) streams too, into at most two files of
// about 40 bytes a span of its cap each (`<stream>.old` the full one):
// flat disk however long it runs. `spanprof recover` on the running
// program's stream is a snapshot of its newest spans; after a SIGKILL it
// gives the newest spans again, up to the cap, the latest requests in them.
TEST(FlightRecorderTest, KeepsItsNewestSpansOnBoundedDisk) {
  constexpr uint64_t kCap = 20000;
  TempDir dir;
  const pid_t pid = StartFlightRecorder(dir, kCap);
  ASSERT_GT(pid, 0);
  const ChildGuard guard(pid);
  // Each worker's requests (4 spans and an argument each) fill several
  // files' worth of the cap.
  ASSERT_TRUE(WaitForProgress(pid, dir.File("progress"), 40000));
  const std::string stream = dir.File("trace.json.stream");
  ASSERT_TRUE(std::filesystem::exists(stream + ".old"));
  // Two files, each cut once it passed the bound at a drain (one drain's
  // records over it at most: a few thousand spans here).
  const uint64_t bound = 40 * kCap + (uint64_t{1} << 20);
  for (const std::string& file : {stream, stream + ".old"}) {
    std::error_code error;
    const uintmax_t size = std::filesystem::file_size(file, error);
    EXPECT_LE(size, bound + (uint64_t{2} << 20)) << file;
  }

  const ProcessResult snapshot = RunProcess(
      {kSpanprof, "recover", stream, "-o", dir.File("snapshot.json")});
  ASSERT_EQ(snapshot.exit_code, 0) << snapshot.err;
  absl::StatusOr<Capture> taken =
      analysis::ReadTrace(dir.File("snapshot.json"));
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_LE(taken->spans.size(), kCap);
  EXPECT_GE(taken->spans.size(), kCap / 2);

  // Newer spans reach the disk: two drains write after the snapshot (the
  // first may have begun during it), whatever the machine's load.
  ASSERT_TRUE(WaitForDrains(pid, stream, 2));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  const ProcessResult result =
      WaitProcess(pid, dir.File("out"), dir.File("err"));
  EXPECT_EQ(result.term_signal, SIGKILL);
  const ProcessResult recovered =
      RunProcess({kSpanprof, "recover", stream, "-o", dir.File("lost.json"),
                  "--summary-out", dir.File("lost-summary.json")});
  ASSERT_EQ(recovered.exit_code, 0) << recovered.err;
  absl::StatusOr<Capture> trace = analysis::ReadTrace(dir.File("lost.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->end_reason, "lost");
  EXPECT_LE(trace->spans.size(), kCap);
  EXPECT_GE(trace->spans.size(), kCap / 2);
  // The newest spans: the last one recovered ended after the last one of
  // the snapshot taken before (one session: one time base).
  const auto last_end = [](const Capture& c) {
    int64_t last = 0;
    for (const Span& span : c.spans) {
      last = std::max(last, span.end_ns);
    }
    return last;
  };
  EXPECT_GT(last_end(*trace), last_end(*taken));
  // Every kept request.handle span is whole: its three phases under it.
  std::map<uint64_t, int> children;
  for (const Span& span : trace->spans) {
    if (span.parent_id != 0 &&
        trace->sites[trace->spans[span.parent_id - 1].site].name ==
            "request.handle") {
      ++children[span.parent_id];
    }
  }
  // And its argument: the requests here fill the side records' budget many
  // times over, so the side buffer wraps long before the kill, and the
  // stream must carry what it overwrites in place.
  uint64_t handles = 0;
  uint64_t bare = 0;
  for (const Span& span : trace->spans) {
    if (trace->sites[span.site].name == "request.handle" &&
        (span.flags & kSpanUnfinished) == 0) {
      EXPECT_EQ(children[span.id], 3) << "request.handle " << span.id;
      ++handles;
      const auto first = trace->args.begin() + span.first_arg;
      bare += std::none_of(first, first + span.arg_count,
                           [](const SpanArg& a) { return a.key == "request"; })
                  ? 1
                  : 0;
    }
  }
  EXPECT_GT(handles, kCap / 8);
  EXPECT_EQ(bare, 0u) << "of " << handles << " request.handle spans";
  // The workers run their whole lives under the root's context (Bind),
  // whose push went with an older file: each file carries the scopes open
  // where it starts, so a request is under the root where the capture
  // holds it, and otherwise flagged as having lost its parent (the root's
  // begin went with the first file), never a root that says nothing.
  for (const Span& span : trace->spans) {
    if (trace->sites[span.site].name == "request.handle" &&
        span.parent_id == 0) {
      EXPECT_NE(span.flags & kSpanRerooted, 0) << "request.handle " << span.id;
    }
  }
  const ProcessResult valid =
      RunProcess({kSpanprof, "validate", dir.File("lost-summary.json")});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

// A flight recorder that ends normally removes both of its stream files.
TEST(FlightRecorderTest, ANormalEndRemovesItsStreamFiles) {
  TempDir dir;
  const pid_t pid = StartFlightRecorder(dir, 20000);
  ASSERT_GT(pid, 0);
  const ChildGuard guard(pid);
  ASSERT_TRUE(WaitForProgress(pid, dir.File("progress"), 40000));
  const std::string stream = dir.File("trace.json.stream");
  ASSERT_TRUE(std::filesystem::exists(stream + ".old"));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  const ProcessResult result =
      WaitProcess(pid, dir.File("out"), dir.File("err"));
  EXPECT_EQ(result.term_signal, SIGTERM);
  EXPECT_TRUE(std::filesystem::exists(dir.File("trace.json")));
  EXPECT_FALSE(std::filesystem::exists(stream));
  EXPECT_FALSE(std::filesystem::exists(stream + ".old"));
}

// exit() on a worker while the main thread waits in the body: one session
// end, one set of outputs, no std::terminate, no temporary file left.
TEST(ExitTest, ExitOnAnotherThreadWritesOneCapture) {
  TempDir dir;
  const ProcessResult result =
      RunProcess({kService, "--crash", "exit", "--crash-after", "2000"},
                 Env(dir), dir.path().string());
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_THAT(result.err, ::testing::Not(HasSubstr("terminate")));
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status() << result.err;
  EXPECT_EQ(summary->end_reason, "exit");
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_NE(name[0], '.') << name;
    EXPECT_THAT(name, ::testing::Not(HasSubstr(".stream")));
  }
}

// SPANPROF_SIGNALS=off: spanprof stays out of the way; SIGTERM ends the
// program at once, and only the stream is left.
TEST(SignalsOffTest, LeavesSignalsAlone) {
  TempDir dir;
  std::map<std::string, std::string> env = Env(dir);
  env["SPANPROF_SIGNALS"] = "off";
  const pid_t pid = StartService(dir, env);
  ASSERT_GT(pid, 0);
  const ChildGuard guard(pid);
  ASSERT_TRUE(WaitForProgress(pid, dir.File("progress"), 100));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  const ProcessResult result =
      WaitProcess(pid, dir.File("out"), dir.File("err"));
  EXPECT_EQ(result.term_signal, SIGTERM);
  EXPECT_FALSE(std::filesystem::exists(dir.File("summary.json")));
  EXPECT_TRUE(std::filesystem::exists(dir.File("trace.json.stream")));
}

// A bad SPANPROF_STREAM is refused before the body runs, naming it.
TEST(StreamVariableTest, ABadValueIsRefusedBeforeTheBodyRuns) {
  TempDir dir;
  std::map<std::string, std::string> env = Env(dir);
  env["SPANPROF_STREAM"] = "";
  const ProcessResult result = RunProcess(
      {kService, "--requests", "10", "--progress-file", dir.File("progress")},
      env, dir.path().string());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("SPANPROF_STREAM"));
  EXPECT_EQ(Progress(dir.File("progress"))[0], 0u);
}

}  // namespace
}  // namespace spanprof
