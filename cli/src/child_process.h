// child_process.h — run one program to completion, without a shell (private
// to the CLI; used by `spanprof run` and `spanprof ab`).
//
// The program is started with posix_spawnp (so PROGRAM is looked up in PATH
// when it has no '/'), stdin from /dev/null, stdout and stderr to files, and
// the parent's environment with some variables replaced, and waited for;
// the wall time from spawn to reaping is measured here. While it runs, the
// calling process ignores SIGINT and SIGQUIT (as system(3) does): Ctrl-C
// ends the child, and the caller reports the run as killed by SIGINT.
//
// Example:
//
//   absl::StatusOr<ChildExit> exit = RunChild({
//       .argv = {"./app", "--fast"},
//       .env = {{"SPANPROF", "1"}},
//       .stdout_path = "logs/run-001.stdout",
//       .stderr_path = "logs/run-001.stderr"});
//   if (exit.ok() && !exit->Succeeded()) std::cerr << Describe(*exit);
#ifndef SPANPROF_CLI_SRC_CHILD_PROCESS_H_
#define SPANPROF_CLI_SRC_CHILD_PROCESS_H_

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

  bool Succeeded() const { return !signaled && code == 0; }
};

// `RunChild()` runs `spec` and waits for it. An error means the program could
// not be started at all (not found, not executable, an output file that
// cannot be created); the message names the program or the file.
absl::StatusOr<ChildExit> RunChild(const ChildSpec& spec);

// `Describe()` says how a child ended: "exited with status 3", "was killed
// by signal 11 (Segmentation fault)".
std::string Describe(const ChildExit& exit);

// `ShellQuote()` renders argv as one line a POSIX shell would split back
// into the same words (for messages only; nothing is run through a shell).
std::string ShellQuote(const std::vector<std::string>& argv);

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_CHILD_PROCESS_H_
