// The drain under load: threads record spans, arguments, counts and thread
// names while the helper thread copies their rings into the stream (TSan
// runs this label), and the kept stream holds every span.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/spanprof.h"
#include "spanprof/stream.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::QuietConfig;
using spanprof::testing::ReadText;
using spanprof::testing::TempDir;

// Returns once the drain has written to `stream` `writes` times (its size
// changed), however slow the machine: the recording threads run meanwhile.
void WaitForStreamWrites(const std::string& stream, int writes) {
  uintmax_t size = 0;
  for (int seen = 0; seen < writes;) {
    std::error_code error;
    const uintmax_t now = std::filesystem::file_size(stream, error);
    if (!error && now != size) {
      size = now;
      ++seen;
    }
    std::this_thread::yield();
  }
}

constexpr int kThreads = 4;
constexpr int kSpansPerThread = 20000;

TEST(StreamConcurrencyTest, ThreadsRecordWhileTheDrainCopies) {
  TempDir dir;
  Config config = QuietConfig(dir, "");
  config.stream_path = dir.File("s.stream");
  config.keep_stream = true;
  Profile(config, "load.root", [] {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back(Bind([t] {
        SetThreadName(("recorder-" + std::to_string(t)).c_str());
        for (int i = 0; i < kSpansPerThread; ++i) {
          SPANPROF_SCOPE("load.step");
          SPANPROF_ARG("i", i);
          if (i % 7 == 0) SPANPROF_COUNT("sevens");
          if (i % 5000 == 0) {
            SetThreadName(
                ("recorder-" + std::to_string(t) + "-" + std::to_string(i))
                    .c_str());
          }
        }
      }));
    }
    for (std::thread& thread : threads) thread.join();
  });
  absl::StatusOr<RecoveredCapture> recovered =
      RecoverStream(ReadText(dir.File("s.stream")), "s.stream");
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_EQ(recovered->capture.spans.size(),
            1u + static_cast<size_t>(kThreads) * kSpansPerThread);
  const analysis::Summary summary = analysis::Summarize(recovered->capture);
  EXPECT_TRUE(summary.complete);
  EXPECT_TRUE(summary.validation_issues.empty());
  // Every span kept its argument.
  EXPECT_EQ(recovered->capture.args.size(),
            static_cast<size_t>(kThreads) * kSpansPerThread +
                static_cast<size_t>(kThreads) * ((kSpansPerThread + 6) / 7));
}

// A flight recorder (ring mode) whose side buffer wraps: its owners
// overwrite their oldest arguments in place while the drain copies them.
// The kept stream recovers the newest spans, each ended one with its own
// argument: nothing torn, nothing attached to the wrong span. The threads
// record until the drain has written several times after their side
// buffers wrapped (the stream grew), however slow the machine.
TEST(StreamConcurrencyTest, AWrappedSideBufferIsCopiedWhileItsOwnersOverwrite) {
  constexpr uint64_t kCap = 4096;
  TempDir dir;
  Config config = QuietConfig(dir, "");
  config.stream_path = dir.File("s.stream");
  config.keep_stream = true;
  config.recording.overflow = OverflowPolicy::kRing;
  config.recording.max_events = kCap;
  const std::string stream = dir.File("s.stream");
  Profile(config, "load.root", [&stream] {
    std::atomic<bool> stop{false};
    std::atomic<int> wrapped{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      // Each thread's whole life under the root's context: the push of
      // that scope is long overwritten, and the stream carries it where a
      // file starts or the drain skips (else the spans before its pop
      // would be set aside).
      threads.emplace_back(Bind([t, &stop, &wrapped] {
        SetThreadName(("recorder-" + std::to_string(t)).c_str());
        for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
          SPANPROF_SCOPE("load.step");
          SPANPROF_ARG("i", i);
          // Past twice the cap, the thread's side records have wrapped.
          if (i == static_cast<int64_t>(2 * kCap)) wrapped.fetch_add(1);
        }
      }));
    }
    while (wrapped.load() < kThreads) std::this_thread::yield();
    WaitForStreamWrites(stream, 6);
    stop.store(true);
    for (std::thread& thread : threads) thread.join();
  });
  // Its files, the full one first when the stream rotated (as `spanprof
  // recover` reads them).
  std::vector<std::string> files;
  if (std::filesystem::exists(stream + ".old")) {
    files.push_back(ReadText(stream + ".old"));
  }
  files.push_back(ReadText(stream));
  absl::StatusOr<RecoveredCapture> recovered = RecoverStream(
      std::vector<std::string_view>(files.begin(), files.end()), "s.stream");
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  const Capture& capture = recovered->capture;
  std::map<uint32_t, int64_t> last;  // thread: its last span's "i"
  uint64_t with_arg = 0;
  uint64_t bare = 0;
  for (const Span& span : capture.spans) {
    if (capture.sites[span.site].name != "load.step" ||
        (span.flags & kSpanUnfinished) != 0) {
      continue;
    }
    if (span.arg_count == 0) {
      ++bare;
      continue;
    }
    ++with_arg;
    ASSERT_EQ(span.arg_count, 1u) << "span " << span.id;
    const SpanArg& arg = capture.args[span.first_arg];
    ASSERT_EQ(arg.key, "i") << "span " << span.id;
    EXPECT_GE(arg.int_value, 0);
    // A thread's spans are in start order: their "i" grows.
    const auto previous = last.find(span.thread);
    if (previous != last.end()) {
      EXPECT_GT(arg.int_value, previous->second) << "span " << span.id;
    }
    last[span.thread] = arg.int_value;
  }
  // The newest spans (the stream's last file at least) with their
  // arguments. A drain that fell a whole side buffer behind its threads
  // (a loaded machine) leaves spans without theirs: never unsaid.
  EXPECT_GT(with_arg, 1000u);
  EXPECT_LE(bare, capture.dropped_args);
}

// A thread pool's worker runs many tasks under a context that record
// nothing: each empty scope's push is withdrawn at its end (it leaves no
// trace), and its side record's slot is written again. The drain must
// never stream a push that is withdrawn after it was copied: the stream
// would then hold a scope that never ends (the worker's later spans
// parented to the context's span) and miss the record written in its
// place (an argument). The session end reads its capture back from the
// stream.
TEST(StreamConcurrencyTest, EmptyContextScopesLeaveNoTraceInTheStream) {
  TempDir dir;
  Config config = QuietConfig(dir, "");
  config.stream_path = dir.File("s.stream");
  config.keep_stream = true;
  const std::string stream = dir.File("s.stream");
  Profile(config, "load.root", [&stream] {
    const Context ctx = CurrentContext();
    std::atomic<bool> stop{false};
    std::atomic<int64_t> done{0};
    std::thread worker([ctx, &stop, &done] {
      for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        for (int k = 0; k < 16; ++k) {
          const ContextScope empty(ctx);  // a task that records nothing
        }
        SPANPROF_SCOPE("load.task");
        SPANPROF_ARG("i", i);
        done.store(i + 1, std::memory_order_relaxed);
      }
    });
    // Until the drain has written several times while the worker ran.
    while (done.load() < 1000) std::this_thread::yield();
    WaitForStreamWrites(stream, 8);
    stop.store(true);
    worker.join();
  });
  absl::StatusOr<RecoveredCapture> recovered =
      RecoverStream(ReadText(stream), "s.stream");
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  const Capture& capture = recovered->capture;
  uint64_t tasks = 0;
  int64_t next = 0;
  for (const Span& span : capture.spans) {
    if (capture.sites[span.site].name != "load.task") continue;
    ++tasks;
    // Opened outside every scope: a root of the worker's thread.
    ASSERT_EQ(span.parent_id, 0u) << "task " << next;
    ASSERT_EQ(span.arg_count, 1u) << "task " << next;
    EXPECT_EQ(capture.args[span.first_arg].int_value, next);
    ++next;
  }
  EXPECT_GT(tasks, 1000u);
}

}  // namespace
}  // namespace spanprof
