// spanprof/analysis/overhead.h — the users' own overhead gate: what their
// spans cost in their benchmarks, from Google Benchmark's JSON output.
//
// A benchmark registered with `SPANPROF_BENCHMARK` (spanprof/benchmark.h)
// runs as `NAME/spanprof:off` (no recording session) and `NAME/spanprof:on`
// (recording). `AnalyzeOverhead()` reads the JSON that
// `--benchmark_out=BENCH.json --benchmark_out_format=json` writes, pairs each
// `on` run with the `off` run of the same name (Google Benchmark's
// decorations included: `NAME/spanprof:on/64/threads:2` pairs with
// `NAME/spanprof:off/64/threads:2`), takes per side the median over the
// repetitions of the per-iteration time, and checks on/off against a ratio.
//
// clang-format off
// Example:
//
//   using namespace spanprof::analysis;
//   absl::StatusOr<OverheadReport> report =
//       ReadOverhead("BENCH.json", {.max_ratio = 1.03});
//   if (report.ok()) std::cout << OverheadTable(*report);
//   return report.ok() ? (report->passed() ? 0 : 1) : 2;
// clang-format on
#ifndef SPANPROF_ANALYSIS_OVERHEAD_H_
#define SPANPROF_ANALYSIS_OVERHEAD_H_

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace spanprof::analysis {

// Which of Google Benchmark's per-iteration times is compared.
enum class OverheadMetric {
  kCpuTime,   // "cpu_time" (the default: the process's CPU time per iteration)
  kRealTime,  // "real_time" (wall clock)
};

inline constexpr double kDefaultMaxOverheadRatio = 1.05;

struct OverheadOptions {
  // A pair passes when median(on) / median(off) <= max_ratio; must be > 0.
  double max_ratio = kDefaultMaxOverheadRatio;
  OverheadMetric metric = OverheadMetric::kCpuTime;
};

// `OverheadSide` is one variant's runs.
struct OverheadSide {
  std::string run_name;  // Google Benchmark's `run_name`
  // Repetitions the median is taken over; 0 when only the `median`
  // aggregate was in the file (then `median_ns` is that aggregate).
  int repetitions = 0;
  double median_ns = 0;  // per iteration, in nanoseconds
};

// `OverheadPair` is one benchmark measured with recording off and on.
struct OverheadPair {
  std::string name;  // `run_name` without the `spanprof:on/off` component
  OverheadSide off;
  OverheadSide on;
  double ratio = 0;  // on.median_ns / off.median_ns
  bool passed = false;
  // The "on" runs' `spanprof_spans_per_iteration` counter (median), when
  // reported.
  std::optional<double> spans_per_iteration;
};

// `OverheadReport` is the gate's result, pairs in the file's order.
struct OverheadReport {
  std::string source;  // the file name (for messages and the JSON)
  OverheadOptions options;
  std::vector<OverheadPair> pairs;
  // Repetitions of runs without a `spanprof:on/off` component (not gated).
  int unpaired_runs = 0;

  bool passed() const {
    return std::ranges::all_of(
        pairs, [](const OverheadPair& pair) { return pair.passed; });
  }
};

// `AnalyzeOverhead()` reads Google Benchmark's JSON output `json` (named
// `source` in messages) and gates it. Errors (a Status naming `source`, the
// JSON path and what was expected): not JSON; no `benchmarks` array; a
// field of the wrong type; an unknown `time_unit`; a benchmark that failed
// (`error_occurred`); a run with neither repetitions nor a `median`
// aggregate; a pair with one side missing; no pair at all; `max_ratio` not a
// finite number > 0. Pure and deterministic.
absl::StatusOr<OverheadReport> AnalyzeOverhead(std::string_view json,
                                               std::string_view source,
                                               const OverheadOptions& options);

// `ReadOverhead()` is `AnalyzeOverhead()` of the file at `path` (plain or
// gzip).
absl::StatusOr<OverheadReport> ReadOverhead(const std::string& path,
                                            const OverheadOptions& options);

// `OverheadMetricName()` / `ParseOverheadMetric()` map "cpu_time" and
// "real_time"; an unknown name is an error listing both.
std::string_view OverheadMetricName(OverheadMetric metric);
absl::StatusOr<OverheadMetric> ParseOverheadMetric(std::string_view name);

// `OverheadTable()` is the human table: name, off, on, ratio, spans per
// iteration, verdict, then one line with the gate's result.
std::string OverheadTable(const OverheadReport& report);

// `OverheadToJson()` is the `spanprof.overhead` v1 document (docs/cli.md).
std::string OverheadToJson(const OverheadReport& report);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_OVERHEAD_H_
