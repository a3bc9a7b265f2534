#include "trace_input.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "progress.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"

namespace spanprof::cli::internal {
namespace {

void PrintNotes(const std::vector<std::string>& notes, const CommandIo& io) {
  for (const std::string& note : notes) io.err << "note: " << note << "\n";
}

InputOptions& CurrentInputOptions() {
  static InputOptions options;
  return options;
}

constexpr std::string_view kAllowTruncated = "--allow-truncated";
constexpr std::string_view kMaxInputBytes = "--max-input-bytes";

}  // namespace

absl::StatusOr<InputOptions> TakeInputOptions(std::vector<std::string>& args) {
  InputOptions options;
  bool has_max = false;
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<ptrdiff_t>(i),
                  args.end());
      break;
    }
    if (arg == kAllowTruncated) {
      options.allow_truncated = true;
      continue;
    }
    const bool joined = arg.starts_with(std::string(kMaxInputBytes) + "=");
    if (arg != kMaxInputBytes && !joined) {
      rest.push_back(arg);
      continue;
    }
    if (has_max) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(kMaxInputBytes), " given twice"));
    }
    has_max = true;
    if (!joined && i + 1 == args.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(kMaxInputBytes), " needs a value (bytes)"));
    }
    const std::string value =
        joined ? arg.substr(kMaxInputBytes.size() + 1) : args[++i];
    absl::StatusOr<int64_t> n = ParseNonNegativeInt(kMaxInputBytes, value);
    if (!n.ok()) return n.status();
    if (*n == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(kMaxInputBytes), ": at least 1 byte"));
    }
    options.max_input_bytes = static_cast<uint64_t>(*n);
  }
  args = std::move(rest);
  return options;
}

void UseInputOptions(const InputOptions& options) {
  CurrentInputOptions() = options;
  analysis::SetDefaultReadLimits({.max_input_bytes = options.max_input_bytes});
}

analysis::TraceReadOptions TraceOptions(const std::string& group_by_arg) {
  return {.group_by_arg = group_by_arg,
          .allow_truncated = CurrentInputOptions().allow_truncated};
}

absl::StatusOr<Capture> ReadTraceFile(const std::string& path,
                                      const std::string& group_by_arg,
                                      const CommandIo& io) {
  std::vector<std::string> notes;
  analysis::TraceReadOptions options = TraceOptions(group_by_arg);
  options.notes = &notes;
  absl::StatusOr<Capture> capture = absl::UnknownError("not read");
  {
    const Progress progress(io, "reading " + path);
    capture = analysis::ReadTrace(path, options);
  }
  PrintNotes(notes, io);
  return capture;
}

absl::StatusOr<Capture> ParseTraceText(std::string_view text,
                                       const std::string& path,
                                       const std::string& group_by_arg,
                                       const CommandIo& io) {
  std::vector<std::string> notes;
  analysis::TraceReadOptions options = TraceOptions(group_by_arg);
  options.notes = &notes;
  absl::StatusOr<Capture> capture = absl::UnknownError("not read");
  {
    const Progress progress(io, "reading " + path);
    capture = analysis::ParseTrace(text, path, options);
  }
  PrintNotes(notes, io);
  return capture;
}

absl::StatusOr<analysis::Summary> ReadSummaryOrTrace(
    const std::string& path, const std::string& group_by_arg,
    const CommandIo& io) {
  absl::StatusOr<std::string> text = absl::UnknownError("not read");
  {
    const Progress progress(io, "reading " + path);
    text = analysis::ReadFile(path);
  }
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
