// `spanprof plot flame`: a flame graph of traces, or a differential flame
// graph of two traces or two directories of runs.
#include "plot_flame_command.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "flags.h"
#include "output_paths.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/plot_flame.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {
namespace {

constexpr std::string_view kCommand = "plot";

constexpr FlagSpec kFlameFlags[] = {
    {"--output", "-o", true, "OUT.svg"}, {"--width", "", true, "PX"},
    {"--icicle", "", false, ""},         {"--merge-threads", "", false, ""},
    {"--diff", "", false, ""},
};

// The traces of a directory of runs, in name order: Perfetto files, and
// JSON files that are traces (summaries and other files are skipped with a
// note).
absl::StatusOr<std::vector<Capture>> ReadRunTraces(const std::string& dir,
                                                   const CommandIo& io) {
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, error), end;
       !error && it != end; it.increment(error)) {
    if (it->is_regular_file(error)) files.push_back(it->path());
  }
  if (error) {
    return absl::NotFoundError(absl::StrCat(
        dir, ": cannot list the directory (", error.message(), ")"));
  }
  std::sort(files.begin(), files.end());
  std::vector<Capture> captures;
  for (const std::filesystem::path& file : files) {
    const std::string path = file.string();
    if (analysis::IsPerfettoTracePath(path)) {
      absl::StatusOr<Capture> capture = ReadTraceFile(path, "", io);
      if (!capture.ok()) return capture.status();
      captures.push_back(std::move(*capture));
      continue;
    }
    std::optional<analysis::ArtifactKind> kind;
    absl::StatusOr<std::string> text;
    if (analysis::HasExtension(path, ".json") ||
        analysis::HasExtension(path, ".json.gz")) {
      text = analysis::ReadFile(path);
      if (!text.ok()) return text.status();
      absl::StatusOr<analysis::ArtifactKind> detected =
          analysis::DetectArtifactKind(*text, path);
      if (detected.ok()) kind = *detected;
    }
    if (kind != analysis::ArtifactKind::kTrace) {
      io.err << "note: " << path << ": not a trace, skipped\n";
      continue;
    }
    absl::StatusOr<Capture> capture = ParseTraceText(*text, path, "", io);
    if (!capture.ok()) return capture.status();
    captures.push_back(std::move(*capture));
  }
  if (captures.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": no trace in the directory"));
  }
  return captures;
}

// A side: the traces of a directory (those in its `traces/` folder when it
// has one: a run directory of `spanprof run --trace`), or one trace.
absl::StatusOr<std::vector<Capture>> ReadSide(const std::string& path,
                                              const CommandIo& io) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    const std::string traces = path + "/traces";
    return ReadRunTraces(
        std::filesystem::is_directory(traces, error) ? traces : path, io);
  }
  absl::StatusOr<Capture> capture = ReadTraceFile(path, "", io);
  if (!capture.ok()) return capture.status();
  std::vector<Capture> one;
  one.push_back(std::move(*capture));
  return one;
}

std::vector<const Capture*> Pointers(const std::vector<Capture>& captures) {
  std::vector<const Capture*> out;
  out.reserve(captures.size());
  for (const Capture& c : captures) out.push_back(&c);
  return out;
}

absl::StatusOr<std::string> Render(const ParsedFlags& flags,
                                   const analysis::FlamePlotOptions& plot,
                                   const CommandIo& io) {
  const analysis::FlameBuildOptions build{.merge_threads =
                                              flags.Has("--merge-threads")};
  if (flags.Has("--diff")) {
    absl::StatusOr<std::vector<Capture>> base =
        ReadSide(flags.positionals[0], io);
    if (!base.ok()) return base.status();
    absl::StatusOr<std::vector<Capture>> cand =
        ReadSide(flags.positionals[1], io);
    if (!cand.ok()) return cand.status();
    absl::StatusOr<analysis::FlameDiff> diff =
        analysis::DiffFlameGraphs(Pointers(*base), Pointers(*cand), build);
    if (!diff.ok()) return diff.status();
    return analysis::PlotFlameDiff(*diff, plot);
  }
  std::vector<Capture> captures;
  for (const std::string& path : flags.positionals) {
    absl::StatusOr<std::vector<Capture>> side = ReadSide(path, io);
    if (!side.ok()) return side.status();
    for (Capture& c : *side) captures.push_back(std::move(c));
  }
  return analysis::PlotFlame(
      analysis::BuildFlameGraph(Pointers(captures), build), plot);
}

// --width, if given, within the figures' range.
absl::Status WidthOf(const ParsedFlags& flags, int* width) {
  const std::optional<std::string> text = flags.Value("--width");
  if (!text.has_value()) return absl::OkStatus();
  absl::StatusOr<int64_t> value = ParseNonNegativeInt("--width", *text);
  if (!value.ok()) return value.status();
  if (*value < analysis::kMinPlotWidth || *value > analysis::kMaxPlotWidth) {
    return absl::InvalidArgumentError(
        absl::StrCat("--width: expected ", analysis::kMinPlotWidth, " to ",
                     analysis::kMaxPlotWidth, " pixels, got ", *value));
  }
  *width = static_cast<int>(*value);
  return absl::OkStatus();
}

}  // namespace

int FlameFigure(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kFlameFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  const bool diff = flags->Has("--diff");
  if (diff && flags->positionals.size() != 2) {
    return UsageError(io, kCommand,
                      "flame --diff takes two arguments, BASE and CAND");
  }
  if (flags->positionals.empty()) {
    return UsageError(io, kCommand, "missing argument TRACE");
  }
  analysis::FlamePlotOptions plot;
  plot.icicle = flags->Has("--icicle");
  if (absl::Status s = WidthOf(*flags, &plot.width); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  const std::optional<std::string> output = flags->Value("--output");
  if (output.has_value()) {
    if (output->empty()) {
      return UsageError(io, kCommand, "-o: the output path is empty");
    }
    const OutputPath outputs[] = {{"-o", *output}};
    if (absl::Status s = CheckOutputPaths(flags->positionals, outputs);
        !s.ok()) {
      return Failure(io, kCommand, s);
    }
  }
  absl::StatusOr<std::string> svg = Render(*flags, plot, io);
  if (!svg.ok()) return Failure(io, kCommand, svg.status());
  if (!output.has_value()) {
    io.out << *svg;
    io.out.flush();
    return io.out.good() ? kExitPass : kExitUsage;
  }
  absl::Status written = analysis::WriteFileAtomically(*output, *svg);
  if (!written.ok()) return Failure(io, kCommand, written);
  return kExitPass;
}

std::vector<FlagSpec> FlameFlagSpecs() {
  return std::vector<FlagSpec>(std::begin(kFlameFlags), std::end(kFlameFlags));
}

}  // namespace spanprof::cli::internal
