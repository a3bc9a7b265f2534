// `spanprof query TRACE... SQL`: SQL over the spans of traces, on tables
// with Perfetto trace_processor's names (spanprof/analysis/query.h).
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "commands.h"
#include "flags.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/query.h"
#include "spanprof/analysis/table_output.h"
#include "spanprof/cli/router.h"
#include "trace_input.h"

namespace spanprof::cli::internal {
namespace {

constexpr std::string_view kCommand = "query";
constexpr FlagSpec kQueryFlags[] = {{"--file", "-f", true, "QUERY.sql"},
                                    {"--format", "", true, "FORMAT"},
                                    kGroupByArgFlag};

// The traces and the SQL text: the last positional, or the file of --file.
struct QueryRequest {
  std::vector<std::string> traces;
  std::string sql;
};

absl::StatusOr<QueryRequest> RequestOf(const ParsedFlags& flags) {
  QueryRequest request;
  request.traces = flags.positionals;
  if (std::optional<std::string> file = flags.Value("--file")) {
    absl::StatusOr<std::string> text = analysis::ReadFile(*file);
    if (!text.ok()) return text.status();
    request.sql = *std::move(text);
  } else if (!request.traces.empty()) {
    request.sql = request.traces.back();
    request.traces.pop_back();
  }
  return request;
}

}  // namespace

int RunQuery(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kQueryFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  absl::StatusOr<analysis::TableFormat> format =
      analysis::ParseTableFormat(flags->Value("--format").value_or("table"));
  if (!format.ok()) return UsageError(io, kCommand, format.status());
  const bool from_file = flags->Value("--file").has_value();
  if (flags->positionals.size() < (from_file ? 1u : 2u)) {
    return UsageError(io, kCommand,
                      flags->positionals.empty() ? "missing argument TRACE"
                                                 : "missing argument SQL");
  }
  absl::StatusOr<QueryRequest> request = RequestOf(*flags);
  if (!request.ok()) return Failure(io, kCommand, request.status());

  const std::string group_by_arg = flags->Value("--group-by-arg").value_or("");
  std::vector<Capture> captures;
  captures.reserve(request->traces.size());
  for (const std::string& path : request->traces) {
    absl::StatusOr<Capture> capture = ReadTraceFile(path, group_by_arg, io);
    if (!capture.ok()) return Failure(io, kCommand, capture.status());
    captures.push_back(*std::move(capture));
  }
  std::vector<analysis::QueryInput> inputs;
  inputs.reserve(captures.size());
  for (size_t i = 0; i < captures.size(); ++i) {
    inputs.push_back({request->traces[i], &captures[i]});
  }
  absl::StatusOr<analysis::QueryDatabase> db =
      analysis::QueryDatabase::Load(inputs);
  if (!db.ok()) return Failure(io, kCommand, db.status());
  captures.clear();  // the database holds its own copy
  absl::StatusOr<analysis::OutputTable> rows = db->Run(request->sql);
  if (!rows.ok()) return Failure(io, kCommand, rows.status());
  io.out << analysis::RenderTable(*rows, *format);
  io.out.flush();
  return io.out.good() ? kExitPass : kExitUsage;
}

std::vector<FlagSpec> QueryFlagSpecs() {
  return std::vector<FlagSpec>(std::begin(kQueryFlags), std::end(kQueryFlags));
}

}  // namespace spanprof::cli::internal
