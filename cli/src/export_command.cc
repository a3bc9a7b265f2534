// `spanprof export otlp TRACE... [-o OUT.json]`: captures in a format other
// tools read.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "commands.h"
#include "flags.h"
#include "output_paths.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/otlp.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {
namespace {

constexpr std::string_view kCommand = "export";
constexpr FlagSpec kExportFlags[] = {{"--output", "-o", true, "OUT"},
                                     {"--allow-invalid", "", false, ""}};
// At most this many invalid spans are named; the rest are counted.
constexpr size_t kNamedInvalidSpans = 20;

// Names the spans that OTLP consumers cannot place. Returns false (after
// the message) when they refuse the export: without --allow-invalid.
bool CheckSpans(std::span<const analysis::OtlpInput> inputs, bool allow_invalid,
                const CommandIo& io) {
  const std::vector<std::string> invalid = analysis::InvalidOtlpSpans(inputs);
  if (invalid.empty()) return true;
  io.err << io.program << " " << kCommand << ": "
         << (allow_invalid ? "warning: exporting " : "") << invalid.size()
         << (invalid.size() == 1 ? " invalid span" : " invalid spans")
         << (allow_invalid ? " as they are (--allow-invalid)"
                           : " (OTLP consumers cannot place them; "
                             "--allow-invalid exports them as they are)")
         << ":\n";
  for (size_t i = 0; i < invalid.size() && i < kNamedInvalidSpans; ++i) {
    io.err << "  " << invalid[i] << "\n";
  }
  if (invalid.size() > kNamedInvalidSpans) {
    io.err << "  ... and " << invalid.size() - kNamedInvalidSpans << " more\n";
  }
  return allow_invalid;
}

int ExportOtlp(const std::vector<std::string>& paths,
               const std::optional<std::string>& output, bool allow_invalid,
               const CommandIo& io) {
  std::vector<Capture> captures;
  captures.reserve(paths.size());
  for (const std::string& path : paths) {
    absl::StatusOr<Capture> capture = ReadTraceFile(path, "", io);
    if (!capture.ok()) return Failure(io, kCommand, capture.status());
    captures.push_back(*std::move(capture));
  }
  std::vector<analysis::OtlpInput> inputs;
  inputs.reserve(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    inputs.push_back({paths[i], &captures[i]});
  }
  if (!CheckSpans(inputs, allow_invalid, io)) return kExitRegression;
  absl::StatusOr<analysis::OtlpExport> exported = analysis::ExportOtlp(inputs);
  if (!exported.ok()) return Failure(io, kCommand, exported.status());
  for (const std::string& note : exported->notes) {
    io.err << "note: " << note << "\n";
  }
  if (!output.has_value()) {
    io.out << exported->json;
    io.out.flush();
    return io.out.good() ? kExitPass : kExitUsage;
  }
  absl::Status written = analysis::WriteFileAtomically(*output, exported->json);
  if (!written.ok()) return Failure(io, kCommand, written);
  const OutputPath outputs[] = {{"-o", *output}};
  std::ostream& text = TextStream(io, outputs);
  text << "OTLP/JSON: " << exported->span_count << " spans of "
       << captures.size() << (captures.size() == 1 ? " capture" : " captures")
       << ", trace id";
  if (exported->trace_ids.size() != 1) text << "s";
  for (const std::string& id : exported->trace_ids) text << " " << id;
  text << " -> " << *output << "\n";
  return kExitPass;
}

}  // namespace

int RunExport(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kExportFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  if (flags->positionals.empty()) {
    return UsageError(io, kCommand, "missing FORMAT (otlp)");
  }
  const std::string& format = flags->positionals[0];
  if (format != "otlp") {
    return UsageError(io, kCommand,
                      "unknown format \"" + format + "\" (known: otlp)");
  }
  const std::vector<std::string> paths(flags->positionals.begin() + 1,
                                       flags->positionals.end());
  if (paths.empty()) return UsageError(io, kCommand, "missing argument TRACE");
  const std::optional<std::string> output = flags->Value("--output");
  if (output.has_value() && output->empty()) {
    return UsageError(io, kCommand, "-o: the output path is empty");
  }
  if (output.has_value()) {
    const OutputPath outputs[] = {{"-o", *output}};
    if (absl::Status s = CheckOutputPaths(paths, outputs); !s.ok()) {
      return Failure(io, kCommand, s);
    }
  }
  return ExportOtlp(paths, output, flags->Has("--allow-invalid"), io);
}

std::vector<FlagSpec> ExportFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kExportFlags), std::end(kExportFlags));
  return specs;
}

}  // namespace spanprof::cli::internal
