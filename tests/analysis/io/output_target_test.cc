// Where the writers put their bytes: a regular file atomically, a device,
// FIFO or socket in place, a symbolic link through to its target; temporary
// names that fit any legal file name; extensions in any case; a UTF-8 byte
// order mark skipped by the reader; and which two paths are one output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::OpenFifo;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteText;
using ::testing::HasSubstr;

// The names in `dir`, sorted.
std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A private null device made in `dir` (never the system's), or "" when this
// user may not make device nodes.
std::string MakeNullDevice(const TempDir& dir) {
  const std::string path = dir.File("null");
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) return "";
  return path;
}

TEST(OutputTargetTest, AFifoIsWrittenInPlace) {
  TempDir dir;
  const std::string fifo = dir.File("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  OpenFifo reader(fifo);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(WriteFileAtomically(fifo, "through the pipe").ok());
  EXPECT_EQ(reader.Take(), "through the pipe");
  struct stat info {};
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode)) << "the FIFO was replaced";
  EXPECT_THAT(Names(dir.path()), ::testing::ElementsAre("pipe"));
}

TEST(OutputTargetTest, AGzipTraceStreamsIntoAFifo) {
  TempDir dir;
  const std::string fifo = dir.File("trace.json.gz");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const Capture capture = spanprof::testing::RichCapture();
  OpenFifo reader(fifo);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(WriteTrace(capture, fifo).ok());
  const std::string bytes = reader.Take();
  ASSERT_GT(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);  // gzip
  const std::string copy = dir.File("copy.json.gz");
  WriteText(copy, bytes);
  absl::StatusOr<Capture> back = ReadTrace(copy);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spans.size(), capture.spans.size());
}

TEST(OutputTargetTest, ACharacterDeviceStaysADevice) {
  TempDir dir;
  const std::string null = MakeNullDevice(dir);
  if (null.empty()) {
    SPANPROF_SKIP_UNLESS_CI(
        "mknod is not permitted here: " << std::strerror(errno));
  }
  ASSERT_TRUE(WriteFileAtomically(null, "discarded").ok());
  struct stat info {};
  ASSERT_EQ(::lstat(null.c_str(), &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode)) << "the device was replaced";
  EXPECT_THAT(Names(dir.path()), ::testing::ElementsAre("null"));
  EXPECT_TRUE(CheckOutput(null).ok());
}

TEST(OutputTargetTest, AUnixSocketIsWrittenInPlace) {
  TempDir dir;
  const std::string path = dir.File("sock");
  const int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(server, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(address.sun_path));
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(server, reinterpret_cast<const sockaddr*>(&address),
                   sizeof(address)),
            0)
      << std::strerror(errno);
  ASSERT_EQ(::listen(server, 1), 0);
  // The writer's connection waits in the backlog and its bytes in the
  // socket's buffer, so no thread is needed; a writer that never connects
  // leaves nothing to accept.
  const absl::Status written = WriteFileAtomically(path, "over the socket");
  ASSERT_TRUE(written.ok()) << written;
  const int peer = ::accept4(server, nullptr, nullptr, SOCK_NONBLOCK);
  ASSERT_GE(peer, 0) << std::strerror(errno);
  std::string received;
  char buffer[256];
  ssize_t n = 0;
  while ((n = ::read(peer, buffer, sizeof(buffer))) > 0) {
    received.append(buffer, static_cast<size_t>(n));
  }
  ::close(peer);
  ::close(server);
  EXPECT_EQ(received, "over the socket");
  struct stat info {};
  ASSERT_EQ(::lstat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
}

TEST(OutputTargetTest, ASymlinkIsWrittenThroughAndStays) {
  TempDir dir;
  fs::create_directories(dir.path() / "real");
  WriteText(dir.File("real/summary.json"), "old");
  fs::create_symlink("real/summary.json", dir.path() / "link.json");
  ASSERT_TRUE(WriteFileAtomically(dir.File("link.json"), "new").ok());
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.json"));
  EXPECT_EQ(fs::read_symlink(dir.path() / "link.json"), "real/summary.json");
  EXPECT_EQ(ReadText(dir.File("real/summary.json")), "new");
  // No temporary file left beside the link or the target.
  EXPECT_THAT(Names(dir.path()), ::testing::ElementsAre("link.json", "real"));
  EXPECT_THAT(Names(dir.path() / "real"),
              ::testing::ElementsAre("summary.json"));
}

TEST(OutputTargetTest, ADanglingSymlinkCreatesItsTarget) {
  TempDir dir;
  fs::create_symlink(dir.path() / "made/later.json", dir.path() / "link.json");
  ASSERT_TRUE(WriteFileAtomically(dir.File("link.json"), "bytes").ok());
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.json"));
  EXPECT_EQ(ReadText(dir.File("made/later.json")), "bytes");
}

TEST(OutputTargetTest, ASymlinkToAFifoIsWrittenInPlace) {
  TempDir dir;
  const std::string fifo = dir.File("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink("pipe", dir.path() / "out.json");
  OpenFifo reader(fifo);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(WriteFileAtomically(dir.File("out.json"), "via link").ok());
  EXPECT_EQ(reader.Take(), "via link");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "out.json"));
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// A link the kernel makes (/proc/self/fd/N, as /dev/stdout is) to a pipe
// names no file: the writer opens it as it is.
TEST(OutputTargetTest, AKernelLinkToAPipeIsWrittenInPlace) {
  TempDir dir;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string proc = "/proc/self/fd/" + std::to_string(fds[1]);
  fs::create_symlink(proc, dir.path() / "out.json");
  EXPECT_TRUE(CheckOutput(dir.File("out.json")).ok());
  const absl::Status written = WriteFileAtomically(dir.File("out.json"), "p");
  ::close(fds[1]);
  ASSERT_TRUE(written.ok()) << written;
  char byte = 0;
  EXPECT_EQ(::read(fds[0], &byte, 1), 1);
  EXPECT_EQ(byte, 'p');
  ::close(fds[0]);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "out.json"));
}

TEST(OutputTargetTest, ALongestLegalNameIsWritten) {
  TempDir dir;
  for (const size_t length : {250u, 255u}) {
    const std::string name = std::string(length - 5, 'n') + ".json";
    const std::string path = dir.File(name);
    const absl::Status written = WriteFileAtomically(path, "long");
    ASSERT_TRUE(written.ok()) << length << ": " << written;
    EXPECT_EQ(ReadText(path), "long");
  }
  EXPECT_EQ(Names(dir.path()).size(), 2u);
}

TEST(OutputTargetTest, ADirectoryIsRefused) {
  TempDir dir;
  fs::create_directories(dir.path() / "d");
  const absl::Status status = WriteFileAtomically(dir.File("d"), "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("is a directory"));
  EXPECT_FALSE(CheckOutput(dir.File("d")).ok());
}

TEST(OutputTargetTest, CheckOutputNamesADirectoryThatCannotBeMade) {
  TempDir dir;
  EXPECT_TRUE(CheckOutput(dir.File("a/b/trace.json")).ok());
  EXPECT_FALSE(fs::exists(dir.path() / "a")) << "a check creates nothing";
  WriteText(dir.File("file"), "x");
  const absl::Status status = CheckOutput(dir.File("file/sub/trace.json"));
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(dir.File("file")));
  EXPECT_THAT(status.message(), HasSubstr("is not a directory"));
  EXPECT_TRUE(CheckOutput("-").ok());
  EXPECT_TRUE(CheckOutput("relative-name.json").ok());
}

TEST(OutputTargetTest, ExtensionsChooseTheFormatInAnyCase) {
  TempDir dir;
  const Capture capture = spanprof::testing::RichCapture();
  ASSERT_TRUE(WriteTrace(capture, dir.File("t.PFTRACE")).ok());
  EXPECT_TRUE(LooksLikePerfettoTrace(ReadText(dir.File("t.PFTRACE"))));
  ASSERT_TRUE(WriteTrace(capture, dir.File("t.Perfetto-Trace.GZ")).ok());
  absl::StatusOr<std::string> unzipped =
      ReadFile(dir.File("t.Perfetto-Trace.GZ"));
  ASSERT_TRUE(unzipped.ok());
  EXPECT_TRUE(LooksLikePerfettoTrace(*unzipped));
  ASSERT_TRUE(WriteTrace(capture, dir.File("t.Json.GZ")).ok());
  const std::string raw = ReadText(dir.File("t.Json.GZ"));
  ASSERT_GT(raw.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1f);
  EXPECT_TRUE(IsPerfettoTracePath("x.PfTrace.Gz"));
}

TEST(OutputTargetTest, AByteOrderMarkIsSkipped) {
  TempDir dir;
  const Summary summary = Summarize(spanprof::testing::RichCapture());
  const std::string bom = "\xEF\xBB\xBF";
  WriteText(dir.File("summary.json"), bom + SummaryToJson(summary));
  absl::StatusOr<Summary> read = ReadSummary(dir.File("summary.json"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->rows.size(), summary.rows.size());
  WriteText(dir.File("trace.json"),
            bom + TraceToJson(spanprof::testing::RichCapture()));
  absl::StatusOr<Capture> trace = ReadTrace(dir.File("trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::string> gz = GzipCompress(bom + "{}");
  ASSERT_TRUE(gz.ok());
  WriteText(dir.File("x.gz"), *gz);
  EXPECT_EQ(*ReadFile(dir.File("x.gz")), "{}");
}

TEST(OutputTargetTest, SameOutputTargetFollowsLinksAndNames) {
  TempDir dir;
  WriteText(dir.File("a.json"), "a");
  WriteText(dir.File("b.json"), "b");
  fs::create_symlink("a.json", dir.path() / "link.json");
  EXPECT_TRUE(SameOutputTarget(dir.File("a.json"), dir.File("link.json")));
  EXPECT_TRUE(SameOutputTarget(dir.File("a.json"), dir.File("x/../a.json")));
  EXPECT_FALSE(SameOutputTarget(dir.File("a.json"), dir.File("b.json")));
  // Neither exists yet: the normalised paths decide.
  EXPECT_TRUE(
      SameOutputTarget(dir.File("new.json"), dir.File("./sub/../new.json")));
  EXPECT_FALSE(SameOutputTarget(dir.File("new.json"), dir.File("other.json")));
  fs::create_symlink("later.json", dir.path() / "dangling.json");
  EXPECT_TRUE(
      SameOutputTarget(dir.File("dangling.json"), dir.File("later.json")));
  EXPECT_TRUE(SameOutputTarget("-", "-"));
  EXPECT_FALSE(SameOutputTarget("-", dir.File("a.json")));
  const std::string null = MakeNullDevice(dir);
  if (!null.empty()) EXPECT_FALSE(SameOutputTarget(null, null));
}

}  // namespace
}  // namespace spanprof::analysis
