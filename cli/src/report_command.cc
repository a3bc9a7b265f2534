// `spanprof report`: the console table of a summary or a trace.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "commands.h"
#include "flags.h"
#include "progress.h"
#include "row_selection.h"
#include "spanprof/analysis/command_tables.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/table_output.h"
#include "spanprof/analysis/validate.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {
namespace {

constexpr FlagSpec kFlags[] = {
    kGroupByArgFlag, {"--wide", "", false, ""},       kSortFlag, kTopFlag,
    kFilterFlag,     {"--format", "", true, "FORMAT"}};

}  // namespace

int RunReport(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kFlags);
  if (!flags.ok()) return UsageError(io, "report", flags.status());
  if (flags->positionals.size() != 1) {
    return UsageError(
        io, "report",
        flags->positionals.empty()
            ? "missing argument FILE"
            : "unexpected argument \"" + flags->positionals[1] + "\"");
  }
  absl::StatusOr<analysis::TableFormat> format =
      analysis::ParseTableFormat(flags->Value("--format").value_or("table"));
  if (!format.ok()) return UsageError(io, "report", format.status());
  std::vector<analysis::Row> no_rows;  // the flags' values, checked first
  if (absl::StatusOr<RowsLeftOut> checked = SelectRows(*flags, &no_rows);
      !checked.ok()) {
    return UsageError(io, "report", checked.status());
  }
  const std::string& path = flags->positionals[0];
  absl::StatusOr<std::string> text = absl::UnknownError("not read");
  {
    const Progress progress(io, "reading " + path);
    text = analysis::ReadFile(path);
  }
  if (!text.ok()) return Failure(io, "report", text.status());
  absl::StatusOr<analysis::ArtifactKind> kind =
      analysis::DetectArtifactKind(*text, path);
  if (!kind.ok()) return Failure(io, "report", kind.status());

  analysis::Summary summary;
  analysis::TableOptions options;
  std::optional<Capture> capture;  // a trace's, for the heavy-tail note
  if (*kind == analysis::ArtifactKind::kSummary) {
    absl::StatusOr<analysis::Summary> parsed =
        analysis::ParseSummary(*text, path);
    if (!parsed.ok()) return Failure(io, "report", parsed.status());
    summary = *std::move(parsed);
    options.summary_path = path;
  } else {
    absl::StatusOr<Capture> parsed = ParseTraceText(
        *text, path, flags->Value("--group-by-arg").value_or(""), io);
    if (!parsed.ok()) return Failure(io, "report", parsed.status());
    capture = *std::move(parsed);
    summary = analysis::Summarize(*capture);
    options.trace_path = path;
    options.capture = &*capture;
  }
  absl::StatusOr<RowsLeftOut> left_out = SelectRows(*flags, &summary.rows);
  if (!left_out.ok()) return UsageError(io, "report", left_out.status());
  options.rows_left_out = left_out->count;
  options.rows_left_out_by = left_out->by;
  options.wide = flags->Has("--wide");
  options.all_drops = true;
  if (*format != analysis::TableFormat::kTable) {
    io.out << analysis::RenderTable(analysis::SummaryRowsTable(summary),
                                    *format);
    return kExitPass;
  }
  io.out << analysis::FormatTable(summary, options);
  return kExitPass;
}

std::vector<FlagSpec> ReportFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kFlags), std::end(kFlags));
  return specs;
}

}  // namespace spanprof::cli::internal
