// Named counters per span: self counts from the capture's counter entries,
// inclusive counts over same-thread descendants only.
#include "analysis/src/model/counters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "spanprof/analysis/forest.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis::internal {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::spanprof::testing::IndexOf;
using ::spanprof::testing::IntArg;

// main: 1 [0,100] > 2 [10,50] > 3 [20,30]; 1 > 4 [60,90];
// worker: 5 [15,40], a cross-thread child of 2.
Capture Nested() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t worker = b.Thread(2, "worker");
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, main, 0, 100);
  b.Add(2, 1, s, main, 10, 50);
  b.Add(3, 2, s, main, 20, 30);
  b.Add(4, 1, s, main, 60, 90);
  b.Add(5, 2, s, worker, 15, 40);
  b.Args(1, {CounterArg("bytes", 1)});
  b.Args(2,
         {IntArg("size", 7), CounterArg("allocs", 4), CounterArg("bytes", 10)});
  b.Args(3, {CounterArg("bytes", 100)});
  b.Args(4, {CounterArg("allocs", 2)});
  b.Args(5, {CounterArg("bytes", 1000)});
  return b.Build();
}

// The (self, inclusive) counts of counter `name` on the span with `id`.
struct Counts {
  int64_t self;
  int64_t inclusive;
  friend bool operator==(const Counts&, const Counts&) = default;
};
Counts Of(const SpanCounters& counters, const Capture& capture, uint64_t id,
          const std::string& name) {
  size_t k = 0;
  while (k < counters.names().size() && counters.names()[k] != name) ++k;
  const size_t i = IndexOf(capture, id);
  return {counters.self(i, k), counters.inclusive(i, k)};
}

// Same-thread parents by index, as the summary's streaming path finds them.
std::vector<uint32_t> SameThreadParents(const Capture& capture) {
  const Forest forest(capture);
  std::vector<uint32_t> parent(capture.spans.size(), SpanCounters::kNone);
  for (size_t i = 0; i < parent.size(); ++i) {
    const uint32_t p = forest.parent(i);
    if (p != Forest::kNone &&
        capture.spans[p].thread == capture.spans[i].thread) {
      parent[i] = p;
    }
  }
  return parent;
}

TEST(CountersTest, NamesInFirstAppearanceOrder) {
  const Capture capture = Nested();
  EXPECT_EQ(CounterNames(capture),
            (std::vector<std::string>{"bytes", "allocs"}));
  EXPECT_EQ(SpanCounters(capture, Forest(capture)).names(),
            CounterNames(capture));
}

TEST(CountersTest, NumericArgumentsAreNotCounters) {
  CaptureBuilder b;
  b.Add(1, 0, b.Site("a"), b.Thread(1), 0, 10);
  b.Args(1, {IntArg("size", 5)});
  const Capture capture = b.Build();
  const SpanCounters counters(capture, Forest(capture));
  EXPECT_TRUE(counters.empty());
  EXPECT_TRUE(counters.spans().empty());
  EXPECT_EQ(counters.self(0, 0), 0);
}

TEST(CountersTest, InclusiveAddsSameThreadDescendantsOnly) {
  const Capture capture = Nested();
  const SpanCounters counters(capture, Forest(capture));
  EXPECT_EQ(Of(counters, capture, 3, "bytes"), (Counts{100, 100}));
  EXPECT_EQ(Of(counters, capture, 2, "bytes"), (Counts{10, 110}));
  // The worker's 1000 is a cross-thread child's: linked, not included.
  EXPECT_EQ(Of(counters, capture, 1, "bytes"), (Counts{1, 111}));
  EXPECT_EQ(Of(counters, capture, 5, "bytes"), (Counts{1000, 1000}));
  EXPECT_EQ(Of(counters, capture, 4, "bytes"), (Counts{0, 0}));
  EXPECT_EQ(Of(counters, capture, 2, "allocs"), (Counts{4, 4}));
  EXPECT_EQ(Of(counters, capture, 1, "allocs"), (Counts{0, 6}));
  EXPECT_EQ(Of(counters, capture, 3, "allocs"), (Counts{0, 0}));
}

TEST(CountersTest, ParentIndexesGiveTheSameCountsAsTheForest) {
  const Capture capture = Nested();
  const SpanCounters from_forest(capture, Forest(capture));
  const std::vector<uint32_t> parents = SameThreadParents(capture);
  const SpanCounters from_parents(capture, parents);
  for (size_t i = 0; i < capture.spans.size(); ++i) {
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(from_parents.self(i, k), from_forest.self(i, k));
      EXPECT_EQ(from_parents.inclusive(i, k), from_forest.inclusive(i, k));
    }
  }
}

TEST(CountersTest, AnUnsortedCaptureIsReadThroughItsForest) {
  Capture capture = Nested();
  std::reverse(capture.spans.begin(), capture.spans.end());
  const SpanCounters counters(capture, Forest(capture));
  EXPECT_EQ(Of(counters, capture, 1, "bytes"), (Counts{1, 111}));
  EXPECT_EQ(Of(counters, capture, 1, "allocs"), (Counts{0, 6}));
}

TEST(CountersTest, OnlyCountingSpansAndTheirAncestorsHoldValues) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 100);
  b.Add(2, 1, s, t, 10, 20);
  b.Add(3, 1, s, t, 30, 40);
  b.Add(4, 3, s, t, 31, 39);
  b.Add(5, 0, s, t, 200, 300);
  b.Args(4, {CounterArg("n", 3)});
  const Capture capture = b.Build();
  const SpanCounters counters(capture, Forest(capture));
  std::vector<uint64_t> ids;
  for (uint32_t i : counters.spans()) ids.push_back(capture.spans[i].id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 3, 4}));
}

TEST(CountersTest, CorruptEntriesAreClippedNotTrusted) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 100);
  b.Add(2, 1, s, t, 10, 20);
  b.Add(3, 1, s, t, 30, 40);
  b.Args(1, {CounterArg("n", INT64_MAX)});
  b.Args(2, {CounterArg("n", 5), CounterArg("n", 6)});  // twice: summed
  b.Args(3, {CounterArg("n", -50)});                    // negative: 0
  Capture capture = b.Build();
  const SpanCounters counters(capture, Forest(capture));
  EXPECT_EQ(Of(counters, capture, 2, "n"), (Counts{11, 11}));
  EXPECT_EQ(Of(counters, capture, 3, "n"), (Counts{0, 0}));
  EXPECT_EQ(Of(counters, capture, 1, "n"), (Counts{INT64_MAX, INT64_MAX}));

  // An argument range past the end of the arguments is clipped.
  capture.spans[IndexOf(capture, 3)].first_arg = 1;
  capture.spans[IndexOf(capture, 3)].arg_count = 1000;
  const SpanCounters clipped(capture, Forest(capture));
  EXPECT_EQ(Of(clipped, capture, 3, "n").self, 11);  // args [1, 4): 5 + 6
}

TEST(CountersTest, AParentIndexNotBelowItsChildIsNoParent) {
  const Capture capture = Nested();
  std::vector<uint32_t> parents(capture.spans.size(), SpanCounters::kNone);
  // Span 3's parent claimed to be span 4 (a later index): ignored.
  parents[IndexOf(capture, 3)] = static_cast<uint32_t>(IndexOf(capture, 4));
  const SpanCounters counters(capture, parents);
  EXPECT_EQ(Of(counters, capture, 4, "bytes"), (Counts{0, 0}));
  EXPECT_EQ(Of(counters, capture, 3, "bytes"), (Counts{100, 100}));
}

TEST(CountersTest, AnyCounterFindsACountAmongTheArguments) {
  Capture capture = Nested();
  EXPECT_TRUE(AnyCounter(capture));
  for (SpanArg& arg : capture.args) arg.is_counter = false;
  EXPECT_FALSE(AnyCounter(capture));
  capture.args.back().is_counter = true;
  EXPECT_TRUE(AnyCounter(capture));
}

}  // namespace
}  // namespace spanprof::analysis::internal
