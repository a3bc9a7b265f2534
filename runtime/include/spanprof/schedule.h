// spanprof/schedule.h — record only the active part of a stepped workload.
//
// A long-running program that works in steps (a training loop, a server tick,
// a solver iteration) rarely needs every step recorded: the first steps are
// unrepresentative (caches cold, lazy initialisation), and recording all of
// them makes captures large. A `Schedule` picks the steps to keep. After
// `skip_first` steps, cycles of `wait + warmup + active` steps repeat
// (`repeat` times, or forever when `repeat == 0`): `wait` steps run with
// recording off, `warmup` steps run with recording on but nothing retained,
// and `active` steps are recorded. Each cycle's active steps form one capture
// with one root span, written to the configured trace and summary paths —
// with a `-cycleN` suffix (N = the 0-based cycle) when more than one cycle
// saves. docs/guide.md (chapter 6) walks through an example.
//
// clang-format off
// Example (22 steps: 0-1 skip; cycle 0 = wait 2, warmup 3, active 4-6;
// cycle 1 = wait 7, warmup 8, active 9-11; 12-21 skip, the repeats are done):
//
//   void TrainStep(uint64_t step);  // the program's
//
//   spanprof::Config config = ...;  // e.g. ConfigFromEnvironment()
//   spanprof::Schedule schedule{.skip_first = 2, .wait = 1, .warmup = 1,
//                               .active = 3, .repeat = 2};
//   uint64_t saved = spanprof::RunScheduled(
//       config, schedule, "training.run", /*steps=*/22,
//       [&](uint64_t step) { TrainStep(step); });
//   // saved == 2: build/spanprof-trace-cycle0.json, ...-cycle1.json and the
//   // matching summaries.
// clang-format on
#ifndef SPANPROF_SCHEDULE_H_
#define SPANPROF_SCHEDULE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spanprof/session.h"

namespace spanprof {

// `Schedule` says which steps of a stepped workload are recorded. Plain data;
// `ValidateSchedule()` checks it.
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

// `StepActionName()` is "skip", "warmup", "record" or "record-and-save".
const char* StepActionName(StepAction action) noexcept;

// `IsRecorded()` is true for the actions whose step lands in a capture
// (`kRecord` and `kRecordAndSave`).
constexpr bool IsRecorded(StepAction action) noexcept {
  return action == StepAction::kRecord || action == StepAction::kRecordAndSave;
}

// `ValidateSchedule()` is an InvalidArgument error naming the field when
// `active == 0`, or naming `wait`, `warmup` and `active` when the cycle length
// `wait + warmup + active` does not fit in 64 bits.
absl::Status ValidateSchedule(const Schedule& schedule);

// `ActionForStep()` is the schedule's pure step function (0-based steps):
// step s < skip_first skips; otherwise, with offset = s - skip_first,
// len = wait + warmup + active and cycle = offset / len, a cycle >= repeat
// (repeat != 0) skips, position offset % len < wait skips, < wait + warmup
// warms up, the last position records and saves, the others record.
// The error is `ValidateSchedule()`'s.
absl::StatusOr<StepAction> ActionForStep(const Schedule& schedule,
                                         uint64_t step);

// `CyclesSaved()` is how many cycles `RunScheduled()` saves over steps
// [0, steps): the cycles whose first active step is below `steps` (a cycle
// cut short by the end of the run is saved with the steps it recorded).
absl::StatusOr<uint64_t> CyclesSaved(const Schedule& schedule, uint64_t steps);

// `CyclePath()` inserts `-cycleN` before the extension of the file name in
// `path`: "out/trace.json" -> "out/trace-cycle2.json"; ".json.gz" is kept
// whole ("t.json.gz" -> "t-cycle2.json.gz", in any case); a name without an
// extension gets the suffix at its end; `off` (no output) stays `off`.
std::string CyclePath(const std::string& path, uint64_t cycle);

// `RunScheduled()` runs `step_fn(step)` for every step in [0, steps), in
// order, on the calling thread, and records the steps `schedule` selects:
//
//   * skip steps run with no recording active;
//   * a run of warmup steps is recorded into a session that is then
//     discarded (first-use costs such as site interning and per-thread setup
//     are paid there, not in the active steps); nothing is written;
//   * each cycle's active steps run as the body of one session (like
//     `Profile()`) whose root span is `root`, with integer arguments `cycle`,
//     `first_step` and `steps` on the root span. The session's trace and
//     summary go to `config`'s paths, through `CyclePath()` when
//     `CyclesSaved(schedule, steps) > 1`, and the table is printed unless
//     `config.quiet`.
//
// Returns the number of cycles saved. With `config.enabled == false` every
// step just runs and 0 is returned.
//
// Errors: an invalid schedule throws `spanprof::Error` (naming the field)
// before any step runs; so does a session already active in the process.
// When a step throws, the cycle being recorded (if any) is saved as
// `Profile()` saves a failed body, and the exception is rethrown; no later
// step runs. When only writing a cycle's outputs fails, the remaining steps
// still run and `spanprof::OutputError` naming every failed path is thrown at
// the end.
//
// Thread-safety: one schedule (or session) per process at a time. Steps may
// start threads; their spans belong to the cycle's capture as with
// `Profile()`.
uint64_t RunScheduled(const Config& config, const Schedule& schedule,
                      const char* root, uint64_t steps,
                      const std::function<void(uint64_t)>& step_fn);

}  // namespace spanprof

#endif  // SPANPROF_SCHEDULE_H_
