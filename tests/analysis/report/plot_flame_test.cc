// Flame graphs: frames merged by stack with summed inclusive time, widths on
// one scale, cross-thread children under their parents, parallel children
// fitted into their parent, flame and icicle orientation, and the colours
// of a differential flame graph on a hand-made pair.
#include "spanprof/analysis/plot_flame.h"

#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::testing::HasSubstr;
using ::testing::Not;

// What the figure says of one frame, keyed by its stack (the title up to
// its " — ").
struct DrawnFrame {
  double x = 0;
  double y = 0;
  double width = 0;
  std::string fill;
  std::string title;
};

std::map<std::string, DrawnFrame> Frames(const std::string& svg) {
  static const std::regex kFrame(
      "<g class=\"frame\"><title>([^<]*)</title><rect x=\"([0-9.]+)\" "
      "y=\"([0-9.]+)\" width=\"([0-9.]+)\" height=\"[0-9.]+\" rx=\"1\" "
      "fill=\"(#[0-9a-f]{6})\"/>");
  std::map<std::string, DrawnFrame> frames;
  for (std::sregex_iterator it(svg.begin(), svg.end(), kFrame), end; it != end;
       ++it) {
    const std::string title = (*it)[1];
    const std::string stack = title.substr(0, title.find(" \xE2\x80\x94 "));
    frames[stack] = {std::stod((*it)[2]), std::stod((*it)[3]),
                     std::stod((*it)[4]), (*it)[5], title};
  }
  return frames;
}

// main: root [0, 1000] with a twice ([0, 300], [300, 600]) and b once
// ([600, 900]); a's second call holds c [400, 500].
Capture OneThread() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t root = b.Site("root");
  const uint32_t a = b.Site("a");
  const uint32_t bb = b.Site("b");
  const uint32_t c = b.Site("c");
  b.Add(1, 0, root, main, 0, 1000);
  b.Add(2, 1, a, main, 0, 300);
  b.Add(3, 1, a, main, 300, 600);
  b.Add(4, 3, c, main, 400, 500);
  b.Add(5, 1, bb, main, 600, 900);
  return b.Build();
}

// The drawing width of a 1200 px figure: 16 px margins.
constexpr double kPlotWidth = 1200 - 32;

TEST(FlameGraphTest, FramesSumTheCallsOfOneStack) {
  const Capture capture = OneThread();
  const FlameGraph graph = BuildFlameGraph({&capture}, {.merge_threads = true});
  std::map<std::string, FlameFrame> by_stack;
  for (uint32_t i = 1; i < graph.frames.size(); ++i) {
    by_stack[FlameStack(graph, i)] = graph.frames[i];
  }
  ASSERT_EQ(by_stack.size(), 4u);
  EXPECT_EQ(by_stack["root"].total_ns, 1000);
  EXPECT_EQ(by_stack["root"].self_ns, 100);
  EXPECT_EQ(by_stack["root;a"].total_ns, 600);
  EXPECT_EQ(by_stack["root;a"].calls, 2u);
  EXPECT_EQ(by_stack["root;a"].self_ns, 500);
  EXPECT_EQ(by_stack["root;a;c"].total_ns, 100);
  EXPECT_EQ(by_stack["root;b"].total_ns, 300);
  EXPECT_EQ(graph.frames[0].total_ns, 1000);
  EXPECT_EQ(graph.spans, 5u);
}

TEST(FlameGraphTest, WidthsAreInclusiveTimeOnOneScale) {
  const Capture capture = OneThread();
  const std::string svg = PlotFlame(
      BuildFlameGraph({&capture}, {.merge_threads = true}), {.width = 1200});
  const std::map<std::string, DrawnFrame> frames = Frames(svg);
  ASSERT_EQ(frames.size(), 5u) << svg;  // all, root, a, c, b
  const double unit = kPlotWidth / 1000;
  EXPECT_NEAR(frames.at("all").width, kPlotWidth, 0.011);
  EXPECT_NEAR(frames.at("root").width, 1000 * unit, 0.011);
  EXPECT_NEAR(frames.at("root;a").width, 600 * unit, 0.011);
  EXPECT_NEAR(frames.at("root;b").width, 300 * unit, 0.011);
  EXPECT_NEAR(frames.at("root;a;c").width, 100 * unit, 0.011);
  // Siblings in name order from their parent's left edge: a, then b.
  EXPECT_NEAR(frames.at("root;a").x, frames.at("root").x, 0.011);
  EXPECT_NEAR(frames.at("root;b").x, frames.at("root").x + 600 * unit, 0.011);
  // A flame graph grows upwards: children above their parents.
  EXPECT_LT(frames.at("root;a").y, frames.at("root").y);
  EXPECT_LT(frames.at("root;a;c").y, frames.at("root;a").y);
  EXPECT_THAT(
      frames.at("root;a").title,
      HasSubstr("inclusive 600 ns (60.0% of all), self 500 ns, 2 calls"));
  EXPECT_THAT(svg, HasSubstr(">root</text>"));
  // Same input, same bytes.
  EXPECT_EQ(svg, PlotFlame(BuildFlameGraph({&capture}, {.merge_threads = true}),
                           {.width = 1200}));
}

TEST(FlameGraphTest, AnIcicleHangsChildrenBelowTheirParents) {
  const Capture capture = OneThread();
  const std::map<std::string, DrawnFrame> frames = Frames(PlotFlame(
      BuildFlameGraph({&capture}, {.merge_threads = true}), {.icicle = true}));
  EXPECT_GT(frames.at("root;a").y, frames.at("root").y);
  EXPECT_GT(frames.at("root;a;c").y, frames.at("root;a").y);
}

TEST(FlameGraphTest, CrossThreadChildrenSitUnderTheirParentsPerThread) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t worker = b.Thread(2, "worker");
  const uint32_t root = b.Site("root");
  const uint32_t task = b.Site("task");
  const uint32_t idle = b.Site("idle");
  b.Add(1, 0, root, main, 0, 1000);
  b.Add(2, 1, task, worker, 100, 500);  // spawned by root
  b.Add(3, 0, idle, worker, 600, 800);  // a root of its own
  const Capture capture = b.Build();
  const FlameGraph graph = BuildFlameGraph({&capture}, {});
  const std::map<std::string, DrawnFrame> frames = Frames(PlotFlame(graph));
  EXPECT_TRUE(frames.contains("main;root;task"));
  EXPECT_TRUE(frames.contains("worker;idle"));
  EXPECT_FALSE(frames.contains("worker;task"));
  const double unit = kPlotWidth / 1200;  // all = 1000 + 200
  EXPECT_NEAR(frames.at("main").width, 1000 * unit, 0.011);
  EXPECT_NEAR(frames.at("main;root;task").width, 400 * unit, 0.011);
  EXPECT_NEAR(frames.at("worker").width, 200 * unit, 0.011);
  // Merged: the thread frames go, the stacks stay.
  const std::map<std::string, DrawnFrame> merged =
      Frames(PlotFlame(BuildFlameGraph({&capture}, {.merge_threads = true})));
  EXPECT_TRUE(merged.contains("root;task"));
  EXPECT_TRUE(merged.contains("idle"));
  EXPECT_FALSE(merged.contains("main"));
}

TEST(FlameGraphTest, ParallelChildrenAreFittedIntoTheirParent) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t w1 = b.Thread(2, "w1");
  const uint32_t w2 = b.Thread(3, "w2");
  const uint32_t root = b.Site("root");
  const uint32_t x = b.Site("x");
  const uint32_t y = b.Site("y");
  b.Add(1, 0, root, main, 0, 1000);
  b.Add(2, 1, x, w1, 0, 900);
  b.Add(3, 1, y, w2, 0, 600);
  const Capture capture = b.Build();
  const std::map<std::string, DrawnFrame> frames =
      Frames(PlotFlame(BuildFlameGraph({&capture}, {.merge_threads = true})));
  const DrawnFrame& parent = frames.at("root");
  const DrawnFrame& first = frames.at("root;x");
  const DrawnFrame& second = frames.at("root;y");
  // 1500 ns of children in 1000 ns: scaled by 1000/1500, in proportion.
  EXPECT_NEAR(first.width, parent.width * 900 / 1500, 0.011);
  EXPECT_NEAR(second.width, parent.width * 600 / 1500, 0.011);
  EXPECT_LE(second.x + second.width, parent.x + parent.width + 0.011);
  EXPECT_THAT(first.title, HasSubstr("inclusive 900 ns"));
}

// The pair: a's self time grows by 400 ns, b's shrinks by 300, root's by 100.
Capture PairRun(int64_t a_ns, int64_t b_ns, int64_t root_ns = 1000) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t root = b.Site("root");
  const uint32_t a = b.Site("a");
  const uint32_t bb = b.Site("b");
  b.Add(1, 0, root, main, 0, root_ns);
  b.Add(2, 1, a, main, 0, a_ns);
  b.Add(3, 1, bb, main, a_ns, a_ns + b_ns);
  return b.Build();
}

TEST(FlameDiffTest, ColoursFollowTheChangeOfSelfTime) {
  const Capture base = PairRun(200, 500);
  const Capture cand = PairRun(600, 200);
  absl::StatusOr<FlameDiff> diff =
      DiffFlameGraphs({&base}, {&cand}, {.merge_threads = true});
  ASSERT_TRUE(diff.ok()) << diff.status();
  const std::string svg = PlotFlameDiff(*diff);
  const std::map<std::string, DrawnFrame> frames = Frames(svg);
  // The largest change, +400 ns, is full red; -300 ns is 3/4 of full blue;
  // -100 ns a quarter; "all" has no self time to change.
  EXPECT_EQ(frames.at("root;a").fill, "#ff2d2d");
  EXPECT_EQ(frames.at("root;b").fill, "#5a5aff");
  EXPECT_EQ(frames.at("root").fill, "#b4b4ff");
  EXPECT_EQ(frames.at("all").fill, "#eeeeee");
  EXPECT_THAT(frames.at("root;a").title,
              HasSubstr("self 200 ns \xE2\x86\x92 600 ns (+400 ns)"));
  // Widths are the candidate's.
  EXPECT_NEAR(frames.at("root;a").width, kPlotWidth * 600 / 1000, 0.011);
  EXPECT_THAT(svg, HasSubstr("Differential flame graph"));
}

TEST(FlameDiffTest, WithRunsOnlyTheGatesVerdictsAreColoured) {
  // Three runs a side: a is three times slower in the candidate, b only
  // jitters by a few ns, root's self time stays.
  std::vector<Capture> base;
  std::vector<Capture> cand;
  const int64_t jitter[] = {0, 7, -5};
  for (int i = 0; i < 3; ++i) {
    base.push_back(PairRun(100 + jitter[i], 300 - jitter[i]));
    cand.push_back(
        PairRun(300 + jitter[i], 302 + jitter[i], 1200 + 2 * jitter[i]));
  }
  std::vector<const Capture*> b = {&base[0], &base[1], &base[2]};
  std::vector<const Capture*> c = {&cand[0], &cand[1], &cand[2]};
  absl::StatusOr<FlameDiff> diff =
      DiffFlameGraphs(b, c, {.merge_threads = true});
  ASSERT_TRUE(diff.ok()) << diff.status();
  const std::map<std::string, DrawnFrame> frames = Frames(PlotFlameDiff(*diff));
  EXPECT_EQ(frames.at("root;a").fill, "#ff2d2d");
  EXPECT_THAT(frames.at("root;a").title, HasSubstr("regressed"));
  EXPECT_EQ(frames.at("root;b").fill, "#eeeeee");
  EXPECT_THAT(frames.at("root;b").title, Not(HasSubstr("regressed")));
  EXPECT_EQ(frames.at("root").fill, "#eeeeee");
  EXPECT_FALSE(DiffFlameGraphs({}, c, {}).ok());
}

}  // namespace
}  // namespace spanprof::analysis
