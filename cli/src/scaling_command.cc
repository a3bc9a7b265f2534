// `spanprof scaling`: the scaling analysis of one or more traces, and with
// `--baseline` the scaling gate.
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "commands.h"
#include "flags.h"
#include "output_paths.h"
#include "spanprof/analysis/command_tables.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/scaling.h"
#include "spanprof/analysis/table_output.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {
namespace {

constexpr std::string_view kCommand = "scaling";

constexpr FlagSpec kFlags[] = {
    {"--size", "", true, "ARG"},
    {"--json", "", true, "OUT"},
    {"--margin", "", true, "M"},
    {"--fail-on-unknown", "", false, ""},
    kGroupByArgFlag,
    {"--format", "", true, "FORMAT"},
};

// The report in `format`: the console table, or its rows as a machine
// format (the gate's table stays the console's).
std::string ScalingText(const analysis::ScalingReport& report,
                        analysis::TableFormat format) {
  if (format == analysis::TableFormat::kTable) {
    return analysis::ScalingTable(report);
  }
  return analysis::RenderTable(analysis::ScalingRowsTable(report), format);
}

// The words after `--baseline` up to the next flag are the baseline traces;
// the rest goes to the flag parser.
struct SplitArgs {
  std::vector<std::string> rest;
  std::vector<std::string> baseline;
  bool has_baseline = false;
};

SplitArgs SplitBaseline(const std::vector<std::string>& args) {
  SplitArgs out;
  bool in_baseline = false;
  for (const std::string& arg : args) {
    if (arg == "--baseline") {
      in_baseline = true;
      out.has_baseline = true;
      continue;
    }
    if (arg.starts_with("-")) in_baseline = false;
    (in_baseline ? out.baseline : out.rest).push_back(arg);
  }
  return out;
}

absl::StatusOr<double> ParseMargin(const std::string& text) {
  double value = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(
        "--margin: expected a non-negative number, got \"" + text + "\"");
  }
  return value;
}

// Captures read from `paths`, kept alive for the NamedCapture pointers.
struct LoadedTraces {
  std::vector<Capture> captures;
  std::vector<analysis::NamedCapture> named;
};

// With `io`, foreign traces are grouped by `group_by_arg` and the reader's
// notes are printed.
absl::StatusOr<LoadedTraces> LoadTraces(const std::vector<std::string>& paths,
                                        const std::string& group_by_arg = "",
                                        const CommandIo* io = nullptr) {
  LoadedTraces loaded;
  loaded.captures.reserve(paths.size());
  for (const std::string& path : paths) {
    absl::StatusOr<Capture> capture =
        io == nullptr ? analysis::ReadTrace(path, TraceOptions())
                      : ReadTraceFile(path, group_by_arg, *io);
    if (!capture.ok()) return capture.status();
    loaded.captures.push_back(*std::move(capture));
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    loaded.named.push_back({paths[i], &loaded.captures[i]});
  }
  return loaded;
}

int RunGate(const LoadedTraces& base, const LoadedTraces& cand,
            const analysis::ScalingOptions& options, double margin,
            bool fail_on_unknown, const CommandIo& io) {
  const std::vector<analysis::ScalingGateRow> rows =
      analysis::CompareScaling(base.named, cand.named, options, margin);
  if (rows.empty()) {
    io.out << "spanprof scaling: no sized group is in both the baseline and "
              "the candidate; nothing to gate\n";
    return kExitPass;
  }
  io.out << analysis::ScalingGateTable(rows);
  int regressed = 0;
  int unknown = 0;
  for (const analysis::ScalingGateRow& row : rows) {
    if (row.verdict == "regressed") ++regressed;
    if (row.verdict == "unknown") ++unknown;
  }
  io.out << "\nscaling gate: " << regressed << " regressed, " << unknown
         << " unknown of " << rows.size() << " groups\n";
  if (regressed > 0 || (fail_on_unknown && unknown > 0)) return kExitRegression;
  return kExitPass;
}

}  // namespace

absl::StatusOr<analysis::ScalingReport> ScalingReportOf(
    const std::vector<std::string>& paths,
    const analysis::ScalingOptions& options) {
  absl::StatusOr<LoadedTraces> loaded = LoadTraces(paths);
  if (!loaded.ok()) return loaded.status();
  return analysis::AnalyzeScaling(loaded->named, options);
}

int RunScaling(const std::vector<std::string>& args,
               const CommandIo& command_io) {
  const SplitArgs split = SplitBaseline(args);
  absl::StatusOr<ParsedFlags> flags = ParseFlags(split.rest, kFlags);
  if (!flags.ok()) return UsageError(command_io, kCommand, flags.status());
  const absl::StatusOr<analysis::TableFormat> format =
      analysis::ParseTableFormat(flags->Value("--format").value_or("table"));
  if (!format.ok()) return UsageError(command_io, kCommand, format.status());
  std::vector<OutputPath> outputs;
  if (std::optional<std::string> json = flags->Value("--json")) {
    outputs.push_back({"--json", *json});
  }
  std::vector<std::string> inputs = flags->positionals;
  inputs.insert(inputs.end(), split.baseline.begin(), split.baseline.end());
  if (absl::Status s = CheckOutputPaths(inputs, outputs); !s.ok()) {
    return Failure(command_io, kCommand, s);
  }
  // With `--json -` the tables go to stderr.
  const CommandIo io{TextStream(command_io, outputs), command_io.err,
                     command_io.program};
  if (flags->positionals.empty()) {
    return UsageError(io, kCommand, "missing argument TRACE");
  }
  if (split.has_baseline && split.baseline.empty()) {
    return UsageError(io, kCommand, "--baseline: expected one or more traces");
  }
  analysis::ScalingOptions options;
  options.size_arg = flags->Value("--size").value_or("");
  if (flags->Value("--size").has_value() && options.size_arg.empty()) {
    return UsageError(io, kCommand, "--size: the argument name is empty");
  }
  double margin = 0.15;
  if (std::optional<std::string> text = flags->Value("--margin")) {
    absl::StatusOr<double> parsed = ParseMargin(*text);
    if (!parsed.ok()) return UsageError(io, kCommand, parsed.status());
    margin = *parsed;
  }
  const std::string group_by_arg = flags->Value("--group-by-arg").value_or("");
  absl::StatusOr<LoadedTraces> cand =
      LoadTraces(flags->positionals, group_by_arg, &io);
  if (!cand.ok()) return Failure(io, kCommand, cand.status());
  absl::StatusOr<analysis::ScalingReport> report =
      analysis::AnalyzeScaling(cand->named, options);
  if (!report.ok()) return Failure(io, kCommand, report.status());
  io.out << ScalingText(*report, *format);
  if (std::optional<std::string> json = flags->Value("--json")) {
    absl::Status written =
        analysis::WriteFileAtomically(*json, analysis::ScalingToJson(*report));
    if (!written.ok()) return Failure(io, kCommand, written);
  }
  if (!split.has_baseline) return kExitPass;
  absl::StatusOr<LoadedTraces> base =
      LoadTraces(split.baseline, group_by_arg, &io);
  if (!base.ok()) return Failure(io, kCommand, base.status());
  io.out << "\n";
  return RunGate(*base, *cand, options, margin, flags->Has("--fail-on-unknown"),
                 io);
}

std::vector<FlagSpec> ScalingFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kFlags), std::end(kFlags));
  // --baseline takes every word up to the next flag (SplitBaseline).
  specs.push_back({"--baseline", "", true, "TRACE..."});
  return specs;
}

}  // namespace spanprof::cli::internal
