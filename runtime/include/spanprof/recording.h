// spanprof/recording.h — starting and stopping the process-wide recorder.
//
// This is the runtime layer below `Profile`: it records spans into per-thread
// rings and, at stop, collects them into a `Capture`. It writes no files and
// computes no statistics. Most programs use `spanprof::Profile` instead; tests,
// benchmarks and embedders use this directly.
//
// clang-format off
// Example:
//
//   #include <spanprof/span.h>
//   spanprof::RecordingOptions options;
//   options.max_events = 1000;
//   absl::Status started = spanprof::StartRecording(options);
//   { SPANPROF_SCOPE("work"); }
//   spanprof::Capture capture = spanprof::StopRecording();
// clang-format on
#ifndef SPANPROF_RECORDING_H_
#define SPANPROF_RECORDING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "spanprof/capture.h"

namespace spanprof {

// What happens when the span cap is reached.
enum class OverflowPolicy {
  kDropNewest,  // "drop": keep the first N spans, count newer ones as dropped
  kRing,        // "ring": flight recorder, keep the newest N spans
};

// Which clock timestamps come from.
enum class ClockKind {
  kAuto,       // the invariant TSC when the CPU has one, else monotonic
  kTsc,        // rdtsc; an error when the TSC is not invariant
  kMonotonic,  // clock_gettime(CLOCK_MONOTONIC)
};

inline constexpr uint64_t kDefaultMaxEvents = 1'000'000;

struct RecordingOptions {
  uint64_t max_events = kDefaultMaxEvents;  // whole spans; must be > 0
  OverflowPolicy overflow = OverflowPolicy::kDropNewest;
  ClockKind clock = ClockKind::kAuto;
  std::string process_name;  // empty: the executable's name
  // A W3C `traceparent` naming a span of another process
  // (`Context::Traceparent()` there): the session adopts its trace id and
  // its root spans become that span's children
  // (`Capture::remote_parent_span_id`). Empty: a new random trace id.
  // Malformed: `StartRecording()` fails (see `ContextFromTraceparent`).
  std::string traceparent;
};

// `StartRecording()` claims the process-wide capture and enables recording.
// Fails when a recording is already active (one session per process), when
// `max_events` is 0, or when `kTsc` is asked for on a CPU without an invariant
// TSC. Thread-safe.
absl::Status StartRecording(const RecordingOptions& options);

// `IsRecording()` is true between a successful `StartRecording()` and
// `StopRecording()`.
bool IsRecording() noexcept;

// `StopRecording()` stops recording, collects every thread's ring (live and
// exited threads), closes spans still open as unfinished, and returns the
// capture. Spans that begin or end after this point are ignored. Returns an
// empty capture when no recording is active. Thread-safe.
Capture StopRecording();

// `PredictedMemoryBytes()` is the worst-case ring memory for a cap: what a
// session prints at start.
uint64_t PredictedMemoryBytes(uint64_t max_events, OverflowPolicy overflow);

// `PhysicalMemoryBytes()` is this machine's physical memory
// (sysconf(_SC_PHYS_PAGES) pages). A cap whose `PredictedMemoryBytes()`
// exceeds it is refused by `StartRecording()`: the process would be killed
// for memory before the cap could protect it.
uint64_t PhysicalMemoryBytes();

// `MemoryLimit` is a bound on this process's memory and what sets it.
struct MemoryLimit {
  uint64_t bytes = UINT64_MAX;  // UINT64_MAX: no bound is known
  // Names the bound for messages: "this machine's physical memory", "the
  // cgroup memory limit (/sys/fs/cgroup/memory.max)", "the address-space
  // limit (RLIMIT_AS)".
  std::string source;
};

// `ProcessMemoryLimit()` is the smallest of this machine's physical memory,
// the memory limit of this process's cgroup (v2 `memory.max` or v1
// `memory.limit_in_bytes`, of its own cgroup and each ancestor's; "max" is
// none) and RLIMIT_AS. A cap whose `PredictedMemoryBytes()` exceeds it is
// refused by `StartRecording()` (and by `ConfigFromEnvironment()`, naming
// SPANPROF_MAX_EVENTS): the process would be killed, or fail to allocate,
// before the cap could protect it. Reads a few small files; not for the hot
// path. Thread-safe.
MemoryLimit ProcessMemoryLimit();

// `MeasureSpanOverheadNs()` times spans into a private scratch ring for a few
// microseconds and returns the mean cost of one span (begin + end) in ns.
double MeasureSpanOverheadNs();

// `ParseOverflowPolicy()` / `OverflowPolicyName()` map "drop" and "ring".
absl::Status ParseOverflowPolicy(const std::string& text, OverflowPolicy* out);
const char* OverflowPolicyName(OverflowPolicy policy) noexcept;

}  // namespace spanprof

#endif  // SPANPROF_RECORDING_H_
