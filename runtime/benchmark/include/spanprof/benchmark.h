// spanprof/benchmark.h — what do *my* spans cost? Google Benchmark, twice.
//
// `SPANPROF_BENCHMARK(BM_Parse)` registers the Google Benchmark function
// `BM_Parse` twice:
//
//   BM_Parse/spanprof:off   no recording session: each span the function
//                           opens costs a relaxed load and a predicted branch
//   BM_Parse/spanprof:on    a recording session is started before the
//                           function is called and stopped after it returns,
//                           so the timed loop (`for (auto _ : state)`) pays
//                           for every span it records; the run reports the
//                           counter `spanprof_spans_per_iteration`
//
// Google Benchmark appends its decorations after these names
// (`BM_Parse/spanprof:on/64/repeats:10`, `..._median`), and `spanprof
// overhead BENCH.json` pairs each `on` with its `off` by the rest of the
// name, takes the median over the repetitions and fails (exit 1) when on/off
// exceeds `--max-ratio` (default 1.05). Run the benchmark with
//
//   --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true
//   --benchmark_out=BENCH.json --benchmark_out_format=json
//
// so that the on and off repetitions interleave (a machine that drifts slows
// both alike) and the JSON keeps every repetition.
//
// Link `spanprof::benchmark` (built when Google Benchmark is found). It uses
// only the recording runtime (`StartRecording` / `StopRecording`), never
// `Profile`: nothing is written, no table is printed. Do not run a
// `spanprof::Profile` session around `benchmark::RunSpecifiedBenchmarks()`:
// the "on" variant needs the process-wide session and reports an error for
// that benchmark when it is taken.
//
// clang-format off
// Example:
//
//   #include <spanprof/span.h>
//
//   std::vector<std::string> MakeLines(int64_t count);  // the program's
//   int ParseRecord(const std::string& line);
//
//   void BM_Parse(benchmark::State& state) {
//     const std::vector<std::string> lines = MakeLines(state.range(0));
//     for (auto _ : state) {
//       for (const std::string& line : lines) {
//         SPANPROF_SCOPE("record.parse");
//         benchmark::DoNotOptimize(ParseRecord(line));
//       }
//     }
//   }
//   SPANPROF_BENCHMARK(BM_Parse)->Arg(64)->Arg(4096);
//   BENCHMARK_MAIN();
// clang-format on
#ifndef SPANPROF_BENCHMARK_H_
#define SPANPROF_BENCHMARK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"

namespace spanprof {

// The span cap of the "on" variant's session, in ring mode (a flight
// recorder). The number of iterations is Google Benchmark's choice (up to a
// billion), so no finite cap in drop mode is sure to hold a whole run, and
// once a drop-mode cap is reached every further span takes the drop path,
// which costs less than recording: the "on" figure would flatter the
// instrumentation. In ring mode a span never takes the drop path: it is
// always written, over the oldest records once the ring is full, exactly
// like a long-running program's flight recorder. The cap bounds the ring
// memory (a few MiB) and the collection at the end of each call (about
// 10 ms), which happens outside the timed loop.
inline constexpr uint64_t kBenchmarkRingSpans = uint64_t{1} << 16;

// `BenchmarkPair` is the two registrations of one function: `off()` and
// `on()` are Google Benchmark's own objects (configure them directly to
// treat one variant differently). The chaining methods apply the same
// setting to both and return `this`, as Google Benchmark's do. Owned by
// spanprof for the life of the process; use during registration (static
// initialization or before `benchmark::RunSpecifiedBenchmarks()`), not
// thread-safe.
class BenchmarkPair {
 public:
  using Benchmark = ::benchmark::internal::Benchmark;

  BenchmarkPair(Benchmark* off, Benchmark* on) : off_(off), on_(on) {}

  Benchmark* off() const { return off_; }
  Benchmark* on() const { return on_; }

  // `Each()` calls `configure(Benchmark*)` on both variants.
  template <typename Configure>
  BenchmarkPair* Each(Configure&& configure) {
    configure(off_);
    configure(on_);
    return this;
  }

  BenchmarkPair* Arg(int64_t x) {
    return Each([&](Benchmark* b) { b->Arg(x); });
  }
  BenchmarkPair* Args(const std::vector<int64_t>& args) {
    return Each([&](Benchmark* b) { b->Args(args); });
  }
  BenchmarkPair* Range(int64_t start, int64_t limit) {
    return Each([&](Benchmark* b) { b->Range(start, limit); });
  }
  BenchmarkPair* DenseRange(int64_t start, int64_t limit, int step = 1) {
    return Each([&](Benchmark* b) { b->DenseRange(start, limit, step); });
  }
  BenchmarkPair* RangeMultiplier(int multiplier) {
    return Each([&](Benchmark* b) { b->RangeMultiplier(multiplier); });
  }
  BenchmarkPair* ArgsProduct(const std::vector<std::vector<int64_t>>& lists) {
    return Each([&](Benchmark* b) { b->ArgsProduct(lists); });
  }
  BenchmarkPair* ArgName(const std::string& name) {
    return Each([&](Benchmark* b) { b->ArgName(name); });
  }
  BenchmarkPair* ArgNames(const std::vector<std::string>& names) {
    return Each([&](Benchmark* b) { b->ArgNames(names); });
  }
  BenchmarkPair* Unit(::benchmark::TimeUnit unit) {
    return Each([&](Benchmark* b) { b->Unit(unit); });
  }
  BenchmarkPair* Iterations(::benchmark::IterationCount n) {
    return Each([&](Benchmark* b) { b->Iterations(n); });
  }
  BenchmarkPair* Repetitions(int n) {
    return Each([&](Benchmark* b) { b->Repetitions(n); });
  }
  BenchmarkPair* MinTime(double seconds) {
    return Each([&](Benchmark* b) { b->MinTime(seconds); });
  }
  BenchmarkPair* UseRealTime() {
    return Each([](Benchmark* b) { b->UseRealTime(); });
  }
  BenchmarkPair* Threads(int threads) {
    return Each([&](Benchmark* b) { b->Threads(threads); });
  }

 private:
  Benchmark* off_;
  Benchmark* on_;
};

// `RegisterBenchmarkPair()` registers `fn` as `name + "/spanprof:off"` and
// `name + "/spanprof:on"` (see the top of this file) and returns the pair.
// With `Threads(n)`, the session is started and stopped by thread 0 around
// its call; Google Benchmark's start barrier keeps every thread's timed loop
// inside the session.
BenchmarkPair* RegisterBenchmarkPair(
    const std::string& name,
    const std::function<void(::benchmark::State&)>& fn);

}  // namespace spanprof

// `SPANPROF_BENCHMARK(fn)` is `RegisterBenchmarkPair(#fn, fn)` at static
// initialization; chain settings as with `BENCHMARK(fn)`:
// `SPANPROF_BENCHMARK(BM_Parse)->Arg(64)->Repetitions(10);`.
#define SPANPROF_BENCHMARK(fn) SPANPROF_BENCHMARK_AT_(fn, __COUNTER__)
#define SPANPROF_BENCHMARK_AT_(fn, n) SPANPROF_BENCHMARK_NAMED_(fn, n)
#define SPANPROF_BENCHMARK_NAMED_(fn, n)                   \
  [[maybe_unused]] static ::spanprof::BenchmarkPair* const \
      spanprof_benchmark_pair_##n = ::spanprof::RegisterBenchmarkPair(#fn, fn)

#endif  // SPANPROF_BENCHMARK_H_
