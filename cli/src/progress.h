// progress.h — a progress line on the terminal for work that takes a while
// (private to the CLI).
//
// `Progress` shows "spanprof: reading big.json ... 3 s" on standard error
// once its work has taken longer than a second, updates it every half
// second, and erases it when the work is done. Only when standard error is
// a terminal: a pipe, a file or a CI log never gets one (it would be noise
// made of carriage returns). The line is written with write(2) on file
// descriptor 2 from a thread of its own, so it shares no stream with the
// command.
//
// Example:
//
//   {
//     Progress progress(io, "reading " + path);
//     text = analysis::ReadFile(path);
//   }  // the line, if shown, is erased here
#ifndef SPANPROF_CLI_SRC_PROGRESS_H_
#define SPANPROF_CLI_SRC_PROGRESS_H_

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "commands.h"

namespace spanprof::cli::internal {

class Progress {
 public:
  // `what` says what is being done ("reading trace.json"). Shows nothing
  // unless `io.err` is std::cerr and standard error is a terminal.
  Progress(const CommandIo& io, std::string what);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  void Show();

  std::string what_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_PROGRESS_H_
