// Schedules: the step function (docs/guide.md, chapter 6) and RunScheduled(),
// which runs each cycle's active steps as the body of one ordinary session.
#include "spanprof/schedule.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/recording.h"
#include "spanprof/session.h"
#include "spanprof/span.h"

namespace spanprof {
namespace {

uint64_t CycleLength(const Schedule& schedule) {
  return schedule.wait + schedule.warmup + schedule.active;
}

// The step function of a schedule already validated.
StepAction Action(const Schedule& schedule, uint64_t step) {
  if (step < schedule.skip_first) return StepAction::kSkip;
  const uint64_t offset = step - schedule.skip_first;
  const uint64_t length = CycleLength(schedule);
  const uint64_t cycle = offset / length;
  if (schedule.repeat != 0 && cycle >= schedule.repeat) {
    return StepAction::kSkip;
  }
  const uint64_t position = offset % length;
  if (position < schedule.wait) return StepAction::kSkip;
  if (position < schedule.wait + schedule.warmup) return StepAction::kWarmup;
  if (position == length - 1) return StepAction::kRecordAndSave;
  return StepAction::kRecord;
}

uint64_t CountCyclesSaved(const Schedule& schedule, uint64_t steps) {
  if (steps <= schedule.skip_first) return 0;
  const uint64_t available = steps - schedule.skip_first;
  const uint64_t before_active = schedule.wait + schedule.warmup;
  if (available <= before_active) return 0;
  // Cycle c's first active offset is c * length + before_active.
  uint64_t cycles = (available - before_active - 1) / CycleLength(schedule) + 1;
  if (schedule.repeat != 0 && cycles > schedule.repeat) {
    cycles = schedule.repeat;
  }
  return cycles;
}

// Runs the warmup steps from `step` on with recording on, then discards what
// they recorded. Returns the first step after them.
uint64_t RunWarmup(const Config& config, const Schedule& schedule,
                   uint64_t step, uint64_t steps,
                   const std::function<void(uint64_t)>& step_fn) {
  const absl::Status started = StartRecording(config.recording);
  if (!started.ok()) internal::ThrowConfigError(started);
  try {
    while (step < steps && Action(schedule, step) == StepAction::kWarmup) {
      step_fn(step);
      ++step;
    }
  } catch (...) {
    static_cast<void>(StopRecording());
    throw;
  }
  static_cast<void>(StopRecording());
  return step;
}

}  // namespace

const char* StepActionName(StepAction action) noexcept {
  switch (action) {
    case StepAction::kSkip:
      return "skip";
    case StepAction::kWarmup:
      return "warmup";
    case StepAction::kRecord:
      return "record";
    case StepAction::kRecordAndSave:
      return "record-and-save";
  }
  return "unknown";
}

absl::Status ValidateSchedule(const Schedule& schedule) {
  if (schedule.active == 0) {
    return absl::InvalidArgumentError(
        "invalid schedule: `active` must be at least 1 (got 0); a cycle "
        "records `active` steps");
  }
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (schedule.wait > kMax - schedule.active ||
      schedule.warmup > kMax - schedule.active - schedule.wait) {
    return absl::InvalidArgumentError(
        "invalid schedule: the cycle length `wait` + `warmup` + `active` "
        "does not fit in 64 bits");
  }
  return absl::OkStatus();
}

absl::StatusOr<StepAction> ActionForStep(const Schedule& schedule,
                                         uint64_t step) {
  if (absl::Status s = ValidateSchedule(schedule); !s.ok()) return s;
  return Action(schedule, step);
}

absl::StatusOr<uint64_t> CyclesSaved(const Schedule& schedule, uint64_t steps) {
  if (absl::Status s = ValidateSchedule(schedule); !s.ok()) return s;
  return CountCyclesSaved(schedule, steps);
}

std::string CyclePath(const std::string& path, uint64_t cycle) {
  if (path == "off") return path;  // no output in any cycle
  const std::string suffix = "-cycle" + std::to_string(cycle);
  const size_t slash = path.find_last_of('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  // A leading dot names a hidden file, not an extension.
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || dot <= name_start) {
    return path + suffix;
  }
  if (analysis::HasExtension(std::string_view(path).substr(dot), ".gz")) {
    const size_t inner = path.find_last_of('.', dot - 1);
    if (inner != std::string::npos && inner > name_start) dot = inner;
  }
  return path.substr(0, dot) + suffix + path.substr(dot);
}

uint64_t RunScheduled(const Config& config, const Schedule& schedule,
                      const char* root, uint64_t steps,
                      const std::function<void(uint64_t)>& step_fn) {
  if (absl::Status s = ValidateSchedule(schedule); !s.ok()) {
    internal::ThrowConfigError(s);
  }
  if (!config.enabled) {
    for (uint64_t step = 0; step < steps; ++step) step_fn(step);
    return 0;
  }
  const bool suffixed = CountCyclesSaved(schedule, steps) > 1;
  uint64_t saved = 0;
  std::string output_errors;
  uint64_t step = 0;
  while (step < steps) {
    switch (Action(schedule, step)) {
      case StepAction::kSkip:
        step_fn(step);
        ++step;
        break;
      case StepAction::kWarmup:
        step = RunWarmup(config, schedule, step, steps, step_fn);
        break;
      case StepAction::kRecord:
      case StepAction::kRecordAndSave: {
        const uint64_t cycle =
            (step - schedule.skip_first) / CycleLength(schedule);
        Config cycle_config = config;
        if (suffixed) {
          cycle_config.trace_path = CyclePath(config.trace_path, cycle);
          cycle_config.summary_path = CyclePath(config.summary_path, cycle);
        }
        const uint64_t first = step;
        bool body_finished = false;
        try {
          internal::RunSession(cycle_config, root, [&] {
            AddArg("cycle", cycle);
            AddArg("first_step", first);
            while (step < steps) {
              const StepAction action = Action(schedule, step);
              step_fn(step);
              ++step;
              if (action == StepAction::kRecordAndSave) break;
            }
            AddArg("steps", step - first);
            body_finished = true;
          });
        } catch (const OutputError& e) {
          // Thrown by the session itself only after the body finished; an
          // OutputError thrown by a step is the step's and propagates.
          if (!body_finished) throw;
          if (!output_errors.empty()) output_errors += "; ";
          output_errors += e.what();
        }
        ++saved;
        break;
      }
    }
  }
  if (!output_errors.empty()) throw OutputError(output_errors);
  return saved;
}

}  // namespace spanprof
