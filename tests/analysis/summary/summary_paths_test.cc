// Summarize() has a streaming path for canonical captures and a general
// (reference) path; on any capture both must give the same summary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analysis/src/summary/summary_internal.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using internal::SummarizeWithPath;
using internal::SummaryPath;
using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::spanprof::testing::IntArg;

// A random valid forest: per thread, nested spans that stay inside their
// parents without overlapping, and some cross-thread children.
class ForestGenerator {
 public:
  explicit ForestGenerator(uint32_t seed) : rng_(seed) {}

  Capture Generate() {
    CaptureBuilder b;
    const int threads = 1 + Next(4);
    for (int t = 0; t < threads; ++t) {
      b.Thread(1000 + static_cast<uint64_t>(t), "t" + std::to_string(t));
    }
    const int sites = 1 + Next(6);
    for (int s = 0; s < sites; ++s) {
      b.Site("site" + std::to_string(s % 4), s % 3 == 0 ? "p" : "",
             s == 5 ? "m" : "");
    }
    b.capture().alloc_measured = Next(2) == 0;
    for (int t = 0; t < threads; ++t) {
      int64_t at = Next(50);
      const int roots = Next(4);
      for (int r = 0; r < roots; ++r) {
        at = AddSubtree(b, static_cast<uint32_t>(t), 0, 0, at, 3, sites,
                        threads, true) +
             Next(20);
      }
    }
    return b.Build();
  }

 private:
  int Next(int bound) {
    return static_cast<int>(rng_() % static_cast<uint32_t>(bound));
  }

  // Adds a span starting at `at` and its descendants; returns its end.
  // Cross-thread subtrees get no cross-thread children of their own, so that
  // they can be laid out one after another in time.
  int64_t AddSubtree(CaptureBuilder& b, uint32_t thread, uint64_t parent,
                     uint32_t depth, int64_t at, int levels, int sites,
                     int threads, bool allow_cross) {
    const uint64_t id = next_id_++;
    const uint32_t site = static_cast<uint32_t>(Next(sites));
    b.Add(id, parent, site, thread, at, at);  // end fixed below
    int64_t cursor = at + Next(5);
    const int children = levels > 0 ? Next(4) : 0;
    for (int c = 0; c < children; ++c) {
      cursor = AddSubtree(b, thread, id, depth + 1, cursor, levels - 1, sites,
                          threads, allow_cross);
      cursor += Next(3);  // children may touch
    }
    // Cross-thread children: anywhere in time, on another thread, placed
    // after everything that thread has so far so they do not overlap it.
    if (allow_cross && threads > 1 && levels > 0 && Next(3) == 0) {
      const uint32_t other =
          (thread + 1 + static_cast<uint32_t>(Next(threads - 1))) %
          static_cast<uint32_t>(threads);
      AddSubtree(b, other, id, depth + 1, far_ + Next(10), levels - 1, sites,
                 threads, false);
    }
    const int64_t end = cursor + Next(7);
    for (Span& span : b.capture().spans) {
      if (span.id != id) continue;
      span.end_ns = end;
      span.depth = depth;
      span.heartbeats = static_cast<uint32_t>(Next(20));
      span.flags = Next(8) == 0 ? kSpanException : 0;
      if (Next(12) == 0) span.flags |= kSpanUnfinished;
      const int64_t count = Next(5);
      b.Allocs(id, count, Next(500) - 100);
    }
    // Named counters on some spans (a numeric argument first on a few).
    if (Next(3) == 0) {
      std::vector<SpanArg> args;
      if (Next(4) == 0) args.push_back(IntArg("size", Next(1000)));
      if (Next(2) == 0) args.push_back(CounterArg("bytes", Next(100)));
      if (Next(3) == 0) args.push_back(CounterArg("allocs", 1 + Next(9)));
      b.Args(id, std::move(args));
    }
    far_ = std::max(far_, end) + 1000;
    return end;
  }

  std::mt19937 rng_;
  uint64_t next_id_ = 1;
  int64_t far_ = 1'000'000;
};

void ExpectSamePaths(const Capture& capture, bool expect_canonical) {
  bool used_canonical = false;
  const Summary fast =
      SummarizeWithPath(capture, SummaryPath::kAny, &used_canonical);
  const Summary reference =
      SummarizeWithPath(capture, SummaryPath::kGeneral, nullptr);
  EXPECT_EQ(used_canonical, expect_canonical);
  EXPECT_EQ(fast, reference);
  EXPECT_EQ(fast, Summarize(capture));
}

TEST(SummaryPathsTest, CanonicalPathMatchesTheReferenceOnValidForests) {
  int canonical = 0;
  int counted = 0;
  const int kSeeds = 300;
  for (uint32_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE(seed);
    const Capture capture = ForestGenerator(seed).Generate();
    bool used_canonical = false;
    const Summary fast =
        SummarizeWithPath(capture, SummaryPath::kAny, &used_canonical);
    EXPECT_EQ(fast, SummarizeWithPath(capture, SummaryPath::kGeneral, nullptr));
    EXPECT_TRUE(fast.validation_issues.empty());
    canonical += used_canonical ? 1 : 0;
    for (const Row& row : fast.rows) counted += row.counters.empty() ? 0 : 1;
  }
  // The counters of both paths were compared, not only their absence.
  EXPECT_GT(counted, kSeeds);
  // The streaming path declines a few valid but unusual layouts (a
  // zero-length child at its parent's very end, when the parent's next
  // sibling starts at that instant); it must take nearly all of them.
  EXPECT_GE(canonical, kSeeds * 9 / 10);
}

// Each perturbation makes the capture irregular in one way; the canonical
// path must notice and defer to the reference.
TEST(SummaryPathsTest, IrregularCapturesFallBackToTheReference) {
  int perturbed = 0;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE(seed);
    Capture capture = ForestGenerator(seed).Generate();
    if (capture.spans.size() < 3) continue;
    std::mt19937 rng(seed);
    const size_t i = rng() % capture.spans.size();
    const size_t j =
        (i + 1 + rng() % (capture.spans.size() - 1)) % capture.spans.size();
    Span& a = capture.spans[i];
    const Span& b = capture.spans[j];
    const int kind = static_cast<int>(seed % 9);
    switch (kind) {
      case 0:  // unsorted
        std::swap(capture.spans.front(), capture.spans.back());
        if (capture.spans.front().thread == capture.spans.back().thread &&
            capture.spans.front().start_ns == capture.spans.back().start_ns) {
          continue;
        }
        break;
      case 1:  // duplicate id
        a.id = b.id;
        break;
      case 2:  // end before start
        a.end_ns = a.start_ns - 1;
        break;
      case 3:  // depth inconsistent
        a.depth += 1;
        break;
      case 4:  // missing parent
        a.parent_id = 1'000'000'000;
        if (a.depth == 0) a.depth = 1;
        break;
      case 5:  // a span escapes its parent, or roots overlap
        a.end_ns += 1'000'000'000;
        break;
      case 6:  // an id far away from the others: sparse ids
        for (Span& span : capture.spans) {
          if (span.parent_id == a.id)
            span.parent_id = a.id + (uint64_t{1} << 40);
        }
        a.id += uint64_t{1} << 40;
        break;
      case 7:  // site out of range
        a.site = 99;
        break;
      case 8:  // heartbeats of children exceed the parent's (still valid)
        a.heartbeats = 0;
        break;
    }
    ++perturbed;
    bool used_canonical = true;
    const Summary fast =
        SummarizeWithPath(capture, SummaryPath::kAny, &used_canonical);
    const Summary reference =
        SummarizeWithPath(capture, SummaryPath::kGeneral, nullptr);
    EXPECT_EQ(fast, reference) << "kind " << kind;
    if (!reference.validation_issues.empty()) {
      EXPECT_FALSE(used_canonical) << "kind " << kind;
    }
  }
  EXPECT_GT(perturbed, 200);
}

TEST(SummaryPathsTest, CrossThreadParentOnALaterThreadStaysCanonical) {
  CaptureBuilder b;
  const uint32_t worker = b.Thread(2, "worker");  // thread 0
  const uint32_t main = b.Thread(1, "main");      // thread 1
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, main, 0, 100);
  b.Add(2, 1, s, worker, 10, 20);
  b.Add(3, 1, s, worker, 20, 30);
  b.Add(4, 2, s, worker, 12, 18);
  ExpectSamePaths(b.Build(), true);
}

TEST(SummaryPathsTest, OverlappingCrossThreadSiblingsFallBack) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t worker = b.Thread(2, "worker");
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, main, 0, 100);
  b.Add(2, 1, s, worker, 10, 20);
  b.Add(3, 1, s, worker, 15, 30);  // overlaps 2 on the same thread
  const Capture capture = b.Build();
  ExpectSamePaths(capture, false);
  EXPECT_EQ(Summarize(capture).validation_issues.size(), 1u);
}

TEST(SummaryPathsTest, HugeDurationsThatOverflowFallBack) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, INT64_MIN, INT64_MAX);
  ExpectSamePaths(b.Build(), false);
}

// The collector numbers spans 1, 2, 3... in array order, which the
// streaming path handles without an id index; ids with gaps, or out of array
// order, take the indexed window instead. Both must match the reference,
// and a duplicate id must still be noticed in either.
TEST(SummaryPathsTest, ConsecutiveAndSparseIdsAgreeWithTheReference) {
  auto build = [](uint64_t scale, uint64_t offset) {
    CaptureBuilder b;
    const uint32_t t = b.Thread(1, "main");
    const uint32_t u = b.Thread(2, "worker");
    const uint32_t s = b.Site("a");
    const uint32_t k = b.Site("b", "p");
    auto id = [&](uint64_t n) { return n * scale + offset; };
    b.Add(id(1), 0, s, t, 0, 100);
    b.Add(id(2), id(1), k, t, 10, 40);
    b.Add(id(3), id(2), s, t, 12, 20);
    b.Add(id(4), id(1), k, t, 50, 90);
    b.Add(id(5), id(4), s, u, 60, 70);  // cross-thread child
    return b.Build();
  };
  const Capture consecutive = build(1, 0);
  ASSERT_EQ(consecutive.spans.front().id, 1u);
  ExpectSamePaths(consecutive, true);
  ExpectSamePaths(build(1, 1000), true);  // consecutive from 1001
  ExpectSamePaths(build(3, 7), true);     // gaps: the indexed window

  Capture duplicate = build(1, 0);
  duplicate.spans[3].id = duplicate.spans[2].id;
  ExpectSamePaths(duplicate, false);
  EXPECT_FALSE(Summarize(duplicate).validation_issues.empty());
}

TEST(SummaryPathsTest, EmptyCaptureIsCanonical) {
  CaptureBuilder b;
  ExpectSamePaths(b.Build(), true);
}

}  // namespace
}  // namespace spanprof::analysis
