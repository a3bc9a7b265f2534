// `spanprof validate`: strict check of a summary or a trace.
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "flags.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"
#include "spanprof/cli/router.h"

namespace spanprof::cli::internal {

int RunValidate(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, {});
  if (!flags.ok()) return UsageError(io, "validate", flags.status());
  if (flags->positionals.size() != 1) {
    return UsageError(
        io, "validate",
        flags->positionals.empty()
            ? "missing argument FILE"
            : "unexpected argument \"" + flags->positionals[1] + "\"");
  }
  const std::string& path = flags->positionals[0];
  absl::StatusOr<std::string> text = analysis::ReadFile(path);
  if (!text.ok()) return Failure(io, "validate", text.status());
  analysis::ValidationReport report;
  try {
    report = analysis::ValidateArtifact(*text, path);
  } catch (const std::bad_alloc&) {
    return Failure(io, "validate",
                   absl::ResourceExhaustedError(absl::StrCat(
                       "out of memory reading ", path, " at byte ",
                       text->size(), " (its whole size: validating it)")));
  }
  const std::string what =
      report.kind.has_value()
          ? "spanprof " + std::string(analysis::ArtifactKindName(*report.kind))
          : std::string("spanprof file");
  if (report.valid()) {
    const char* unit =
        report.kind == analysis::ArtifactKind::kSummary ? " rows" : " spans";
    io.out << path << ": valid " << what << " (" << report.items << unit
           << ")\n";
    return kExitPass;
  }
  for (const std::string& problem : report.problems) {
    io.out << problem << "\n";
  }
  io.out << path << ": invalid " << what << "\n";
  return kExitRegression;
}

}  // namespace spanprof::cli::internal
