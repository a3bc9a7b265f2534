// `spanprof summarize` and `spanprof folded`: derived files from a trace.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "commands.h"
#include "flags.h"
#include "output_paths.h"
#include "progress.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/folded.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {
namespace {

constexpr FlagSpec kOutputFlags[] = {{"--output", "-o", true, "OUT"},
                                     kGroupByArgFlag};

// Reads the one TRACE argument, renders it with `render`, writes the result
// to -o or stdout.
template <typename Render>
int TraceToOutput(std::string_view command,
                  const std::vector<std::string>& args, const CommandIo& io,
                  Render&& render) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kOutputFlags);
  if (!flags.ok()) return UsageError(io, command, flags.status());
  if (flags->positionals.size() != 1) {
    return UsageError(
        io, command,
        flags->positionals.empty()
            ? "missing argument TRACE"
            : "unexpected argument \"" + flags->positionals[1] + "\"");
  }
  const std::optional<std::string> output = flags->Value("--output");
  if (output.has_value() && output->empty()) {
    return UsageError(io, command, "-o: the output path is empty");
  }
  if (output.has_value()) {
    const OutputPath outputs[] = {{"-o", *output}};
    if (absl::Status s = CheckOutputPaths(flags->positionals, outputs);
        !s.ok()) {
      return Failure(io, command, s);
    }
  }
  absl::StatusOr<Capture> capture = ReadTraceFile(
      flags->positionals[0], flags->Value("--group-by-arg").value_or(""), io);
  if (!capture.ok()) return Failure(io, command, capture.status());
  // The capture is handed over, so that render can free it before it
  // builds the output (a summary of a million names is as large).
  const std::string text = render(*std::move(capture));
  if (!output.has_value()) {
    io.out << text;
    io.out.flush();
    return io.out.good() ? kExitPass : kExitUsage;
  }
  absl::Status written = absl::OkStatus();
  {
    const Progress progress(io, "writing " + *output);
    written = analysis::WriteFileAtomically(*output, text);
  }
  if (!written.ok()) return Failure(io, command, written);
  return kExitPass;
}

}  // namespace

int RunSummarize(const std::vector<std::string>& args, const CommandIo& io) {
  return TraceToOutput("summarize", args, io, [](Capture capture) {
    const analysis::Summary summary = analysis::Summarize(capture);
    capture = Capture();
    return analysis::SummaryToJson(summary);
  });
}

int RunFolded(const std::vector<std::string>& args, const CommandIo& io) {
  return TraceToOutput("folded", args, io, [](const Capture& capture) {
    return analysis::FoldedStacks(capture);
  });
}

std::vector<FlagSpec> SummarizeFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kOutputFlags), std::end(kOutputFlags));
  return specs;
}

}  // namespace spanprof::cli::internal
