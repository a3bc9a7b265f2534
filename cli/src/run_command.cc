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
    {"--runs", "-n", true, "N"},      {"--out", "-o", true, "DIR"},
    {"--keep-traces", "", false, ""}, {"--trace", "", false, ""},
    {"--force", "", false, ""},       {"--warmup", "", true, "N"},
    {"--prepare", "", true, "CMD"},
};

constexpr int64_t kMaxRuns = 100000;
// RunOne()'s answer when a stop signal ended the run (never an exit code).
constexpr int kExitStopped = -1;
constexpr int kStderrTailLines = 20;
constexpr std::streamoff kStderrTailBytes = 8192;

struct Options {
  int64_t runs = 0;
  std::string out;
  bool trace = false;        // --trace: JSON traces in DIR/traces/
  bool keep_traces = false;  // --keep-traces: .pftrace traces there
  bool force = false;
  int64_t warmup = 0;  // runs of each side before the counted ones
  std::optional<std::string> prepare;  // run by /bin/sh before every run
};

// One run of a series: a counted one (1..runs) or a warm-up (1..warmup).
struct Slot {
  int64_t index = 0;
  int64_t of = 0;
  bool warmup = false;
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
  std::string run;                // "base 3/10", "base warm-up 1/2"
  std::vector<std::string> argv;  // what was run
  std::string what;  // "exited with status 3", "wrote no summary ..."
  std::string stderr_path;
  std::string dir;  // where the completed runs are
};

std::string SlotName(const Series& series, const Slot& slot) {
  return absl::StrCat(series.label, slot.warmup ? " warm-up " : " ", slot.index,
                      "/", slot.of);
}

std::string WarmupLog(const Series& series, int64_t index,
                      std::string_view stream) {
  return absl::StrFormat("%s/warmup-%03d.%s", series.files.LogDir(), index,
                         stream);
}

// Scratch space removed at the end: the session's crash-safe stream while a
// run records, and the summaries of warm-up runs.
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
  options.keep_traces = flags->Has("--keep-traces");
  if (options.trace && options.keep_traces) {
    return absl::InvalidArgumentError(
        "--trace (JSON traces) and --keep-traces (.pftrace) exclude each "
        "other");
  }
  options.force = flags->Has("--force");
  if (const std::optional<std::string> warmup = flags->Value("--warmup")) {
    absl::StatusOr<int64_t> n = ParseNonNegativeInt("--warmup", *warmup);
    if (!n.ok()) return n.status();
    if (*n > kMaxRuns) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--warmup: expected 0 to %d runs, got %d", kMaxRuns, *n));
    }
    options.warmup = *n;
  }
  options.prepare = flags->Value("--prepare");
  if (options.prepare.has_value() && options.prepare->empty()) {
    return absl::InvalidArgumentError("--prepare: the command is empty");
  }
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
  const std::string& stderr_path = failed.stderr_path;
  io.err << io.program << " " << command << ": " << failed.run
         << " failed: " << ShellQuote(failed.argv) << " " << failed.what
         << "\n";
  const std::string tail = Tail(stderr_path);
  if (tail.empty()) {
    io.err << "its stderr (" << stderr_path << ") is empty\n";
  } else {
    io.err << "last lines of its stderr (" << stderr_path << "):\n" << tail;
  }
  io.err << "stopped: no further run was started; the files of the runs "
            "made so far are in "
         << failed.dir << "\n";
  return kExitRegression;
}

// A counted run writes its summary in DIR and its trace only when asked
// (writing a trace costs most of a large capture's session end); a warm-up
// writes its summary to the scratch directory, to be checked and dropped.
// The crash-safe stream always goes to the scratch directory.
std::vector<std::pair<std::string, std::string>> RunEnvironment(
    const Series& series, const Slot& slot, const Options& options,
    const ScratchDir& scratch) {
  std::string trace = "off";
  if (!slot.warmup && options.trace) trace = series.files.Trace(slot.index);
  if (!slot.warmup && options.keep_traces) {
    trace = series.files.PerfettoTrace(slot.index);
  }
  const std::string summary =
      slot.warmup ? absl::StrCat(scratch.path(), "/", series.label,
                                 ".warmup.summary.json")
                  : series.files.Summary(slot.index);
  return {{"SPANPROF", "1"},
          {"SPANPROF_SUMMARY_OUT", summary},
          {"SPANPROF_OUT", trace},
          {"SPANPROF_STREAM",
           absl::StrCat(scratch.path(), "/", series.label, ".stream")}};
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

// Runs the --prepare command (through /bin/sh -c, as typed) before `slot`
// of `series`: kExitPass to go on, else the exit code after the message.
int RunPrepare(const Series& series, const Slot& slot, const Options& options,
               StopSignals& stop, const CommandIo& io,
               std::string_view command) {
  if (!options.prepare.has_value()) return kExitPass;
  const std::vector<std::string> argv = {"/bin/sh", "-c", *options.prepare};
  const std::string log = series.files.LogDir() + "/prepare";
  absl::StatusOr<ChildExit> exit = RunChild({.argv = argv,
                                             .env = {},
                                             .stdout_path = log + ".stdout",
                                             .stderr_path = log + ".stderr"},
                                            stop);
  if (!exit.ok()) return Failure(io, command, exit.status());
  if (exit->stopped_by != 0) return kExitStopped;
  if (exit->Succeeded()) return kExitPass;
  return ReportFailedRun(
      io, command,
      {absl::StrCat("--prepare before ", SlotName(series, slot)), argv,
       Describe(*exit), log + ".stderr", series.files.dir()});
}

// Runs `slot` of `series` (after --prepare): kExitPass to go on, else the
// exit code after the message. A warm-up must exit 0; a counted run must
// also write a valid summary.
int RunOne(Series& series, const Slot& slot, const Options& options,
           const ScratchDir& scratch, StopSignals& stop, const CommandIo& io,
           std::string_view command) {
  if (const int prepared = RunPrepare(series, slot, options, stop, io, command);
      prepared != kExitPass) {
    return prepared;
  }
  const int64_t run = slot.index;
  const std::string stdout_path =
      slot.warmup ? WarmupLog(series, run, "stdout") : series.files.Stdout(run);
  const std::string stderr_path =
      slot.warmup ? WarmupLog(series, run, "stderr") : series.files.Stderr(run);
  absl::StatusOr<ChildExit> exit =
      RunChild({.argv = series.argv,
                .env = RunEnvironment(series, slot, options, scratch),
                .stdout_path = stdout_path,
                .stderr_path = stderr_path},
               stop);
  if (!exit.ok()) return Failure(io, command, exit.status());
  if (exit->stopped_by != 0) {
    if (!slot.warmup) RemoveStoppedRun(series, run);
    return kExitStopped;
  }
  FailedRun failed{SlotName(series, slot), series.argv, "", stderr_path,
                   series.files.dir()};
  if (!exit->Succeeded()) {
    failed.what = Describe(*exit);
    return ReportFailedRun(io, command, failed);
  }
  absl::StatusOr<std::string> note = std::string(" (not counted)");
  if (!slot.warmup) note = CheckSummaries(series, run);
  if (!note.ok()) {
    failed.what = std::string(note.status().message());
    return ReportFailedRun(io, command, failed);
  }
  if (!slot.warmup) series.seconds.push_back(exit->seconds);
  io.err << SlotName(series, slot) << ": " << FormatSeconds(exit->seconds)
         << *note << "\n";
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
    absl::Status ready =
        ResetRunDirectory(series.files, options.trace || options.keep_traces);
    if (!ready.ok()) return Failure(io, command, ready);
  }
  const ScratchDir scratch;
  if (scratch.path().empty()) {
    return Failure(io, command,
                   absl::UnavailableError(
                       "cannot create a scratch directory under $TMPDIR"));
  }
  // The warm-ups first (interleaved as the counted runs are), then the runs.
  std::vector<Slot> slots;
  for (int64_t w = 1; w <= options.warmup; ++w) {
    slots.push_back({w, options.warmup, true});
  }
  for (int64_t run = 1; run <= options.runs; ++run) {
    slots.push_back({run, options.runs, false});
  }
  for (const Slot& slot : slots) {
    for (Series& series : all) {
      const bool between_runs = stop.Poll() != 0;
      const int code = between_runs ? kExitStopped
                                    : RunOne(series, slot, options, scratch,
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

// The root span's row: of the rows both sides have, the one with the
// largest baseline total (a root's inclusive time holds every other span of
// its thread).
const analysis::ComparisonRow* RootRow(const analysis::Comparison& runs) {
  const analysis::ComparisonRow* root = nullptr;
  for (const analysis::ComparisonRow& row : runs.rows) {
    if (!row.base.has_value() || !row.candidate.has_value() || *row.base <= 0) {
      continue;
    }
    if (root == nullptr || *row.base > *root->base) root = &row;
  }
  return root;
}

// "1.08": cand over base when cand − base = `shift`.
std::string Ratio(int64_t base, double shift) {
  return absl::StrFormat(
      "%.2f", (static_cast<double>(base) + shift) / static_cast<double>(base));
}

// The closing line of `ab`: the root span's total time, cand against base,
// with the gate's statistics over the runs (`spanprof compare` of the two
// directories: the Hodges-Lehmann shift and its Mann-Whitney interval) and
// no tolerance, so that any shift whose interval excludes zero is named.
void PrintAbVerdict(const std::vector<Series>& all, const CommandIo& io) {
  constexpr std::string_view kTimes = "\u00d7";
  analysis::ComparePolicy policy;
  policy.metric = analysis::CompareMetric::kTotalNs;
  absl::StatusOr<std::optional<analysis::Comparison>> runs =
      CompareRunsOf(all[0].files.dir(), all[1].files.dir(), policy,
                    /*relative_tolerance_given=*/true, io,
                    /*absolute_tolerance_given=*/true);
  const analysis::ComparisonRow* root =
      runs.ok() && runs->has_value() ? RootRow(**runs) : nullptr;
  if (root == nullptr) {
    io.out << "no verdict: "
           << (runs.ok() ? std::string("the two sides share no span")
                         : std::string(runs.status().message()))
           << "\n";
    return;
  }
  const std::string over = root->runs_baseline == root->runs_candidate
                               ? absl::StrCat(root->runs_baseline, " runs")
                               : absl::StrCat(root->runs_baseline, " and ",
                                              root->runs_candidate, " runs");
  const int64_t base = *root->base;
  const double shift =
      root->shift.value_or(static_cast<double>(*root->candidate - base));
  const std::string interval =
      root->delta_ci_low.has_value() && root->delta_ci_high.has_value()
          ? absl::StrCat(" [", Ratio(base, *root->delta_ci_low), ", ",
                         Ratio(base, *root->delta_ci_high), "]")
          : "";
  const bool differs = root->status == analysis::RowStatus::kRegressed ||
                       root->status == analysis::RowStatus::kImproved;
  if (differs) {
    io.out << "cand is " << Ratio(base, shift) << kTimes << interval
           << " the time of base (root span, median over " << over << ")\n";
  } else {
    io.out << "no difference detected (root span: cand is "
           << Ratio(base, shift) << kTimes << interval
           << " the time of base, median over " << over << ")\n";
  }
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
    PrintAbVerdict(all, io);
  }
  return code;
}

std::vector<FlagSpec> RunFlagSpecs() {
  std::vector<FlagSpec> specs(std::begin(kFlags), std::end(kFlags));
  return specs;
}

}  // namespace spanprof::cli::internal
