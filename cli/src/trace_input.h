// trace_input.h — how commands read traces (private to the CLI): the
// `--group-by-arg ARG` flag of the commands that read traces, and the
// reader's notes printed on stderr.
#ifndef SPANPROF_CLI_SRC_TRACE_INPUT_H_
#define SPANPROF_CLI_SRC_TRACE_INPUT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "commands.h"
#include "flags.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::cli::internal {

// `--group-by-arg ARG`: foreign Chrome traces' spans are keyed by
// `name [ARG=value]` when their event has a string argument ARG.
inline constexpr FlagSpec kGroupByArgFlag = {"--group-by-arg", "", true, "ARG"};

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
