// Folded stacks: one line per distinct stack, self time, cross-thread
// parents followed, names made safe for the ';'-splitting tools.
#include "spanprof/analysis/folded.h"

#include <cstdint>
#include <random>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/captures.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;

TEST(FoldedTest, WritesSelfTimePerStack) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1);
  const uint32_t root = b.Site("root");
  const uint32_t child = b.Site("child");
  const uint32_t leaf = b.Site("leaf");
  b.Add(1, 0, root, main, 0, 100);
  b.Add(2, 1, child, main, 10, 40);
  b.Add(3, 2, leaf, main, 20, 25);
  EXPECT_EQ(FoldedStacks(b.Build()),
            "root 70\n"
            "root;child 25\n"
            "root;child;leaf 5\n");
}

TEST(FoldedTest, SumsEqualStacksAndSortsThem) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1);
  const uint32_t root = b.Site("z.root");
  const uint32_t step = b.Site("step");
  const uint32_t step_tagged = b.Site("step", "forward");  // same frame name
  const uint32_t idle = b.Site("a.idle");
  b.Add(1, 0, root, main, 0, 100);
  b.Add(2, 1, step, main, 10, 20);
  b.Add(3, 1, step_tagged, main, 30, 45);
  b.Add(4, 0, idle, main, 200, 200);  // zero self time: left out
  EXPECT_EQ(FoldedStacks(b.Build()),
            "z.root 75\n"
            "z.root;step 25\n");
}

TEST(FoldedTest, FollowsCrossThreadParents) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1);
  const uint32_t pool = b.Thread(2);
  const uint32_t submit = b.Site("submit");
  const uint32_t task = b.Site("task");
  b.Add(1, 0, submit, main, 0, 100);
  b.Add(2, 1, task, pool, 10, 90);  // not subtracted from submit's self time
  EXPECT_EQ(FoldedStacks(b.Build()),
            "submit 100\n"
            "submit;task 80\n");
}

TEST(FoldedTest, ReplacesSeparatorsInNames) {
  EXPECT_EQ(FoldedFrameName("a;b\nc\td"), "a:b c d");
  CaptureBuilder b;
  const uint32_t main = b.Thread(1);
  b.Add(1, 0, b.Site("x;y"), main, 0, 10);
  EXPECT_EQ(FoldedStacks(b.Build()), "x:y 10\n");
}

TEST(FoldedTest, MissingParentMakesARoot) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1);
  b.Add(5, 99, b.Site("orphan"), main, 0, 10);
  EXPECT_EQ(FoldedStacks(b.Build()), "orphan 10\n");
}

TEST(FoldedTest, AddsUpToTheRecordedThreadTime) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 50; ++i) {
    const Capture capture = testing::RandomCapture(rng);
    std::istringstream lines(FoldedStacks(capture));
    std::string line;
    int64_t total = 0;
    std::string previous;
    while (std::getline(lines, line)) {
      const size_t space = line.rfind(' ');
      ASSERT_NE(space, std::string::npos);
      const std::string stack = line.substr(0, space);
      const int64_t value = std::stoll(line.substr(space + 1));
      EXPECT_GT(value, 0);
      EXPECT_LT(previous, stack);  // sorted and distinct
      previous = stack;
      total += value;
    }
    EXPECT_EQ(total, Summarize(capture).recorded_thread_time_ns);
  }
  EXPECT_EQ(FoldedStacks(Capture{}), "");
}

}  // namespace
}  // namespace spanprof::analysis
