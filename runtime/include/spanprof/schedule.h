// spanprof/schedule.h — record only the active part of a stepped workload.
//
// A `Schedule` splits steps into skip, warmup (runs, not retained) and active
// (recorded) steps, cycle by cycle; each cycle's active steps form one capture
// with its own trace and summary. See DESIGN.md section 5.
//
// Example:
//
//   spanprof::Schedule schedule{.skip_first = 2, .wait = 1, .warmup = 1,
//                               .active = 3, .repeat = 2};
//   spanprof::RunScheduled(config, schedule, "training.run", /*steps=*/20,
//                          [&](uint64_t step) { TrainStep(step); });
#ifndef SPANPROF_SCHEDULE_H_
#define SPANPROF_SCHEDULE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "spanprof/session.h"

namespace spanprof {

struct Schedule {
  uint64_t skip_first = 0;  // steps skipped once, before the first cycle
  uint64_t wait = 0;        // steps skipped at the start of each cycle
  uint64_t warmup = 0;      // steps run but not retained, before active
  uint64_t active = 1;      // steps recorded per cycle; must be >= 1
  uint64_t repeat = 0;      // cycles to record; 0 = unbounded
};

// What a schedule does at one step.
enum class StepAction {
  kSkip,           // run the step, record nothing
  kWarmup,         // run the step with recording on, retain nothing
  kRecord,         // record the step
  kRecordAndSave,  // record the step, then finish and save the cycle
};

const char* StepActionName(StepAction action) noexcept;

// `ValidateSchedule()` is an error (naming the field) when `active == 0`.
absl::Status ValidateSchedule(const Schedule& schedule);

// `ActionForStep()` is the schedule's pure step function (0-based steps).
absl::StatusOr<StepAction> ActionForStep(const Schedule& schedule,
                                         uint64_t step);

// `CyclePath()` inserts `-cycleN` before the extension of `path`
// ("out/trace.json" -> "out/trace-cycle2.json"; ".json.gz" is kept whole).
std::string CyclePath(const std::string& path, uint64_t cycle);

// `RunScheduled()` runs `step_fn(step)` for steps [0, steps) under `schedule`:
// each cycle's active steps are recorded into one session whose root span is
// `root`, saved to the configured paths (with `-cycleN` when more than one
// cycle saves). Throws `spanprof::Error` for an invalid schedule and as
// `Profile()` does for the rest. Returns the number of cycles saved.
uint64_t RunScheduled(const Config& config, const Schedule& schedule,
                      const char* root, uint64_t steps,
                      const std::function<void(uint64_t)>& step_fn);

}  // namespace spanprof

#endif  // SPANPROF_SCHEDULE_H_
