// spanprof/analysis/validate.h — a strict check of a summary or a trace.
//
// `ValidateArtifact()` detects what a file is from its content, then checks
// it: a summary with the strict reader (`ParseSummary`); a trace with the
// strict reader (`ParseTrace`), the rules Perfetto's JSON importer relies on,
// and the event-forest checks of the analysis (duplicate ids, missing
// parents, inconsistent depths). Every X event needs `ts` ≥ 0 and `dur` ≥ 0,
// `pid` and `tid` must fit in 32 bits, spans of one thread must nest strictly
// (no partial overlap), and flow ids must be unique with both ends present.
//
// clang-format off
// Example:
//
//   std::string text = ...;  // the file's bytes
//   spanprof::analysis::ValidationReport report =
//       spanprof::analysis::ValidateArtifact(text, "build/trace.json");
//   for (const std::string& problem : report.problems) {
//     std::puts(problem.c_str());
//   }
// clang-format on
#ifndef SPANPROF_ANALYSIS_VALIDATE_H_
#define SPANPROF_ANALYSIS_VALIDATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace spanprof::analysis {

// `ArtifactKind` is what a spanprof JSON file is.
enum class ArtifactKind {
  kSummary,  // a `spanprof.summary` document (has "schema")
  kTrace,    // a Chrome Trace Event document (has "traceEvents")
};

// `ArtifactKindName()`: "summary" or "trace".
std::string_view ArtifactKindName(ArtifactKind kind);

// `DetectArtifactKind()` tells a summary from a trace by the one rule every
// command uses: a Perfetto protobuf trace, a JSON array of events, or a
// JSON object with a "traceEvents" key is a trace; a JSON object with a
// "schema" key and no "traceEvents" a summary. Anything else (not JSON,
// neither key, a spanprof stream file) is an error naming `source`.
absl::StatusOr<ArtifactKind> DetectArtifactKind(std::string_view json,
                                                std::string_view source);

// `ValidationReport` is the verdict on one file.
struct ValidationReport {
  // Unset when the kind could not be detected.
  std::optional<ArtifactKind> kind;
  // Each problem as `source: $.path: message`; empty when valid. Capped at
  // `kMaxValidationProblems` (the last line then says how many were left out).
  std::vector<std::string> problems;
  // What was checked, for the success line: rows of a summary, X events of a
  // trace.
  uint64_t items = 0;

  bool valid() const { return problems.empty(); }
};

inline constexpr size_t kMaxValidationProblems = 100;

// `ValidateArtifact()` checks `json` (already decompressed). Pure; never
// fails: unparseable input is reported as a problem.
ValidationReport ValidateArtifact(std::string_view json,
                                  std::string_view source);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_VALIDATE_H_
