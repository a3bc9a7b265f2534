// Process and thread lifecycle edges on one thread at a time: exit() inside a
// session, fork, exceptions through nested spans, threads that never record,
// allocation counters in a program without spanprof::alloc, the clock choice
// and the predicted memory printed at session start.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "runtime/src/recorder/ring_memory.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"
#include "tests/runtime/capture_checks.h"
#include "tests/testing/lookup.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using testing::ExpectValidCapture;
using testing::FindRow;
using testing::FindSpan;
using testing::NameOf;
using testing::QuietConfig;
using testing::TempDir;

// Runs `child` in a forked process and returns its exit status (-1 when it
// did not exit normally).
template <typename Fn>
int RunInChild(Fn child) {
  std::fflush(nullptr);
  testing::LetOtherThreadsSleepBeforeForkUnderSanitizers();
  const pid_t pid = fork();
  if (pid == 0) {
    child();
    _exit(99);  // `child` is expected to exit itself
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// exit() is how real programs end: the session ends normally at that
// moment, the spans open then closed then and flagged open_at_exit.
TEST(LifecycleTest, ExitInsideASessionIsANormalEnd) {
  TempDir dir;
  const Config config = QuietConfig(dir);
  const int status = RunInChild([&] {
    Profile(config, "exit.root", [] {
      { SPANPROF_SCOPE("before.exit"); }
      SPANPROF_SCOPE("open.at.exit");
      std::exit(3);
    });
  });
  ASSERT_EQ(status, 3);
  const auto summary = analysis::ReadSummary(config.summary_path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->complete);
  EXPECT_EQ(summary->end_reason, "exit");
  EXPECT_EQ(summary->unfinished_events, 0u);
  EXPECT_EQ(summary->open_at_exit_events, 2u);
  EXPECT_EQ(summary->dropped_events, 0u);
  ASSERT_NE(FindRow(*summary, "before.exit"), nullptr);
  EXPECT_EQ(FindRow(*summary, "open.at.exit")->unfinished, 0u);
  const auto trace = analysis::ReadTrace(config.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->finished_normally);
  EXPECT_EQ(trace->end_reason, "exit");
  EXPECT_EQ(FindSpan(*trace, "before.exit")->flags, 0u);
  EXPECT_EQ(FindSpan(*trace, "open.at.exit")->flags, kSpanOpenAtExit);
  EXPECT_EQ(FindSpan(*trace, "exit.root")->flags, kSpanOpenAtExit);
  // Both end at the exit.
  EXPECT_EQ(FindSpan(*trace, "open.at.exit")->end_ns,
            FindSpan(*trace, "exit.root")->end_ns);
  ExpectValidCapture(*trace);
  const std::string text = testing::ReadText(config.summary_path);
  EXPECT_NE(text.find("\"complete\": true"), std::string::npos) << text;
}

// FinishSession() ends the session from anywhere, once: the body goes on
// unrecorded, Profile() returns its result, and later ends do nothing.
TEST(LifecycleTest, FinishSessionEndsTheSessionOnce) {
  TempDir dir;
  const Config config = QuietConfig(dir);
  const int result = Profile(config, "finish.root", [&] {
    { SPANPROF_SCOPE("before.finish"); }
    {
      SPANPROF_SCOPE("open.at.finish");
      std::thread([] { FinishSession(); }).join();
    }
    EXPECT_TRUE(std::filesystem::exists(config.summary_path));
    std::filesystem::remove(config.summary_path);
    SPANPROF_SCOPE("after.finish");
    FinishSession();
    return 5;
  });
  EXPECT_EQ(result, 5);
  // Written once: Profile() returning and the second call wrote nothing.
  EXPECT_FALSE(std::filesystem::exists(config.summary_path));
  const auto trace = analysis::ReadTrace(config.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->finished_normally);
  EXPECT_EQ(trace->end_reason, "finished");
  EXPECT_EQ(trace->spans.size(), 3u);
  EXPECT_EQ(FindSpan(*trace, "after.finish"), nullptr);
  EXPECT_EQ(FindSpan(*trace, "before.finish")->flags, 0u);
  EXPECT_EQ(FindSpan(*trace, "open.at.finish")->flags, kSpanOpenAtExit);
  EXPECT_EQ(FindSpan(*trace, "finish.root")->flags, kSpanOpenAtExit);
  EXPECT_TRUE(analysis::Summarize(*trace).complete);
  ExpectValidCapture(*trace);
  // With no session running it does nothing; a new session works.
  FinishSession();
  const int again = Profile(config, "finish.root", [] { return 6; });
  EXPECT_EQ(again, 6);
  EXPECT_TRUE(std::filesystem::exists(config.summary_path));
}

// exit() inside a session leaves no caller to throw to: the session's output
// error is printed, once.
TEST(LifecycleTest, ExitInsideASessionPrintsAnOutputErrorOnce) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.trace_path = dir.File("blocker/trace.json");
  const std::string err_path = dir.File("stderr.txt");
  const int status = RunInChild([&] {
    if (std::freopen(err_path.c_str(), "w", stderr) == nullptr) _exit(98);
    Profile(config, "exit.root", [&] {
      // A directory at the trace path: an output error that the checks at
      // session start cannot foresee.
      std::filesystem::create_directories(config.trace_path);
      std::exit(3);
    });
  });
  ASSERT_EQ(status, 3);
  const std::string err = testing::ReadText(err_path);
  const std::string message = "could not write outputs";
  const size_t first = err.find(message);
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find(message, first + message.size()), std::string::npos)
      << err;
  EXPECT_NE(err.find("blocker"), std::string::npos) << err;
}

TEST(LifecycleTest, ExitFromAWorkerThreadFinishesTheSession) {
  TempDir dir;
  const Config config = QuietConfig(dir);
  const int status = RunInChild([&] {
    Profile(config, "exit.root", [] {
      std::thread worker([] {
        SPANPROF_SCOPE("worker.exits");
        std::exit(4);
      });
      worker.join();
    });
  });
  ASSERT_EQ(status, 4);
  const auto trace = analysis::ReadTrace(config.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->finished_normally);
  ASSERT_NE(FindSpan(*trace, "worker.exits"), nullptr);
  EXPECT_EQ(FindSpan(*trace, "worker.exits")->flags, kSpanOpenAtExit);
  EXPECT_EQ(FindSpan(*trace, "exit.root")->flags, kSpanOpenAtExit);
  const auto summary = analysis::ReadSummary(config.summary_path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->complete);
}

// The version a capture reports is the project's (CMake's PROJECT_VERSION),
// not a copy of it.
TEST(LifecycleTest, CaptureReportsTheProjectVersion) {
  const std::string cmake =
      testing::ReadText(SPANPROF_TEST_SOURCE_DIR "/CMakeLists.txt");
  const std::string marker = "project(spanprof VERSION ";
  const size_t at = cmake.find(marker);
  ASSERT_NE(at, std::string::npos);
  const size_t begin = at + marker.size();
  const std::string version =
      cmake.substr(begin, cmake.find(' ', begin) - begin);
  ASSERT_TRUE(StartRecording({}).ok());
  const Capture capture = StopRecording();
  EXPECT_EQ(capture.spanprof_version, version);
}

TEST(LifecycleTest, NormalEndIsComplete) {
  TempDir dir;
  const Config config = QuietConfig(dir);
  Profile(config, "root", [] { SPANPROF_SCOPE("work"); });
  const auto summary = analysis::ReadSummary(config.summary_path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->complete);
}

TEST(LifecycleTest, AForkedChildDoesNotRecordIntoTheParentsCapture) {
  TempDir dir;
  const Config config = QuietConfig(dir);
  const Config child_config = QuietConfig(dir, "child-out/");
  int child_status = -1;
  Profile(config, "parent.root", [&] {
    { SPANPROF_SCOPE("parent.before.fork"); }
    std::fflush(nullptr);
    pid_t pid = 0;
    bool recording_in_child = true;
    {
      SPANPROF_SCOPE("parent.open.at.fork");
      testing::LetOtherThreadsSleepBeforeForkUnderSanitizers();
      pid = fork();
      if (pid == 0) {
        recording_in_child = IsRecording();
        SPANPROF_SCOPE("child.only");
        SPANPROF_ARG("x", 1);
        spanprof::Run("child.run", [] { Heartbeat(1); });
      }
      // In the child this ends a span the parent opened: a no-op.
    }
    if (pid == 0) {
      int code = recording_in_child ? 10 : 0;
      // The child may profile on its own; it starts from nothing.
      Profile(child_config, "child.session",
              [] { SPANPROF_SCOPE("child.inner"); });
      // exit() must not finish (or write) the parent's session here.
      std::exit(code);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    child_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    // The child wrote nothing for the parent's session.
    EXPECT_FALSE(std::filesystem::exists(config.summary_path));
    EXPECT_FALSE(std::filesystem::exists(config.trace_path));
    SPANPROF_SCOPE("parent.after.fork");
  });
  EXPECT_EQ(child_status, 0);
  const auto trace = analysis::ReadTrace(config.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::set<std::string> names;
  for (const Span& s : trace->spans) names.insert(NameOf(*trace, s));
  EXPECT_EQ(names, (std::set<std::string>{"parent.root", "parent.before.fork",
                                          "parent.open.at.fork",
                                          "parent.after.fork"}));
  EXPECT_TRUE(trace->finished_normally);
  ExpectValidCapture(*trace);
  // The child's own session holds only the child's spans.
  const auto child = analysis::ReadTrace(child_config.trace_path);
  ASSERT_TRUE(child.ok()) << child.status();
  names.clear();
  for (const Span& s : child->spans) names.insert(NameOf(*child, s));
  EXPECT_EQ(names, (std::set<std::string>{"child.session", "child.inner"}));
  EXPECT_NE(child->pid, trace->pid);
}

void CountForked(int n) { SPANPROF_COUNT("forked", n); }

// The count of `name` on the first span called `span`, or -1.
int64_t CountOn(const Capture& c, const std::string& span,
                const std::string& name) {
  const Span* s = FindSpan(c, span);
  if (s == nullptr) return -1;
  for (uint32_t a = s->first_arg; a < s->first_arg + s->arg_count; ++a) {
    if (c.args[a].is_counter && c.args[a].key == name) {
      return c.args[a].int_value;
    }
  }
  return 0;
}

TEST(LifecycleTest, AForkedChildCountsAfreshInASessionOfItsOwn) {
  TempDir dir;
  int child_status = -1;
  Profile(QuietConfig(dir), "parent.root", [&] {
    SPANPROF_SCOPE("parent");
    CountForked(5);  // held by this thread when it forks
    std::fflush(nullptr);
    testing::LetOtherThreadsSleepBeforeForkUnderSanitizers();
    const pid_t pid = fork();
    if (pid == 0) {
      // The slot still says 5 here: unless the fork zeroed it, the child's
      // increments would add to a slot its own session never registered.
      if (!StartRecording({}).ok()) _exit(2);
      {
        SPANPROF_SCOPE("child");
        CountForked(7);
      }
      const Capture child = StopRecording();
      _exit(CountOn(child, "child", "forked") == 7 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    child_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  });
  EXPECT_EQ(child_status, 0);
}

TEST(LifecycleTest, ExceptionsThroughNestedSpansAreRecordedAndCounted) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("catcher");
    try {
      spanprof::Run("level.1", [] {
        SPANPROF_SCOPE("level.2");
        { SPANPROF_SCOPE("finished.sibling"); }
        spanprof::Run("level.3", [] {
          SPANPROF_SCOPE("level.4");
          throw std::runtime_error("deep");
        });
      });
    } catch (const std::runtime_error&) {
      SPANPROF_SCOPE("in.handler");  // not unwinding: a normal span
    }
    try {
      SPANPROF_SCOPE("rethrown");
      try {
        SPANPROF_SCOPE("inner.thrower");
        throw 1;
      } catch (int) {
        throw;
      }
    } catch (int) {
    }
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  for (const char* name : {"level.1", "level.2", "level.3", "level.4",
                           "rethrown", "inner.thrower"}) {
    ASSERT_NE(FindSpan(c, name), nullptr) << name;
    EXPECT_EQ(FindSpan(c, name)->flags, static_cast<uint32_t>(kSpanException))
        << name;
  }
  for (const char* name : {"catcher", "finished.sibling", "in.handler"}) {
    ASSERT_NE(FindSpan(c, name), nullptr) << name;
    EXPECT_EQ(FindSpan(c, name)->flags, 0u) << name;
  }
  EXPECT_EQ(FindSpan(c, "level.4")->depth, 4u);
  const analysis::Summary summary = analysis::Summarize(c);
  EXPECT_EQ(FindRow(summary, "level.4")->exceptions, 1u);
  EXPECT_EQ(FindRow(summary, "catcher")->exceptions, 0u);
  EXPECT_TRUE(summary.complete);  // exceptions do not make a run incomplete
}

TEST(LifecycleTest, ThreadsThatNeverRecordAllocateNothing) {
  ASSERT_TRUE(StartRecording({}).ok());
  bool had_state = true;
  std::thread quiet([&] {
    Heartbeat(3);
    // (An argument is recorded: with no span open it is counted as dropped,
    // which binds the thread; ArgDropsTest checks that.)
    const Context none = CurrentContext();
    EXPECT_FALSE(none.valid());
    had_state = internal::tls_state != nullptr;
  });
  quiet.join();
  { SPANPROF_SCOPE("main"); }
  const Capture c = StopRecording();
  EXPECT_FALSE(had_state);
  EXPECT_EQ(c.threads.size(), 1u);
}

TEST(LifecycleTest, AllocationsAreNotMeasuredWithoutSpanprofAlloc) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("allocates");
    auto* p = new int[100];
    EXPECT_NE(p, nullptr);
    delete[] p;
  }
  const Capture c = StopRecording();
  EXPECT_FALSE(c.alloc_measured);
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_TRUE(c.span_allocs.empty());  // no column without measuring
  const analysis::Summary summary = analysis::Summarize(c);
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_FALSE(summary.rows[0].alloc_count.has_value());
  EXPECT_FALSE(summary.rows[0].alloc_bytes.has_value());
  const std::string json = analysis::SummaryToJson(summary);
  EXPECT_NE(json.find("\"alloc_count\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"alloc_bytes\": null"), std::string::npos) << json;
}

// Linux reports an invariant TSC as the constant_tsc + nonstop_tsc flags.
bool CpuinfoSaysInvariantTsc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
  return false;
}

TEST(LifecycleTest, TheClockIsTscOnlyWhenInvariantAndIsInTheSummary) {
  ASSERT_TRUE(StartRecording({.clock = ClockKind::kAuto}).ok());
  { SPANPROF_SCOPE("a"); }
  Capture c = StopRecording();
  EXPECT_EQ(c.clock, CpuinfoSaysInvariantTsc() ? "tsc" : "monotonic");
  EXPECT_EQ(analysis::Summarize(c).clock, c.clock);
  ASSERT_TRUE(StartRecording({.clock = ClockKind::kMonotonic}).ok());
  { SPANPROF_SCOPE("b"); }
  c = StopRecording();
  EXPECT_EQ(c.clock, "monotonic");
  EXPECT_EQ(analysis::Summarize(c).clock, "monotonic");
  const absl::Status tsc = StartRecording({.clock = ClockKind::kTsc});
  if (CpuinfoSaysInvariantTsc()) {
    EXPECT_TRUE(tsc.ok()) << tsc;
    StopRecording();
  } else {
    EXPECT_FALSE(tsc.ok());
  }
}

TEST(LifecycleTest, SessionStartPrintsThePredictedMemoryUnlessQuiet) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.quiet = false;
  config.recording.max_events = 1000;
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  Profile(config, "root", [] {});
  std::string err = ::testing::internal::GetCapturedStderr();
  static_cast<void>(::testing::internal::GetCapturedStdout());
  EXPECT_NE(err.find("recording up to 1000 spans (drop), worst-case"),
            std::string::npos)
      << err;
  config.quiet = true;
  ::testing::internal::CaptureStderr();
  Profile(config, "root", [] {});
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("worst-case"), std::string::npos) << err;
}

TEST(LifecycleTest, RingMemoryStaysWithinThePrediction) {
  for (const OverflowPolicy policy :
       {OverflowPolicy::kDropNewest, OverflowPolicy::kRing}) {
    constexpr uint64_t kCap = 10'000;
    const uint64_t before = internal::RingBytesAllocated();
    ASSERT_TRUE(StartRecording({.max_events = kCap, .overflow = policy}).ok());
    for (int i = 0; i < 200'000; ++i) {
      SPANPROF_SCOPE("outer");
      SPANPROF_ARG("i", i);
      SPANPROF_SCOPE("inner");
    }
    const uint64_t allocated = internal::RingBytesAllocated() - before;
    const Capture c = StopRecording();
    EXPECT_EQ(c.spans.size() + c.dropped_events, 400'000u);
    EXPECT_LE(c.spans.size(), kCap);
    EXPECT_GT(allocated, 0u);
    // Twenty times the cap went through the recorder; the rings never held
    // more than the prediction printed at session start.
    EXPECT_LE(allocated, PredictedMemoryBytes(kCap, policy))
        << OverflowPolicyName(policy);
  }
}

}  // namespace
}  // namespace spanprof
