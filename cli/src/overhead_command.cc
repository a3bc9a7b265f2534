// `spanprof overhead`: the users' own overhead gate over Google Benchmark's
// JSON output (the analysis is spanprof/analysis/overhead.h).
#include <charconv>
#include <cmath>
#include <optional>
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
#include "spanprof/analysis/overhead.h"
#include "spanprof/analysis/table_output.h"
#include "spanprof/cli/router.h"

namespace spanprof::cli::internal {
namespace {

constexpr std::string_view kCommand = "overhead";

constexpr FlagSpec kFlags[] = {
    {"--max-ratio", "", true, "R"},
    {"--metric", "", true, "M"},
    {"--json", "", true, "OUT"},
    {"--format", "", true, "FORMAT"},
};

absl::StatusOr<double> ParseMaxRatio(const std::string& text) {
  double value = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || !(value > 0)) {
    return absl::InvalidArgumentError(
        "--max-ratio: expected a number > 0 (1.05 allows 5%), got \"" + text +
        "\"");
  }
  return value;
}

absl::StatusOr<analysis::OverheadOptions> OptionsOf(const ParsedFlags& flags) {
  analysis::OverheadOptions options;
  if (std::optional<std::string> text = flags.Value("--max-ratio")) {
    absl::StatusOr<double> ratio = ParseMaxRatio(*text);
    if (!ratio.ok()) return ratio.status();
    options.max_ratio = *ratio;
  }
  if (std::optional<std::string> text = flags.Value("--metric")) {
    absl::StatusOr<analysis::OverheadMetric> metric =
        analysis::ParseOverheadMetric(*text);
    if (!metric.ok()) {
      return absl::InvalidArgumentError("--metric: " +
                                        std::string(metric.status().message()));
    }
    options.metric = *metric;
  }
  return options;
}

}  // namespace

int RunOverhead(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  if (flags->positionals.size() != 1) {
    return UsageError(
        io, kCommand,
        flags->positionals.empty()
            ? "missing argument BENCH.json"
            : "unexpected argument \"" + flags->positionals[1] + "\"");
  }
  absl::StatusOr<analysis::OverheadOptions> options = OptionsOf(*flags);
  if (!options.ok()) return UsageError(io, kCommand, options.status());
  const absl::StatusOr<analysis::TableFormat> format =
      analysis::ParseTableFormat(flags->Value("--format").value_or("table"));
  if (!format.ok()) return UsageError(io, kCommand, format.status());
  std::vector<OutputPath> outputs;
  if (std::optional<std::string> json = flags->Value("--json")) {
    outputs.push_back({"--json", *json});
  }
  if (absl::Status s = CheckOutputPaths(flags->positionals, outputs); !s.ok()) {
    return Failure(io, kCommand, s);
  }
  absl::StatusOr<analysis::OverheadReport> report =
      analysis::ReadOverhead(flags->positionals[0], *options);
  if (!report.ok()) return Failure(io, kCommand, report.status());
  TextStream(io, outputs) << (*format == analysis::TableFormat::kTable
                                  ? analysis::OverheadTable(*report)
                                  : analysis::RenderTable(
                                        analysis::OverheadRowsTable(*report),
                                        *format));
  if (std::optional<std::string> json = flags->Value("--json")) {
    const absl::Status written =
        analysis::WriteFileAtomically(*json, analysis::OverheadToJson(*report));
    if (!written.ok()) return Failure(io, kCommand, written);
  }
  return report->passed() ? kExitPass : kExitRegression;
}

std::vector<FlagSpec> OverheadFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kFlags), std::end(kFlags));
  return specs;
}

}  // namespace spanprof::cli::internal
