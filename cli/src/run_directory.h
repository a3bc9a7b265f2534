// run_directory.h — where `spanprof run` and `spanprof ab` put the files of
// a series of runs (private to the CLI).
//
// One series is one directory, the unit `spanprof compare` reads as one
// side:
//
//   DIR/run-001.summary.json      the summary of run 1 (SPANPROF_SUMMARY_OUT)
//   DIR/traces/run-001.trace.json its trace, with --trace (SPANPROF_OUT)
//   DIR/logs/run-001.stdout       what the program wrote on stdout
//   DIR/logs/run-001.stderr       ... and on stderr
//
// Run numbers are zero-padded to at least 3 digits (more when the series is
// longer), so the names sort in run order.
#ifndef SPANPROF_CLI_SRC_RUN_DIRECTORY_H_
#define SPANPROF_CLI_SRC_RUN_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace spanprof::cli::internal {

// `RunFiles` names the files of a series of `runs` runs in `dir`.
class RunFiles {
 public:
  RunFiles(std::string dir, int64_t runs);

  const std::string& dir() const { return dir_; }
  std::string Name(int64_t run) const;  // "run-007"
  std::string Summary(int64_t run) const;
  std::string Trace(int64_t run) const;
  std::string PerfettoTrace(int64_t run) const;  // --keep-traces
  std::string Stdout(int64_t run) const;
  std::string Stderr(int64_t run) const;
  std::string TraceDir() const;
  std::string LogDir() const;

  // `SummariesOf()` lists the summaries run `run` wrote: its summary path,
  // or, when a scheduled program saved several cycles, the `-cycleN`
  // variants of it (`run-001.summary-cycle0.json`, ...). Sorted.
  std::vector<std::string> SummariesOf(int64_t run) const;

 private:
  std::string dir_;
  int width_;
};

// `CheckRunDirectory()` says whether `files.dir()` may receive a new series
// (it reads, never writes). A missing directory may. One holding the files
// of an earlier series (run-*.summary*.json directly in it, logs/run-*,
// traces/run-*) may only with `force`. One holding any other .json or
// .json.gz file may not, even with `force`: `spanprof compare DIR` would
// count a summary among them as one more run, and spanprof never deletes
// what it did not write.
absl::Status CheckRunDirectory(const RunFiles& files, bool force);

// `ResetRunDirectory()` creates `files.dir()` and logs/ (and traces/ when
// `trace`), deleting the files of an earlier series; call it after
// `CheckRunDirectory()` accepted the directory.
absl::Status ResetRunDirectory(const RunFiles& files, bool trace);

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_RUN_DIRECTORY_H_
