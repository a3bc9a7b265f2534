// Every reader notices a cut input, whatever the format (JSON trace, summary,
// their gzip forms, Perfetto's in tests/analysis/perfetto), and ReadFile()
// holds no more than its limits: a gzip file's decompressed size, a
// non-regular file's length.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

using spanprof::testing::RichCapture;
using spanprof::testing::TempDir;
using spanprof::testing::WriteText;
using ::testing::HasSubstr;

std::string Message(const absl::Status& status) {
  return std::string(status.message().data(), status.message().size());
}

// A cut that leaves out only trailing whitespace is the same document.
bool OnlyWhitespaceCut(const std::string& whole, size_t n) {
  return whole.find_first_not_of(" \n\r\t", n) == std::string::npos;
}

TEST(InputTruncationTest, JsonTraceCutAtEveryByteIsRejected) {
  const std::string json = TraceToJson(RichCapture({.counters = true}));
  ASSERT_TRUE(ParseTrace(json, "t.json").ok());
  for (size_t n = 0; n < json.size(); ++n) {
    if (OnlyWhitespaceCut(json, n)) continue;
    EXPECT_FALSE(ParseTrace(json.substr(0, n), "t.json").ok()) << n;
  }
}

TEST(InputTruncationTest, SummaryCutAtEveryByteIsRejected) {
  const std::string json = SummaryToJson(Summarize(RichCapture()));
  ASSERT_TRUE(ParseSummary(json, "s.json").ok());
  for (size_t n = 0; n < json.size(); ++n) {
    if (OnlyWhitespaceCut(json, n)) continue;
    EXPECT_FALSE(ParseSummary(json.substr(0, n), "s.json").ok()) << n;
  }
}

// A gzip file cut anywhere, at a deflate block boundary or before its
// trailer (CRC and length) included, is an error naming the file: the
// trailer check, not the JSON inside, catches it.
TEST(InputTruncationTest, GzipCutAtEveryByteIsRejected) {
  TempDir dir;
  const std::string json = TraceToJson(RichCapture({.counters = true}));
  const absl::StatusOr<std::string> gz = GzipCompress(json);
  ASSERT_TRUE(gz.ok());
  const std::string path = dir.File("t.json.gz");
  for (size_t n = 2; n < gz->size(); ++n) {
    WriteText(path, gz->substr(0, n));
    const absl::StatusOr<std::string> back = ReadFile(path);
    ASSERT_FALSE(back.ok()) << n;
    EXPECT_THAT(Message(back.status()), HasSubstr(path)) << n;
  }
  WriteText(path, *gz);
  const absl::StatusOr<std::string> back = ReadFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, json);
}

// --- limits -------------------------------------------------------------

TEST(InputLimitsTest, GzipDecompressesToAt64TimesItsSize) {
  TempDir dir;
  const std::string path = dir.File("bomb.gz");
  const std::string zeros(size_t{4} << 20, '\0');
  const absl::StatusOr<std::string> gz = GzipCompress(zeros);
  ASSERT_TRUE(gz.ok());
  ASSERT_GT(zeros.size(), gz->size() * kGzipExpansionLimit);
  WriteText(path, *gz);
  absl::StatusOr<std::string> back = ReadFile(path);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Message(back.status()),
              HasSubstr(path + ": more than " +
                        std::to_string(gz->size() * kGzipExpansionLimit) +
                        " bytes (decompressed: 64 times"));
  back = ReadFile(path, {.max_input_bytes = zeros.size()});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->size(), zeros.size());
  back = ReadFile(path, {.max_input_bytes = zeros.size() - 1});
  EXPECT_FALSE(back.ok());
  // Ordinary text stays well inside the rule.
  const std::string json = TraceToJson(RichCapture());
  WriteText(path, *GzipCompress(json));
  back = ReadFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, json);
}

TEST(InputLimitsTest, TheFlagBoundsPlainFilesToo) {
  TempDir dir;
  const std::string path = dir.File("t.json");
  WriteText(path, std::string(1000, ' '));
  EXPECT_TRUE(ReadFile(path, {.max_input_bytes = 1000}).ok());
  const absl::StatusOr<std::string> back =
      ReadFile(path, {.max_input_bytes = 999});
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(Message(back.status()),
              HasSubstr(path + ": more than 999 bytes (--max-input-bytes)"));
}

// A FIFO (made here) whose writer never stops: the read stops at the
// limit; one that ends is read whole.
TEST(InputLimitsTest, FifoIsReadWithALimit) {
  std::signal(SIGPIPE, SIG_IGN);  // the writer sees EPIPE, not a signal
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread endless([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string chunk(1 << 16, ' ');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  });
  absl::StatusOr<std::string> back =
      ReadFile(fifo, {.max_input_bytes = size_t{1} << 20});
  endless.join();
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(Message(back.status()),
              HasSubstr(fifo + ": more than 1048576 bytes"));

  std::thread finite([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string text = "[]";
    EXPECT_EQ(::write(fd, text.data(), text.size()), 2);
    ::close(fd);
  });
  back = ReadFile(fifo);
  finite.join();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, "[]");
}

}  // namespace
}  // namespace spanprof::analysis
