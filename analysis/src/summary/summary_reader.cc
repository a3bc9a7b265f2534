// The strict `spanprof.summary` reader, as a list of named steps over one
// parsed document, each in a file of its own:
//
//   1. summary_schema_reader  `schema` and `schema_version` first, so that a
//                             trace or a future version is named as such
//                             rather than as an "unknown field";
//   2. summary_root_reader    every top-level field of that version with its
//                             exact type (a field of another version is
//                             unknown: summary_format.h's tables say which
//                             version has which field), the rows through
//                             summary_row_reader and row_counters_reader,
//                             `process_resources` through process_resources;
//   3. summary_upgrade        what an earlier version lacks, derived;
//   4. summary_invariants     the cross-field rules of DESIGN.md §3.
//
// Versions 1 to the current one (`kSummarySchemaVersion`) read.
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "status_macros.h"
#include "summary/summary_invariants.h"
#include "summary/summary_root_reader.h"
#include "summary/summary_schema_reader.h"
#include "summary/summary_upgrade.h"

namespace spanprof::analysis {
namespace internal {
namespace {

// The current version read in one pass, assuming the schema: a document
// that reads cleanly so and says it is the current version would have
// passed `ReadSchemaVersion()`. Returns nullopt otherwise, when the steps
// run in full.
absl::StatusOr<std::optional<Summary>> ReadCurrentVersion(
    const StrictJson& json, std::string_view text) {
  ParsedDocument document(text);
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object root,
                            document.Start(json));
  Summary summary;
  if (!ReadSummaryFields(json, root, kSummarySchemaVersion, summary).ok() ||
      !document.Finish(json).ok() || summary.schema != kSummarySchema ||
      summary.schema_version != kSummarySchemaVersion) {
    return std::nullopt;
  }
  return summary;
}

absl::StatusOr<Summary> ReadSummaryText(std::string_view text,
                                        std::string_view source) {
  const StrictJson json(source);
  SPANPROF_ASSIGN_OR_RETURN(std::optional<Summary> current,
                            ReadCurrentVersion(json, text));
  if (current.has_value()) {
    SPANPROF_RETURN_IF_ERROR(CheckSummaryInvariants(source, *current));
    return *std::move(current);
  }
  // Read again from scratch, schema first, so that the error is the one
  // that comes first.
  ParsedDocument document(text);
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object root,
                            document.Start(json));
  SPANPROF_ASSIGN_OR_RETURN(const int64_t version,
                            ReadSchemaVersion(json, root));
  SPANPROF_ASSIGN_OR_RETURN(root, document.Rewind(json));
  Summary summary;
  SPANPROF_RETURN_IF_ERROR(ReadSummaryFields(json, root, version, summary));
  SPANPROF_RETURN_IF_ERROR(document.Finish(json));
  UpgradeSummary(version, summary);
  SPANPROF_RETURN_IF_ERROR(CheckSummaryInvariants(source, summary));
  return summary;
}

}  // namespace
}  // namespace internal

absl::StatusOr<Summary> ParseSummary(std::string_view json,
                                     std::string_view source) {
  try {
    return internal::ReadSummaryText(json, source);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        internal::Cat("out of memory reading ", source, " at byte ",
                      json.size(), " (its whole size: parsing it)"));
  }
}

absl::StatusOr<Summary> ReadSummary(const std::string& path) {
  SPANPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseSummary(text, path);
}

}  // namespace spanprof::analysis
