// schedule_example: record only the active steps of a stepped workload.
//
// A 16-step "training loop" (load a batch ~1 ms, forward ~2 ms, backward
// ~3 ms) runs under the schedule
//
//   Schedule{.skip_first = 2, .wait = 1, .warmup = 1, .active = 3, .repeat = 2}
//
// so steps 0-1 are skipped once, then two cycles of [wait, warmup, 3 active]
// run (active steps 4-6 and 9-11), and steps 12-15 run unrecorded because the
// repeats are done. Each cycle is its own capture:
//
//   SPANPROF=1 build/demo/bin/schedule_example
//
// prints which action each step got, a table per cycle (13 events: the root,
// 3 train.step spans and their 9 children), and writes
// build/spanprof-trace-cycle0.json, build/spanprof-summary-cycle0.json and the
// same for cycle1. The summaries hold only the active steps: `train.step` has
// 3 calls in each, and its `step` argument is 4, 5, 6 in cycle 0 and 9, 10, 11
// in cycle 1.
#include <spanprof/spanprof.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

namespace {

constexpr uint64_t kSteps = 16;

void Sleep(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

void TrainStep(uint64_t step) {
  SPANPROF_SCOPE("train.step", {.phase = "step"});
  SPANPROF_ARG("step", step);
  {
    SPANPROF_SCOPE("batch.load", {.phase = "input", .activity = "load"});
    Sleep(1);
  }
  {
    SPANPROF_SCOPE("model.forward", {.phase = "forward", .module = "model"});
    Sleep(2);
  }
  {
    SPANPROF_SCOPE("model.backward", {.phase = "backward", .module = "model"});
    Sleep(3);
  }
  spanprof::Heartbeat(1);  // one sample trained
}

}  // namespace

int main() {
  const absl::StatusOr<spanprof::Config> config =
      spanprof::ConfigFromEnvironment();
  if (!config.ok()) {
    std::fprintf(stderr, "schedule_example: %s\n",
                 std::string(config.status().message()).c_str());
    return 2;
  }
  const spanprof::Schedule schedule{
      .skip_first = 2, .wait = 1, .warmup = 1, .active = 3, .repeat = 2};
  uint64_t recorded = 0;
  try {
    const uint64_t saved = spanprof::RunScheduled(
        *config, schedule, "training.run", kSteps, [&](uint64_t step) {
          const spanprof::StepAction action =
              *spanprof::ActionForStep(schedule, step);
          std::printf("step %2llu: %s\n", static_cast<unsigned long long>(step),
                      spanprof::StepActionName(action));
          std::fflush(stdout);
          if (config->enabled && spanprof::IsRecorded(action)) ++recorded;
          TrainStep(step);
        });
    std::printf("%llu of %llu steps recorded, %llu cycles saved\n",
                static_cast<unsigned long long>(recorded),
                static_cast<unsigned long long>(kSteps),
                static_cast<unsigned long long>(saved));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
