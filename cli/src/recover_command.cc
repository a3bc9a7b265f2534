// `spanprof recover`: the trace and summary of a program that did not end
// normally, from the stream file its session left (spanprof/stream.h).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "flags.h"
#include "output_paths.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/merge.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/cli/router.h"
#include "spanprof/stream.h"

namespace spanprof::cli::internal {
namespace {

constexpr std::string_view kCommand = "recover";
constexpr FlagSpec kRecoverFlags[] = {
    {"--output", "-o", true, "TRACE"},
    {"--summary-out", "", true, "SUMMARY"},
};

// A flight recorder's stream is two files, `PATH.old` (when the first one
// filled up) and `PATH`: read together, oldest first.
absl::StatusOr<RecoveredCapture> Recover(const std::string& path) {
  absl::StatusOr<std::string> bytes = analysis::ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  std::error_code error;
  const std::string older_path = path + ".old";
  if (!std::filesystem::is_regular_file(older_path, error)) {
    return RecoverStream(*bytes, path);
  }
  absl::StatusOr<std::string> older = analysis::ReadFile(older_path);
  if (!older.ok()) return older.status();
  return RecoverStream(std::vector<std::string_view>{*older, *bytes}, path);
}

// What a person should know about what could not be recovered.
void Report(const std::string& path, const RecoveredCapture& r,
            const CommandIo& io) {
  const Capture& c = r.capture;
  io.err << "spanprof recover: " << path << ": " << c.spans.size()
         << (c.spans.size() == 1 ? " span" : " spans") << " on "
         << c.threads.size() << (c.threads.size() == 1 ? " thread" : " threads")
         << ", end_reason " << c.end_reason << "\n";
  if (r.skipped_chunks > 0 || r.torn_bytes > 0 || r.lost_records > 0) {
    io.err << "spanprof recover: " << path << ": " << r.skipped_chunks
           << " corrupt chunks skipped (" << r.skipped_bytes << " bytes), "
           << r.torn_bytes << " bytes of a cut last chunk, " << r.lost_records
           << " records after a gap not used\n";
  }
  if (!r.ended) {
    io.err << "spanprof recover: " << path
           << ": the program ended without a word (killed): spans recorded "
              "after the last drain (about the last 10 ms) cannot be "
              "known; spans open then are marked unfinished\n";
  }
}

// The outputs: the flags, else where the session would have written them;
// never one of the streams, nor one file for both.
absl::Status WriteRecovered(const Capture& capture,
                            const std::vector<std::string>& streams,
                            const std::string& trace,
                            const std::string& summary, const CommandIo& io) {
  if (trace.empty() || summary.empty()) {
    return absl::InvalidArgumentError(
        "the session wrote no trace or no summary (off), so the stream names "
        "no place for it: give -o TRACE and --summary-out SUMMARY");
  }
  const OutputPath outputs[] = {{"-o", trace}, {"--summary-out", summary}};
  if (absl::Status s = CheckOutputPaths(streams, outputs); !s.ok()) return s;
  // The killed program's session end may have left temporary files there.
  analysis::RemoveStaleTemporaryFiles(trace);
  analysis::RemoveStaleTemporaryFiles(summary);
  const analysis::Summary sum = analysis::Summarize(capture);
  if (absl::Status s = analysis::WriteTrace(capture, trace); !s.ok()) return s;
  if (absl::Status s = analysis::WriteSummary(sum, summary); !s.ok()) return s;
  TextStream(io, outputs) << analysis::FormatTable(
      sum, {.trace_path = trace, .summary_path = summary});
  return absl::OkStatus();
}

}  // namespace

int RunRecover(const std::vector<std::string>& args, const CommandIo& io) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, kRecoverFlags);
  if (!flags.ok()) return UsageError(io, kCommand, flags.status());
  if (flags->positionals.empty()) {
    return UsageError(io, kCommand, "missing argument STREAM");
  }
  const std::optional<std::string> trace = flags->Value("--output");
  const std::optional<std::string> summary = flags->Value("--summary-out");
  std::vector<analysis::MergeInput> inputs;
  std::string default_trace;
  std::string default_summary;
  for (const std::string& path : flags->positionals) {
    absl::StatusOr<RecoveredCapture> recovered = Recover(path);
    if (!recovered.ok()) return Failure(io, kCommand, recovered.status());
    Report(path, *recovered, io);
    default_trace = recovered->trace_path;
    default_summary = recovered->summary_path;
    inputs.push_back({path, std::move(recovered->capture)});
  }
  if (inputs.size() > 1 && (!trace.has_value() || !summary.has_value())) {
    return UsageError(io, kCommand,
                      "several streams are merged into one capture: give -o "
                      "TRACE and --summary-out SUMMARY");
  }
  Capture capture;
  if (inputs.size() == 1) {
    capture = std::move(inputs.front().capture);
  } else {
    absl::StatusOr<analysis::MergeResult> merged =
        analysis::MergeCaptures(inputs);
    if (!merged.ok()) return Failure(io, kCommand, merged.status());
    capture = std::move(merged->capture);
  }
  const absl::Status written =
      WriteRecovered(capture, flags->positionals, trace.value_or(default_trace),
                     summary.value_or(default_summary), io);
  if (!written.ok()) return Failure(io, kCommand, written);
  return kExitPass;
}

std::vector<FlagSpec> RecoverFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kRecoverFlags),
                              std::end(kRecoverFlags));
  return specs;
}

}  // namespace spanprof::cli::internal
