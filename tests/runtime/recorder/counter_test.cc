// Named counters (SPANPROF_COUNT) on one thread: self counts on the innermost
// open span, one entry per name, after the numeric arguments; counts with no
// span to hold them, of a dropped span, or of a 65th name are accounted for.
#include <array>
#include <map>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"
#include "tests/testing/lookup.h"

namespace spanprof {
namespace {

using ::spanprof::testing::FindSpan;

// The span's counter entries, by name.
std::map<std::string, int64_t> CountersOf(const Capture& c, const Span& s) {
  std::map<std::string, int64_t> counters;
  for (uint32_t a = s.first_arg; a < s.first_arg + s.arg_count; ++a) {
    if (!c.args[a].is_counter) continue;
    EXPECT_FALSE(counters.contains(c.args[a].key)) << c.args[a].key;
    EXPECT_FALSE(c.args[a].is_double);
    counters[c.args[a].key] = c.args[a].int_value;
  }
  return counters;
}

void CountTwice() {
  SPANPROF_COUNT("shared.name", 2);
  SPANPROF_COUNT("shared.name", 3);  // another site, the same counter
}

TEST(CounterTest, CountsAreSelfCountsOfTheInnermostOpenSpan) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("outer");
    SPANPROF_COUNT("bytes", 10);
    {
      SPANPROF_SCOPE("inner");
      SPANPROF_COUNT("bytes", 4);
      SPANPROF_COUNT("probes");  // n defaults to 1
      SPANPROF_COUNT("probes");
    }
    SPANPROF_COUNT("bytes", 5);  // after the child: still the outer's
    { SPANPROF_SCOPE("quiet"); }
    SPANPROF_COUNT("bytes", 1);
  }
  const Capture c = StopRecording();
  const Span* outer = FindSpan(c, "outer");
  const Span* inner = FindSpan(c, "inner");
  const Span* quiet = FindSpan(c, "quiet");
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  ASSERT_NE(quiet, nullptr);
  // Three flushes of "bytes" on the outer span (before each child and at its
  // end) are one entry: the sum.
  EXPECT_EQ(CountersOf(c, *outer),
            (std::map<std::string, int64_t>{{"bytes", 16}}));
  EXPECT_EQ(CountersOf(c, *inner),
            (std::map<std::string, int64_t>{{"bytes", 4}, {"probes", 2}}));
  EXPECT_EQ(quiet->arg_count, 0u);  // counted nothing: no entries
  EXPECT_EQ(c.dropped_args, 0u);
}

TEST(CounterTest, SitesWithOneNameAreOneCounter) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("span");
    CountTwice();
    CountTwice();
  }
  const Capture c = StopRecording();
  const Span* span = FindSpan(c, "span");
  ASSERT_NE(span, nullptr);
  EXPECT_EQ(CountersOf(c, *span),
            (std::map<std::string, int64_t>{{"shared.name", 10}}));
}

TEST(CounterTest, CounterEntriesFollowTheNumericArguments) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("span");
    SPANPROF_COUNT("work", 7);
    { SPANPROF_SCOPE("child"); }  // flushes "work" before the argument
    SPANPROF_ARG("size", 99);
  }
  const Capture c = StopRecording();
  const Span* span = FindSpan(c, "span");
  ASSERT_NE(span, nullptr);
  ASSERT_EQ(span->arg_count, 2u);
  EXPECT_EQ(c.args[span->first_arg].key, "size");
  EXPECT_FALSE(c.args[span->first_arg].is_counter);
  EXPECT_EQ(c.args[span->first_arg + 1].key, "work");
  EXPECT_TRUE(c.args[span->first_arg + 1].is_counter);
  EXPECT_EQ(c.args[span->first_arg + 1].int_value, 7);
}

TEST(CounterTest, CountsWithNoSessionAreNotRecorded) {
  {
    SPANPROF_SCOPE("before");
    SPANPROF_COUNT("early", 5);
  }
  SPANPROF_COUNT("early", 5);  // no span, no session
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE("during"); }
  const Capture c = StopRecording();
  const Span* during = FindSpan(c, "during");
  ASSERT_NE(during, nullptr);
  EXPECT_EQ(during->arg_count, 0u);
  EXPECT_EQ(c.dropped_args, 0u);
}

TEST(CounterTest, CountsWithNoSpanOpenAreReportedAsDropped) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::thread worker([] {
    SPANPROF_COUNT("orphan", 3);  // no span open on this thread
    { SPANPROF_SCOPE("worker.span"); }
    SPANPROF_COUNT("orphan", 4);  // after the last span: lost at exit
  });
  worker.join();
  const Capture c = StopRecording();
  const Span* span = FindSpan(c, "worker.span");
  ASSERT_NE(span, nullptr);
  EXPECT_EQ(span->arg_count, 0u);
  EXPECT_EQ(c.dropped_args, 2u);  // one flush with no span, one at exit
}

TEST(CounterTest, PendingCountsOfAnEarlierSessionDoNotLeakIntoTheNext) {
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE("first"); }
  SPANPROF_COUNT("stale", 9);  // pending when the session stops
  StopRecording();
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE("second"); }
  const Capture c = StopRecording();
  const Span* second = FindSpan(c, "second");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->arg_count, 0u);
  EXPECT_EQ(c.dropped_args, 0u);
}

TEST(CounterTest, ADroppedSpansCountsGoWithIt) {
  // Two spans and two side records fit the cap.
  ASSERT_TRUE(StartRecording({.max_events = 2}).ok());
  {
    SPANPROF_SCOPE("kept");
    SPANPROF_COUNT("c", 1);
    { SPANPROF_SCOPE("kept.child"); }
    {
      SPANPROF_SCOPE("dropped");  // over the cap
      SPANPROF_COUNT("c", 100);
      { SPANPROF_SCOPE("dropped.child"); }
      SPANPROF_COUNT("c", 1000);
    }
    SPANPROF_COUNT("c", 10);
  }
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 2u);
  EXPECT_EQ(c.dropped_events, 2u);
  const Span* kept = FindSpan(c, "kept");
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(CountersOf(c, *kept), (std::map<std::string, int64_t>{{"c", 11}}));
  // The dropped span's two flushes (before its child, at its end) go with
  // it, counted and named after it (reason "cap").
  EXPECT_EQ(c.dropped_args, 2u);
  ASSERT_EQ(c.arg_drops.size(), 1u);
  ASSERT_TRUE(c.arg_drops[0].site.has_value());
  EXPECT_EQ(c.sites[*c.arg_drops[0].site].name, "dropped");
  EXPECT_EQ(c.arg_drops[0].name, "c");
  EXPECT_TRUE(c.arg_drops[0].is_counter);
  EXPECT_EQ(c.arg_drops[0].reason, "cap");
  EXPECT_EQ(c.arg_drops[0].count, 2u);
}

TEST(CounterTest, ManyCountingSitesInOneSpanAreFlushedEarlyAndKept) {
  // More sites than a thread holds between two begins or ends: the held
  // counts are written early, to the same span.
  static std::array<internal::CounterStatic, 3 * internal::kMaxPendingCounts>
      sites;
  static std::array<uint64_t, sites.size()> slots;
  for (auto& site : sites) site.name = "many";
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("span");
    for (size_t i = 0; i < sites.size(); ++i) {
      internal::AddCount(sites[i], slots[i], i + 1);
      internal::AddCount(sites[i], slots[i], 1);
    }
  }
  const Capture c = StopRecording();
  const Span* span = FindSpan(c, "span");
  ASSERT_NE(span, nullptr);
  const int64_t n = static_cast<int64_t>(sites.size());
  EXPECT_EQ(CountersOf(c, *span),
            (std::map<std::string, int64_t>{{"many", n * (n + 1) / 2 + n}}));
  EXPECT_EQ(c.dropped_args, 0u);
}

TEST(CounterTest, CounterRecordsCountAgainstTheCap) {
  // The cap of one span allows one side record: the second flush (two
  // counts, which no end record can carry) is lost, and reported.
  ASSERT_TRUE(StartRecording({.max_events = 1}).ok());
  {
    SPANPROF_SCOPE("kept");
    SPANPROF_COUNT("c", 1);
    { SPANPROF_SCOPE("over.the.cap"); }  // flushes 1
    SPANPROF_COUNT("c", 10);             // flushed at the end: refused
    SPANPROF_COUNT("d", 5);              // flushed at the end: refused
  }
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_EQ(CountersOf(c, c.spans[0]),
            (std::map<std::string, int64_t>{{"c", 1}}));
  EXPECT_EQ(c.dropped_args, 2u);
}

// A span's one pending count below 2^21 rides in its end record
// (kEndCountRecord): no side record, so the side budget does not refuse it.
// A larger count is a side record, refused here like any other.
TEST(CounterTest, ASpansOneSmallCountRidesInItsEndRecord) {
  constexpr int64_t kLargest = (int64_t{1} << 21) - 1;
  for (const int64_t last : {kLargest, kLargest + 1}) {
    ASSERT_TRUE(StartRecording({.max_events = 1}).ok());
    {
      SPANPROF_SCOPE("kept");
      SPANPROF_COUNT("c", 1);
      { SPANPROF_SCOPE("over.the.cap"); }  // the one side record
      SPANPROF_COUNT("c", last);           // flushed at the end
    }
    const Capture c = StopRecording();
    ASSERT_EQ(c.spans.size(), 1u);
    if (last == kLargest) {
      EXPECT_EQ(CountersOf(c, c.spans[0]),
                (std::map<std::string, int64_t>{{"c", 1 + kLargest}}));
      EXPECT_EQ(c.dropped_args, 0u);
    } else {
      EXPECT_EQ(CountersOf(c, c.spans[0]),
                (std::map<std::string, int64_t>{{"c", 1}}));
      EXPECT_EQ(c.dropped_args, 1u);
    }
  }
}

TEST(CounterTest, ASixtyFifthNameIsCountedAsLost) {
  // Counter names are process-wide; this test's process interns these only.
  static std::array<std::string, internal::kMaxCounters + 1> names;
  static std::array<internal::CounterStatic, internal::kMaxCounters + 1>
      counters;
  static std::array<uint64_t, internal::kMaxCounters + 1> slots;
  for (size_t i = 0; i < counters.size(); ++i) {
    names[i] = "counter." + std::to_string(i);
    counters[i].name = names[i].c_str();
  }
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("span");
    for (size_t i = 0; i < counters.size(); ++i) {
      internal::AddCount(counters[i], slots[i], 1);
    }
    internal::AddCount(counters.back(), slots.back(), 1);  // the 65th again
  }
  const Capture c = StopRecording();
  const Span* span = FindSpan(c, "span");
  ASSERT_NE(span, nullptr);
  EXPECT_EQ(CountersOf(c, *span).size(), internal::kMaxCounters);
  EXPECT_EQ(c.dropped_args, 2u);
}

}  // namespace
}  // namespace spanprof
