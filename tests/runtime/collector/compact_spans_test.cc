// A session end's capture holds its spans compact (CompactSpans, 40 bytes
// each): every field of a span comes back as it was appended, and the
// collector moves a session's spans there, block by block, giving the
// moved spans' pages back as it goes. A span too deep for the compact form
// (past 65,535) leaves the capture with its whole spans, the ones already
// moved put back.
#include "spanprof/internal/compact_spans.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collector/assemble.h"
#include "gtest/gtest.h"
#include "recorder/recorder_internal.h"
#include "spanprof/capture.h"
#include "spanprof/context.h"
#include "spanprof/spanprof.h"
#include "spanprof/spanprof_c.h"
#include "tests/runtime/collector/collect_for_outputs.h"

namespace spanprof::internal {
namespace {

Span MakeSpan(size_t index, uint64_t parent_id, uint32_t depth) {
  Span span;
  span.id = index + 1;
  span.parent_id = parent_id;
  span.depth = depth;
  return span;
}

TEST(CompactSpansTest, EveryFieldComesBackAsAppended) {
  std::vector<Span> spans;
  // The first spans have no heartbeats: the column starts with a later one.
  for (size_t i = 0; i < 5; ++i) {
    Span span = MakeSpan(i, i, i == 0 ? 0 : 1);
    span.site = static_cast<uint32_t>(7 * i);
    span.thread = static_cast<uint32_t>(i % 2);
    span.start_ns = static_cast<int64_t>(100 * i);
    span.end_ns = static_cast<int64_t>(100 * i + 50);
    spans.push_back(span);
  }
  Span extreme = MakeSpan(spans.size(), UINT32_MAX, UINT16_MAX);
  extreme.site = UINT32_MAX;
  extreme.thread = UINT32_MAX;
  extreme.flags = UINT16_MAX;
  extreme.arg_count = UINT16_MAX;
  extreme.first_arg = UINT32_MAX;
  extreme.start_ns = std::numeric_limits<int64_t>::min();
  extreme.end_ns = std::numeric_limits<int64_t>::max();
  extreme.heartbeats = UINT32_MAX;
  spans.push_back(extreme);
  Span after = MakeSpan(spans.size(), 1, 1);
  after.flags = kSpanUnfinished | kSpanException;
  after.arg_count = 3;
  after.first_arg = 12;
  after.start_ns = -5;
  after.end_ns = 9;
  spans.push_back(after);

  CompactSpans compact;
  compact.Reserve(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    ASSERT_TRUE(CompactSpans::Fits(spans[i], i)) << i;
    compact.Append(spans[i]);
  }
  ASSERT_EQ(compact.size(), spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(compact[i], spans[i]) << i;
  }
  compact.set_flags(2, kSpanOpenAtExit);
  EXPECT_EQ(compact.flags(2), kSpanOpenAtExit);
  EXPECT_EQ(compact[2].flags, kSpanOpenAtExit);
  EXPECT_EQ(compact[3], spans[3]);
}

TEST(CompactSpansTest, TheFirstSpansHeartbeatsStartTheColumn) {
  CompactSpans compact;
  Span first = MakeSpan(0, 0, 0);
  first.heartbeats = 600;
  compact.Append(first);
  compact.Append(MakeSpan(1, 1, 1));
  EXPECT_EQ(compact[0].heartbeats, 600u);
  EXPECT_EQ(compact[1].heartbeats, 0u);
}

TEST(CompactSpansTest, WithoutHeartbeatsASpanTakesFortyBytes) {
  CompactSpans compact;
  constexpr size_t kSpans = 1000;
  compact.Reserve(kSpans);
  for (size_t i = 0; i < kSpans; ++i) compact.Append(MakeSpan(i, 0, 0));
  EXPECT_EQ(compact.size_bytes(), kSpans * 40);
  Span beating = MakeSpan(kSpans, 0, 0);
  beating.heartbeats = 4;
  compact.Append(beating);
  EXPECT_EQ(compact[kSpans].heartbeats, 4u);
  EXPECT_EQ(compact[kSpans - 1].heartbeats, 0u);
  EXPECT_GT(compact.size_bytes(), (kSpans + 1) * 40);
}

TEST(CompactSpansTest, OnlyConsecutiveIdsNarrowParentsAndDepthsFit) {
  EXPECT_TRUE(CompactSpans::Fits(MakeSpan(3, 3, 1), 3));
  EXPECT_FALSE(CompactSpans::Fits(MakeSpan(3, 3, 1), 4));  // id is not 5
  EXPECT_FALSE(CompactSpans::Fits(MakeSpan(3, uint64_t{UINT32_MAX} + 1, 1), 3));
  EXPECT_TRUE(CompactSpans::Fits(MakeSpan(3, 3, UINT16_MAX), 3));
  EXPECT_FALSE(CompactSpans::Fits(MakeSpan(3, 3, UINT16_MAX + 1), 3));
}

// Records `flat` sibling spans (every third with `i % 5` heartbeats), then
// `deep` spans nested in one another (the C API: no recursion), and
// collects the session as its end does for its own outputs.
Capture RecordAndCollect(size_t flat, size_t deep) {
  EXPECT_TRUE(StartRecording({.max_events = 4 * (flat + deep) + 64}).ok());
  spanprof_site* flat_site =
      spanprof_site_get("compact.flat", nullptr, nullptr, nullptr);
  spanprof_site* deep_site =
      spanprof_site_get("compact.deep", nullptr, nullptr, nullptr);
  for (size_t i = 0; i < flat; ++i) {
    const spanprof_token token = spanprof_begin(flat_site);
    if (i % 3 == 0) spanprof::Heartbeat(i % 5);
    spanprof_end(token);
  }
  std::vector<spanprof_token> open;
  open.reserve(deep);
  for (size_t i = 0; i < deep; ++i) open.push_back(spanprof_begin(deep_site));
  while (!open.empty()) {
    spanprof_end(open.back());
    open.pop_back();
  }
  return EndAndCollectForOutputs();
}

// How many of the capture's spans are the ones RecordAndCollect() recorded:
// the flat ones roots with their heartbeats, each deep one the child of the
// one before, all in order, none inverted.
size_t RecordedSpans(const Capture& capture, size_t flat, size_t deep,
                     size_t count) {
  size_t right = 0;
  int64_t last_start = 0;
  for (size_t i = 0; i < count; ++i) {
    const Span span = capture.compact_spans != nullptr
                          ? (*capture.compact_spans)[i]
                          : capture.spans[i];
    const bool is_flat = i < flat;
    const size_t k = is_flat ? 0 : i - flat;
    const uint32_t heartbeats =
        is_flat && i % 3 == 0 ? static_cast<uint32_t>(i % 5) : 0;
    right += span.id == i + 1 && span.thread == 0 && span.flags == 0 &&
             span.depth == k && span.parent_id == (k == 0 ? 0 : i) &&
             capture.sites[span.site].name ==
                 (is_flat ? "compact.flat" : "compact.deep") &&
             span.start_ns >= last_start && span.end_ns >= span.start_ns &&
             (!is_flat || span.heartbeats == heartbeats);
    last_start = span.start_ns;
  }
  return right;
}

TEST(CompactSpansTest, ASessionEndsCaptureHoldsItsSpansCompact) {
  constexpr size_t kFlat = 100'000;  // several blocks of the move
  constexpr size_t kDeep = 300;
  const Capture capture = RecordAndCollect(kFlat, kDeep);
  ASSERT_NE(capture.compact_spans, nullptr);
  EXPECT_TRUE(capture.spans.empty());
  ASSERT_EQ(capture.compact_spans->size(), kFlat + kDeep);
  EXPECT_EQ(RecordedSpans(capture, kFlat, kDeep, kFlat + kDeep), kFlat + kDeep);
}

// The span at depth 65,536 comes after six blocks were moved and their
// pages given back: the capture keeps whole spans, and every one of them,
// those put back included, is intact.
TEST(CompactSpansTest, ASpanTooDeepKeepsTheWholeSpans) {
  constexpr size_t kFlat = 100'000;
  constexpr size_t kDeep = size_t{UINT16_MAX} + 100;
  const Capture capture = RecordAndCollect(kFlat, kDeep);
  EXPECT_EQ(capture.compact_spans, nullptr);
  ASSERT_EQ(capture.spans.size(), kFlat + kDeep);
  EXPECT_EQ(RecordedSpans(capture, kFlat, kDeep, kFlat + kDeep), kFlat + kDeep);
}

// A cross-thread parent (a context) is linked after the parse, on whole
// spans: such a capture's spans go compact only once it is linked, and the
// link is there.
TEST(CompactSpansTest, ACrossThreadParentIsLinkedBeforeTheSpansGoCompact) {
  constexpr size_t kFlat = 40'000;
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("ctx.parent");
    std::thread child(Bind([] { SPANPROF_SCOPE("ctx.child"); }));
    child.join();
  }
  for (size_t i = 0; i < kFlat; ++i) {
    SPANPROF_SCOPE("ctx.flat");
  }
  const Capture capture = EndAndCollectForOutputs();
  ASSERT_NE(capture.compact_spans, nullptr);
  const CompactSpans& spans = *capture.compact_spans;
  ASSERT_EQ(spans.size(), kFlat + 2);
  std::optional<Span> parent;
  std::optional<Span> child;
  for (size_t i = 0; i < spans.size(); ++i) {
    const std::string& name = capture.sites[spans[i].site].name;
    if (name == "ctx.parent") parent = spans[i];
    if (name == "ctx.child") child = spans[i];
  }
  ASSERT_TRUE(parent.has_value() && child.has_value());
  EXPECT_EQ(child->parent_id, parent->id);
  EXPECT_EQ(child->depth, 1u);
  EXPECT_NE(child->thread, parent->thread);
}

}  // namespace
}  // namespace spanprof::internal
