// Named counters on many threads at once: every thread's counts land on its
// own spans, exactly, while other threads count the same names.
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"

namespace spanprof {
namespace {

constexpr int kThreads = 4;
constexpr int kItems = 2000;

void Work(int thread) {
  for (int i = 0; i < kItems; ++i) {
    SPANPROF_SCOPE("item");
    SPANPROF_ARG("thread", thread);
    SPANPROF_COUNT("units", i + 1);
    {
      SPANPROF_SCOPE("step");
      SPANPROF_COUNT("units", thread);
    }
  }
}

TEST(CounterConcurrencyTest, EachThreadsCountsLandOnItsOwnSpans) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(Work, t + 1);
  for (std::thread& t : threads) t.join();
  const Capture c = StopRecording();
  ASSERT_EQ(c.dropped_events, 0u);
  EXPECT_EQ(c.dropped_args, 0u);
  std::vector<int64_t> item_sum(kThreads + 1, 0);
  std::vector<int64_t> step_sum(kThreads + 1, 0);
  std::vector<int64_t> item_thread(c.spans.size(), -1);
  for (size_t i = 0; i < c.spans.size(); ++i) {
    const Span& s = c.spans[i];
    int64_t thread = -1;
    int64_t units = 0;
    for (uint32_t a = s.first_arg; a < s.first_arg + s.arg_count; ++a) {
      if (c.args[a].key == "thread") thread = c.args[a].int_value;
      if (c.args[a].key == "units") units = c.args[a].int_value;
    }
    item_thread[i] = thread;
    if (c.sites[s.site].name == "item") {
      ASSERT_GE(thread, 1);
      item_sum[static_cast<size_t>(thread)] += units;
    } else {
      const int64_t parent = item_thread[s.parent_id - 1];
      ASSERT_GE(parent, 1);
      EXPECT_EQ(units, parent);  // the step's own count, never its parent's
      step_sum[static_cast<size_t>(parent)] += units;
    }
  }
  for (int t = 1; t <= kThreads; ++t) {
    EXPECT_EQ(item_sum[t], int64_t{kItems} * (kItems + 1) / 2) << t;
    EXPECT_EQ(step_sum[t], int64_t{kItems} * t) << t;
  }
}

}  // namespace
}  // namespace spanprof
