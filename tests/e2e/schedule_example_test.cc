// The real schedule_example binary, run with SPANPROF=1 into a temp dir: one
// capture per cycle, holding only that cycle's active steps.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/lookup.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::FindRow;
using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;
using ::testing::HasSubstr;

// The `step` arguments of the train.step spans in a trace.
std::vector<int64_t> RecordedSteps(const std::string& trace_path) {
  std::vector<int64_t> steps;
  const absl::StatusOr<Capture> capture = analysis::ReadTrace(trace_path);
  EXPECT_TRUE(capture.ok()) << capture.status();
  if (!capture.ok()) return steps;
  for (const Span& span : capture->spans) {
    if (capture->sites[span.site].name != "train.step") continue;
    for (uint32_t a = span.first_arg; a < span.first_arg + span.arg_count;
         ++a) {
      if (capture->args[a].key == "step") {
        steps.push_back(capture->args[a].int_value);
      }
    }
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

TEST(ScheduleExampleTest, EachCycleHoldsOnlyItsActiveSteps) {
  TempDir dir;
  const auto result =
      RunProcess({SPANPROF_TEST_BIN_DIR "/schedule_example"},
                 {{"SPANPROF", "1"},
                  {"SPANPROF_OUT", dir.File("out/trace.json")},
                  {"SPANPROF_SUMMARY_OUT", dir.File("out/summary.json")}},
                 dir.path().string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("step  0: skip\n"));
  EXPECT_THAT(result.out, HasSubstr("step  3: warmup\n"));
  EXPECT_THAT(result.out, HasSubstr("step  6: record-and-save\n"));
  EXPECT_THAT(result.out, HasSubstr("step 12: skip\n"));
  EXPECT_THAT(result.out, HasSubstr("6 of 16 steps recorded, 2 cycles saved"));
  // A table per cycle (on stderr), naming the suffixed files.
  EXPECT_THAT(result.err, HasSubstr("trace-cycle0.json"));
  EXPECT_THAT(result.err, HasSubstr("trace-cycle1.json"));

  const std::vector<std::vector<int64_t>> expected = {{4, 5, 6}, {9, 10, 11}};
  for (int cycle = 0; cycle < 2; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    const std::string suffix = "-cycle" + std::to_string(cycle) + ".json";
    const auto summary =
        analysis::ReadSummary(dir.File("out/summary" + suffix));
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_TRUE(summary->complete);
    EXPECT_EQ(summary->event_count, 13u);  // root + 3 x (step + 3 children)
    EXPECT_EQ(summary->thread_count, 1u);
    ASSERT_EQ(summary->rows.size(), 5u);
    const analysis::Row* root = FindRow(*summary, "training.run");
    ASSERT_NE(root, nullptr);
    EXPECT_EQ(root->calls, 1u);
    for (const char* name :
         {"train.step", "batch.load", "model.forward", "model.backward"}) {
      const analysis::Row* row = FindRow(*summary, name);
      ASSERT_NE(row, nullptr) << name;
      EXPECT_EQ(row->calls, 3u) << name;
    }
    // One heartbeat per recorded step.
    EXPECT_EQ(summary->recorded_heartbeats, 3u);
    // Sleeps of 2 ms and 3 ms per step.
    EXPECT_GE(FindRow(*summary, "model.backward")->total_ns, 3 * 3'000'000);
    EXPECT_GE(FindRow(*summary, "model.forward")->total_ns, 3 * 2'000'000);
    EXPECT_EQ(RecordedSteps(dir.File("out/trace" + suffix)), expected[cycle]);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/summary.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/summary-cycle2.json")));
}

TEST(ScheduleExampleTest, DisabledRunStillRunsEveryStep) {
  TempDir dir;
  const auto result =
      RunProcess({SPANPROF_TEST_BIN_DIR "/schedule_example"},
                 {{"SPANPROF", "\x01unset"}}, dir.path().string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("step 15: skip\n"));
  EXPECT_THAT(result.out, HasSubstr("0 of 16 steps recorded, 0 cycles saved"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("build")));
}

}  // namespace
}  // namespace spanprof
