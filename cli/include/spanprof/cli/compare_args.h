// spanprof/cli/compare_args.h — the arguments of `spanprof compare`, parsed
// without touching any file.
//
// `ParseCompareArgs()` is the whole command-line contract of the regression
// gate: two positional paths, `--metric M` (default p95_ns),
// `--absolute-tolerance ABS` (`ParseAbsoluteTolerance()`; default
// `analysis::DefaultAbsoluteTolerance()`; directories of runs
// `analysis::kRunsDefaultAbsoluteToleranceNs`), `--relative-tolerance REL`
// (`ParseRelativeTolerance()`) or `--relative-tolerance-bps BPS` (default
// `analysis::DefaultRelativeToleranceBps()`; directories of runs
// `analysis::kRunsDefaultRelativeToleranceBps`), `--json OUT`,
// `--format table|github`, `--junit OUT.xml`, and the
// switches
// `--fail-on-new`, `--fail-on-missing`, `--allow-incomplete`,
// `--allow-missing`, and for directories of
// repeated runs `--confidence C` (default 0.95) and `--fail-on-unknown`, and
// for traces `--group-by-arg ARG`. BASE and CAND may be summaries or traces
// (summarized first: spanprof's own or foreign Chrome traces).
// Every flag accepts both
// `--flag VALUE` and `--flag=VALUE`. It is a pure function, so it can be
// tested and fuzzed directly.
//
// clang-format off
// Example:
//
//   absl::StatusOr<spanprof::cli::CompareArgs> args =
//       spanprof::cli::ParseCompareArgs(
//           {"base.json", "cand.json", "--absolute-tolerance=500us",
//            "--relative-tolerance=10%"});
// clang-format on
#ifndef SPANPROF_CLI_COMPARE_ARGS_H_
#define SPANPROF_CLI_COMPARE_ARGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/compare.h"

namespace spanprof::cli {

// `CompareArgs` is a parsed `spanprof compare` command line.
struct CompareArgs {
  // `--help` / `-h` was given: nothing else is filled in.
  bool help = false;
  std::string base_path;
  std::string candidate_path;
  std::string json_path;  // empty: no JSON document
  // `--format FORMAT`: "table" (the default), a machine format of
  // spanprof/analysis/table_output.h ("md" is the CI summary), or "github"
  // (GitHub Actions workflow commands, `analysis::ComparisonToGithub`).
  std::string format = "table";
  // `--junit OUT.xml`: also write a JUnit XML report there (empty: not).
  std::string junit_path;
  // With the default tolerances of one run against one filled in for those
  // not given.
  analysis::ComparePolicy policy;
  // `--absolute-tolerance` / `--relative-tolerance[-bps]` was given.
  bool absolute_tolerance_given = false;
  bool relative_tolerance_given = false;
  // `--group-by-arg ARG`: a side that is a foreign Chrome trace is
  // summarized with its spans keyed by `name [ARG=value]` (empty: not).
  std::string group_by_arg;
  friend bool operator==(const CompareArgs&, const CompareArgs&) = default;
};

// `ParseCompareArgs()` parses the words after `compare`. Errors (unknown
// flag, missing or extra argument, bad metric, bad tolerance) are
// InvalidArgument with a message naming the flag.
absl::StatusOr<CompareArgs> ParseCompareArgs(
    const std::vector<std::string>& args);

// `ParseAbsoluteTolerance()` reads an `--absolute-tolerance` value: a
// non-negative integer in the metric's unit (ns for a duration metric), or,
// for a duration metric (`is_duration`), a non-negative decimal with a unit
// `ns`, `us`, `ms` or `s` (`50us`, `1.5ms`) that comes to whole
// nanoseconds. Errors name the flag.
absl::StatusOr<int64_t> ParseAbsoluteTolerance(std::string_view text,
                                               bool is_duration);

// `ParseRelativeTolerance()` reads a `--relative-tolerance` value into basis
// points: a percentage (`5%`, `2.5%`) or a fraction of at most 1 (`0.05`),
// in whole basis points (0.01%). Errors name the flag.
absl::StatusOr<int64_t> ParseRelativeTolerance(std::string_view text);

}  // namespace spanprof::cli

#endif  // SPANPROF_CLI_COMPARE_ARGS_H_
