#include "spanprof/analysis/timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::IndexOf;

SpanTiming TimingOf(const Capture& capture,
                    const std::vector<SpanTiming>& timings, uint64_t id) {
  return timings.at(IndexOf(capture, id));
}

TEST(TimingTest, InclusiveIsEndMinusStart) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 5, 47);
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  ASSERT_EQ(timings.size(), 1u);
  EXPECT_EQ(timings[0].inclusive_ns, 42);
  EXPECT_EQ(timings[0].self_ns, 42);
}

TEST(TimingTest, NestedChildrenAreSubtractedOnlyFromTheirImmediateParent) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 100);  // root
  b.Add(2, 1, s, t, 10, 30);  // child A (20)
  b.Add(3, 2, s, t, 15, 20);  // grandchild under A (5)
  b.Add(4, 1, s, t, 40, 70);  // child B (30)
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  EXPECT_EQ(TimingOf(capture, timings, 1).self_ns, 100 - 20 - 30);
  EXPECT_EQ(TimingOf(capture, timings, 2).self_ns, 20 - 5);
  EXPECT_EQ(TimingOf(capture, timings, 3).self_ns, 5);
  EXPECT_EQ(TimingOf(capture, timings, 4).self_ns, 30);
  EXPECT_EQ(TimingOf(capture, timings, 1).inclusive_ns, 100);
}

TEST(TimingTest, OverlappingChildrenSubtractTheirUnionNotTheirSum) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 100);
  b.Add(2, 1, s, t, 10, 50);  // 40
  b.Add(3, 1, s, t, 30, 60);  // 30, overlapping [30, 50]
  b.Add(4, 1, s, t, 35, 45);  // inside both
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  // Union [10, 60] = 50, so self is 50, not 100 - 40 - 30 - 10 = 20.
  EXPECT_EQ(TimingOf(capture, timings, 1).self_ns, 50);
}

TEST(TimingTest, ChildrenOutsideTheParentAreClippedToIt) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 10, 50);
  b.Add(2, 1, s, t, 0, 20);   // clipped to [10, 20]
  b.Add(3, 1, s, t, 40, 80);  // clipped to [40, 50]
  b.Add(4, 1, s, t, 60, 90);  // entirely after the parent: nothing
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  EXPECT_EQ(TimingOf(capture, timings, 1).self_ns, 40 - 10 - 10);
  EXPECT_GE(TimingOf(capture, timings, 1).self_ns, 0);
}

TEST(TimingTest, ChildCoveringThePartentLeavesZeroSelfNeverNegative) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 10, 20);
  b.Add(2, 1, s, t, 0, 100);
  b.Add(3, 1, s, t, 5, 25);
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  EXPECT_EQ(TimingOf(capture, timings, 1).self_ns, 0);
}

TEST(TimingTest, CrossThreadChildrenAreNotSubtracted) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t worker = b.Thread(2, "worker");
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, main, 0, 100).heartbeats = 10;
  b.Add(2, 1, s, worker, 10, 90).heartbeats = 7;  // cross-thread child
  b.Add(3, 1, s, main, 20, 30).heartbeats = 4;    // same-thread child
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  EXPECT_EQ(TimingOf(capture, timings, 1).self_ns, 100 - 10);
  EXPECT_EQ(TimingOf(capture, timings, 1).self_heartbeats, 10u - 4u);
  EXPECT_EQ(TimingOf(capture, timings, 2).self_ns, 80);
  EXPECT_EQ(TimingOf(capture, timings, 2).self_heartbeats, 7u);
}

TEST(TimingTest, SelfHeartbeatsSubtractImmediateChildrenOnly) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 100).heartbeats = 290;
  b.Add(2, 1, s, t, 10, 40).heartbeats = 8;
  b.Add(3, 2, s, t, 20, 30).heartbeats = 5;  // counted in 2's 8
  b.Add(4, 1, s, t, 50, 60).heartbeats = 4;
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  EXPECT_EQ(TimingOf(capture, timings, 1).self_heartbeats, 290u - 8u - 4u);
  EXPECT_EQ(TimingOf(capture, timings, 2).self_heartbeats, 3u);
  EXPECT_EQ(TimingOf(capture, timings, 3).self_heartbeats, 5u);
}

TEST(TimingTest, SelfHeartbeatsSaturateAtZero) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 100).heartbeats = 3;
  b.Add(2, 1, s, t, 10, 20).heartbeats = 2;
  b.Add(3, 1, s, t, 30, 40).heartbeats = 2;
  b.Add(4, 0, s, t, 200, 300).heartbeats = 1;
  b.Add(5, 4, s, t, 210, 220).heartbeats = UINT64_MAX;
  b.Add(6, 4, s, t, 230, 240).heartbeats = 5;  // sum overflows uint64
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  EXPECT_EQ(TimingOf(capture, timings, 1).self_heartbeats, 0u);
  EXPECT_EQ(TimingOf(capture, timings, 4).self_heartbeats, 0u);
}

TEST(TimingTest, SpanEndingBeforeItStartsCountsAsZero) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 50, 40);
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  EXPECT_EQ(timings[0].inclusive_ns, 0);
  EXPECT_EQ(timings[0].self_ns, 0);
}

TEST(TimingTest, ExtremeTimesSaturateInsteadOfOverflowing) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, INT64_MIN, INT64_MAX);
  const Capture capture = b.Build();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  EXPECT_EQ(timings[0].inclusive_ns, INT64_MAX);
  EXPECT_EQ(timings[0].self_ns, INT64_MAX);
}

TEST(TimingTest, UnsortedCaptureGivesTheSameTimings) {
  CaptureBuilder b;
  const uint32_t t0 = b.Thread(1);
  const uint32_t t1 = b.Thread(2);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t0, 0, 100);
  b.Add(2, 1, s, t0, 10, 50);
  b.Add(3, 1, s, t0, 30, 60);
  b.Add(4, 1, s, t1, 5, 95);
  b.Add(5, 4, s, t1, 20, 25);
  const Capture sorted = b.Build();
  Capture shuffled = sorted;
  std::reverse(shuffled.spans.begin(), shuffled.spans.end());
  const std::vector<SpanTiming> a = ComputeTimings(sorted);
  const std::vector<SpanTiming> c = ComputeTimings(shuffled);
  for (uint64_t id = 1; id <= 5; ++id) {
    EXPECT_EQ(TimingOf(sorted, a, id), TimingOf(shuffled, c, id)) << id;
  }
  EXPECT_EQ(TimingOf(sorted, a, 1).self_ns, 50);
  EXPECT_EQ(TimingOf(sorted, a, 4).self_ns, 85);
}

}  // namespace
}  // namespace spanprof::analysis
