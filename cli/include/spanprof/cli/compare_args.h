// spanprof/cli/compare_args.h — the arguments of `spanprof compare`, parsed
// without touching any file.
//
// `ParseCompareArgs()` is the whole command-line contract of the regression
// gate: two positional paths, `--metric M` (default p95_ns),
// `--absolute-tolerance NS`, `--relative-tolerance-bps BPS` (non-negative
// integers; default 0), `--json OUT`, and the switches `--fail-on-new`,
// `--fail-on-missing`, `--allow-incomplete`, and for directories of
// repeated runs `--confidence C` (default 0.95) and `--fail-on-unknown`, and
// for traces `--group-by-arg ARG`. BASE and CAND may be summaries or traces
// (summarized first: spanprof's own or foreign Chrome traces).
// Every flag accepts both
// `--flag VALUE` and `--flag=VALUE`. It is a pure function, so it can be
// tested and fuzzed directly.
//
// Example:
//
//   absl::StatusOr<spanprof::cli::CompareArgs> args =
//       spanprof::cli::ParseCompareArgs(
//           {"base.json", "cand.json", "--absolute-tolerance=500000"});
#ifndef SPANPROF_CLI_COMPARE_ARGS_H_
#define SPANPROF_CLI_COMPARE_ARGS_H_

#include <string>
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
  analysis::ComparePolicy policy;
  // `--relative-tolerance-bps` was given (directories of runs default to
  // analysis::kRunsDefaultRelativeToleranceBps, one-run comparisons to 0).
  bool relative_tolerance_given = false;
  // `--group-by-arg ARG`: a side that is a foreign Chrome trace is
  // summarized with its spans keyed by `name [ARG=value]` (empty: not).
  std::string group_by_arg;

  friend bool operator==(const CompareArgs&, const CompareArgs&) = default;
};

// `ParseCompareArgs()` parses the words after `compare`. Errors (unknown
// flag, missing or extra argument, bad metric, negative or non-integer
// tolerance) are InvalidArgument with a message naming the flag.
absl::StatusOr<CompareArgs> ParseCompareArgs(
    const std::vector<std::string>& args);

}  // namespace spanprof::cli

#endif  // SPANPROF_CLI_COMPARE_ARGS_H_
