// The workload the session-end measurements record (span_overhead_benchmark
// and session_end_report): shaped like a real program, a root per ~1000
// spans with nested children of three sites and a heartbeat per step.
// `Beats::kNone` leaves the heartbeats out: spans that carry nothing but
// their name, tags and times (the Perfetto trace's plain-span size).
#ifndef SPANPROF_BENCH_WORKLOAD_H_
#define SPANPROF_BENCH_WORKLOAD_H_

#include <cstdint>

#include "spanprof/spanprof.h"

namespace spanprof::bench {

enum class Beats { kEveryStep, kNone };
// `Sizes::kOnForward` gives every forward span an integer argument (its
// step), the size argument the scaling method puts on interesting spans.
enum class Sizes { kNone, kOnForward };

// Records exactly `spans` spans on the calling thread.
inline void RecordWorkload(int64_t spans, Beats beats = Beats::kEveryStep,
                           Sizes sizes = Sizes::kNone) {
  for (int64_t done = 0; done < spans;) {
    SPANPROF_SCOPE("workload.step", {.phase = "step"});
    ++done;
    for (int i = 0; i < 333 && done + 3 <= spans; ++i, done += 3) {
      SPANPROF_SCOPE("workload.forward", {.phase = "forward"});
      if (beats == Beats::kEveryStep) Heartbeat(3);
      if (sizes == Sizes::kOnForward) SPANPROF_ARG("tokens", i);
      {
        SPANPROF_SCOPE("workload.layer", {.module = "encoder"});
        asm volatile("" ::: "memory");  // keep the spans apart
      }
      {
        SPANPROF_SCOPE("workload.layer", {.module = "decoder"});
        asm volatile("" ::: "memory");
      }
    }
  }
}

// Starts a session that keeps every span of the workload and records it.
// Returns false when the session could not start.
inline bool StartAndRecordWorkload(int64_t spans,
                                   Beats beats = Beats::kEveryStep,
                                   Sizes sizes = Sizes::kNone) {
  RecordingOptions options;
  options.max_events = static_cast<uint64_t>(spans) + 1024;
  if (!StartRecording(options).ok()) return false;
  RecordWorkload(spans, beats, sizes);
  return true;
}

}  // namespace spanprof::bench

#endif  // SPANPROF_BENCH_WORKLOAD_H_
