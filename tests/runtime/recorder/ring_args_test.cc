// Ring mode (flight recorder) on a long capture with arguments and counts:
// the newest spans are kept with their arguments, on one thread and on
// several, after 20 laps of the ring. Each span carries one or two
// arguments and one count: two or three side records, within the three per
// span that ring mode budgets (docs/threads.md).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"

namespace spanprof {
namespace {

// Records `spans` spans, each with `args` arguments whose value is the span's
// sequence number, and one count.
void RecordWithArgs(int64_t spans, int args) {
  for (int64_t i = 0; i < spans; ++i) {
    SPANPROF_SCOPE("ring.item");
    SPANPROF_ARG("seq", i);
    if (args > 1) SPANPROF_ARG("size", i * 2);
    SPANPROF_COUNT("ring.count");
  }
}

struct ArgCoverage {
  size_t spans = 0;
  size_t with_all_args = 0;  // spans that kept every argument and the count
  int64_t oldest_seq = INT64_MAX;
};

ArgCoverage Coverage(const Capture& c, int args) {
  ArgCoverage out;
  for (const Span& s : c.spans) {
    if (c.sites[s.site].name != "ring.item") continue;
    ++out.spans;
    int numeric = 0;
    bool counted = false;
    for (uint32_t k = s.first_arg; k < s.first_arg + s.arg_count; ++k) {
      if (c.args[k].is_counter) {
        counted = c.args[k].key == "ring.count" && c.args[k].int_value == 1;
      } else {
        ++numeric;
        if (c.args[k].key == "seq") {
          out.oldest_seq = std::min(out.oldest_seq, c.args[k].int_value);
        }
      }
    }
    if (numeric == args && counted) ++out.with_all_args;
  }
  return out;
}

class RingArgsTest : public ::testing::TestWithParam<int> {};

TEST_P(RingArgsTest, OneThreadKeepsTheNewestSpansWithTheirArguments) {
  const int args = GetParam();
  constexpr uint64_t kCap = 10'000;
  constexpr int64_t kSpans = 200'000;  // 20 laps of the ring
  ASSERT_TRUE(
      StartRecording({.max_events = kCap, .overflow = OverflowPolicy::kRing})
          .ok());
  RecordWithArgs(kSpans, args);
  const Capture c = StopRecording();
  const ArgCoverage cov = Coverage(c, args);
  ASSERT_GE(cov.spans, kCap * 9 / 10);
  // Every kept span but a handful at the wrap point keeps all it recorded.
  EXPECT_GE(cov.with_all_args, cov.spans - 16)
      << cov.with_all_args << " of " << cov.spans << " spans kept all " << args
      << " arguments and the count";
  EXPECT_GE(cov.oldest_seq, kSpans - static_cast<int64_t>(kCap) - 16);
}

TEST_P(RingArgsTest, FourThreadsKeepTheirNewestSpansWithTheirArguments) {
  const int args = GetParam();
  constexpr uint64_t kCap = 20'000;
  constexpr int64_t kSpansPerThread = 100'000;
  ASSERT_TRUE(
      StartRecording({.max_events = kCap, .overflow = OverflowPolicy::kRing})
          .ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([args] { RecordWithArgs(kSpansPerThread, args); });
  }
  for (std::thread& t : threads) t.join();
  const Capture c = StopRecording();
  const ArgCoverage cov = Coverage(c, args);
  ASSERT_GE(cov.spans, kCap / 2);
  EXPECT_GE(cov.with_all_args, cov.spans - 64)
      << cov.with_all_args << " of " << cov.spans << " spans kept all " << args
      << " arguments and the count";
}

INSTANTIATE_TEST_SUITE_P(Arguments, RingArgsTest, ::testing::Values(1, 2));

// The arguments and counts the ring overwrote with their spans are dropped
// for the cap, as the spans themselves are; "no open span" stays for what
// the program really made outside any span (one stray argument here, after
// the laps, where the ring still holds its records).
TEST(RingArgDropsTest, ArgumentsOverwrittenWithTheirSpansCountAsTheCap) {
  constexpr uint64_t kCap = 10'000;
  ASSERT_TRUE(
      StartRecording({.max_events = kCap, .overflow = OverflowPolicy::kRing})
          .ok());
  RecordWithArgs(200'000, 2);
  SPANPROF_ARG("stray", 1);  // no span open
  { SPANPROF_SCOPE("ring.last"); }
  const Capture c = StopRecording();
  uint64_t cap = 0;
  for (const ArgDrop& drop : c.arg_drops) {
    if (drop.reason == "no_open_span") {
      EXPECT_EQ(drop.name, "stray");
      EXPECT_EQ(drop.count, 1u);
    }
    if (drop.reason == "cap") {
      EXPECT_TRUE(drop.name == "seq" || drop.name == "size" ||
                  drop.name == "ring.count")
          << drop.name;
      cap += drop.count;
    }
  }
  EXPECT_GT(cap, 0u);
  EXPECT_TRUE(
      std::any_of(c.arg_drops.begin(), c.arg_drops.end(), [](const ArgDrop& d) {
        return d.reason == "no_open_span" && d.name == "stray";
      }));
}

}  // namespace
}  // namespace spanprof
