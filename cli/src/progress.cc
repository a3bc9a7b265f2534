#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace spanprof::cli::internal {
namespace {

constexpr std::chrono::milliseconds kShowAfter{1000};
constexpr std::chrono::milliseconds kUpdateEvery{500};

void WriteAll(const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n =
        write(STDERR_FILENO, text.data() + written, text.size() - written);
    if (n <= 0) return;  // a closed terminal: nothing to show progress on
    written += static_cast<size_t>(n);
  }
}

}  // namespace

Progress::Progress(const CommandIo& io, std::string what)
    : what_(std::move(what)) {
  if (&io.err != &std::cerr || isatty(STDERR_FILENO) != 1) return;
  thread_ = std::thread([this] { Show(); });
}

Progress::~Progress() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_changed_.notify_one();
  thread_.join();
}

void Progress::Show() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  if (done_changed_.wait_for(lock, kShowAfter, [this] { return done_; })) {
    return;
  }
  do {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::steady_clock::now() - start);
    // "\r" back to the line's start, "\x1b[K" erases the rest of it.
    WriteAll(absl::StrCat("\rspanprof: ", what_, " ... ", seconds.count(),
                          " s\x1b[K"));
  } while (
      !done_changed_.wait_for(lock, kUpdateEvery, [this] { return done_; }));
  WriteAll("\r\x1b[K");
}

}  // namespace spanprof::cli::internal
