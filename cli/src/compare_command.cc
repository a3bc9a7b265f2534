// `spanprof compare`: the regression gate.
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "commands.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/cli/compare_args.h"
#include "spanprof/cli/router.h"

namespace spanprof::cli::internal {

namespace {

// Prints the table, writes the JSON, and returns the exit code.
int Report(const analysis::Comparison& comparison, const CompareArgs& args,
           const CommandIo& io) {
  io.out << analysis::FormatComparison(comparison);
  if (!args.json_path.empty()) {
    absl::Status written = analysis::WriteFileAtomically(
        args.json_path, analysis::ComparisonToJson(comparison));
    if (!written.ok()) return Failure(io, "compare", written);
  }
  return comparison.passed ? kExitPass : kExitRegression;
}

bool IsDirectory(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error);
}

// One side of a comparison of runs: a directory of summaries, or one file.
absl::StatusOr<analysis::SummaryRuns> ReadSide(const std::string& path,
                                               const CommandIo& io) {
  if (!IsDirectory(path)) {
    absl::StatusOr<analysis::Summary> summary = analysis::ReadSummary(path);
    if (!summary.ok()) return summary.status();
    analysis::SummaryRuns side;
    side.path = path;
    side.runs.push_back(std::move(*summary));
    side.run_paths.push_back(path);
    return side;
  }
  std::vector<std::string> notes;
  absl::StatusOr<analysis::SummaryRuns> side =
      analysis::ReadSummaryRuns(path, &notes);
  for (const std::string& note : notes) io.err << "note: " << note << "\n";
  return side;
}

// Either side a directory: the gate over repeated runs.
absl::StatusOr<analysis::Comparison> CompareRuns(const CompareArgs& args,
                                                 const CommandIo& io) {
  absl::StatusOr<analysis::SummaryRuns> base = ReadSide(args.base_path, io);
  if (!base.ok()) return base.status();
  absl::StatusOr<analysis::SummaryRuns> candidate =
      ReadSide(args.candidate_path, io);
  if (!candidate.ok()) return candidate.status();
  analysis::ComparePolicy policy = args.policy;
  if (!args.relative_tolerance_given) {
    policy.relative_tolerance_bps = analysis::kRunsDefaultRelativeToleranceBps;
  }
  return analysis::CompareRuns(*base, *candidate, policy);
}

}  // namespace

int RunCompare(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<CompareArgs> parsed = ParseCompareArgs(args);
  if (!parsed.ok()) return UsageError(io, "compare", parsed.status());
  if (parsed->help) return kExitPass;  // the router prints help first

  if (IsDirectory(parsed->base_path) || IsDirectory(parsed->candidate_path)) {
    absl::StatusOr<analysis::Comparison> comparison = CompareRuns(*parsed, io);
    if (!comparison.ok()) return Failure(io, "compare", comparison.status());
    return Report(*comparison, *parsed, io);
  }
  absl::StatusOr<analysis::Summary> base =
      analysis::ReadSummary(parsed->base_path);
  if (!base.ok()) return Failure(io, "compare", base.status());
  absl::StatusOr<analysis::Summary> candidate =
      analysis::ReadSummary(parsed->candidate_path);
  if (!candidate.ok()) return Failure(io, "compare", candidate.status());

  absl::StatusOr<analysis::Comparison> comparison =
      analysis::Compare(*base, *candidate, parsed->policy, parsed->base_path,
                        parsed->candidate_path);
  if (!comparison.ok()) return Failure(io, "compare", comparison.status());
  return Report(*comparison, *parsed, io);
}

}  // namespace spanprof::cli::internal
