// The progress line of slow reads: shown on a terminal, never in a pipe.
// The slow read is real: `spanprof report` reads a FIFO whose writer holds
// the data back for longer than the one second after which progress shows.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Writes `text` into the FIFO at `path` once a reader has opened it and
// `delay` has passed. Gives up (failing the test) when no reader comes
// within 60 s, so that a child that died early fails the test, not hangs it.
void FeedSlowly(const std::string& path, const std::string& text,
                std::chrono::milliseconds delay) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int fd = -1;
  while ((fd = open(path.c_str(), O_WRONLY | O_NONBLOCK)) < 0 &&
         errno == ENXIO && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(fd, 0) << "no reader opened " << path;
  fcntl(fd, F_SETFL, 0);  // blocking writes from here
  std::this_thread::sleep_for(delay);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    ASSERT_GT(n, 0);
    written += static_cast<size_t>(n);
  }
  close(fd);
}

class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string file = dir_.File("summary.json");
    ASSERT_TRUE(analysis::WriteSummary(
                    analysis::Summarize(testing::RichCapture()), file)
                    .ok());
    summary_text_ = testing::ReadText(file);
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
  }
  // Runs `spanprof report FIFO` with stderr at `err_path`, feeding the FIFO
  // after `delay`; its exit code and stdout (stderr is the caller's to
  // read: a terminal or a pipe, not a file).
  ProcessResult Report(const std::string& err_path,
                       std::chrono::milliseconds delay) {
    const std::string out_path = dir_.File("stdout");
    const pid_t pid = testing::SpawnProcess(
        {SPANPROF_TEST_BIN_DIR "/spanprof", "report", fifo_}, {}, "", out_path,
        err_path);
    if (pid <= 0) {
      ADD_FAILURE() << "cannot start spanprof with stderr " << err_path;
      return {};
    }
    FeedSlowly(fifo_, summary_text_, delay);
    int status = 0;
    waitpid(pid, &status, 0);
    ProcessResult result;
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    result.out = testing::ReadText(out_path);
    return result;
  }

  TempDir dir_;
  std::string fifo_ = dir_.File("input.json");
  std::string summary_text_;
};

TEST_F(ProgressTest, APipeGetsNoProgressLine) {
  // stderr is a pipe (a FIFO read by a thread of the test).
  const std::string err_fifo = dir_.File("stderr.fifo");
  ASSERT_EQ(mkfifo(err_fifo.c_str(), 0600), 0);
  std::string err;
  std::thread reader([&] {
    const int fd = open(err_fifo.c_str(), O_RDONLY);
    char buffer[4096];
    ssize_t n = 0;
    while (fd >= 0 && (n = read(fd, buffer, sizeof buffer)) > 0) {
      err.append(buffer, static_cast<size_t>(n));
    }
    if (fd >= 0) close(fd);
  });
  const ProcessResult r = Report(err_fifo, std::chrono::milliseconds(1500));
  if (r.exit_code < 0) {  // never started: release the reader's open()
    const int writer = open(err_fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) close(writer);
  }
  reader.join();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("\napp.run"));
  EXPECT_THAT(err, IsEmpty());
}

TEST_F(ProgressTest, ATerminalSeesTheSlowReadAndTheLineIsErased) {
  // stderr is a terminal: the other side of a pseudo-terminal made here,
  // opened through the master (TIOCGPTPEER: no /dev/pts path needed) and
  // handed to the child by /proc/self/fd (inherited: no close-on-exec).
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(unlockpt(master), 0);
  const int peer = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
  ASSERT_GE(peer, 0);
  const ProcessResult r = Report("/proc/self/fd/" + std::to_string(peer),
                                 std::chrono::milliseconds(2500));
  close(peer);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("\napp.run"));
  // What the terminal received (the child has exited: read what is there).
  fcntl(master, F_SETFL, O_NONBLOCK);
  std::string screen;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(master, buffer, sizeof buffer)) > 0) {
    screen.append(buffer, static_cast<size_t>(n));
  }
  close(master);
  EXPECT_THAT(screen, HasSubstr("\rspanprof: reading " + fifo_ + " ... "));
  // Erased at the end: the last thing written clears the line.
  EXPECT_THAT(screen, ::testing::EndsWith("\r\x1b[K"));
}

}  // namespace
}  // namespace spanprof
