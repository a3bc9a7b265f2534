// Recording and collection on one thread: nesting, tags, heartbeats, args,
// exceptions, unfinished spans, the cap in both overflow policies.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"
#include "tests/testing/lookup.h"

namespace spanprof {
namespace {

using ::spanprof::testing::FindSpan;

const Site& SiteOf(const Capture& c, const Span& s) { return c.sites[s.site]; }

std::map<std::string, int> CountByName(const Capture& c) {
  std::map<std::string, int> counts;
  for (const Span& s : c.spans) ++counts[SiteOf(c, s).name];
  return counts;
}

std::map<std::string, uint64_t> DropsByName(const Capture& c) {
  std::map<std::string, uint64_t> drops;
  for (const SiteDrops& d : c.dropped_by_site) {
    drops[c.sites[d.site].name] += d.count;
  }
  return drops;
}

void Leaf() { SPANPROF_SCOPE("leaf", {.phase = "p", .module = "m"}); }

TEST(RecorderTest, RecordsNestingTagsAndHeartbeats) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("outer");
    Heartbeat(5);
    for (int i = 0; i < 3; ++i) {
      SPANPROF_SCOPE("inner", {.phase = "work", .activity = "loop"});
      Heartbeat(2);
      Leaf();
    }
  }
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 7u);
  EXPECT_EQ(c.threads.size(), 1u);
  EXPECT_EQ(c.dropped_events, 0u);
  const Span* outer = FindSpan(c, "outer");
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->parent_id, 0u);
  EXPECT_EQ(outer->depth, 0u);
  EXPECT_EQ(outer->heartbeats, 11u);
  std::map<uint64_t, const Span*> by_id;
  for (const Span& s : c.spans) by_id[s.id] = &s;
  for (const Span& s : c.spans) {
    EXPECT_LE(s.start_ns, s.end_ns);
    EXPECT_EQ(s.flags, 0u);
    const std::string& name = SiteOf(c, s).name;
    if (name == "inner") {
      EXPECT_EQ(s.parent_id, outer->id);
      EXPECT_EQ(s.depth, 1u);
      EXPECT_EQ(s.heartbeats, 2u);
      EXPECT_EQ(SiteOf(c, s).phase, "work");
      EXPECT_EQ(SiteOf(c, s).activity, "loop");
    } else if (name == "leaf") {
      const Span* parent = by_id.at(s.parent_id);
      EXPECT_EQ(SiteOf(c, *parent).name, "inner");
      EXPECT_EQ(s.depth, 2u);
      EXPECT_EQ(SiteOf(c, s).module, "m");
      EXPECT_GE(s.start_ns, parent->start_ns);
      EXPECT_LE(s.end_ns, parent->end_ns);
    }
  }
  EXPECT_GE(c.window_ns, outer->end_ns - outer->start_ns);
}

TEST(RecorderTest, SpansOutsideASessionAreIgnored) {
  { SPANPROF_SCOPE("before"); }
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE("during"); }
  const Capture c = StopRecording();
  { SPANPROF_SCOPE("after"); }
  EXPECT_EQ(CountByName(c), (std::map<std::string, int>{{"during", 1}}));
  ASSERT_TRUE(StartRecording({}).ok());
  const Capture empty = StopRecording();
  EXPECT_TRUE(empty.spans.empty());
}

TEST(RecorderTest, SecondRecordingIsAnError) {
  ASSERT_TRUE(StartRecording({}).ok());
  const absl::Status second = StartRecording({});
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.message().find("already active"), std::string::npos);
  StopRecording();
  EXPECT_TRUE(StartRecording({}).ok());
  StopRecording();
}

TEST(RecorderTest, ZeroCapIsAnError) {
  EXPECT_FALSE(StartRecording({.max_events = 0}).ok());
}

TEST(RecorderTest, ArgsAttachToTheInnermostOpenSpan) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("outer");
    SPANPROF_ARG("rows", 42);
    {
      SPANPROF_SCOPE("inner");
      SPANPROF_ARG("ratio", 0.5);
      AddArg("bytes", int64_t{7});
    }
  }
  const Capture c = StopRecording();
  const Span* outer = FindSpan(c, "outer");
  const Span* inner = FindSpan(c, "inner");
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  ASSERT_EQ(outer->arg_count, 1u);
  EXPECT_EQ(c.args[outer->first_arg].key, "rows");
  EXPECT_FALSE(c.args[outer->first_arg].is_double);
  EXPECT_EQ(c.args[outer->first_arg].int_value, 42);
  ASSERT_EQ(inner->arg_count, 2u);
  EXPECT_EQ(c.args[inner->first_arg].key, "ratio");
  EXPECT_TRUE(c.args[inner->first_arg].is_double);
  EXPECT_DOUBLE_EQ(c.args[inner->first_arg].double_value, 0.5);
  EXPECT_EQ(c.args[inner->first_arg + 1].key, "bytes");
  EXPECT_EQ(c.args[inner->first_arg + 1].int_value, 7);
}

int Throwing() {
  SPANPROF_SCOPE("throwing.scope");
  throw std::runtime_error("boom");
}

TEST(RecorderTest, SpansLeftByAnExceptionAreFlagged) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("catcher");
    EXPECT_THROW(Throwing(), std::runtime_error);
    EXPECT_THROW(
        spanprof::Run("run.throwing", [] { throw std::logic_error("x"); }),
        std::logic_error);
    spanprof::Run("run.ok", [] {});
  }
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 4u);
  EXPECT_EQ(FindSpan(c, "throwing.scope")->flags, kSpanException);
  EXPECT_EQ(FindSpan(c, "run.throwing")->flags, kSpanException);
  EXPECT_EQ(FindSpan(c, "run.ok")->flags, 0u);
  EXPECT_EQ(FindSpan(c, "catcher")->flags, 0u);
}

TEST(RecorderTest, RunReturnsTheResultAndRecordsTags) {
  ASSERT_TRUE(StartRecording({}).ok());
  const int value = spanprof::Run("compute", [] { return 41 + 1; });
  const std::string text =
      spanprof::Run("text", {.phase = "io"}, [] { return std::string("abc"); });
  const Capture c = StopRecording();
  EXPECT_EQ(value, 42);
  EXPECT_EQ(text, "abc");
  ASSERT_NE(FindSpan(c, "text"), nullptr);
  EXPECT_EQ(SiteOf(c, *FindSpan(c, "text")).phase, "io");
  EXPECT_EQ(CountByName(c),
            (std::map<std::string, int>{{"compute", 1}, {"text", 1}}));
}

TEST(RecorderTest, SitesCarryBackendDtypeAndDevice) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("kernel.matmul", {.phase = "train",
                                     .backend = "cuda",
                                     .dtype = "f16",
                                     .device = "gpu0"});
  }
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_EQ(SiteOf(c, c.spans[0]), (Site{.name = "kernel.matmul",
                                         .phase = "train",
                                         .backend = "cuda",
                                         .dtype = "f16",
                                         .device = "gpu0"}));
}

// One `Run` call site whose tags differ only in dtype: its per-call-site cache
// must compare the new key fields too, or every call reports the first site.
void RunWithDtype(const char* dtype) {
  spanprof::Run("kernel.add", {.backend = "cpu", .dtype = dtype}, [] {});
}

TEST(RecorderTest, RunSitesDifferingOnlyInDtypeAreDistinct) {
  ASSERT_TRUE(StartRecording({}).ok());
  for (int i = 0; i < 3; ++i) {
    RunWithDtype("f16");
    RunWithDtype("f32");
  }
  const Capture c = StopRecording();
  ASSERT_EQ(c.spans.size(), 6u);
  std::map<std::string, int> by_dtype;
  for (const Span& s : c.spans) {
    EXPECT_EQ(SiteOf(c, s).name, "kernel.add");
    EXPECT_EQ(SiteOf(c, s).backend, "cpu");
    ++by_dtype[SiteOf(c, s).dtype];
  }
  EXPECT_EQ(by_dtype, (std::map<std::string, int>{{"f16", 3}, {"f32", 3}}));
}

// One `Run` call site, called with no tags and then with one tag set.
void RunTagged(const Tags& tags) {
  spanprof::Run("tag.probe", tags, [] {});
}

// Every tag of kTagFields is part of a call site's key on the hot path (the
// per-call-site cache and the dynamic site table compare each tag pointer)
// and reaches its `Site` member, alone.
TEST(RecorderTest, EveryTagSplitsARunSiteAndReachesItsSite) {
  for (const TagField& tag : kTagFields) {
    SCOPED_TRACE(std::string(tag.name));
    Tags one{};
    one.*tag.tags = "set";
    ASSERT_TRUE(StartRecording({}).ok());
    RunTagged(Tags{});
    RunTagged(one);
    RunTagged(Tags{});
    const Capture c = StopRecording();
    ASSERT_EQ(c.spans.size(), 3u);
    EXPECT_EQ(c.spans[0].site, c.spans[2].site);
    EXPECT_NE(c.spans[0].site, c.spans[1].site);
    const Site& tagged = SiteOf(c, c.spans[1]);
    for (const TagField& other : kTagFields) {
      EXPECT_EQ(tagged.*other.site, &other == &tag ? "set" : "") << other.name;
    }
  }
}

TEST(RecorderTest, OpenSpansAreClosedAsUnfinishedAtStop) {
  ASSERT_TRUE(StartRecording({}).ok());
  Capture c;
  {
    SPANPROF_SCOPE("still.open");
    { SPANPROF_SCOPE("closed"); }
    c = StopRecording();
  }
  ASSERT_EQ(c.spans.size(), 2u);
  EXPECT_EQ(FindSpan(c, "still.open")->flags, kSpanUnfinished);
  EXPECT_EQ(FindSpan(c, "closed")->flags, 0u);
  EXPECT_LE(FindSpan(c, "still.open")->end_ns, c.window_ns);
}

TEST(RecorderTest, DropPolicyKeepsExactlyTheFirstNSpans) {
  for (uint64_t cap : {1u, 2u, 7u, 64u, 65u, 1000u}) {
    ASSERT_TRUE(StartRecording({.max_events = cap}).ok());
    for (int i = 0; i < 500; ++i) {
      SPANPROF_SCOPE("parent");
      SPANPROF_SCOPE("child");
    }
    const Capture c = StopRecording();
    const uint64_t attempted = 1000;
    const uint64_t kept = std::min<uint64_t>(cap, attempted);
    EXPECT_EQ(c.spans.size(), kept) << "cap " << cap;
    EXPECT_EQ(c.dropped_events, attempted - kept) << "cap " << cap;
    auto counts = CountByName(c);
    auto drops = DropsByName(c);
    EXPECT_EQ(counts["parent"] + drops["parent"], 500u);
    EXPECT_EQ(counts["child"] + drops["child"], 500u);
    // The first spans are kept: the very first parent is always retained.
    ASSERT_FALSE(c.spans.empty());
    EXPECT_EQ(SiteOf(c, c.spans.front()).name, "parent");
    // Every retained child's parent is retained (whole spans, valid forest).
    std::map<uint64_t, const Span*> by_id;
    for (const Span& s : c.spans) by_id[s.id] = &s;
    for (const Span& s : c.spans) {
      if (s.parent_id != 0) EXPECT_TRUE(by_id.count(s.parent_id));
      EXPECT_EQ(s.flags, 0u);
    }
  }
}

TEST(RecorderTest, RingPolicyKeepsTheNewestSpans) {
  for (uint64_t cap : {1u, 10u, 100u, 5000u}) {
    ASSERT_TRUE(
        StartRecording({.max_events = cap, .overflow = OverflowPolicy::kRing})
            .ok());
    const int total = 20000;
    for (int i = 0; i < total; ++i) {
      SPANPROF_SCOPE("tick");
      SPANPROF_ARG("i", i);
    }
    const Capture c = StopRecording();
    const uint64_t kept = std::min<uint64_t>(cap, total);
    EXPECT_EQ(c.spans.size(), kept) << "cap " << cap;
    EXPECT_EQ(c.dropped_events, total - kept) << "cap " << cap;
    // The newest spans survive: the last one recorded carries i = total-1.
    const Span& last = c.spans.back();
    ASSERT_EQ(last.arg_count, 1u);
    EXPECT_EQ(c.args[last.first_arg].int_value, total - 1);
  }
}

TEST(RecorderTest, RingPolicyReRootsChildrenOfLostParents) {
  ASSERT_TRUE(
      StartRecording({.max_events = 50, .overflow = OverflowPolicy::kRing})
          .ok());
  {
    SPANPROF_SCOPE("long.parent");
    for (int i = 0; i < 10000; ++i) {
      SPANPROF_SCOPE("child");
    }
  }
  const Capture c = StopRecording();
  EXPECT_EQ(c.spans.size(), 50u);
  EXPECT_EQ(c.dropped_events, 10001u - 50u);
  int rerooted = 0;
  for (const Span& s : c.spans) {
    if (s.parent_id == 0 && SiteOf(c, s).name == "child") {
      EXPECT_TRUE(s.flags & kSpanRerooted);
      ++rerooted;
    }
  }
  // long.parent began first, so it is the oldest span and was trimmed.
  EXPECT_EQ(FindSpan(c, "long.parent"), nullptr);
  EXPECT_EQ(rerooted, 50);
}

TEST(RecorderTest, SetThreadNameLabelsTheThread) {
  SetThreadName("worker-main");
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE("named"); }
  const Capture c = StopRecording();
  ASSERT_EQ(c.threads.size(), 1u);
  EXPECT_EQ(c.threads[0].name, "worker-main");
  EXPECT_GT(c.threads[0].os_tid, 0u);
}

TEST(RecorderTest, MonotonicClockIsSelectable) {
  ASSERT_TRUE(StartRecording({.clock = ClockKind::kMonotonic}).ok());
  { SPANPROF_SCOPE("timed"); }
  const Capture c = StopRecording();
  EXPECT_EQ(c.clock, "monotonic");
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_LE(c.spans[0].end_ns, c.window_ns);
}

TEST(RecorderTest, OverheadMeasurementIsPlausible) {
  const double ns = MeasureSpanOverheadNs();
  EXPECT_GT(ns, 0.0);
  EXPECT_LT(ns, 10000.0);
}

// Span::arg_count is 16 bits: a span keeps kMaxSpanArgs entries, in
// arrival order, and what did not fit is counted as dropped, not lost
// silently. The next span is unaffected.
TEST(RecorderTest, ASpanKeepsAtMostMaxSpanArgsArguments) {
  ASSERT_TRUE(StartRecording({}).ok());
  const int64_t total = static_cast<int64_t>(kMaxSpanArgs) + 5;
  {
    SPANPROF_SCOPE("many.args");
    for (int64_t i = 0; i < total; ++i) SPANPROF_ARG("i", i);
    SPANPROF_COUNT("many.count");  // its entry comes after the arguments
  }
  {
    SPANPROF_SCOPE("after");
    SPANPROF_ARG("x", 7);
  }
  const Capture c = StopRecording();
  const Span* many = FindSpan(c, "many.args");
  const Span* after = FindSpan(c, "after");
  ASSERT_NE(many, nullptr);
  ASSERT_NE(after, nullptr);
  ASSERT_EQ(many->arg_count, kMaxSpanArgs);
  for (size_t k = 0; k < kMaxSpanArgs; ++k) {
    const SpanArg& arg = c.args[many->first_arg + k];
    ASSERT_EQ(arg.key, "i");
    ASSERT_EQ(arg.int_value, static_cast<int64_t>(k));
  }
  EXPECT_EQ(c.dropped_args, 6u);  // five arguments and the count
  ASSERT_EQ(after->arg_count, 1u);
  EXPECT_EQ(c.args[after->first_arg].key, "x");
  EXPECT_EQ(c.args[after->first_arg].int_value, 7);
}

}  // namespace
}  // namespace spanprof
