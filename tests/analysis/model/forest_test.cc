#include "spanprof/analysis/forest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::IndexOf;
using ::testing::HasSubstr;

// The issues about span `id`.
std::vector<std::string> IssuesOf(const std::vector<ValidationIssue>& issues,
                                  uint64_t id) {
  std::vector<std::string> messages;
  for (const ValidationIssue& issue : issues) {
    if (issue.span == id) messages.push_back(issue.message);
  }
  return messages;
}

struct Fixture {
  CaptureBuilder b;
  uint32_t main = b.Thread(100, "main");
  uint32_t worker = b.Thread(200, "worker");
  uint32_t site = b.Site("s");
};

TEST(ForestTest, ValidForestHasNoIssues) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 0, 100);
  f.b.Add(2, 1, f.site, f.main, 10, 40);
  f.b.Add(3, 2, f.site, f.main, 10, 40);     // same interval as its parent
  f.b.Add(4, 1, f.site, f.main, 40, 100);    // touches its sibling's end
  f.b.Add(5, 1, f.site, f.worker, 50, 500);  // cross-thread, outlives parent
  f.b.Add(6, 1, f.site, f.worker, 500, 600);
  f.b.Add(7, 0, f.site, f.main, 100, 100);  // zero-length root at the end
  EXPECT_THAT(ValidateForest(f.b.Build()), ::testing::IsEmpty());
}

TEST(ForestTest, DetectsEndBeforeStart) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 50, 40);
  const std::vector<ValidationIssue> issues = ValidateForest(f.b.Build());
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].span, 1u);
  EXPECT_THAT(issues[0].message, HasSubstr("before start"));
}

TEST(ForestTest, DetectsDuplicateIds) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 0, 10);
  f.b.Add(1, 0, f.site, f.main, 20, 30);
  f.b.Add(1, 0, f.site, f.main, 40, 50);
  const std::vector<ValidationIssue> issues = ValidateForest(f.b.Build());
  ASSERT_EQ(issues.size(), 2u);  // every repeat after the first
  for (const ValidationIssue& issue : issues) {
    EXPECT_EQ(issue.span, 1u);
    EXPECT_THAT(issue.message, HasSubstr("duplicate span id"));
  }
}

TEST(ForestTest, DetectsDuplicateIdsWithSparseIds) {
  Fixture f;
  f.b.Add(1'000'000'000'000, 0, f.site, f.main, 0, 10);
  f.b.Add(1'000'000'000'000, 0, f.site, f.main, 20, 30);
  const Capture capture = f.b.Build();
  const Forest forest(capture);
  EXPECT_EQ(forest.duplicate_ids().size(), 1u);
  EXPECT_EQ(forest.Find(1'000'000'000'000), 0u);
  EXPECT_EQ(ValidateForest(capture).size(), 1u);
}

TEST(ForestTest, DetectsMissingParent) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 0, 100);
  f.b.Add(2, 42, f.site, f.main, 10, 20);
  const Capture capture = f.b.Build();
  const std::vector<ValidationIssue> issues = ValidateForest(capture);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].span, 2u);
  EXPECT_THAT(issues[0].message, HasSubstr("parent span 42"));
  // The index still works: the orphan is a root of the forest.
  const Forest forest(capture);
  EXPECT_EQ(forest.parent(IndexOf(capture, 2)), Forest::kNone);
  EXPECT_EQ(forest.roots().size(), 2u);
}

TEST(ForestTest, DetectsDepthInconsistentWithParent) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 0, 100);
  f.b.Add(2, 1, f.site, f.main, 10, 20).depth = 3;
  f.b.Add(3, 0, f.site, f.main, 200, 300).depth = 1;  // a root must be 0
  const std::vector<ValidationIssue> issues = ValidateForest(f.b.Build());
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].span, 2u);
  EXPECT_THAT(issues[0].message, HasSubstr("depth 3"));
  EXPECT_EQ(issues[1].span, 3u);
  EXPECT_THAT(issues[1].message, HasSubstr("root span has depth 1"));
}

TEST(ForestTest, DetectsSameThreadChildOutsideItsParent) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 100, 200);
  f.b.Add(2, 1, f.site, f.main, 90, 150);   // starts before
  f.b.Add(3, 1, f.site, f.main, 160, 210);  // ends after
  const std::vector<ValidationIssue> issues = ValidateForest(f.b.Build());
  ASSERT_THAT(IssuesOf(issues, 2), ::testing::SizeIs(1));
  EXPECT_THAT(IssuesOf(issues, 2)[0], HasSubstr("outside its parent 1"));
  ASSERT_THAT(IssuesOf(issues, 3), ::testing::SizeIs(1));
  EXPECT_THAT(IssuesOf(issues, 3)[0], HasSubstr("outside its parent 1"));
}

TEST(ForestTest, CrossThreadChildMayLieOutsideItsParent) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 100, 200);
  f.b.Add(2, 1, f.site, f.worker, 50, 400);
  EXPECT_THAT(ValidateForest(f.b.Build()), ::testing::IsEmpty());
}

TEST(ForestTest, DetectsOverlappingSameThreadSiblings) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 0, 100);
  f.b.Add(2, 1, f.site, f.main, 10, 50);
  f.b.Add(3, 1, f.site, f.main, 40, 60);  // overlaps 2
  f.b.Add(4, 1, f.site, f.main, 20, 30);  // inside 2: overlaps too
  const std::vector<ValidationIssue> issues = ValidateForest(f.b.Build());
  EXPECT_THAT(IssuesOf(issues, 2), ::testing::IsEmpty());
  ASSERT_THAT(IssuesOf(issues, 3), ::testing::SizeIs(1));
  EXPECT_THAT(IssuesOf(issues, 3)[0],
              HasSubstr("overlaps same-thread sibling 2"));
  ASSERT_THAT(IssuesOf(issues, 4), ::testing::SizeIs(1));
  EXPECT_THAT(IssuesOf(issues, 4)[0],
              HasSubstr("overlaps same-thread sibling 2"));
}

TEST(ForestTest, SiblingsOnDifferentThreadsMayOverlap) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 0, 100);
  f.b.Add(2, 1, f.site, f.worker, 10, 50);
  const uint32_t other = f.b.Thread(300, "other");
  f.b.Add(3, 1, f.site, other, 20, 60);
  EXPECT_THAT(ValidateForest(f.b.Build()), ::testing::IsEmpty());
}

TEST(ForestTest, DetectsOverlappingRootsOnOneThread) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 0, 100);
  f.b.Add(2, 0, f.site, f.main, 50, 150);
  f.b.Add(3, 0, f.site, f.worker, 50, 150);  // other thread: fine
  const std::vector<ValidationIssue> issues = ValidateForest(f.b.Build());
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].span, 2u);
  EXPECT_THAT(issues[0].message, HasSubstr("overlaps same-thread sibling 1"));
}

TEST(ForestTest, CutsParentCyclesSoWalksTerminate) {
  Fixture f;
  f.b.Add(1, 2, f.site, f.main, 0, 100);
  f.b.Add(2, 1, f.site, f.main, 10, 20);
  f.b.Add(3, 3, f.site, f.main, 200, 300);  // its own parent
  f.b.Add(4, 2, f.site, f.main, 12, 18);    // hangs off the cycle
  const Capture capture = f.b.Build();
  const Forest forest(capture);
  EXPECT_EQ(forest.cycle_cuts().size(), 2u);
  // Every span is reachable from a root exactly once.
  std::vector<uint32_t> stack(forest.roots().begin(), forest.roots().end());
  size_t visited = 0;
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    ++visited;
    for (uint32_t c : forest.children(i)) stack.push_back(c);
  }
  EXPECT_EQ(visited, capture.spans.size());
  const std::vector<ValidationIssue> issues = ValidateForest(capture);
  EXPECT_THAT(IssuesOf(issues, 3),
              ::testing::Contains(HasSubstr("loops back")));
}

TEST(ForestTest, DetectsSiteAndThreadIndexesOutOfRange) {
  Fixture f;
  f.b.Add(1, 0, 9, f.main, 0, 10);
  f.b.Add(2, 0, f.site, 5, 20, 30);
  const std::vector<ValidationIssue> issues = ValidateForest(f.b.Build());
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_THAT(issues[0].message, HasSubstr("site index 9"));
  EXPECT_THAT(issues[1].message, HasSubstr("thread index 5"));
}

TEST(ForestTest, IssuesAreSortedBySpanThenMessage) {
  Fixture f;
  f.b.Add(9, 0, f.site, f.main, 50, 40);
  f.b.Add(3, 77, f.site, f.main, 0, 10);
  f.b.Add(5, 0, f.site, f.main, 300, 200).depth = 2;
  const std::vector<ValidationIssue> issues = ValidateForest(f.b.Build());
  ASSERT_EQ(issues.size(), 4u);
  EXPECT_EQ(issues[0].span, 3u);
  EXPECT_EQ(issues[1].span, 5u);
  EXPECT_EQ(issues[2].span, 5u);
  EXPECT_LT(issues[1].message, issues[2].message);
  EXPECT_EQ(issues[3].span, 9u);
}

TEST(ForestTest, IndexesParentsChildrenAndRoots) {
  Fixture f;
  f.b.Add(1, 0, f.site, f.main, 0, 100);
  f.b.Add(2, 1, f.site, f.main, 50, 60);
  f.b.Add(3, 1, f.site, f.main, 10, 20);
  f.b.Add(4, 1, f.site, f.worker, 5, 8);
  f.b.Add(5, 0, f.site, f.worker, 200, 300);
  Capture capture = f.b.Build();
  std::reverse(capture.spans.begin(), capture.spans.end());  // unsorted
  const Forest forest(capture);
  const size_t root = IndexOf(capture, 1);
  ASSERT_EQ(forest.size(), 5u);
  EXPECT_EQ(forest.parent(root), Forest::kNone);
  EXPECT_EQ(forest.parent(IndexOf(capture, 3)), root);
  // Children ordered by (thread, start): main's 3 then 2, then worker's 4.
  std::vector<uint64_t> children;
  for (uint32_t c : forest.children(root))
    children.push_back(capture.spans[c].id);
  EXPECT_EQ(children, (std::vector<uint64_t>{3, 2, 4}));
  std::vector<uint64_t> roots;
  for (uint32_t r : forest.roots()) roots.push_back(capture.spans[r].id);
  EXPECT_EQ(roots, (std::vector<uint64_t>{1, 5}));
  EXPECT_EQ(forest.Find(4), IndexOf(capture, 4));
  EXPECT_FALSE(forest.Find(6).has_value());
  EXPECT_FALSE(forest.Find(0).has_value());
}

}  // namespace
}  // namespace spanprof::analysis
