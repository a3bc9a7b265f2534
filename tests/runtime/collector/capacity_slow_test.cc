// Heavy runs (labels slow + concurrency): 10,000 short-lived threads, and
// 100 million spans under a 1 million cap in both overflow policies. Memory
// is checked with getrusage/proc figures, never with a time limit; the
// figures are printed and recorded as test properties.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/src/recorder/ring_memory.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/spanprof.h"
#include "tests/runtime/capture_checks.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using testing::DroppedByName;
using testing::ExpectValidCapture;
using testing::PeakRssKib;
using testing::RetainedByName;

// The resident set right now, in KiB.
int64_t CurrentRssKib() {
  std::ifstream in("/proc/self/statm");
  int64_t pages = 0;
  int64_t resident = 0;
  in >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

void Report(const std::string& key, int64_t value) {
  std::printf("[ figure   ] %s = %lld\n", key.c_str(),
              static_cast<long long>(value));
  std::fflush(stdout);
  ::testing::Test::RecordProperty(key, std::to_string(value));
}

TEST(CapacityTest, TenThousandShortLivedThreads) {
  constexpr int kThreads = 10'000;
  constexpr int kConcurrent = 16;
  // Warm up thread creation (stacks, the allocator's arenas) outside the
  // measurement, so the growth below is the recorder's.
  for (int i = 0; i < kConcurrent; ++i) std::thread([] {}).join();
  const int64_t rss_before = PeakRssKib();
  ASSERT_TRUE(StartRecording({}).ok());
  int started = 0;
  while (started < kThreads) {
    std::vector<std::thread> batch;
    for (int i = 0; i < kConcurrent && started < kThreads; ++i, ++started) {
      batch.emplace_back([] {
        SPANPROF_SCOPE("churn.task");
        SPANPROF_ARG("bytes", 1);
        { SPANPROF_SCOPE("churn.step"); }
        { SPANPROF_SCOPE("churn.step"); }
      });
    }
    for (std::thread& t : batch) t.join();  // each exits before collection
  }
  const int64_t rss_recorded = PeakRssKib();
  const Capture c = StopRecording();
  const int64_t rss_collected = PeakRssKib();
  EXPECT_EQ(c.threads.size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(RetainedByName(c)["churn.task"], static_cast<uint64_t>(kThreads));
  EXPECT_EQ(RetainedByName(c)["churn.step"],
            2u * static_cast<uint64_t>(kThreads));
  EXPECT_EQ(c.dropped_events, 0u);
  ExpectValidCapture(c);
  const int64_t per_thread_bytes =
      (rss_recorded - rss_before) * 1024 / kThreads;
  Report("churn_peak_rss_growth_while_recording_kib",
         rss_recorded - rss_before);
  Report("churn_peak_rss_growth_with_collection_kib",
         rss_collected - rss_before);
  Report("churn_rss_bytes_per_thread", per_thread_bytes);
  // Three spans per thread: a thread keeps one small first chunk, its ring
  // and a few side records, a few KiB, not a full-size chunk (128 KiB).
  if (!testing::kSanitized) {
    EXPECT_LT(per_thread_bytes, 16 * 1024);
    EXPECT_LT(rss_collected - rss_before, 256 * 1024);
  }
}

// Records `total` spans on `threads` threads (an outer span and an inner one
// per step, an argument every 64 steps), sampling the resident set.
struct LongRun {
  int64_t rss_at_10_percent_kib = 0;
  int64_t rss_at_end_of_recording_kib = 0;
  uint64_t ring_bytes_at_10_percent = 0;  // internal::RingBytesAllocated()
  uint64_t ring_bytes_at_end = 0;
  Capture capture;
};

LongRun RecordLong(OverflowPolicy policy, uint64_t total, int threads,
                   uint64_t cap) {
  LongRun run;
  EXPECT_TRUE(StartRecording({.max_events = cap, .overflow = policy}).ok());
  const uint64_t steps_per_thread = total / 2 / static_cast<uint64_t>(threads);
  std::atomic<int> at_10{0};
  std::atomic<bool> sampled{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (uint64_t i = 0; i < steps_per_thread; ++i) {
        SPANPROF_SCOPE("long.outer");
        if (i % 64 == 0) SPANPROF_ARG("i", static_cast<int64_t>(i));
        SPANPROF_SCOPE("long.inner");
        Heartbeat(1);
        if (i == steps_per_thread / 10) {
          at_10.fetch_add(1);
          if (t == 0) {
            while (at_10.load() < threads) std::this_thread::yield();
            run.rss_at_10_percent_kib = CurrentRssKib();
            run.ring_bytes_at_10_percent = internal::RingBytesAllocated();
            sampled.store(true);
          }
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  run.rss_at_end_of_recording_kib = CurrentRssKib();
  run.ring_bytes_at_end = internal::RingBytesAllocated();
  run.capture = StopRecording();
  EXPECT_TRUE(sampled.load());
  return run;
}

void CheckLongRun(OverflowPolicy policy) {
  constexpr uint64_t kTotal = 100'000'000;
  constexpr uint64_t kCap = 1'000'000;
  constexpr int kThreads = 4;
  const std::string name = OverflowPolicyName(policy);
  const int64_t rss_before = CurrentRssKib();
  LongRun run = RecordLong(policy, kTotal, kThreads, kCap);
  const Capture& c = run.capture;
  // Exact accounting over the whole run.
  auto kept = RetainedByName(c);
  auto dropped = DroppedByName(c);
  EXPECT_EQ(kept["long.outer"] + dropped["long.outer"], kTotal / 2);
  EXPECT_EQ(kept["long.inner"] + dropped["long.inner"], kTotal / 2);
  EXPECT_LE(c.spans.size(), kCap);
  EXPECT_GE(c.spans.size(), kCap * 9 / 10);
  const analysis::Summary summary = analysis::Summarize(c);
  EXPECT_FALSE(summary.complete);
  EXPECT_TRUE(summary.validation_issues.empty())
      << summary.validation_issues.front().message;
  if (policy == OverflowPolicy::kRing) {
    // The flight recorder ends with the newest spans: the last one of each
    // thread is retained.
    EXPECT_EQ(c.threads.size(), static_cast<size_t>(kThreads));
  }
  const int64_t peak = PeakRssKib();
  Report(name + "_rss_before_kib", rss_before);
  Report(name + "_rss_after_10M_spans_kib", run.rss_at_10_percent_kib);
  Report(name + "_rss_after_100M_spans_kib", run.rss_at_end_of_recording_kib);
  Report(name + "_peak_rss_with_collection_and_summary_kib", peak);
  Report(name + "_retained_spans", static_cast<int64_t>(c.spans.size()));
  // Memory is bounded by the cap, not by the run. The span records stop
  // growing once the cap is reached (1% of the run): between 10 and 100
  // million spans the rings take (almost) no new memory. (Ring mode keeps
  // reusing its chunks; a chunk too small to reuse is replaced by a small
  // one.) Side records (the arguments) may grow up to their budget, so the
  // whole recorder stays within the prediction printed at session start.
  const uint64_t ring_growth =
      run.ring_bytes_at_end - run.ring_bytes_at_10_percent;
  Report(name + "_ring_bytes_allocated_after_10M_spans",
         static_cast<int64_t>(ring_growth));
  EXPECT_LT(ring_growth, 1024u * 1024u);
  const int64_t recorder_kib = run.rss_at_end_of_recording_kib - rss_before;
  Report(name + "_rss_growth_while_recording_kib", recorder_kib);
  if (testing::kSanitized) return;
  EXPECT_LT(static_cast<uint64_t>(recorder_kib) * 1024,
            PredictedMemoryBytes(kCap, policy));
  if (policy == OverflowPolicy::kDropNewest) {
    // Drop mode: nothing at all is recorded after the cap.
    EXPECT_LT(run.rss_at_end_of_recording_kib - run.rss_at_10_percent_kib,
              4 * 1024);
  }
  // Rings for a 1M cap plus the collector and the analysis of 1M spans.
  EXPECT_LT(peak, 1024 * 1024);
}

TEST(CapacityTest, HundredMillionSpansUnderAMillionCapDrop) {
  CheckLongRun(OverflowPolicy::kDropNewest);
}

TEST(CapacityTest, HundredMillionSpansUnderAMillionCapRing) {
  CheckLongRun(OverflowPolicy::kRing);
}

// The whole session as a program runs it: record, collect, analyse, write
// the trace and the summary, print nothing.
TEST(CapacityTest, HundredMillionSpansInAFullSession) {
  constexpr uint64_t kTotal = 100'000'000;
  constexpr int kThreads = 4;
  testing::TempDir dir;
  Config config;
  config.trace_path = dir.File("trace.json");
  config.summary_path = dir.File("summary.json");
  config.quiet = true;
  config.recording.max_events = 1'000'000;
  Profile(config, "long.session", [&] {
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t) {
      workers.emplace_back(Bind([steps = kTotal / 2 / kThreads] {
        for (uint64_t i = 0; i < steps; ++i) {
          SPANPROF_SCOPE("session.outer");
          SPANPROF_SCOPE("session.inner");
        }
      }));
    }
    for (std::thread& w : workers) w.join();
  });
  const auto summary = analysis::ReadSummary(config.summary_path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->event_count + summary->dropped_events, kTotal + 1);
  EXPECT_FALSE(summary->complete);
  const int64_t peak = PeakRssKib();
  Report("session_peak_rss_kib", peak);
  Report("session_trace_bytes",
         static_cast<int64_t>(std::filesystem::file_size(config.trace_path)));
  if (!testing::kSanitized) EXPECT_LT(peak, 1024 * 1024);
}

}  // namespace
}  // namespace spanprof
