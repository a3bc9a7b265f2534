// commands.h — the command table of the `spanprof` router and the entry
// point of each command (private to the CLI).
//
// Adding a command is one row in `kCommands` (router.cc) and one function
// here. The router handles `--help` / `-h` for every command, unknown
// commands and the usage text; a command parses its own flags with
// `ParseFlags()` and reports failures with `UsageError()` (exit 2, usage on
// stderr) or `Failure()` (exit 2, message only).
#ifndef SPANPROF_CLI_SRC_COMMANDS_H_
#define SPANPROF_CLI_SRC_COMMANDS_H_

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flags.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/scaling.h"

namespace spanprof::cli::internal {

// `CommandIo` is where a command writes, and the program name for messages.
struct CommandIo {
  std::ostream& out;
  std::ostream& err;
  std::string program;  // "spanprof", or the embedding program's name
};

using CommandFn = int (*)(const std::vector<std::string>& args,
                          const CommandIo& io);
// The flags a command accepts (besides --help and the input options).
using FlagSpecsFn = std::vector<FlagSpec> (*)();

// `Command` is one row of the command table.
struct Command {
  std::string_view name;
  std::string_view synopsis;  // "compare BASE CAND [--metric M] ..."
  std::string_view summary;   // one line for the command list
  std::string_view help;      // the body of `<command> --help`
  CommandFn run;
  // The flags `run` accepts: its help's "Options:" must list exactly these
  // (tests/cli/help_flags_test.cc holds them to it).
  FlagSpecsFn flags;
};

// `Commands()` is the command table, in the order of the usage text.
std::span<const Command> Commands();

// `UsageError()` prints `<program> <command>: <message>` and the command's
// usage on stderr, and returns the usage exit code (2).
int UsageError(const CommandIo& io, std::string_view command,
               std::string_view message);
int UsageError(const CommandIo& io, std::string_view command,
               const absl::Status& status);

// `Failure()` prints `<program> <command>: <status message>` on stderr and
// returns 2 (unreadable or invalid input, output not written).
int Failure(const CommandIo& io, std::string_view command,
            const absl::Status& status);

int RunCompare(const std::vector<std::string>& args, const CommandIo& io);
int RunReport(const std::vector<std::string>& args, const CommandIo& io);
int RunValidate(const std::vector<std::string>& args, const CommandIo& io);
int RunSummarize(const std::vector<std::string>& args, const CommandIo& io);
int RunFolded(const std::vector<std::string>& args, const CommandIo& io);
int RunExport(const std::vector<std::string>& args, const CommandIo& io);
int RunMerge(const std::vector<std::string>& args, const CommandIo& io);
int RunPlot(const std::vector<std::string>& args, const CommandIo& io);
int RunScaling(const std::vector<std::string>& args, const CommandIo& io);
int RunRun(const std::vector<std::string>& args, const CommandIo& io);
int RunAb(const std::vector<std::string>& args, const CommandIo& io);
int RunOverhead(const std::vector<std::string>& args, const CommandIo& io);
int RunRecover(const std::vector<std::string>& args, const CommandIo& io);
int RunQuery(const std::vector<std::string>& args, const CommandIo& io);

// The flag table of each command, declared next to its parser.
std::vector<FlagSpec> CompareFlagSpecs();
std::vector<FlagSpec> ReportFlagSpecs();
std::vector<FlagSpec> QueryFlagSpecs();
std::vector<FlagSpec> NoFlagSpecs();
std::vector<FlagSpec> SummarizeFlagSpecs();
std::vector<FlagSpec> ExportFlagSpecs();
std::vector<FlagSpec> MergeFlagSpecs();
std::vector<FlagSpec> PlotFlagSpecs();
std::vector<FlagSpec> ScalingFlagSpecs();
std::vector<FlagSpec> RunFlagSpecs();
std::vector<FlagSpec> OverheadFlagSpecs();
std::vector<FlagSpec> RecoverFlagSpecs();

// `CompareRunsOf()` is the gate over repeated runs when `base_path` or
// `candidate_path` is a directory (shared by `compare` and `plot compare`):
// a directory's summaries are the runs of a side (skipped files noted on
// io.err), a file one run; the relative tolerance defaults to
// kRunsDefaultRelativeToleranceBps unless `relative_tolerance_given`, the
// absolute one to kRunsDefaultAbsoluteToleranceNs unless
// `absolute_tolerance_given`. Warns on io.err when the sides differ in
// host, clock, program or source. nullopt when both are files.
absl::StatusOr<std::optional<analysis::Comparison>> CompareRunsOf(
    const std::string& base_path, const std::string& candidate_path,
    analysis::ComparePolicy policy, bool relative_tolerance_given,
    const CommandIo& io, bool absolute_tolerance_given = true);

// `ScalingReportOf()` reads the traces at `paths` and analyses their scaling
// (shared by `scaling` and `plot scaling`).
absl::StatusOr<analysis::ScalingReport> ScalingReportOf(
    const std::vector<std::string>& paths,
    const analysis::ScalingOptions& options);

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_COMMANDS_H_
