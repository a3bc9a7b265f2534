// The memory a session may count on: the cap check at session start uses the
// smallest of physical memory, the cgroup limit and RLIMIT_AS, and says which
// applied; running out of memory at session end is one line on stderr, the
// program's own result still comes back, and no half-written file is left.
// Each case runs in a forked child, where lowering RLIMIT_AS harms no other
// test.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/recording.h"
#include "spanprof/spanprof.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::QuietConfig;
using spanprof::testing::ReadText;
using spanprof::testing::TempDir;

struct ChildResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string err;
};

// Runs `body` in a forked child with stderr going to a file; the child exits
// with `body`'s result.
ChildResult RunInChild(const TempDir& dir, const std::function<int()>& body) {
  const std::string err_path = dir.File("child.stderr");
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(100);
    dup2(fd, STDERR_FILENO);
    close(fd);
    const int code = body();
    std::fflush(stderr);
    _exit(code);
  }
  ChildResult result;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.err = ReadText(err_path);
  return result;
}

// This process's current address-space size (the first field of statm).
uint64_t AddressSpaceBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Lowers RLIMIT_AS to what is mapped now plus `headroom`; returns the limit.
uint64_t LimitAddressSpace(uint64_t headroom) {
  const uint64_t limit = AddressSpaceBytes() + headroom;
  const rlimit lowered = {limit, limit};
  if (setrlimit(RLIMIT_AS, &lowered) != 0) return 0;
  return limit;
}

class MemoryLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef SPANPROF_TEST_SANITIZED
    GTEST_SKIP() << "sanitizers reserve terabytes of address space, so "
                    "RLIMIT_AS cannot be lowered meaningfully";
#endif
    for (const char* name : {"SPANPROF", "SPANPROF_MAX_EVENTS",
                             "SPANPROF_OVERFLOW", "SPANPROF_QUIET"}) {
      unsetenv(name);
    }
  }
  TempDir dir_;
};

TEST_F(MemoryLimitTest, ProcessMemoryLimitIsTheSmallestAndNamed) {
  const MemoryLimit limit = ProcessMemoryLimit();
  EXPECT_LE(limit.bytes, PhysicalMemoryBytes());
  EXPECT_FALSE(limit.source.empty());
  const ChildResult child = RunInChild(dir_, [] {
    const uint64_t lowered = LimitAddressSpace(uint64_t{64} << 20);
    const MemoryLimit now = ProcessMemoryLimit();
    std::fprintf(stderr, "%s\n", now.source.c_str());
    return lowered != 0 && now.bytes == lowered ? 0 : 1;
  });
  EXPECT_EQ(child.exit_code, 0) << child.err;
  EXPECT_EQ(child.err, "the address-space limit (RLIMIT_AS)\n");
}

// A cap that fits physical memory but not RLIMIT_AS is refused, naming
// RLIMIT_AS and the largest cap that fits; that cap itself is accepted.
TEST_F(MemoryLimitTest, TheCapCheckUsesRlimitAs) {
  const ChildResult child = RunInChild(dir_, [] {
    const uint64_t limit = LimitAddressSpace(uint64_t{256} << 20);
    if (limit == 0 || ProcessMemoryLimit().bytes != limit) return 10;
    const uint64_t fits =
        limit / PredictedMemoryBytes(1, OverflowPolicy::kDropNewest);
    setenv("SPANPROF", "1", 1);
    setenv("SPANPROF_MAX_EVENTS", std::to_string(fits + 1).c_str(), 1);
    const absl::StatusOr<Config> refused = ConfigFromEnvironment();
    if (refused.ok()) return 11;
    std::fprintf(stderr, "%s\n",
                 std::string(refused.status().message()).c_str());
    if (std::string(refused.status().message())
            .find("at most " + std::to_string(fits) + " spans") ==
        std::string::npos) {
      return 12;
    }
    const absl::Status started =
        StartRecording(RecordingOptions{.max_events = fits + 1});
    std::fprintf(stderr, "%s\n", std::string(started.message()).c_str());
    setenv("SPANPROF_MAX_EVENTS", std::to_string(fits).c_str(), 1);
    return ConfigFromEnvironment().ok() ? 0 : 13;
  });
  EXPECT_EQ(child.exit_code, 0) << child.err;
  EXPECT_NE(child.err.find("SPANPROF_MAX_EVENTS='"), std::string::npos)
      << child.err;
  EXPECT_NE(child.err.find("fits the address-space limit (RLIMIT_AS)"),
            std::string::npos)
      << child.err;
  EXPECT_NE(child.err.find("more than the address-space limit (RLIMIT_AS)"),
            std::string::npos)
      << child.err;  // StartRecording's own message
}

// Session end needs memory for the collected capture; with none left, the
// session says so in one line, writes nothing half, and Profile() returns
// the body's result as if the session had not been there. The child is a
// fresh run of this test binary (the "threadsafe" death-test style), not a
// fork: a fork of a process that ran other sessions inherits their state.
TEST_F(MemoryLimitTest, OutOfMemoryAtSessionEndIsOneLineAndTheResultReturns) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Config config = QuietConfig(dir_);
  config.recording.max_events = 1'100'000;
  // No helper thread: its stack and malloc arena would be given back when
  // it stops at session end, leaving room for the capture.
  config.stream_path = "off";
  config.signals = false;
  std::filesystem::create_directories(dir_.File("out"));
  const auto session = [&config] {
    const int result = Profile(config, "oom.root", [] {
      for (int i = 0; i < 1'000'000; ++i) {
        SPANPROF_SCOPE("oom.span");
      }
      // The spans' records are in the rings already; collecting them needs
      // one block of 56 MB for the spans alone (beyond malloc's 32 MiB mmap
      // threshold, so no free heap memory can serve it), and only 4 MiB are
      // left.
      return LimitAddressSpace(uint64_t{4} << 20) != 0 ? 7 : 20;
    });
    // Nothing half-written: no trace, no summary, no temporary file.
    if (!std::filesystem::is_empty(
            std::filesystem::path(config.summary_path).parent_path())) {
      std::fprintf(stderr, "a file was left in the output directory\n");
      return 21;
    }
    return result;
  };
  EXPECT_EXIT(std::exit(session()), ::testing::ExitedWithCode(7),
              "^spanprof: out of memory at session end while [^\n]* "
              "\\(std::bad_alloc\\); outputs written before are complete, "
              "the rest were not written\n$");
}

}  // namespace
}  // namespace spanprof
