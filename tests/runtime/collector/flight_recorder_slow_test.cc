// A flight recorder left running for an hour, time-compressed (labels slow +
// concurrency): 200 million spans through a 1 million ring cap on two
// threads, with an argument and a heartbeat on the way. The resident set is
// sampled at twenty points of the run; the test checks that it stays within
// the memory the session forecast at start at every point, that only the
// side buffer grows once the rings are full, and that the spans the flight
// recorder ends with are the newest ones, with their arguments. Memory is read
// from /proc, never timed.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/proc_status.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/spanprof.h"
#include "tests/runtime/capture_checks.h"

namespace spanprof {
namespace {

using bench::ResetPeakRss;
using bench::StatusKib;

void Report(const std::string& key, int64_t value) {
  std::printf("[ figure   ] %s = %lld\n", key.c_str(),
              static_cast<long long>(value));
  std::fflush(stdout);
  ::testing::Test::RecordProperty(key, std::to_string(value));
}

constexpr uint64_t kTotal = 200'000'000;
constexpr uint64_t kCap = 1'000'000;
constexpr int kThreads = 2;
constexpr int kSamples = 20;
constexpr uint64_t kStepsPerThread = kTotal / 2 / kThreads;  // 2 spans a step
constexpr uint64_t kArgEvery = 64;                           // steps

TEST(FlightRecorderTest, TwoHundredMillionSpansStayWithinTheForecast) {
  const uint64_t forecast = PredictedMemoryBytes(kCap, OverflowPolicy::kRing);
  const int64_t rss_before = StatusKib("VmRSS");
  const bool peak_reset = ResetPeakRss();
  ASSERT_TRUE(
      StartRecording({.max_events = kCap, .overflow = OverflowPolicy::kRing})
          .ok());
  // Thread 0 samples the resident set each 1/kSamples of its steps; the
  // other thread runs at its own pace (both record the whole time).
  std::vector<int64_t> rss(kSamples, 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      for (uint64_t i = 0; i < kStepsPerThread; ++i) {
        SPANPROF_SCOPE("flight.outer");
        if (i % kArgEvery == 0) SPANPROF_ARG("step", static_cast<int64_t>(i));
        SPANPROF_SCOPE("flight.inner");
        Heartbeat(1);
        if (t == 0 && (i + 1) % (kStepsPerThread / kSamples) == 0) {
          rss[(i + 1) / (kStepsPerThread / kSamples) - 1] = StatusKib("VmRSS");
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const int64_t peak_recording = StatusKib("VmHWM");
  const Capture c = StopRecording();
  const analysis::Summary summary = analysis::Summarize(c);

  for (int i = 0; i < kSamples; ++i) {
    Report("flight_rss_growth_at_" + std::to_string((i + 1) * 5) + "pct_kib",
           rss[i] - rss_before);
  }
  Report("flight_forecast_kib", static_cast<int64_t>(forecast / 1024));
  Report("flight_peak_rss_growth_while_recording_kib",
         peak_recording - rss_before);
  Report("flight_retained_spans", static_cast<int64_t>(c.spans.size()));

  // Exact accounting: every span is either retained or counted as dropped.
  auto kept = testing::RetainedByName(c);
  auto dropped = testing::DroppedByName(c);
  EXPECT_EQ(kept["flight.outer"] + dropped["flight.outer"], kTotal / 2);
  EXPECT_EQ(kept["flight.inner"] + dropped["flight.inner"], kTotal / 2);
  EXPECT_LE(c.spans.size(), kCap);
  EXPECT_GE(c.spans.size(), kCap * 9 / 10);
  EXPECT_FALSE(summary.complete);
  EXPECT_TRUE(summary.validation_issues.empty())
      << summary.validation_issues.front().message;

  // The flight recorder ends with the newest spans, and their arguments:
  // each thread's last outer span is retained, and every retained outer span
  // whose step carried an argument still has it.
  ASSERT_EQ(c.threads.size(), static_cast<size_t>(kThreads));
  uint64_t with_arg_expected = 0;
  uint64_t with_arg = 0;
  std::vector<int64_t> last_step(kThreads, -1);
  for (const Span& s : c.spans) {
    if (c.sites[s.site].name != "flight.outer" || s.arg_count == 0) continue;
    ++with_arg;
    const SpanArg& arg = c.args[s.first_arg];
    EXPECT_EQ(arg.key, "step");
    last_step[s.thread] = std::max(last_step[s.thread], arg.int_value);
  }
  for (const Span& s : c.spans) {
    if (c.sites[s.site].name == "flight.outer") ++with_arg_expected;
  }
  with_arg_expected /= kArgEvery;
  Report("flight_retained_outer_spans_with_an_argument",
         static_cast<int64_t>(with_arg));
  // One outer span in kArgEvery carries an argument; the retained window
  // keeps (nearly) all of theirs (a window edge may cut one per thread).
  EXPECT_GE(with_arg + kThreads, with_arg_expected);
  for (int t = 0; t < kThreads; ++t) {
    // The newest argument-carrying step of each thread is in the window.
    EXPECT_EQ(last_step[t], static_cast<int64_t>((kStepsPerThread - 1) /
                                                 kArgEvery * kArgEvery))
        << "thread " << t;
  }

  if (testing::kSanitized) return;  // shadow memory: figures only
  // Within the forecast the session printed at start, the whole time.
  if (peak_reset) {
    EXPECT_LT(static_cast<uint64_t>(peak_recording - rss_before) * 1024,
              forecast);
  }
  for (int i = 0; i < kSamples; ++i) {
    EXPECT_LT(static_cast<uint64_t>(rss[i] - rss_before) * 1024, forecast)
        << "at " << (i + 1) * 5 << "% of the run";
  }
  // Flat once the rings are full: from 10% of the run on, the span records
  // take no new memory (the ring reuses its chunks); what may still grow is
  // the side buffer (the arguments), within its share of the forecast.
  const int64_t after_rings_full = rss[kSamples - 1] - rss[1];
  Report("flight_rss_growth_from_10pct_to_the_end_kib", after_rings_full);
  EXPECT_LT(
      static_cast<uint64_t>(std::max<int64_t>(after_rings_full, 0)) * 1024,
      forecast - kCap * 32);
}

}  // namespace
}  // namespace spanprof
