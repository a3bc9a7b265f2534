#include "trace_input.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"

namespace spanprof::cli::internal {
namespace {

void PrintNotes(const std::vector<std::string>& notes, const CommandIo& io) {
  for (const std::string& note : notes) io.err << "note: " << note << "\n";
}

}  // namespace

absl::StatusOr<Capture> ReadTraceFile(const std::string& path,
                                      const std::string& group_by_arg,
                                      const CommandIo& io) {
  std::vector<std::string> notes;
  absl::StatusOr<Capture> capture = analysis::ReadTrace(
      path, {.group_by_arg = group_by_arg, .notes = &notes});
  PrintNotes(notes, io);
  return capture;
}

absl::StatusOr<Capture> ParseTraceText(std::string_view text,
                                       const std::string& path,
                                       const std::string& group_by_arg,
                                       const CommandIo& io) {
  std::vector<std::string> notes;
  absl::StatusOr<Capture> capture = analysis::ParseTrace(
      text, path, {.group_by_arg = group_by_arg, .notes = &notes});
  PrintNotes(notes, io);
  return capture;
}

absl::StatusOr<analysis::Summary> ReadSummaryOrTrace(
    const std::string& path, const std::string& group_by_arg,
    const CommandIo& io) {
  absl::StatusOr<std::string> text = analysis::ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<analysis::ArtifactKind> kind =
      analysis::DetectArtifactKind(*text, path);
  if (!kind.ok()) return kind.status();
  if (*kind == analysis::ArtifactKind::kSummary) {
    return analysis::ParseSummary(*text, path);
  }
  absl::StatusOr<Capture> capture =
      ParseTraceText(*text, path, group_by_arg, io);
  if (!capture.ok()) return capture.status();
  return analysis::Summarize(*capture);
}

}  // namespace spanprof::cli::internal
