// Schedules: the laws of the step function over many random schedules, and
// RunScheduled() writing one real capture per cycle holding only the active
// steps.
#include "spanprof/schedule.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"
#include "tests/testing/lookup.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::FindRow;
using spanprof::testing::QuietConfig;
using spanprof::testing::TempDir;
using ::testing::HasSubstr;

constexpr int kSchedules = 2000;

// Small random schedules: every field, including 0 for the ones that may be
// 0, shows up often. `repeat` is 0 (unbounded) about one time in five.
Schedule RandomSchedule(std::mt19937_64& rng) {
  auto pick = [&](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  return Schedule{.skip_first = pick(0, 6),
                  .wait = pick(0, 4),
                  .warmup = pick(0, 4),
                  .active = pick(1, 5),
                  .repeat = pick(0, 4)};
}

std::string Describe(const Schedule& s) {
  return "Schedule{skip_first=" + std::to_string(s.skip_first) +
         ", wait=" + std::to_string(s.wait) +
         ", warmup=" + std::to_string(s.warmup) +
         ", active=" + std::to_string(s.active) +
         ", repeat=" + std::to_string(s.repeat) + "}";
}

uint64_t Length(const Schedule& s) { return s.wait + s.warmup + s.active; }

// Enough steps to see every cycle of a bounded schedule and then some, or
// several cycles of an unbounded one.
uint64_t Horizon(const Schedule& s) {
  const uint64_t cycles = s.repeat == 0 ? 6 : s.repeat + 2;
  return s.skip_first + cycles * Length(s) + 3;
}

StepAction Act(const Schedule& s, uint64_t step) {
  const absl::StatusOr<StepAction> action = ActionForStep(s, step);
  EXPECT_TRUE(action.ok()) << action.status();
  return action.ok() ? *action : StepAction::kSkip;
}

TEST(ScheduleLawTest, CycleLengthIsPositiveAndTheScheduleIsPeriodic) {
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < kSchedules; ++i) {
    Schedule s = RandomSchedule(rng);
    s.repeat = 0;  // unbounded: the pattern repeats forever
    SCOPED_TRACE(Describe(s));
    ASSERT_TRUE(ValidateSchedule(s).ok());
    const uint64_t length = Length(s);
    ASSERT_GT(length, 0u);
    for (uint64_t step = s.skip_first; step < Horizon(s); ++step) {
      ASSERT_EQ(Act(s, step), Act(s, step + length)) << "step " << step;
    }
  }
}

TEST(ScheduleLawTest, StepsBeforeSkipFirstSkip) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < kSchedules; ++i) {
    const Schedule s = RandomSchedule(rng);
    SCOPED_TRACE(Describe(s));
    for (uint64_t step = 0; step < s.skip_first; ++step) {
      ASSERT_EQ(Act(s, step), StepAction::kSkip) << "step " << step;
    }
  }
}

TEST(ScheduleLawTest, RecordAndSaveImpliesRecord) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < kSchedules; ++i) {
    const Schedule s = RandomSchedule(rng);
    SCOPED_TRACE(Describe(s));
    for (uint64_t step = 0; step < Horizon(s); ++step) {
      if (Act(s, step) != StepAction::kRecordAndSave) continue;
      ASSERT_TRUE(IsRecorded(StepAction::kRecordAndSave));
      // The save closes a run of exactly `active` recorded steps.
      ASSERT_GE(step + 1, s.active);
      for (uint64_t back = 1; back < s.active; ++back) {
        ASSERT_EQ(Act(s, step - back), StepAction::kRecord)
            << "step " << step - back << " before the save at " << step;
      }
    }
  }
}

TEST(ScheduleLawTest, FinishedRepeatsSkip) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < kSchedules; ++i) {
    Schedule s = RandomSchedule(rng);
    if (s.repeat == 0) s.repeat = 1;
    SCOPED_TRACE(Describe(s));
    const uint64_t done = s.skip_first + s.repeat * Length(s);
    for (uint64_t step = done; step < done + 3 * Length(s); ++step) {
      ASSERT_EQ(Act(s, step), StepAction::kSkip) << "step " << step;
    }
    // And the last cycle before that is a real one.
    ASSERT_EQ(Act(s, done - 1), StepAction::kRecordAndSave);
  }
}

TEST(ScheduleLawTest, ExactlyActiveRecordedStepsPerCycle) {
  std::mt19937_64 rng(4);
  for (int i = 0; i < kSchedules; ++i) {
    const Schedule s = RandomSchedule(rng);
    SCOPED_TRACE(Describe(s));
    const uint64_t length = Length(s);
    const uint64_t cycles = s.repeat == 0 ? 6 : s.repeat;
    for (uint64_t cycle = 0; cycle < cycles; ++cycle) {
      const uint64_t first = s.skip_first + cycle * length;
      std::map<StepAction, uint64_t> counts;
      std::vector<uint64_t> recorded;
      for (uint64_t step = first; step < first + length; ++step) {
        const StepAction action = Act(s, step);
        ++counts[action];
        if (IsRecorded(action)) recorded.push_back(step);
      }
      ASSERT_EQ(recorded.size(), s.active) << "cycle " << cycle;
      ASSERT_EQ(counts[StepAction::kRecordAndSave], 1u) << "cycle " << cycle;
      ASSERT_EQ(counts[StepAction::kWarmup], s.warmup) << "cycle " << cycle;
      ASSERT_EQ(counts[StepAction::kSkip], s.wait) << "cycle " << cycle;
      // Recorded steps are contiguous, at the end of the cycle, and the last
      // one saves.
      ASSERT_EQ(recorded.front(), first + s.wait + s.warmup);
      ASSERT_EQ(recorded.back(), first + length - 1);
      ASSERT_EQ(Act(s, recorded.back()), StepAction::kRecordAndSave);
    }
  }
}

TEST(ScheduleLawTest, CyclesSavedCountsTheCyclesThatRecordBeforeTheEnd) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < kSchedules; ++i) {
    const Schedule s = RandomSchedule(rng);
    const uint64_t steps =
        std::uniform_int_distribution<uint64_t>(0, Horizon(s))(rng);
    SCOPED_TRACE(Describe(s) + " steps=" + std::to_string(steps));
    std::set<uint64_t> cycles;
    for (uint64_t step = 0; step < steps; ++step) {
      if (IsRecorded(Act(s, step))) {
        cycles.insert((step - s.skip_first) / Length(s));
      }
    }
    const absl::StatusOr<uint64_t> saved = CyclesSaved(s, steps);
    ASSERT_TRUE(saved.ok()) << saved.status();
    ASSERT_EQ(*saved, cycles.size());
  }
}

TEST(ScheduleTest, ActiveZeroIsAnErrorNamingTheField) {
  const Schedule s{.skip_first = 1, .wait = 1, .warmup = 1, .active = 0};
  EXPECT_THAT(std::string(ValidateSchedule(s).message()),
              HasSubstr("`active`"));
  const absl::StatusOr<StepAction> action = ActionForStep(s, 3);
  ASSERT_FALSE(action.ok());
  EXPECT_EQ(action.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(action.status().message()), HasSubstr("`active`"));
  EXPECT_FALSE(CyclesSaved(s, 10).ok());

  TempDir dir;
  Config config = QuietConfig(dir, "");
  int ran = 0;
  try {
    RunScheduled(config, s, "test.run", 5, [&](uint64_t) { ++ran; });
    FAIL() << "expected spanprof::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("`active`"));
  }
  EXPECT_EQ(ran, 0);  // no step runs under an invalid schedule
  EXPECT_FALSE(std::filesystem::exists(dir.File("trace.json")));
}

TEST(ScheduleTest, CycleLengthOverflowIsAnError) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const Schedule s{.wait = kMax - 1, .warmup = 1, .active = 1};
  EXPECT_THAT(std::string(ValidateSchedule(s).message()), HasSubstr("`wait`"));
  const Schedule fits{.wait = kMax - 2, .warmup = 1, .active = 1};
  EXPECT_TRUE(ValidateSchedule(fits).ok());
  EXPECT_EQ(Act(fits, kMax - 2), StepAction::kWarmup);
  EXPECT_EQ(Act(fits, kMax - 1), StepAction::kRecordAndSave);
  EXPECT_EQ(Act(fits, kMax), StepAction::kSkip);  // the next cycle's wait
}

TEST(ScheduleTest, TheDocumentedExample) {
  const Schedule s{
      .skip_first = 2, .wait = 1, .warmup = 1, .active = 3, .repeat = 2};
  std::string pattern;
  for (uint64_t step = 0; step < 14; ++step) {
    pattern += StepActionName(Act(s, step));
    pattern += ' ';
  }
  EXPECT_EQ(pattern,
            "skip skip skip warmup record record record-and-save "
            "skip warmup record record record-and-save skip skip ");
  EXPECT_EQ(*CyclesSaved(s, 22), 2u);
  EXPECT_EQ(*CyclesSaved(s, 5), 1u);  // cycle 0 started recording at step 4
  EXPECT_EQ(*CyclesSaved(s, 4), 0u);
}

TEST(ScheduleTest, CyclePathInsertsTheSuffixBeforeTheExtension) {
  EXPECT_EQ(CyclePath("out/trace.json", 2), "out/trace-cycle2.json");
  EXPECT_EQ(CyclePath("out/trace.json.gz", 0), "out/trace-cycle0.json.gz");
  EXPECT_EQ(CyclePath("trace", 1), "trace-cycle1");
  EXPECT_EQ(CyclePath("a.b/trace", 3), "a.b/trace-cycle3");
  EXPECT_EQ(CyclePath("dir/.trace", 4), "dir/.trace-cycle4");
  EXPECT_EQ(CyclePath("x.gz", 5), "x-cycle5.gz");
  EXPECT_EQ(CyclePath("/abs/summary.v1.json", 10),
            "/abs/summary.v1-cycle10.json");
}

// ---- RunScheduled with real sessions ----

// One step of the workload: a `step` span with the step number as argument.
void Step(uint64_t step) {
  SPANPROF_SCOPE("step", {.phase = "train"});
  SPANPROF_ARG("step", step);
}

// The `step` arguments of the `step` spans in a trace, and the root's args.
struct TraceSteps {
  std::vector<int64_t> steps;
  std::map<std::string, int64_t> root_args;
};

TraceSteps ReadSteps(const std::string& path) {
  TraceSteps out;
  const absl::StatusOr<Capture> capture = analysis::ReadTrace(path);
  EXPECT_TRUE(capture.ok()) << capture.status();
  if (!capture.ok()) return out;
  for (const Span& span : capture->spans) {
    const std::string& name = capture->sites[span.site].name;
    for (uint32_t a = span.first_arg; a < span.first_arg + span.arg_count;
         ++a) {
      const SpanArg& arg = capture->args[a];
      if (name == "step" && arg.key == "step") {
        out.steps.push_back(arg.int_value);
      } else if (span.parent_id == 0) {
        out.root_args[arg.key] = arg.int_value;
      }
    }
  }
  std::sort(out.steps.begin(), out.steps.end());
  return out;
}

TEST(RunScheduledTest, WritesOneCapturePerCycleWithOnlyTheActiveSteps) {
  TempDir dir;
  const Schedule s{
      .skip_first = 2, .wait = 1, .warmup = 1, .active = 3, .repeat = 2};
  std::vector<uint64_t> ran;
  const uint64_t saved =
      RunScheduled(QuietConfig(dir), s, "training.run", 20, [&](uint64_t i) {
        ran.push_back(i);
        Step(i);
      });
  EXPECT_EQ(saved, 2u);
  ASSERT_EQ(ran.size(), 20u);  // every step runs, in order
  for (uint64_t i = 0; i < ran.size(); ++i) EXPECT_EQ(ran[i], i);

  const std::vector<std::vector<int64_t>> expected = {{4, 5, 6}, {9, 10, 11}};
  for (uint64_t cycle = 0; cycle < 2; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    const std::string summary_path =
        dir.File("out/summary-cycle" + std::to_string(cycle) + ".json");
    const std::string trace_path =
        dir.File("out/trace-cycle" + std::to_string(cycle) + ".json");
    const absl::StatusOr<analysis::Summary> summary =
        analysis::ReadSummary(summary_path);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_TRUE(summary->complete);
    EXPECT_EQ(summary->event_count, 4u);  // the root + 3 active steps
    ASSERT_EQ(summary->rows.size(), 2u);
    const analysis::Row* step = FindRow(*summary, "step");
    const analysis::Row* root = FindRow(*summary, "training.run");
    ASSERT_TRUE(step && root);
    EXPECT_EQ(step->calls, 3u);
    EXPECT_EQ(root->calls, 1u);

    const TraceSteps steps = ReadSteps(trace_path);
    EXPECT_EQ(steps.steps, expected[cycle]);
    EXPECT_EQ(steps.root_args.at("cycle"), static_cast<int64_t>(cycle));
    EXPECT_EQ(steps.root_args.at("first_step"), expected[cycle].front());
    EXPECT_EQ(steps.root_args.at("steps"), 3);
  }
  // No unsuffixed file and no third cycle.
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/trace.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/summary.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/trace-cycle2.json")));
}

TEST(RunScheduledTest, OneSavedCycleUsesTheConfiguredPaths) {
  TempDir dir;
  const Schedule s{.skip_first = 1, .warmup = 2, .active = 2, .repeat = 1};
  EXPECT_EQ(RunScheduled(QuietConfig(dir), s, "run", 10, Step), 1u);
  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_NE(FindRow(*summary, "step"), nullptr);
  EXPECT_EQ(FindRow(*summary, "step")->calls, 2u);
  EXPECT_EQ(ReadSteps(dir.File("out/trace.json")).steps,
            (std::vector<int64_t>{3, 4}));
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/trace-cycle0.json")));
}

TEST(RunScheduledTest, RecordingIsOnOnlyDuringWarmupAndActiveSteps) {
  TempDir dir;
  const Schedule s{
      .skip_first = 1, .wait = 1, .warmup = 2, .active = 2, .repeat = 2};
  std::vector<bool> recording;
  RunScheduled(QuietConfig(dir), s, "run", 14,
               [&](uint64_t) { recording.push_back(IsRecording()); });
  ASSERT_EQ(recording.size(), 14u);
  for (uint64_t step = 0; step < 14; ++step) {
    EXPECT_EQ(recording[step], Act(s, step) != StepAction::kSkip)
        << "step " << step << " (" << StepActionName(Act(s, step)) << ")";
  }
  EXPECT_FALSE(IsRecording());
}

TEST(RunScheduledTest, UnboundedScheduleSavesACutShortLastCycle) {
  TempDir dir;
  const Schedule s{.active = 3};  // repeat 0: every 3 steps form a cycle
  EXPECT_EQ(RunScheduled(QuietConfig(dir), s, "run", 7, Step), 3u);
  EXPECT_EQ(ReadSteps(dir.File("out/trace-cycle0.json")).steps,
            (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(ReadSteps(dir.File("out/trace-cycle1.json")).steps,
            (std::vector<int64_t>{3, 4, 5}));
  const TraceSteps last = ReadSteps(dir.File("out/trace-cycle2.json"));
  EXPECT_EQ(last.steps, (std::vector<int64_t>{6}));
  EXPECT_EQ(last.root_args.at("steps"), 1);  // the root says it was cut short
}

TEST(RunScheduledTest, RandomSchedulesSaveExactlyTheRecordedSteps) {
  std::mt19937_64 rng(6);
  for (int i = 0; i < 25; ++i) {
    const Schedule s = RandomSchedule(rng);
    const uint64_t steps =
        std::uniform_int_distribution<uint64_t>(0, Horizon(s))(rng);
    SCOPED_TRACE(Describe(s) + " steps=" + std::to_string(steps));
    TempDir dir;
    std::map<uint64_t, std::vector<int64_t>> expected;  // cycle -> steps
    for (uint64_t step = 0; step < steps; ++step) {
      if (IsRecorded(Act(s, step))) {
        expected[(step - s.skip_first) / Length(s)].push_back(
            static_cast<int64_t>(step));
      }
    }
    ASSERT_EQ(RunScheduled(QuietConfig(dir), s, "run", steps, Step),
              expected.size());
    for (const auto& [cycle, want] : expected) {
      const std::string trace_path =
          expected.size() == 1 ? dir.File("out/trace.json")
                               : CyclePath(dir.File("out/trace.json"), cycle);
      const std::string summary_path =
          expected.size() == 1 ? dir.File("out/summary.json")
                               : CyclePath(dir.File("out/summary.json"), cycle);
      EXPECT_EQ(ReadSteps(trace_path).steps, want) << "cycle " << cycle;
      const absl::StatusOr<analysis::Summary> summary =
          analysis::ReadSummary(summary_path);
      ASSERT_TRUE(summary.ok()) << summary.status();
      ASSERT_NE(FindRow(*summary, "step"), nullptr);
      EXPECT_EQ(FindRow(*summary, "step")->calls, want.size());
      EXPECT_EQ(summary->event_count, want.size() + 1);
    }
    size_t files = 0;
    if (std::filesystem::exists(dir.File("out"))) {
      for ([[maybe_unused]] const auto& entry :
           std::filesystem::directory_iterator(dir.File("out"))) {
        ++files;
      }
    }
    EXPECT_EQ(files, 2 * expected.size());  // a trace and a summary each
  }
}

TEST(RunScheduledTest, DisabledConfigRunsEveryStepAndWritesNothing) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.enabled = false;
  int ran = 0;
  EXPECT_EQ(RunScheduled(config, Schedule{.active = 2}, "run", 9,
                         [&](uint64_t) {
                           EXPECT_FALSE(IsRecording());
                           ++ran;
                         }),
            0u);
  EXPECT_EQ(ran, 9);
  EXPECT_FALSE(std::filesystem::exists(dir.File("out")));
}

TEST(RunScheduledTest, ThrowingStepSavesItsCycleAndStopsTheRun) {
  TempDir dir;
  const Schedule s{.wait = 1, .active = 3, .repeat = 3};
  std::vector<uint64_t> ran;
  EXPECT_THROW(RunScheduled(QuietConfig(dir), s, "run", 12,
                            [&](uint64_t step) {
                              ran.push_back(step);
                              Step(step);
                              if (step == 6) {
                                throw std::runtime_error("step 6 failed");
                              }
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.back(), 6u);  // nothing after the failing step
  // Cycles 0 and 1 were saved; cycle 1 holds the failing run's steps 5-6.
  EXPECT_EQ(ReadSteps(dir.File("out/trace-cycle0.json")).steps,
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(ReadSteps(dir.File("out/trace-cycle1.json")).steps,
            (std::vector<int64_t>{5, 6}));
  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary-cycle1.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_NE(FindRow(*summary, "run"), nullptr);
  EXPECT_EQ(FindRow(*summary, "run")->exceptions, 1u);
  EXPECT_FALSE(IsRecording());
}

TEST(RunScheduledTest, ThrowingWarmupStepLeavesNoRecordingBehind) {
  TempDir dir;
  const Schedule s{.warmup = 2, .active = 1};
  EXPECT_THROW(RunScheduled(QuietConfig(dir), s, "run", 6,
                            [](uint64_t step) {
                              if (step == 1) throw std::runtime_error("x");
                            }),
               std::runtime_error);
  EXPECT_FALSE(IsRecording());
  EXPECT_FALSE(std::filesystem::exists(dir.File("out")));
}

TEST(RunScheduledTest, OutputErrorIsReportedAfterEveryStepRan) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.trace_path = dir.File("blocker/trace.json");
  int ran = 0;
  try {
    RunScheduled(config, Schedule{.active = 2, .repeat = 2}, "run", 6,
                 [&](uint64_t step) {
                   ++ran;
                   // A directory where each cycle's trace must go, made in
                   // the cycle's first step (after its start's checks).
                   if (step == 0 || step == 2) {
                     std::filesystem::create_directories(
                         CyclePath(config.trace_path, step / 2));
                   }
                   Step(step);
                 });
    FAIL() << "expected spanprof::OutputError";
  } catch (const OutputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("blocker/trace-cycle0.json"));
    EXPECT_THAT(e.what(), HasSubstr("blocker/trace-cycle1.json"));
  }
  EXPECT_EQ(ran, 6);
  // The summaries were still written.
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/summary-cycle0.json")));
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/summary-cycle1.json")));
}

TEST(RunScheduledTest, ConcurrentSessionIsAnError) {
  TempDir dir;
  Config outer = QuietConfig(dir);
  outer.trace_path = dir.File("outer/trace.json");
  outer.summary_path = dir.File("outer/summary.json");
  Profile(outer, "outer", [&] {
    EXPECT_THROW(
        RunScheduled(QuietConfig(dir), Schedule{.active = 1}, "run", 2, Step),
        Error);
  });
  EXPECT_FALSE(std::filesystem::exists(dir.File("out")));
}

}  // namespace
}  // namespace spanprof
