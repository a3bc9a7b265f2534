#include "spanprof/analysis/file_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

namespace spanprof::analysis {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("spanprof_file_io_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(dir_, fs::perms::owner_all, ignored);
    fs::remove_all(dir_, ignored);
  }

  static std::string Slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  // Decompresses with zlib's gz* file API, independently of ReadFile().
  static std::string Gunzip(const fs::path& path) {
    gzFile file = gzopen(path.c_str(), "rb");
    EXPECT_NE(file, nullptr);
    std::string out;
    char buffer[4096];
    int n;
    while ((n = gzread(file, buffer, sizeof(buffer))) > 0) {
      out.append(buffer, static_cast<size_t>(n));
    }
    gzclose(file);
    return out;
  }

  size_t EntriesIn(const fs::path& dir) {
    size_t count = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) {
      ++count;
    }
    return count;
  }

  fs::path dir_;
};

TEST_F(FileIoTest, CreatesParentDirectories) {
  const fs::path path = dir_ / "a" / "b" / "c" / "out.json";
  ASSERT_TRUE(WriteFileAtomically(path.string(), "{}\n").ok());
  EXPECT_EQ(Slurp(path), "{}\n");
}

TEST_F(FileIoTest, ReplacesAnExistingFileAndLeavesNoTemporaryFile) {
  const fs::path path = dir_ / "out.json";
  ASSERT_TRUE(WriteFileAtomically(path.string(), "old old old").ok());
  ASSERT_TRUE(WriteFileAtomically(path.string(), "new").ok());
  EXPECT_EQ(Slurp(path), "new");
  EXPECT_EQ(EntriesIn(dir_), 1u);
}

// An output of many MiB is handed to the disk as it is written (8 MiB at a
// time, so that the commit's fsync waits for the tail only): every byte
// comes back, in order, and the target holds exactly them.
TEST_F(FileIoTest, ALargeOutputComesBackWhole) {
  const fs::path path = dir_ / "large.bin";
  std::string bytes((size_t{20} << 20) + 3, '\0');
  std::mt19937_64 random(7);
  for (char& c : bytes) c = static_cast<char>(random() & 0xFF);
  ASSERT_TRUE(WriteFileAtomically(path.string(), bytes).ok());
  EXPECT_EQ(Slurp(path), bytes);
  EXPECT_EQ(EntriesIn(dir_), 1u);
}

TEST_F(FileIoTest, WritesRelativePathsInTheCurrentDirectory) {
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  const absl::Status status = WriteFileAtomically("plain.json", "x");
  fs::current_path(cwd);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Slurp(dir_ / "plain.json"), "x");
}

// Writes `path` atomically in a child process that gave up root for
// `uid` (root ignores directory permissions); its status message, empty when
// the write succeeded, or a line saying why the child could not try.
std::string WriteAs(uid_t uid, const fs::path& path, std::string_view bytes) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    std::string message;
    if (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) {
      message = "child: setresuid failed";
    } else if (::access(path.parent_path().c_str(), X_OK) != 0) {
      message =
          "child: the directory is not reachable as uid " + std::to_string(uid);
    } else {
      message =
          std::string(WriteFileAtomically(path.string(), bytes).message());
    }
    const ssize_t ignored = ::write(fds[1], message.data(), message.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string message;
  char buffer[512];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buffer, sizeof(buffer))) > 0) {
    message.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return message;
}

// A directory its writer may not write to (mode r-x): the write fails,
// naming the path, and the old file stays whole with nothing beside it. As
// root (CI), the directories are given to nobody's uid and the write runs in
// a child that became nobody, so the check runs there too.
TEST_F(FileIoTest, LeavesTheOldFileIntactWhenTheDirectoryIsUnwritable) {
  const fs::path locked = dir_ / "locked";
  fs::create_directories(locked);
  const fs::path path = locked / "baseline.json";
  ASSERT_TRUE(WriteFileAtomically(path.string(), "baseline").ok());
  const bool root = ::geteuid() == 0;
  constexpr uid_t kNobody = 65534;
  if (root) {
    ASSERT_EQ(::chown(dir_.c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chown(locked.c_str(), kNobody, kNobody), 0);
  }
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  std::string message;
  if (root) {
    message = WriteAs(kNobody, path, "replacement that must not land");
  } else {
    message = std::string(
        WriteFileAtomically(path.string(), "replacement that must not land")
            .message());
  }
  fs::permissions(locked, fs::perms::owner_all);
  EXPECT_THAT(message, Not(HasSubstr("child:")));
  ASSERT_FALSE(message.empty()) << "the write succeeded";
  EXPECT_THAT(message, HasSubstr(path.string()));
  EXPECT_EQ(Slurp(path), "baseline");
  EXPECT_EQ(EntriesIn(locked), 1u);
}

TEST_F(FileIoTest, LeavesTheOldFileIntactWhenTheWriteFails) {
  // A file size limit makes write() fail with EFBIG, even for root.
  const fs::path path = dir_ / "baseline.json";
  ASSERT_TRUE(WriteFileAtomically(path.string(), "baseline").ok());
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status status =
      WriteFileAtomically(path.string(), std::string(4096, 'x'));
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr(path.string()));
  EXPECT_EQ(Slurp(path), "baseline");
  EXPECT_EQ(EntriesIn(dir_), 1u) << "the temporary file was not removed";
}

TEST_F(FileIoTest, FailsWithThePathWhenTheTargetIsADirectory) {
  const fs::path path = dir_ / "taken";
  fs::create_directories(path / "inside");
  const absl::Status status = WriteFileAtomically(path.string(), "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr(path.string()));
  EXPECT_TRUE(fs::is_directory(path / "inside"));
  EXPECT_EQ(EntriesIn(dir_), 1u);
}

TEST_F(FileIoTest, FailsWhenAParentIsAFile) {
  const fs::path file = dir_ / "file";
  ASSERT_TRUE(WriteFileAtomically(file.string(), "x").ok());
  const absl::Status status =
      WriteFileAtomically((file / "child.json").string(), "y");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("child.json"));
}

TEST_F(FileIoTest, ReadFileReadsPlainFiles) {
  const fs::path path = dir_ / "plain.json";
  std::string bytes = "{\"a\":1}";
  bytes.push_back('\0');
  bytes += "tail";
  ASSERT_TRUE(WriteFileAtomically(path.string(), bytes).ok());
  const absl::StatusOr<std::string> back = ReadFile(path.string());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, bytes);
}

TEST_F(FileIoTest, ReadFileOfAMissingFileNamesIt) {
  const std::string path = (dir_ / "missing.json").string();
  const absl::StatusOr<std::string> back = ReadFile(path);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(back.status().message()), HasSubstr(path));
}

TEST_F(FileIoTest, GzipOutputDecompressesToTheSameBytes) {
  std::string json = "{\"traceEvents\":[";
  std::mt19937 rng(1);
  for (int i = 0; i < 20000; ++i) {
    json += "{\"ph\":\"X\",\"ts\":" + std::to_string(rng() % 100000) + "},";
  }
  json += "{}]}\n";
  const absl::StatusOr<std::string> compressed = GzipCompress(json);
  ASSERT_TRUE(compressed.ok());
  ASSERT_GE(compressed->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[1]), 0x8b);
  EXPECT_LT(compressed->size(), json.size() / 2);

  const fs::path path = dir_ / "trace.json.gz";
  ASSERT_TRUE(WriteFileAtomically(path.string(), *compressed).ok());
  EXPECT_EQ(Gunzip(path), json);
  const absl::StatusOr<std::string> back = ReadFile(path.string());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, json);
}

TEST_F(FileIoTest, GzipOfEmptyInputRoundTrips) {
  const absl::StatusOr<std::string> compressed = GzipCompress("");
  ASSERT_TRUE(compressed.ok());
  const fs::path path = dir_ / "empty.gz";
  ASSERT_TRUE(WriteFileAtomically(path.string(), *compressed).ok());
  const absl::StatusOr<std::string> back = ReadFile(path.string());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, "");
}

TEST_F(FileIoTest, ReadFileRejectsTruncatedGzip) {
  const absl::StatusOr<std::string> compressed =
      GzipCompress(std::string(100000, 'a') + "end");
  ASSERT_TRUE(compressed.ok());
  const fs::path path = dir_ / "cut.json.gz";
  ASSERT_TRUE(WriteFileAtomically(path.string(),
                                  compressed->substr(0, compressed->size() / 2))
                  .ok());
  const absl::StatusOr<std::string> back = ReadFile(path.string());
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(std::string(back.status().message()), HasSubstr(path.string()));
}

TEST_F(FileIoTest, ReadFileDecompressesConcatenatedGzipMembers) {
  const absl::StatusOr<std::string> first = GzipCompress("hello, ");
  const absl::StatusOr<std::string> second = GzipCompress("world");
  ASSERT_TRUE(first.ok() && second.ok());
  const fs::path path = dir_ / "two.gz";
  ASSERT_TRUE(WriteFileAtomically(path.string(), *first + *second).ok());
  const absl::StatusOr<std::string> back = ReadFile(path.string());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, "hello, world");
}

}  // namespace
}  // namespace spanprof::analysis
