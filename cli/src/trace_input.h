// trace_input.h — how commands read traces (private to the CLI): the
// `--group-by-arg ARG` flag of the commands that read traces, and the
// reader's notes printed on stderr.
#ifndef SPANPROF_CLI_SRC_TRACE_INPUT_H_
#define SPANPROF_CLI_SRC_TRACE_INPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "commands.h"
#include "flags.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"

namespace spanprof::cli::internal {

// `--group-by-arg ARG`: foreign Chrome traces' spans are keyed by
// `name [ARG=value]` when their event has a string argument ARG.
inline constexpr FlagSpec kGroupByArgFlag = {"--group-by-arg", "", true, "ARG"};

// The input options every command takes (docs/cli.md, "Input limits"):
// `--allow-truncated` reads a cut Perfetto trace as far as it goes (its
// summary not complete) instead of refusing it; `--max-input-bytes N` sets
// the most bytes any input may hold in memory (after gzip).
struct InputOptions {
  bool allow_truncated = false;
  uint64_t max_input_bytes = 0;  // 0: the default rule (file_io.h)
};

// `TakeInputOptions()` removes the input options from `args` (before a
// `--`, anywhere else) and returns them; a bad value is an error naming
// the flag.
absl::StatusOr<InputOptions> TakeInputOptions(std::vector<std::string>& args);

// `UseInputOptions()` makes `options` the process's: the read limits of
// every reader, and what `TraceOptions()` returns.
void UseInputOptions(const InputOptions& options);

// `TraceOptions()` are the trace reader's options under the input options.
analysis::TraceReadOptions TraceOptions(const std::string& group_by_arg = "");

// `ReadTraceFile()` reads the trace at `path` with `group_by_arg` (may be
// empty) and prints the reader's notes on io.err as `note: ...`.
absl::StatusOr<Capture> ReadTraceFile(const std::string& path,
                                      const std::string& group_by_arg,
                                      const CommandIo& io);

// `ParseTraceText()` is the same for a file already read.
absl::StatusOr<Capture> ParseTraceText(std::string_view text,
                                       const std::string& path,
                                       const std::string& group_by_arg,
                                       const CommandIo& io);

// `ReadSummaryOrTrace()` reads a summary, or a trace and summarizes it (the
// kind is detected from the content).
absl::StatusOr<analysis::Summary> ReadSummaryOrTrace(
    const std::string& path, const std::string& group_by_arg,
    const CommandIo& io);

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_TRACE_INPUT_H_
