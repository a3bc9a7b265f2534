// Named counters in summary rows: totals of inclusive counts, self counts,
// recursion counted like total_ns, cross-thread children left out, and
// dropped_args in the totals.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/src/summary/summary_internal.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/lookup.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::spanprof::testing::IntArg;
using ::spanprof::testing::RowNamed;

// main: run [0,1000] > parse [10,500] > parse [20,100] (recursion) and
// parse [600,700]; worker: copy [50,80], a cross-thread child of the outer
// parse.
Capture Recursive() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t worker = b.Thread(2, "worker");
  const uint32_t run = b.Site("run");
  const uint32_t parse = b.Site("parse", "p");
  const uint32_t copy = b.Site("copy");
  b.Add(1, 0, run, main, 0, 1000);
  b.Add(2, 1, parse, main, 10, 500);
  b.Add(3, 2, parse, main, 20, 100);
  b.Add(4, 1, parse, main, 600, 700);
  b.Add(5, 2, copy, worker, 50, 80);
  b.Args(1, {CounterArg("tokens", 1)});
  b.Args(2, {IntArg("bytes", 9), CounterArg("tokens", 10)});
  b.Args(3, {CounterArg("tokens", 100), CounterArg("allocs", 3)});
  b.Args(4, {CounterArg("tokens", 1000)});
  b.Args(5, {CounterArg("tokens", 10000)});
  return b.Build();
}

TEST(RowCountersTest, TotalsSumInclusiveCountsAndSelfSumsOwnCounts) {
  const Summary summary = Summarize(Recursive());
  // total_ns counts the nested parse again too: 490 + 80 + 100.
  EXPECT_EQ(RowNamed(summary, "parse").total_ns, 670);
  // parse: inclusive 110 (outer) + 100 (nested, counted again as total_ns
  // counts it) + 1000; self 10 + 100 + 1000. Sorted by name.
  EXPECT_EQ(
      RowNamed(summary, "parse").counters,
      (std::vector<RowCounter>{{"allocs", 6, 3}, {"tokens", 1210, 1110}}));
  // run: its own 1 plus the same-thread parses (110 + 1000); the worker's
  // 10000 is a cross-thread descendant's.
  EXPECT_EQ(RowNamed(summary, "run").counters,
            (std::vector<RowCounter>{{"allocs", 3, 0}, {"tokens", 1111, 1}}));
  EXPECT_EQ(RowNamed(summary, "copy").counters,
            (std::vector<RowCounter>{{"tokens", 10000, 10000}}));
}

TEST(RowCountersTest, RowsWithoutCountsHaveNoCounters) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  b.Add(1, 0, b.Site("a"), t, 0, 10);
  b.Add(2, 0, b.Site("b"), t, 20, 30);
  b.Args(2, {IntArg("size", 4), CounterArg("n", 0)});
  const Summary summary = Summarize(b.Build());
  for (const Row& row : summary.rows) EXPECT_TRUE(row.counters.empty());
}

TEST(RowCountersTest, BothPathsAgree) {
  const Capture capture = Recursive();
  bool canonical = false;
  const Summary fast = internal::SummarizeWithPath(
      capture, internal::SummaryPath::kAny, &canonical);
  EXPECT_TRUE(canonical);
  EXPECT_EQ(fast, internal::SummarizeWithPath(
                      capture, internal::SummaryPath::kGeneral, nullptr));
}

TEST(RowCountersTest, DroppedArgsMakeTheSummaryIncomplete) {
  Capture capture = Recursive();
  EXPECT_TRUE(Summarize(capture).complete);
  capture.dropped_args = 3;
  const Summary summary = Summarize(capture);
  EXPECT_EQ(summary.dropped_args, 3u);
  EXPECT_FALSE(summary.complete);
}

}  // namespace
}  // namespace spanprof::analysis
