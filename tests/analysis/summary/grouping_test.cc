// Summarize(): grouping by key, labels, row order, shares and totals.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/lookup.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::FindRowByLabel;

TEST(GroupingTest, LabelListsOnlyTheSetTagsInOrder) {
  EXPECT_EQ(
      RowLabel(
          {.name = "model.forward", .phase = "forward", .module = "encoder"}),
      "model.forward [phase=forward, module=encoder]");
  EXPECT_EQ(
      RowLabel({.name = "input.load", .phase = "input", .activity = "load"}),
      "input.load [phase=input, activity=load]");
  EXPECT_EQ(RowLabel({.name = "solver.expand"}), "solver.expand");
  EXPECT_EQ(RowLabel({.name = "x", .module = "m"}), "x [module=m]");
  EXPECT_EQ(RowLabel({.name = "x", .activity = "a"}), "x [activity=a]");
  EXPECT_EQ(
      RowLabel({.name = "x", .phase = "p", .module = "m", .activity = "a"}),
      "x [phase=p, module=m, activity=a]");
  EXPECT_EQ(RowLabel({"x", "p", "m", "a", "cuda", "f16", "gpu0"}),
            "x [phase=p, module=m, activity=a, backend=cuda, dtype=f16, "
            "device=gpu0]");
  EXPECT_EQ(RowLabel({.name = "k", .phase = "train", .dtype = "f16"}),
            "k [phase=train, dtype=f16]");
  EXPECT_EQ(RowLabel({.name = "k", .device = "gpu0"}), "k [device=gpu0]");
}

TEST(GroupingTest, RowsSplitByBackendDtypeAndDevice) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const Site f16{.name = "matmul",
                 .phase = "train",
                 .backend = "cuda",
                 .dtype = "f16",
                 .device = "gpu0"};
  Site f32 = f16;
  f32.dtype = "f32";
  Site gpu1 = f16;
  gpu1.device = "gpu1";
  const uint32_t a = b.AddSite(f16);
  const uint32_t c = b.AddSite(f32);
  const uint32_t d = b.AddSite(gpu1);
  const uint32_t again = b.AddSite(f16);  // another call site, same key
  b.Add(1, 0, a, t, 0, 10);
  b.Add(2, 0, c, t, 20, 50);
  b.Add(3, 0, d, t, 60, 70);
  b.Add(4, 0, again, t, 80, 85);
  const Summary summary = Summarize(b.Build());
  ASSERT_EQ(summary.rows.size(), 3u);
  const Row* half = FindRowByLabel(
      summary, "matmul [phase=train, backend=cuda, dtype=f16, device=gpu0]");
  const Row* single = FindRowByLabel(
      summary, "matmul [phase=train, backend=cuda, dtype=f32, device=gpu0]");
  ASSERT_NE(half, nullptr);
  ASSERT_NE(single, nullptr);
  EXPECT_EQ(half->calls, 2u);
  EXPECT_EQ(half->total_ns, 15);
  EXPECT_EQ(half->key, RowKeyOf(f16));
  EXPECT_EQ(single->calls, 1u);
  EXPECT_EQ(single->total_ns, 30);
  EXPECT_EQ(single->key.dtype, "f32");
  EXPECT_NE(FindRowByLabel(summary,
                           "matmul [phase=train, backend=cuda, dtype=f16, "
                           "device=gpu1]"),
            nullptr);
}

TEST(GroupingTest, SameNameWithDifferentTagsIsADifferentRow) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t fwd = b.Site("step", "forward");
  const uint32_t bwd = b.Site("step", "backward");
  b.Add(1, 0, fwd, t, 0, 10);
  b.Add(2, 0, bwd, t, 20, 50);
  const Summary summary = Summarize(b.Build());
  ASSERT_EQ(summary.rows.size(), 2u);
  ASSERT_NE(FindRowByLabel(summary, "step [phase=forward]"), nullptr);
  ASSERT_NE(FindRowByLabel(summary, "step [phase=backward]"), nullptr);
  EXPECT_EQ(FindRowByLabel(summary, "step [phase=forward]")->total_ns, 10);
  EXPECT_EQ(FindRowByLabel(summary, "step [phase=backward]")->total_ns, 30);
  EXPECT_EQ(FindRowByLabel(summary, "step [phase=backward]")->key.phase,
            "backward");
}

TEST(GroupingTest, SitesWithTheSameKeyShareARow) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t first = b.Site("parse", "io");
  const uint32_t second = b.Site("parse", "io");  // another call site
  b.Add(1, 0, first, t, 0, 10);
  b.Add(2, 0, second, t, 20, 50);
  b.capture().dropped_by_site = {{second, 4}};
  b.capture().dropped_events = 4;
  const Summary summary = Summarize(b.Build());
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(summary.rows[0].calls, 2u);
  EXPECT_EQ(summary.rows[0].total_ns, 40);
  EXPECT_EQ(summary.rows[0].dropped, 4u);
}

TEST(GroupingTest, RowsAreSortedBySelfDescendingThenKey) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t c = b.Site("c");
  const uint32_t a_phase = b.Site("a", "p");
  const uint32_t a = b.Site("a");
  const uint32_t big = b.Site("big");
  b.Add(1, 0, c, t, 0, 10);
  b.Add(2, 0, a_phase, t, 20, 30);
  b.Add(3, 0, a, t, 40, 50);
  b.Add(4, 0, big, t, 60, 100);
  const Summary summary = Summarize(b.Build());
  ASSERT_EQ(summary.rows.size(), 4u);
  EXPECT_EQ(summary.rows[0].label, "big");
  // Equal self time: by key, and "a" with an empty phase sorts before "a"
  // with phase "p".
  EXPECT_EQ(summary.rows[1].label, "a");
  EXPECT_EQ(summary.rows[2].label, "a [phase=p]");
  EXPECT_EQ(summary.rows[3].label, "c");
}

TEST(GroupingTest, RowsAreSortedBySelfTimeNotTotalTime) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t outer = b.Site("outer");
  const uint32_t inner = b.Site("inner");
  b.Add(1, 0, outer, t, 0, 100);
  b.Add(2, 1, inner, t, 5, 95);
  const Summary summary = Summarize(b.Build());
  ASSERT_EQ(summary.rows.size(), 2u);
  EXPECT_EQ(summary.rows[0].label, "inner");
  EXPECT_EQ(summary.rows[0].self_ns, 90);
  EXPECT_EQ(summary.rows[1].label, "outer");
  EXPECT_EQ(summary.rows[1].self_ns, 10);
  EXPECT_EQ(summary.rows[1].total_ns, 100);
}

TEST(GroupingTest, SharePermilleIsFlooredSelfOverRecordedTime) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t x = b.Site("x");
  const uint32_t y = b.Site("y");
  const uint32_t z = b.Site("z");
  b.Add(1, 0, x, t, 0, 1);
  b.Add(2, 0, y, t, 10, 11);
  b.Add(3, 0, z, t, 20, 22);
  const Summary summary = Summarize(b.Build());
  EXPECT_EQ(summary.recorded_thread_time_ns, 4);
  EXPECT_EQ(FindRowByLabel(summary, "z")->share_permille, 500);
  EXPECT_EQ(FindRowByLabel(summary, "x")->share_permille, 250);
  CaptureBuilder thirds;
  const uint32_t t2 = thirds.Thread(1);
  const uint32_t p = thirds.Site("p");
  const uint32_t q = thirds.Site("q");
  const uint32_t r = thirds.Site("r");
  thirds.Add(1, 0, p, t2, 0, 1);
  thirds.Add(2, 0, q, t2, 10, 11);
  thirds.Add(3, 0, r, t2, 20, 21);
  const Summary floored = Summarize(thirds.Build());
  for (const Row& row : floored.rows) EXPECT_EQ(row.share_permille, 333);
}

TEST(GroupingTest, ShareIsZeroWhenNothingWasRecorded) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t x = b.Site("x");
  b.Add(1, 0, x, t, 5, 5);
  const Summary summary = Summarize(b.Build());
  EXPECT_EQ(summary.recorded_thread_time_ns, 0);
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(summary.rows[0].share_permille, 0);
}

TEST(GroupingTest, TotalsCountThreadsDepthHeartbeatsAndFlags) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(10, "main");
  b.Thread(11, "idle");  // no spans: not counted
  const uint32_t worker = b.Thread(12, "worker");
  const uint32_t run = b.Site("run");
  const uint32_t task = b.Site("task");
  b.Add(1, 0, run, main, 0, 1000).heartbeats = 100;
  b.Add(2, 1, task, main, 100, 200).heartbeats = 30;
  b.Add(3, 2, task, main, 120, 150).heartbeats = 10;
  Span& cross = b.Add(4, 1, task, worker, 300, 700);
  cross.heartbeats = 50;
  cross.flags = kSpanException;
  Span& open = b.Add(5, 4, task, worker, 600, 700);
  open.flags = kSpanUnfinished | kSpanException;
  b.capture().window_ns = 1000;
  const Summary summary = Summarize(b.Build());
  EXPECT_EQ(summary.event_count, 5u);
  EXPECT_EQ(summary.thread_count, 2u);
  EXPECT_EQ(summary.max_depth, 2u);
  EXPECT_EQ(summary.window_ns, 1000);
  // Self: run 900, task 2: 70, task 3: 30, cross: 300, open: 100.
  EXPECT_EQ(summary.recorded_thread_time_ns, 900 + 70 + 30 + 300 + 100);
  // Self heartbeats: 70 + 20 + 10 + 50 + 0.
  EXPECT_EQ(summary.recorded_heartbeats, 150u);
  EXPECT_EQ(summary.unfinished_events, 1u);
  EXPECT_FALSE(summary.complete);
  const Row* task_row = FindRowByLabel(summary, "task");
  ASSERT_NE(task_row, nullptr);
  EXPECT_EQ(task_row->calls, 4u);
  EXPECT_EQ(task_row->threads, 2u);
  EXPECT_EQ(task_row->exceptions, 2u);
  EXPECT_EQ(task_row->unfinished, 1u);
  EXPECT_EQ(task_row->total_heartbeats, 90u);
  EXPECT_EQ(task_row->self_heartbeats, 80u);
  EXPECT_EQ(FindRowByLabel(summary, "run")->threads, 1u);
}

TEST(GroupingTest, CopiesCaptureFieldsIntoTheSummary) {
  CaptureBuilder b;
  Capture& c = b.capture();
  c.clock = "tsc";
  c.process_name = "indexer";
  c.event_limit = 100;
  c.overflow_policy = "ring";
  c.overhead_ns_per_span = 9;
  c.process_resources = {1, 2, 3, 4, 5, 6, 7};
  const Summary summary = Summarize(b.Build());
  EXPECT_EQ(summary.schema, "spanprof.summary");
  EXPECT_EQ(summary.schema_version, 5);
  EXPECT_EQ(summary.source, "spanprof");
  EXPECT_EQ(summary.clock, "tsc");
  EXPECT_EQ(summary.process_name, "indexer");
  EXPECT_EQ(summary.event_limit, 100u);
  EXPECT_EQ(summary.overflow_policy, "ring");
  EXPECT_EQ(summary.overhead_ns_per_span, 9);
  EXPECT_EQ(summary.process_resources, (ProcessResources{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(summary.event_count, 0u);
  EXPECT_EQ(summary.thread_count, 0u);
  EXPECT_EQ(summary.max_depth, 0u);
  EXPECT_TRUE(summary.rows.empty());
  EXPECT_TRUE(summary.complete);
}

TEST(GroupingTest, SiteWithOnlyDroppedSpansGetsAZeroRow) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t kept = b.Site("kept");
  const uint32_t lost = b.Site("lost", "io");
  b.Add(1, 0, kept, t, 0, 10);
  b.capture().dropped_events = 12;
  b.capture().dropped_by_site = {{lost, 12}};
  const Summary summary = Summarize(b.Build());
  EXPECT_EQ(summary.dropped_events, 12u);
  EXPECT_FALSE(summary.complete);
  ASSERT_EQ(summary.rows.size(), 2u);
  const Row* row = FindRowByLabel(summary, "lost [phase=io]");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->calls, 0u);
  EXPECT_EQ(row->dropped, 12u);
  EXPECT_EQ(row->min_ns, 0);
  EXPECT_EQ(row->max_ns, 0);
  EXPECT_EQ(row->mean_ns, 0);
  EXPECT_EQ(row->threads, 0u);
  EXPECT_EQ(FindRowByLabel(summary, "kept")->dropped, 0u);
  // Σ calls is still the event count.
  EXPECT_EQ(summary.event_count, 1u);
}

TEST(GroupingTest, AllocationCountersAreNullUnlessMeasured) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("alloc");
  b.Add(1, 0, s, t, 0, 10);
  b.Allocs(1, 3, 300);
  b.Add(2, 0, s, t, 20, 30);
  b.Allocs(2, 1, 64);
  const Summary unmeasured = Summarize(b.Build());
  EXPECT_FALSE(unmeasured.rows[0].alloc_count.has_value());
  EXPECT_FALSE(unmeasured.rows[0].alloc_bytes.has_value());

  b.capture().alloc_measured = true;
  const Summary measured = Summarize(b.Build());
  EXPECT_EQ(measured.rows[0].alloc_count, std::optional<int64_t>(4));
  EXPECT_EQ(measured.rows[0].alloc_bytes, std::optional<int64_t>(364));
}

// The allocation column must cover every span when allocations were
// measured; a shorter one is summed as far as it goes and reported.
TEST(GroupingTest, AShortAllocationColumnIsAValidationIssue) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("alloc");
  b.Add(1, 0, s, t, 0, 10);
  b.Add(2, 0, s, t, 20, 30);
  b.Allocs(1, 3, 300);
  b.Allocs(2, 1, 64);
  b.capture().alloc_measured = true;
  Capture capture = b.Build();
  const Summary full = Summarize(capture);
  EXPECT_TRUE(full.validation_issues.empty());
  EXPECT_EQ(full.rows[0].alloc_count, 4);
  capture.span_allocs.pop_back();
  const Summary shorter = Summarize(capture);
  ASSERT_EQ(shorter.validation_issues.size(), 1u);
  EXPECT_EQ(shorter.validation_issues[0].span, 0u);
  EXPECT_EQ(shorter.validation_issues[0].message,
            "Capture::span_allocs has 1 entries for 2 spans (a span without "
            "one counts no allocations)");
  EXPECT_EQ(shorter.rows[0].alloc_count, 3);
  EXPECT_FALSE(shorter.complete);
}

TEST(GroupingTest, MeasuredZeroAllocationsAreZeroNotNull) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("none");
  b.Add(1, 0, s, t, 0, 10);
  b.capture().alloc_measured = true;
  const Summary summary = Summarize(b.Build());
  EXPECT_EQ(summary.rows[0].alloc_count, std::optional<int64_t>(0));
}

TEST(GroupingTest, CompletenessFollowsEveryCondition) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 10);
  EXPECT_TRUE(Summarize(b.Build()).complete);

  CaptureBuilder exited = b;
  exited.capture().finished_normally = false;
  EXPECT_FALSE(Summarize(exited.Build()).complete);

  CaptureBuilder broken = b;
  broken.Add(2, 99, s, t, 20, 30);  // missing parent
  const Summary summary = Summarize(broken.Build());
  EXPECT_FALSE(summary.complete);
  ASSERT_EQ(summary.validation_issues.size(), 1u);
  EXPECT_EQ(summary.validation_issues[0].span, 2u);
}

TEST(GroupingTest, SpansWithAnInvalidSiteStillCount) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  b.Site("a");
  b.Add(1, 0, 7, t, 0, 10);
  const Summary summary = Summarize(b.Build());
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(summary.rows[0].calls, 1u);
  EXPECT_EQ(summary.event_count, 1u);
  EXPECT_FALSE(summary.complete);
}

}  // namespace
}  // namespace spanprof::analysis
