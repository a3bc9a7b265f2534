// child_process.h — run one program to completion, without a shell (private
// to the CLI; used by `spanprof run` and `spanprof ab`).
//
// The program is started with posix_spawnp (so PROGRAM is looked up in PATH
// when it has no '/'), stdin from /dev/null, stdout and stderr to files, and
// the parent's environment with some variables replaced, and waited for;
// the wall time from spawn to reaping is measured here. The child leads a
// process group of its own, so the terminal's Ctrl-C reaches the caller
// only; a stop signal (SIGINT, SIGTERM, SIGHUP) taken while the child runs
// kills that whole group (the child and whatever it started) with SIGKILL,
// so that nothing outlives the caller to write into its files later.
//
// Example:
//
//   StopSignals stop;  // for as long as children are run
//   absl::StatusOr<ChildExit> exit = RunChild({
//       .argv = {"./app", "--fast"},
//       .env = {{"SPANPROF", "1"}},
//       .stdout_path = "logs/run-001.stdout",
//       .stderr_path = "logs/run-001.stderr"}, stop);
//   if (exit.ok() && exit->stopped_by != 0) return 128 + exit->stopped_by;
#ifndef SPANPROF_CLI_SRC_CHILD_PROCESS_H_
#define SPANPROF_CLI_SRC_CHILD_PROCESS_H_

#include <signal.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace spanprof::cli::internal {

// `ChildSpec` is one program to run.
struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is the program (path or PATH name)
  // Set in the child's environment, replacing inherited values.
  std::vector<std::pair<std::string, std::string>> env;
  std::string stdout_path;  // created or truncated
  std::string stderr_path;  // created or truncated
};

// `ChildExit` is how a child ended.
struct ChildExit {
  bool signaled = false;  // killed by a signal (then `code` is the signal)
  int code = 0;           // the exit status, or the signal number
  double seconds = 0;     // wall time from spawn to reaping
  // The stop signal that made the caller kill the child's group, or 0.
  int stopped_by = 0;

  bool Succeeded() const { return stopped_by == 0 && !signaled && code == 0; }
};

// `StopSignals` holds SIGINT, SIGTERM and SIGHUP (and SIGCHLD) blocked for
// its lifetime, so that they are taken only where `RunChild()` waits or
// `Poll()` asks: a stop request is never lost between two runs, and the
// caller ends through its ordinary return path (destructors run, scratch
// files go). The mask is restored at scope exit; a signal still pending then
// takes its usual action. One per thread; not for the hot path.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // `Poll()` takes a pending stop signal without waiting and returns the
  // first one received so far (0 when none).
  int Poll();
  // `Record()` notes `signal` if it is a stop signal and none was noted yet.
  void Record(int signal);
  int received() const { return received_; }
  const sigset_t& waited() const { return waited_; }
  const sigset_t& original() const { return original_; }

 private:
  sigset_t waited_ = {};
  sigset_t original_ = {};
  int received_ = 0;
};

// `RunChild()` runs `spec` and waits for it, or for a stop signal (then the
// child's group is killed, the child reaped and `stopped_by` set). A stop
// signal received before the call starts nothing. An error means the program
// could not be started at all (not found, not executable, an output file
// that cannot be created); the message names the program or the file.
absl::StatusOr<ChildExit> RunChild(const ChildSpec& spec, StopSignals& stop);

// `SignalName()` is "SIGTERM" for 15 (or "signal 15" when unnamed).
std::string SignalName(int signal);

// `Describe()` says how a child ended: "exited with status 3", "was killed
// by signal 11 (Segmentation fault)".
std::string Describe(const ChildExit& exit);

// `ShellQuote()` renders argv as one line a POSIX shell would split back
// into the same words (for messages only; nothing is run through a shell).
std::string ShellQuote(const std::vector<std::string>& argv);

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_CHILD_PROCESS_H_
