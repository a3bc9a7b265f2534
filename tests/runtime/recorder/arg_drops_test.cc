// Named drops (Capture::arg_drops): every argument or count the capture
// loses is counted by span site, name, kind and reason — an argument made
// with no span open, one inside a span the cap dropped, one the side budget
// refused — and the named drops add up to `dropped_args`.
#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recorder/recorder_internal.h"
#include "spanprof/spanprof.h"

namespace spanprof {
namespace {

using ::testing::UnorderedElementsAre;

// An ArgDrop with its site by name ("" for none), for readable matching.
struct NamedDrop {
  std::string site;
  std::string name;
  bool is_counter;
  std::string reason;
  uint64_t count;

  friend bool operator==(const NamedDrop&, const NamedDrop&) = default;
  friend void PrintTo(const NamedDrop& d, std::ostream* os) {
    *os << "{" << d.site << ", " << d.name << ", "
        << (d.is_counter ? "count" : "arg") << ", " << d.reason << ", "
        << d.count << "}";
  }
};

std::vector<NamedDrop> NamedDrops(const Capture& c) {
  std::vector<NamedDrop> out;
  uint64_t total = 0;
  for (const ArgDrop& d : c.arg_drops) {
    std::string site;
    if (d.site.has_value()) {
      EXPECT_LT(*d.site, c.sites.size());
      if (*d.site < c.sites.size()) site = c.sites[*d.site].name;
    }
    out.push_back(NamedDrop{site, d.name, d.is_counter, d.reason, d.count});
    total += d.count;
  }
  EXPECT_EQ(total, c.dropped_args) << "the named drops add up to the total";
  return out;
}

// ninja's case: an argument set one line before its span opens, on a thread
// where nothing else is open. It is dropped, and named after the span that
// began next on its thread.
TEST(ArgDropsTest, AnArgumentBeforeItsSpanOpensIsNamedAfterThatSpan) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::thread loader([] {
    SPANPROF_ARG("bytes", 4096);
    SPANPROF_SCOPE("log.load");
  });
  loader.join();
  const Capture c = StopRecording();
  EXPECT_EQ(c.dropped_args, 1u);
  EXPECT_THAT(NamedDrops(c),
              UnorderedElementsAre(
                  NamedDrop{"log.load", "bytes", false, "no_open_span", 1}));
}

// A thread that never opens a span: its argument is still counted (the
// thread is bound by its first argument), with no site.
TEST(ArgDropsTest, AnArgumentOnAThreadWithoutSpansIsCounted) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::thread lonely([] {
    SPANPROF_ARG("lonely", 1);
    SPANPROF_ARG_STR("note", "nothing is open here");
  });
  lonely.join();
  const Capture c = StopRecording();
  EXPECT_THAT(
      NamedDrops(c),
      UnorderedElementsAre(NamedDrop{"", "lonely", false, "no_open_span", 1},
                           NamedDrop{"", "note", false, "no_open_span", 1}));
}

// Counts made with no span open: before the thread's first span (named
// after it) and after its last one (lost at the thread's exit, no site).
TEST(ArgDropsTest, CountsWithNoSpanOpenAreNamed) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::thread worker([] {
    SPANPROF_COUNT("orphan", 3);
    { SPANPROF_SCOPE("worker.span"); }
    SPANPROF_COUNT("orphan", 4);
  });
  worker.join();
  const Capture c = StopRecording();
  EXPECT_THAT(NamedDrops(c),
              UnorderedElementsAre(
                  NamedDrop{"worker.span", "orphan", true, "no_open_span", 1},
                  NamedDrop{"", "orphan", true, "no_open_span", 1}));
}

// SPANPROF_MAX_EVENTS reached: the arguments and counts of the spans the cap
// dropped go with them, counted and named after each dropped span (the
// innermost one when dropped spans nest).
TEST(ArgDropsTest, TheCapsDropsAreNamedAfterTheDroppedSpan) {
  ASSERT_TRUE(StartRecording({.max_events = 1}).ok());
  {
    SPANPROF_SCOPE("kept");
    for (int i = 0; i < 3; ++i) {
      SPANPROF_SCOPE("over.the.cap");
      SPANPROF_ARG("size", i);
      SPANPROF_COUNT("items", 2);
      {
        SPANPROF_SCOPE("nested.drop");
        SPANPROF_ARG_STR("path", "a/b");
      }
    }
  }
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_EQ(c.dropped_events, 6u);
  EXPECT_THAT(
      NamedDrops(c),
      UnorderedElementsAre(NamedDrop{"over.the.cap", "size", false, "cap", 3},
                           NamedDrop{"over.the.cap", "items", true, "cap", 3},
                           NamedDrop{"nested.drop", "path", false, "cap", 3}));
}

// The side budget (one record per span of the cap) runs out: what it
// refuses is named after the innermost span open then, found by walking
// back over the closed children.
TEST(ArgDropsTest, SideBudgetDropsAreNamedAfterTheInnermostOpenSpan) {
  ASSERT_TRUE(StartRecording({.max_events = 4}).ok());
  {
    SPANPROF_SCOPE("outer");
    for (int64_t i = 0; i < 4; ++i) SPANPROF_ARG("fits", i);  // the budget
    { SPANPROF_SCOPE("child.one"); }
    { SPANPROF_SCOPE("child.two"); }
    SPANPROF_ARG("late", 1);
    SPANPROF_ARG("late", 2);  // the same place again
    {
      SPANPROF_SCOPE("child.three");
      SPANPROF_ARG("inner", 3);
    }
    SPANPROF_ARG("later", 4);          // back in outer, past child.three's end
    SPANPROF_COUNT("work", 1u << 22);  // too large for an end record
  }
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 4u);
  EXPECT_THAT(NamedDrops(c),
              UnorderedElementsAre(
                  NamedDrop{"outer", "late", false, "side_budget", 2},
                  NamedDrop{"child.three", "inner", false, "side_budget", 1},
                  NamedDrop{"outer", "later", false, "side_budget", 1},
                  NamedDrop{"outer", "work", true, "side_budget", 1}));
}

// More distinct drops than a thread's table holds: the rest are counted,
// as "unknown", and the total stays exact.
TEST(ArgDropsTest, ATableOverflowIsCountedAsUnknown) {
  constexpr size_t kKeys = internal::kDropTableEntries + 8;
  static std::array<std::string, kKeys> names;
  static std::array<internal::SiteStatic, kKeys> keys;
  for (size_t i = 0; i < kKeys; ++i) {
    names[i] = "key." + std::to_string(i);
    keys[i].name = names[i].c_str();
  }
  ASSERT_TRUE(StartRecording({.max_events = 1}).ok());
  {
    SPANPROF_SCOPE("kept");
    SPANPROF_ARG("fits", 0);  // the one side record
    for (size_t i = 0; i < kKeys; ++i) internal::AddIntArg(keys[i], 1);
  }
  const Capture c = StopRecording();
  const std::vector<NamedDrop> drops = NamedDrops(c);
  EXPECT_EQ(c.dropped_args, kKeys);
  ASSERT_EQ(drops.size(), internal::kDropTableEntries + 1);
  size_t unknown = 0;
  for (const NamedDrop& d : drops) {
    if (d.reason == "unknown") {
      ++unknown;
      EXPECT_EQ(d.count, 8u);
      EXPECT_EQ(d.name, "");
      EXPECT_EQ(d.site, "");
    } else {
      EXPECT_EQ(d.reason, "side_budget");
      EXPECT_EQ(d.site, "kept");
      EXPECT_EQ(d.count, 1u);
    }
  }
  EXPECT_EQ(unknown, 1u);
}

// A session ended while the calling thread holds counts (a program that
// stops recording, or exits, inside a span): they are written to its
// innermost open span, not lost.
TEST(ArgDropsTest, TheStoppingThreadsPendingCountsAreKept) {
  ASSERT_TRUE(StartRecording({}).ok());
  Capture c;
  {
    SPANPROF_SCOPE("still.open.at.stop");
    SPANPROF_COUNT("bytes", 7);
    c = StopRecording();
  }
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_EQ(c.dropped_args, 0u);
  EXPECT_TRUE(c.arg_drops.empty());
  ASSERT_EQ(c.spans[0].arg_count, 1u);
  EXPECT_EQ(c.args[c.spans[0].first_arg].key, "bytes");
  EXPECT_EQ(c.args[c.spans[0].first_arg].int_value, 7);
}

}  // namespace
}  // namespace spanprof
