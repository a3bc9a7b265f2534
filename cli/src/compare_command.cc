// `spanprof compare`: the regression gate.
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "commands.h"
#include "output_paths.h"
#include "spanprof/analysis/command_tables.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/compare_ci.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/cli/compare_args.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {

namespace {

// `--json OUT` and `--junit OUT.xml`, when given: the command's outputs.
std::vector<OutputPath> OutputsOf(const CompareArgs& args) {
  std::vector<OutputPath> outputs;
  if (!args.json_path.empty()) outputs.push_back({"--json", args.json_path});
  if (!args.junit_path.empty()) {
    outputs.push_back({"--junit", args.junit_path});
  }
  return outputs;
}

// The comparison in `--format` (already checked by ParseCompareArgs):
// GitHub workflow commands, or the one table writer's formats.
std::string ComparisonText(const analysis::Comparison& comparison,
                           const std::string& format) {
  if (format == "github") return analysis::ComparisonToGithub(comparison);
  const absl::StatusOr<analysis::TableFormat> parsed =
      analysis::ParseTableFormat(format);
  if (!parsed.ok() || *parsed == analysis::TableFormat::kTable) {
    return analysis::FormatComparison(comparison);
  }
  if (*parsed == analysis::TableFormat::kMarkdown) {
    return analysis::ComparisonMarkdown(comparison);
  }
  return analysis::RenderTable(analysis::ComparisonRowsTable(comparison),
                               *parsed);
}

// Prints the report (on stderr when an output is `-`), writes the JSON and
// the JUnit XML, and returns the exit code.
int Report(const analysis::Comparison& comparison, const CompareArgs& args,
           const CommandIo& io) {
  TextStream(io, OutputsOf(args)) << ComparisonText(comparison, args.format);
  if (!args.json_path.empty()) {
    absl::Status written = analysis::WriteFileAtomically(
        args.json_path, analysis::ComparisonToJson(comparison));
    if (!written.ok()) return Failure(io, "compare", written);
  }
  if (!args.junit_path.empty()) {
    absl::Status written = analysis::WriteFileAtomically(
        args.junit_path, analysis::ComparisonToJunit(comparison));
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

// Says on stderr what differs between the sides (host, clock, program,
// source): the gate still runs, but its reader should know.
void WarnIfIncomparable(const analysis::Summary& base,
                        const analysis::Summary& candidate,
                        const CommandIo& io) {
  for (const std::string& warning :
       analysis::ComparabilityWarnings(base, candidate)) {
    io.err << "spanprof compare: warning: " << warning << "\n";
  }
}

}  // namespace

absl::StatusOr<std::optional<analysis::Comparison>> CompareRunsOf(
    const std::string& base_path, const std::string& candidate_path,
    analysis::ComparePolicy policy, bool relative_tolerance_given,
    const CommandIo& io, bool absolute_tolerance_given) {
  if (!IsDirectory(base_path) && !IsDirectory(candidate_path)) {
    return std::nullopt;
  }
  absl::StatusOr<analysis::SummaryRuns> base = ReadSide(base_path, io);
  if (!base.ok()) return base.status();
  absl::StatusOr<analysis::SummaryRuns> candidate =
      ReadSide(candidate_path, io);
  if (!candidate.ok()) return candidate.status();
  WarnIfIncomparable(base->runs.front(), candidate->runs.front(), io);
  if (!relative_tolerance_given) {
    policy.relative_tolerance_bps = analysis::kRunsDefaultRelativeToleranceBps;
  }
  if (!absolute_tolerance_given) {
    policy.absolute_tolerance_ns = analysis::kRunsDefaultAbsoluteToleranceNs;
  }
  absl::StatusOr<analysis::Comparison> comparison =
      analysis::CompareRuns(*base, *candidate, policy);
  if (!comparison.ok()) return comparison.status();
  return std::optional<analysis::Comparison>(std::move(*comparison));
}

int RunCompare(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<CompareArgs> parsed = ParseCompareArgs(args);
  if (!parsed.ok()) return UsageError(io, "compare", parsed.status());
  if (parsed->help) return kExitPass;  // the router prints help first
  const std::string inputs[] = {parsed->base_path, parsed->candidate_path};
  if (absl::Status s = CheckOutputPaths(inputs, OutputsOf(*parsed)); !s.ok()) {
    return Failure(io, "compare", s);
  }

  absl::StatusOr<std::optional<analysis::Comparison>> runs = CompareRunsOf(
      parsed->base_path, parsed->candidate_path, parsed->policy,
      parsed->relative_tolerance_given, io, parsed->absolute_tolerance_given);
  if (!runs.ok()) return Failure(io, "compare", runs.status());
  if (runs->has_value()) return Report(**runs, *parsed, io);
  absl::StatusOr<analysis::Summary> base =
      ReadSummaryOrTrace(parsed->base_path, parsed->group_by_arg, io);
  if (!base.ok()) return Failure(io, "compare", base.status());
  absl::StatusOr<analysis::Summary> candidate =
      ReadSummaryOrTrace(parsed->candidate_path, parsed->group_by_arg, io);
  if (!candidate.ok()) return Failure(io, "compare", candidate.status());
  WarnIfIncomparable(*base, *candidate, io);

  absl::StatusOr<analysis::Comparison> comparison =
      analysis::Compare(*base, *candidate, parsed->policy, parsed->base_path,
                        parsed->candidate_path);
  if (!comparison.ok()) return Failure(io, "compare", comparison.status());
  return Report(*comparison, *parsed, io);
}

}  // namespace spanprof::cli::internal
