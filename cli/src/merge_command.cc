// `spanprof merge`: captures of several processes into one trace on one
// timeline (analysis/merge.h does the merge; this parses flags, reads and
// writes files).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "commands.h"
#include "flags.h"
#include "output_paths.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/merge.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {
namespace {

constexpr FlagSpec kMergeFlags[] = {{"--output", "-o", true, "OUT"},
                                    {"--summary", "", true, "SUMMARY"}};

// A trace path the writers know: JSON (plain or gzip) or Perfetto, in any
// case, or `-` (JSON on standard output).
bool IsTraceOutputPath(std::string_view path) {
  return path == analysis::kStandardOutputPath ||
         analysis::IsPerfettoTracePath(path) ||
         analysis::HasExtension(path, ".json") ||
         analysis::HasExtension(path, ".json.gz");
}

}  // namespace

int RunMerge(const std::vector<std::string>& args, const CommandIo& io) {
  constexpr std::string_view kCommand = "merge";
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kMergeFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  if (flags->positionals.size() < 2) {
    return UsageError(io, kCommand,
                      flags->positionals.empty()
                          ? "missing arguments CAPTURE... (at least two)"
                          : "needs at least two captures (got one)");
  }
  const std::optional<std::string> output = flags->Value("--output");
  if (!output.has_value() || output->empty()) {
    return UsageError(io, kCommand, "-o OUT is required");
  }
  if (!IsTraceOutputPath(*output)) {
    return UsageError(io, kCommand,
                      "-o " + *output +
                          ": a trace path ends in .json, .json.gz, .pftrace "
                          "or .perfetto-trace (optionally .gz)");
  }
  const std::optional<std::string> summary_path = flags->Value("--summary");
  if (summary_path.has_value() && summary_path->empty()) {
    return UsageError(io, kCommand, "--summary: the output path is empty");
  }
  std::vector<OutputPath> outputs = {{"-o", *output}};
  if (summary_path.has_value()) outputs.push_back({"--summary", *summary_path});
  if (absl::Status s = CheckOutputPaths(flags->positionals, outputs); !s.ok()) {
    return Failure(io, kCommand, s);
  }
  std::ostream& text = TextStream(io, outputs);

  std::vector<analysis::MergeInput> inputs;
  inputs.reserve(flags->positionals.size());
  for (const std::string& path : flags->positionals) {
    absl::StatusOr<Capture> capture = ReadTraceFile(path, "", io);
    if (!capture.ok()) return Failure(io, kCommand, capture.status());
    inputs.push_back({path, *std::move(capture)});
  }
  absl::StatusOr<analysis::MergeResult> merged =
      analysis::MergeCaptures(inputs);
  if (!merged.ok()) return Failure(io, kCommand, merged.status());
  for (const std::string& warning : merged->warnings) {
    io.err << io.program << " " << kCommand << ": warning: " << warning << "\n";
  }
  for (const std::string& note : merged->notes) {
    io.err << io.program << " " << kCommand << ": note: " << note << "\n";
  }

  // Both documents are rendered before either is written; each is written
  // atomically.
  const Capture& capture = merged->capture;
  std::string summary_json;
  if (summary_path.has_value()) {
    summary_json = analysis::SummaryToJson(analysis::Summarize(capture));
  }
  if (absl::Status s = analysis::WriteTrace(capture, *output); !s.ok()) {
    return Failure(io, kCommand, s);
  }
  if (summary_path.has_value()) {
    if (absl::Status s =
            analysis::WriteFileAtomically(*summary_path, summary_json);
        !s.ok()) {
      return Failure(io, kCommand, s);
    }
  }
  text << "Merged " << inputs.size() << " captures (" << capture.spans.size()
       << " spans, " << capture.threads.size() << " threads, "
       << merged->linked_roots << " cross-process "
       << (merged->linked_roots == 1 ? "link" : "links")
       << "); timeline aligned to ±"
       << analysis::FormatMicros(merged->anchor_uncertainty_ns) << " µs\n"
       << "Trace: " << *output << "\n";
  if (summary_path.has_value()) text << "Summary: " << *summary_path << "\n";
  text.flush();
  return text.good() ? kExitPass : kExitUsage;
}

std::vector<FlagSpec> MergeFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kMergeFlags), std::end(kMergeFlags));
  return specs;
}

}  // namespace spanprof::cli::internal
