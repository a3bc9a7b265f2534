// `spanprof compare`: the regression gate.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "commands.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/cli/compare_args.h"
#include "spanprof/cli/router.h"

namespace spanprof::cli::internal {

int RunCompare(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<CompareArgs> parsed = ParseCompareArgs(args);
  if (!parsed.ok()) return UsageError(io, "compare", parsed.status());
  if (parsed->help) return kExitPass;  // the router prints help first

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

  io.out << analysis::FormatComparison(*comparison);
  if (!parsed->json_path.empty()) {
    absl::Status written = analysis::WriteFileAtomically(
        parsed->json_path, analysis::ComparisonToJson(*comparison));
    if (!written.ok()) return Failure(io, "compare", written);
  }
  return comparison->passed ? kExitPass : kExitRegression;
}

}  // namespace spanprof::cli::internal
