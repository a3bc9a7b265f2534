// benchmark_names.h — how spanprof names the two variants of a user's Google
// Benchmark function (internal: the one description shared by the writer,
// `spanprof/benchmark.h`, and the reader, `spanprof overhead`; not for users).
//
// `SPANPROF_BENCHMARK(BM_Parse)` registers `BM_Parse/spanprof:off` and
// `BM_Parse/spanprof:on`. Google Benchmark appends its own decorations after
// the registered name (`/64`, `/iterations:N`, `/repeats:N`, `/threads:N`,
// `/real_time`; `_median` on an aggregate's name, not on its `run_name`), so
// the variant is one whole '/'-separated component of `run_name`, and the
// pair's name is `run_name` without that component.
// Header-only with no dependencies, so that every component can use it.
#ifndef SPANPROF_INTERNAL_BENCHMARK_NAMES_H_
#define SPANPROF_INTERNAL_BENCHMARK_NAMES_H_

#include <string_view>

namespace spanprof::internal {

inline constexpr std::string_view kBenchmarkOff = "spanprof:off";
inline constexpr std::string_view kBenchmarkOn = "spanprof:on";

// The user counter the "on" variant reports: spans recorded per iteration
// (per thread).
inline constexpr std::string_view kBenchmarkSpansCounter =
    "spanprof_spans_per_iteration";

}  // namespace spanprof::internal

#endif  // SPANPROF_INTERNAL_BENCHMARK_NAMES_H_
