// `spanprof run` and `spanprof ab`: make the repeated runs that
// `spanprof compare` reads as a side (a directory of summaries). `run` runs
// one program N times; `ab` interleaves a baseline and a candidate (base 1,
// cand 1, base 2, cand 2, ...) so that drift on a shared machine falls on
// both. Each run gets SPANPROF=1 and its own summary (and trace) path.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "child_process.h"
#include "commands.h"
#include "flags.h"
#include "run_directory.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/cli/router.h"

namespace spanprof::cli::internal {
namespace {

constexpr FlagSpec kFlags[] = {
    {"--runs", "-n", true, "N"},
    {"--out", "-o", true, "DIR"},
    {"--trace", "", false, ""},
    {"--force", "", false, ""},
};

constexpr int64_t kMaxRuns = 100000;
// RunOne()'s answer when a stop signal ended the run (never an exit code).
constexpr int kExitStopped = -1;
constexpr int kStderrTailLines = 20;
constexpr std::streamoff kStderrTailBytes = 8192;

struct Options {
  int64_t runs = 0;
  std::string out;
  bool trace = false;
  bool force = false;
};

// One series of runs: `run` makes one, `ab` two.
struct Series {
  std::string label;  // "run", "base", "cand"
  std::vector<std::string> argv;
  RunFiles files;
  std::vector<double> seconds;
};

// What a failed run was, for the message.
struct FailedRun {
  const Series& series;
  int64_t run;
  int64_t runs;
  std::string what;  // "exited with status 3", "wrote no summary ..."
};

// Where traces go when --trace is off: the session always writes one, so it
// is written here and the directory is removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::error_code error;
    std::string pattern =
        (std::filesystem::temp_directory_path(error) / "spanprof-run-XXXXXX")
            .string();
    if (!error && mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The words before the first `--` are flags, the words after it the
// command(s).
struct CommandLine {
  std::vector<std::string> flags;
  std::vector<std::string> command;
  bool has_separator = false;
};

CommandLine SplitAtSeparator(const std::vector<std::string>& args) {
  CommandLine line;
  for (const std::string& arg : args) {
    if (!line.has_separator && arg == "--") {
      line.has_separator = true;
    } else {
      (line.has_separator ? line.command : line.flags).push_back(arg);
    }
  }
  return line;
}

absl::StatusOr<int64_t> ParseRuns(const std::optional<std::string>& text) {
  if (!text.has_value()) return absl::InvalidArgumentError("missing --runs N");
  absl::StatusOr<int64_t> runs = ParseNonNegativeInt("--runs", *text);
  if (!runs.ok()) return runs.status();
  if (*runs < 1 || *runs > kMaxRuns) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--runs: expected 1 to %d runs, got %d", kMaxRuns, *runs));
  }
  return runs;
}

absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& words) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(words, kFlags);
  if (!flags.ok()) return flags.status();
  if (!flags->positionals.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", flags->positionals.front(),
                     "\" (the program and its arguments go after --)"));
  }
  Options options;
  absl::StatusOr<int64_t> runs = ParseRuns(flags->Value("--runs"));
  if (!runs.ok()) return runs.status();
  options.runs = *runs;
  options.out = flags->Value("--out").value_or("");
  if (!flags->Value("--out").has_value()) {
    return absl::InvalidArgumentError("missing --out DIR");
  }
  if (options.out.empty()) {
    return absl::InvalidArgumentError("--out: the directory name is empty");
  }
  options.trace = flags->Has("--trace");
  options.force = flags->Has("--force");
  return options;
}

std::string FormatSeconds(double seconds) {
  return absl::StrFormat("%.2f s", seconds);
}

// The last lines of the file at `path` (at most kStderrTailLines, from its
// last kStderrTailBytes), each indented.
std::string Tail(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : 0;
  const std::streamoff from =
      std::max<std::streamoff>(0, size - kStderrTailBytes);
  in.seekg(from);
  std::string text(static_cast<size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (from > 0 && !lines.empty()) lines.erase(lines.begin());  // partial
  const size_t keep = std::min<size_t>(lines.size(), kStderrTailLines);
  std::string out;
  for (size_t i = lines.size() - keep; i < lines.size(); ++i) {
    absl::StrAppend(&out, "  | ", lines[i], "\n");
  }
  return out;
}

int ReportFailedRun(const CommandIo& io, std::string_view command,
                    const FailedRun& failed) {
  const Series& series = failed.series;
  const std::string stderr_path = series.files.Stderr(failed.run);
  io.err << io.program << " " << command << ": " << series.label << " "
         << failed.run << "/" << failed.runs
         << " failed: " << ShellQuote(series.argv) << " " << failed.what
         << "\n";
  const std::string tail = Tail(stderr_path);
  if (tail.empty()) {
    io.err << "its stderr (" << stderr_path << ") is empty\n";
  } else {
    io.err << "last lines of its stderr (" << stderr_path << "):\n" << tail;
  }
  io.err << "stopped: no further run was started; the files of the runs "
            "made so far are in "
         << series.files.dir() << "\n";
  return kExitRegression;
}

std::vector<std::pair<std::string, std::string>> RunEnvironment(
    const Series& series, int64_t run, const Options& options,
    const ScratchDir& scratch) {
  const std::string trace =
      options.trace
          ? series.files.Trace(run)
          : absl::StrCat(scratch.path(), "/", series.label, ".trace.json");
  return {{"SPANPROF", "1"},
          {"SPANPROF_SUMMARY_OUT", series.files.Summary(run)},
          {"SPANPROF_OUT", trace}};
}

// Checks what run `run` wrote: an error message, or a note for the progress
// line ("" or " (incomplete: ...)").
absl::StatusOr<std::string> CheckSummaries(const Series& series, int64_t run) {
  const std::vector<std::string> paths = series.files.SummariesOf(run);
  if (paths.empty()) {
    return absl::NotFoundError(
        absl::StrCat("exited with status 0 but wrote no summary (expected ",
                     series.files.Summary(run),
                     "; does the program run a spanprof session, e.g. "
                     "spanprof::ProfileFromEnvironment?)"));
  }
  std::string note;
  for (const std::string& path : paths) {
    absl::StatusOr<analysis::Summary> summary = analysis::ReadSummary(path);
    if (!summary.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "wrote an invalid summary: ", summary.status().message()));
    }
    if (!summary->complete && note.empty()) {
      note = absl::StrFormat(
          " (summary incomplete: %d dropped, %d unfinished events; compare "
          "needs --allow-incomplete)",
          summary->dropped_events, summary->unfinished_events);
    }
  }
  if (paths.size() > 1) {
    note +=
        absl::StrFormat(" (%d summaries: one per saved cycle)", paths.size());
  }
  return note;
}

// Removes what the stopped run `run` of `series` may have written (its
// summaries, its trace and the trace's stream), so that the directory holds
// completed runs only; its logs stay, for the reader who wants to see how far
// it got.
void RemoveStoppedRun(const Series& series, int64_t run) {
  const std::string prefix = series.files.Name(run) + ".";
  for (const std::string& dir : {series.files.dir(), series.files.TraceDir()}) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      if (entry.path().filename().string().rfind(prefix, 0) != 0) continue;
      std::error_code ignored;
      std::filesystem::remove(entry.path(), ignored);
    }
  }
}

// Says that a stop signal ended the command and what was kept; returns the
// exit code of a process ended by that signal (128 + its number).
int ReportStop(const std::vector<Series>& all, int signal, bool killed,
               const CommandIo& io, std::string_view command) {
  io.err << io.program << " " << command << ": stopped by "
         << SignalName(signal)
         << (killed ? "; the running program's process group was killed"
                    : " before the next run started");
  for (const Series& series : all) {
    io.err << "; " << series.label << ": " << series.seconds.size()
           << (series.seconds.size() == 1 ? " completed run"
                                          : " completed runs")
           << " kept in " << series.files.dir();
  }
  io.err << "\n";
  return 128 + signal;
}

// Runs run `run` of `series`: kExitPass to go on, else the exit code after
// the message.
int RunOne(Series& series, int64_t run, const Options& options,
           const ScratchDir& scratch, StopSignals& stop, const CommandIo& io,
           std::string_view command) {
  absl::StatusOr<ChildExit> exit =
      RunChild({.argv = series.argv,
                .env = RunEnvironment(series, run, options, scratch),
                .stdout_path = series.files.Stdout(run),
                .stderr_path = series.files.Stderr(run)},
               stop);
  if (!exit.ok()) return Failure(io, command, exit.status());
  if (exit->stopped_by != 0) {
    RemoveStoppedRun(series, run);
    return kExitStopped;
  }
  if (!exit->Succeeded()) {
    return ReportFailedRun(io, command,
                           {series, run, options.runs, Describe(*exit)});
  }
  absl::StatusOr<std::string> note = CheckSummaries(series, run);
  if (!note.ok()) {
    return ReportFailedRun(
        io, command,
        {series, run, options.runs, std::string(note.status().message())});
  }
  series.seconds.push_back(exit->seconds);
  io.err << series.label << " " << run << "/" << options.runs << ": "
         << FormatSeconds(exit->seconds) << *note << "\n";
  return kExitPass;
}

void PrintWallTimes(const std::vector<Series>& all, const CommandIo& io) {
  for (const Series& series : all) {
    std::vector<double> seconds = series.seconds;
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[(seconds.size() - 1) / 2];
    io.out << series.label << ": " << seconds.size() << " runs of "
           << ShellQuote(series.argv) << ", wall time median "
           << FormatSeconds(median) << " (min "
           << FormatSeconds(seconds.front()) << ", max "
           << FormatSeconds(seconds.back()) << "); summaries in "
           << series.files.dir() << "/\n";
  }
}

// Checks and prepares every series' directory, then runs them interleaved:
// run 1 of each series in order, then run 2, ... A stop signal (SIGINT,
// SIGTERM, SIGHUP) at any point ends it through this function's return, so
// that the scratch directory is removed; the completed runs stay.
int RunAll(std::vector<Series>& all, const Options& options,
           const CommandIo& io, std::string_view command) {
  StopSignals stop;
  for (const Series& series : all) {
    absl::Status usable = CheckRunDirectory(series.files, options.force);
    if (!usable.ok()) return Failure(io, command, usable);
  }
  for (const Series& series : all) {
    absl::Status ready = ResetRunDirectory(series.files, options.trace);
    if (!ready.ok()) return Failure(io, command, ready);
  }
  const ScratchDir scratch;
  if (!options.trace && scratch.path().empty()) {
    return Failure(io, command,
                   absl::UnavailableError(
                       "cannot create a scratch directory for the traces "
                       "under $TMPDIR (or pass --trace)"));
  }
  for (int64_t run = 1; run <= options.runs; ++run) {
    for (Series& series : all) {
      const bool between_runs = stop.Poll() != 0;
      const int code = between_runs ? kExitStopped
                                    : RunOne(series, run, options, scratch,
                                             stop, io, command);
      if (code == kExitStopped) {
        return ReportStop(all, stop.received(), !between_runs, io, command);
      }
      if (code != kExitPass) return code;
    }
  }
  PrintWallTimes(all, io);
  return kExitPass;
}

}  // namespace

int RunRun(const std::vector<std::string>& args, const CommandIo& io) {
  constexpr std::string_view kCommand = "run";
  const CommandLine line = SplitAtSeparator(args);
  absl::StatusOr<Options> options = ParseOptions(line.flags);
  if (!options.ok()) return UsageError(io, kCommand, options.status());
  if (line.command.empty() || line.command.front().empty()) {
    return UsageError(io, kCommand, "missing -- PROGRAM [ARGS...]");
  }
  std::vector<Series> all;
  all.push_back(
      {"run", line.command, RunFiles(options->out, options->runs), {}});
  return RunAll(all, *options, io, kCommand);
}

int RunAb(const std::vector<std::string>& args, const CommandIo& io) {
  constexpr std::string_view kCommand = "ab";
  const CommandLine line = SplitAtSeparator(args);
  absl::StatusOr<Options> options = ParseOptions(line.flags);
  if (!options.ok()) return UsageError(io, kCommand, options.status());
  const CommandLine sides = SplitAtSeparator(line.command);
  if (sides.flags.empty() || sides.flags.front().empty()) {
    return UsageError(io, kCommand, "missing -- BASE_PROGRAM [ARGS...]");
  }
  if (sides.command.empty() || sides.command.front().empty()) {
    return UsageError(io, kCommand,
                      "missing the candidate: -- BASE_PROGRAM [ARGS...] -- "
                      "CAND_PROGRAM [ARGS...]");
  }
  std::vector<Series> all;
  all.push_back({"base",
                 sides.flags,
                 RunFiles(options->out + "/base", options->runs),
                 {}});
  all.push_back({"cand",
                 sides.command,
                 RunFiles(options->out + "/cand", options->runs),
                 {}});
  const int code = RunAll(all, *options, io, kCommand);
  if (code == kExitPass) {
    io.out << "next: " << io.program << " compare "
           << ShellQuote({all[0].files.dir(), all[1].files.dir()}) << "\n";
  }
  return code;
}

std::vector<FlagSpec> RunFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kFlags), std::end(kFlags));
  return specs;
}

}  // namespace spanprof::cli::internal
