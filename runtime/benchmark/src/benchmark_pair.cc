// Registration of a user's Google Benchmark function with recording off and
// on (spanprof/benchmark.h).
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "benchmark/benchmark.h"
#include "spanprof/benchmark.h"
#include "spanprof/capture.h"
#include "spanprof/internal/benchmark_names.h"
#include "spanprof/recording.h"

namespace spanprof {
namespace {

using UserFunction = std::function<void(::benchmark::State&)>;

// Every span the call recorded (retained or overwritten by the ring) per
// iteration of one thread.
void ReportSpansPerIteration(::benchmark::State& state,
                             const Capture& capture) {
  const uint64_t spans = capture.spans.size() + capture.dropped_events;
  const auto iterations = static_cast<double>(state.iterations()) *
                          static_cast<double>(state.threads());
  if (iterations <= 0) return;
  state.counters[std::string(internal::kBenchmarkSpansCounter)] =
      ::benchmark::Counter(static_cast<double>(spans) / iterations);
}

// The "on" variant: thread 0 opens the session before the call (so before
// the timed loop, whose start is a barrier for every thread) and closes it
// after.
void RunRecorded(::benchmark::State& state, const UserFunction& fn) {
  if (state.thread_index() != 0) {
    fn(state);
    return;
  }
  RecordingOptions options;
  options.max_events = kBenchmarkRingSpans;
  options.overflow = OverflowPolicy::kRing;
  const absl::Status started = StartRecording(options);
  if (!started.ok()) {
    const std::string message =
        "spanprof: cannot start the recording session: " +
        std::string(started.message());
    state.SkipWithError(message.c_str());
    // The loop runs no iteration after an error, but the other threads
    // still meet this one at its barriers.
    fn(state);
    return;
  }
  fn(state);
  ReportSpansPerIteration(state, StopRecording());
}

}  // namespace

BenchmarkPair* RegisterBenchmarkPair(const std::string& name,
                                     const UserFunction& fn) {
  // The pairs live as long as Google Benchmark's own registrations.
  static std::mutex mutex;
  static std::deque<BenchmarkPair> pairs;
  const std::string off_name =
      name + "/" + std::string(internal::kBenchmarkOff);
  const std::string on_name = name + "/" + std::string(internal::kBenchmarkOn);
  BenchmarkPair::Benchmark* off = ::benchmark::RegisterBenchmark(
      off_name.c_str(), [fn](::benchmark::State& state) { fn(state); });
  BenchmarkPair::Benchmark* on = ::benchmark::RegisterBenchmark(
      on_name.c_str(),
      [fn](::benchmark::State& state) { RunRecorded(state, fn); });
  const std::lock_guard<std::mutex> lock(mutex);
  return &pairs.emplace_back(off, on);
}

}  // namespace spanprof
