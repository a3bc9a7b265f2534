// `spanprof plot timeline|breakdown|compare|scaling|flame`: deterministic SVG
// figures.
//
// The command reads its inputs with the strict readers, renders with the
// pure functions of spanprof/analysis/plot.h and writes the figure
// atomically (-o) or to stdout. Drawing a comparison is not a gate: a
// regression still exits 0 once the figure is written.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "flags.h"
#include "output_paths.h"
#include "plot_flame_command.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {
namespace {

constexpr std::string_view kCommand = "plot";

constexpr FlagSpec kTimelineFlags[] = {
    {"--output", "-o", true, "OUT.svg"}, {"--width", "", true, "PX"},
    {"--from", "", true, "NS"},          {"--to", "", true, "NS"},
    {"--max-spans", "", true, "N"},      {"--max-threads", "", true, "N"},
};

constexpr FlagSpec kBreakdownFlags[] = {
    {"--output", "-o", true, "OUT.svg"},
    {"--width", "", true, "PX"},
    {"--rows", "", true, "N"},
};

constexpr FlagSpec kCompareFlags[] = {
    {"--output", "-o", true, "OUT.svg"},
    {"--width", "", true, "PX"},
    {"--rows", "", true, "N"},
    {"--metric", "", true, "M"},
    {"--absolute-tolerance", "", true, "NS"},
    {"--relative-tolerance-bps", "", true, "BPS"},
    {"--allow-incomplete", "", false, ""},
};

constexpr FlagSpec kScalingFlags[] = {
    {"--output", "-o", true, "OUT.svg"},
    {"--width", "", true, "PX"},
    {"--size", "", true, "ARG"},
};

absl::Status UsageStatus(std::string_view message) {
  return absl::InvalidArgumentError(
      absl::string_view(message.data(), message.size()));
}

// The value of an integer flag, if given.
absl::StatusOr<std::optional<int64_t>> IntFlag(const ParsedFlags& flags,
                                               std::string_view name) {
  const std::optional<std::string> text = flags.Value(name);
  if (!text.has_value()) return std::optional<int64_t>();
  absl::StatusOr<int64_t> value = ParseNonNegativeInt(name, *text);
  if (!value.ok()) return value.status();
  return std::optional<int64_t>(*value);
}

// Fills `width` from --width, which must lie in the range figures support.
absl::Status WidthFlag(const ParsedFlags& flags, int* width) {
  absl::StatusOr<std::optional<int64_t>> value = IntFlag(flags, "--width");
  if (!value.ok()) return value.status();
  if (!value->has_value()) return absl::OkStatus();
  if (**value < analysis::kMinPlotWidth || **value > analysis::kMaxPlotWidth) {
    return UsageStatus(
        absl::StrCat("--width: expected ", analysis::kMinPlotWidth, " to ",
                     analysis::kMaxPlotWidth, " pixels, got ", **value));
  }
  *width = static_cast<int>(**value);
  return absl::OkStatus();
}

absl::Status RowsFlag(const ParsedFlags& flags, size_t* rows) {
  absl::StatusOr<std::optional<int64_t>> value = IntFlag(flags, "--rows");
  if (!value.ok()) return value.status();
  if (value->has_value()) *rows = static_cast<size_t>(**value);
  return absl::OkStatus();
}

// Checks the number of positional arguments against `names`.
absl::Status Positionals(const ParsedFlags& flags,
                         const std::vector<std::string_view>& names) {
  if (flags.positionals.size() < names.size()) {
    std::string missing;
    for (size_t i = flags.positionals.size(); i < names.size(); ++i) {
      absl::StrAppend(&missing, missing.empty() ? "" : " and ",
                      absl::string_view(names[i].data(), names[i].size()));
    }
    return UsageStatus(absl::StrCat(
        "missing argument",
        names.size() - flags.positionals.size() > 1 ? "s" : "", " ", missing));
  }
  if (flags.positionals.size() > names.size()) {
    return UsageStatus(absl::StrCat("unexpected argument \"",
                                    flags.positionals[names.size()], "\""));
  }
  for (const std::string& path : flags.positionals) {
    if (path.empty()) return UsageStatus("an input path is empty");
  }
  return absl::OkStatus();
}

// The checks of -o before any work: not empty (a usage error), not one of
// the inputs. nullopt when it passes; else the exit code.
std::optional<int> OutputRefused(const ParsedFlags& flags,
                                 const CommandIo& io) {
  const std::optional<std::string> output = flags.Value("--output");
  if (!output.has_value()) return std::nullopt;
  if (output->empty()) {
    return UsageError(io, kCommand, "-o: the output path is empty");
  }
  const OutputPath outputs[] = {{"-o", *output}};
  if (absl::Status s = CheckOutputPaths(flags.positionals, outputs); !s.ok()) {
    return Failure(io, kCommand, s);
  }
  return std::nullopt;
}

// Writes the figure to -o, or to stdout without it.
int Emit(const ParsedFlags& flags, const std::string& svg,
         const CommandIo& io) {
  const std::optional<std::string> output = flags.Value("--output");
  if (!output.has_value()) {
    io.out << svg;
    io.out.flush();
    return io.out.good() ? kExitPass : kExitUsage;
  }
  absl::Status written = analysis::WriteFileAtomically(*output, svg);
  if (!written.ok()) return Failure(io, kCommand, written);
  return kExitPass;
}

int Timeline(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kTimelineFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  analysis::TimelineOptions options;
  if (absl::Status s = Positionals(*flags, {"TRACE"}); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  if (absl::Status s = WidthFlag(*flags, &options.width); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  absl::StatusOr<std::optional<int64_t>> from = IntFlag(*flags, "--from");
  if (!from.ok()) return UsageError(io, kCommand, from.status());
  absl::StatusOr<std::optional<int64_t>> to = IntFlag(*flags, "--to");
  if (!to.ok()) return UsageError(io, kCommand, to.status());
  if (from->has_value() && to->has_value() && **to <= **from) {
    return UsageError(io, kCommand, "--to must be after --from");
  }
  options.start_ns = *from;
  options.end_ns = *to;
  absl::StatusOr<std::optional<int64_t>> max_spans =
      IntFlag(*flags, "--max-spans");
  if (!max_spans.ok()) return UsageError(io, kCommand, max_spans.status());
  if (max_spans->has_value()) {
    if (**max_spans == 0) {
      return UsageError(io, kCommand, "--max-spans: expected at least 1");
    }
    options.max_spans = static_cast<size_t>(**max_spans);
  }
  absl::StatusOr<std::optional<int64_t>> max_threads =
      IntFlag(*flags, "--max-threads");
  if (!max_threads.ok()) return UsageError(io, kCommand, max_threads.status());
  if (max_threads->has_value()) {
    if (**max_threads == 0) {
      return UsageError(io, kCommand, "--max-threads: expected at least 1");
    }
    options.max_threads = static_cast<size_t>(**max_threads);
  }
  if (std::optional<int> refused = OutputRefused(*flags, io)) return *refused;
  absl::StatusOr<Capture> capture =
      analysis::ReadTrace(flags->positionals[0], TraceOptions());
  if (!capture.ok()) return Failure(io, kCommand, capture.status());
  return Emit(*flags, analysis::PlotTimeline(*capture, options), io);
}

int Breakdown(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kBreakdownFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  analysis::BreakdownOptions options;
  if (absl::Status s = Positionals(*flags, {"SUMMARY"}); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  if (absl::Status s = WidthFlag(*flags, &options.width); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  if (absl::Status s = RowsFlag(*flags, &options.max_rows); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  if (std::optional<int> refused = OutputRefused(*flags, io)) return *refused;
  absl::StatusOr<analysis::Summary> summary =
      ReadSummaryOrTrace(flags->positionals[0], "", io);
  if (!summary.ok()) return Failure(io, kCommand, summary.status());
  return Emit(*flags, analysis::PlotBreakdown(*summary, options), io);
}

int CompareFigure(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kCompareFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  analysis::ComparePlotOptions options;
  analysis::ComparePolicy policy;
  if (absl::Status s = Positionals(*flags, {"BASE", "CAND"}); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  if (absl::Status s = WidthFlag(*flags, &options.width); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  if (absl::Status s = RowsFlag(*flags, &options.max_rows); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  if (const std::optional<std::string> metric = flags->Value("--metric")) {
    absl::Status parsed = analysis::ParseMetric(*metric, policy);
    if (!parsed.ok()) {
      return UsageError(io, kCommand,
                        absl::StrCat("--metric: ", parsed.message()));
    }
  }
  absl::StatusOr<std::optional<int64_t>> absolute =
      IntFlag(*flags, "--absolute-tolerance");
  if (!absolute.ok()) return UsageError(io, kCommand, absolute.status());
  policy.absolute_tolerance_ns = absolute->value_or(0);
  absl::StatusOr<std::optional<int64_t>> relative =
      IntFlag(*flags, "--relative-tolerance-bps");
  if (!relative.ok()) return UsageError(io, kCommand, relative.status());
  policy.relative_tolerance_bps = relative->value_or(0);
  policy.allow_incomplete = flags->Has("--allow-incomplete");
  if (std::optional<int> refused = OutputRefused(*flags, io)) return *refused;

  const std::string& base_path = flags->positionals[0];
  const std::string& candidate_path = flags->positionals[1];
  absl::StatusOr<std::optional<analysis::Comparison>> runs = CompareRunsOf(
      base_path, candidate_path, policy, relative->has_value(), io);
  if (!runs.ok()) return Failure(io, kCommand, runs.status());
  if (runs->has_value()) {
    return Emit(*flags, analysis::PlotCompare(**runs, options), io);
  }
  absl::StatusOr<analysis::Summary> base =
      ReadSummaryOrTrace(base_path, "", io);
  if (!base.ok()) return Failure(io, kCommand, base.status());
  absl::StatusOr<analysis::Summary> candidate =
      ReadSummaryOrTrace(candidate_path, "", io);
  if (!candidate.ok()) return Failure(io, kCommand, candidate.status());
  absl::StatusOr<analysis::Comparison> comparison =
      analysis::Compare(*base, *candidate, policy, base_path, candidate_path);
  if (!comparison.ok()) return Failure(io, kCommand, comparison.status());
  return Emit(*flags, analysis::PlotCompare(*comparison, options), io);
}

int ScalingFigure(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kScalingFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  if (flags->positionals.empty()) {
    return UsageError(io, kCommand, "missing argument TRACE");
  }
  analysis::ScalingPlotOptions options;
  if (absl::Status s = WidthFlag(*flags, &options.width); !s.ok()) {
    return UsageError(io, kCommand, s);
  }
  if (std::optional<int> refused = OutputRefused(*flags, io)) return *refused;
  analysis::ScalingOptions scaling;
  scaling.size_arg = flags->Value("--size").value_or("");
  absl::StatusOr<analysis::ScalingReport> report =
      ScalingReportOf(flags->positionals, scaling);
  if (!report.ok()) return Failure(io, kCommand, report.status());
  return Emit(*flags, analysis::PlotScaling(*report, options), io);
}

}  // namespace

int RunPlot(const std::vector<std::string>& args, const CommandIo& io) {
  if (args.empty()) {
    return UsageError(io, kCommand,
                      "missing figure: timeline, breakdown, compare, "
                      "scaling or flame");
  }
  const std::string& figure = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (figure == "timeline") return Timeline(rest, io);
  if (figure == "breakdown") return Breakdown(rest, io);
  if (figure == "compare") return CompareFigure(rest, io);
  if (figure == "scaling") return ScalingFigure(rest, io);
  if (figure == "flame") return FlameFigure(rest, io);
  return UsageError(io, kCommand,
                    absl::StrCat("unknown figure \"", figure,
                                 "\" (expected timeline, breakdown, "
                                 "compare, scaling or flame)"));
}

// The flags of every plot kind (a kind accepts its own subset).
std::vector<FlagSpec> PlotFlagSpecs() {
  std::vector<FlagSpec> specs;
  const std::vector<FlagSpec> flame = FlameFlagSpecs();
  for (std::span<const FlagSpec> kind :
       {std::span<const FlagSpec>(kTimelineFlags),
        std::span<const FlagSpec>(kBreakdownFlags),
        std::span<const FlagSpec>(kCompareFlags),
        std::span<const FlagSpec>(kScalingFlags),
        std::span<const FlagSpec>(flame)}) {
    for (const FlagSpec& spec : kind) {
      if (std::none_of(specs.begin(), specs.end(), [&](const FlagSpec& s) {
            return s.name == spec.name;
          })) {
        specs.push_back(spec);
      }
    }
  }
  return specs;
}

}  // namespace spanprof::cli::internal
