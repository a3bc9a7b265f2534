// What the readers refuse, run as the real binary: a Perfetto trace without
// its end packet (every command that reads it, `--allow-truncated`), a gzip
// file past its decompressed-size limit, an endless non-regular file, and
// memory running out while reading.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/perfetto/decoded_trace.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteText;
using ::testing::HasSubstr;
using ::testing::Not;

Capture TwoThreadCapture() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t worker = b.Thread(101, "worker");
  b.Add(1, 0, b.Site("app.run"), main, 0, 10'000);
  b.Add(2, 1, b.Site("app.load"), main, 100, 2'000);
  b.Add(3, 1, b.Site("pool.task"), worker, 200, 9'000);
  return b.Build();
}

class TruncatedTraceCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    whole_ = dir_.File("whole.pftrace");
    cut_ = dir_.File("cut.pftrace");
    ASSERT_TRUE(analysis::WriteTrace(TwoThreadCapture(), whole_).ok());
    // Without its end packet: every other packet whole, as a copy stopped
    // at a packet boundary leaves it.
    std::string cut = testing::ReadText(whole_);
    cut.resize(testing::LastPacketOffset(cut));
    WriteText(cut_, cut);
    truncated_ = "truncated at byte " + std::to_string(cut.size());
  }
  TempDir dir_;
  std::string whole_;
  std::string cut_;
  std::string truncated_;
};

TEST_F(TruncatedTraceCliTest, ValidateCallsItInvalid) {
  ProcessResult r = Spanprof({"validate", whole_});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Spanprof({"validate", cut_});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(cut_ + ": " + truncated_));
  EXPECT_THAT(r.out, HasSubstr("invalid spanprof trace"));
  // validate judges the file: --allow-truncated does not make it valid.
  r = Spanprof({"validate", cut_, "--allow-truncated"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

TEST_F(TruncatedTraceCliTest, EveryReaderRefusesIt) {
  const std::string out = dir_.File("out");
  const std::vector<std::vector<std::string>> commands = {
      {"summarize", cut_},
      {"report", cut_},
      {"folded", cut_},
      {"compare", whole_, cut_},
      {"merge", whole_, cut_, "-o", out + ".json"},
      {"export", "otlp", cut_, "-o", out + ".otlp.json"},
      {"plot", "timeline", cut_, "-o", out + ".svg"},
  };
  for (const std::vector<std::string>& command : commands) {
    const ProcessResult r = Spanprof(command);
    EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(truncated_)) << command[0];
  }
}

TEST_F(TruncatedTraceCliTest, AllowTruncatedReadsWhatIsThere) {
  ProcessResult r = Spanprof({"summarize", "--allow-truncated", cut_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"complete\": false"));
  EXPECT_THAT(r.out, HasSubstr(truncated_));  // its validation issue
  r = Spanprof({"summarize", whole_, "--allow-truncated"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"complete\": true"));
  // An incomplete candidate still needs --allow-incomplete to be compared.
  r = Spanprof({"compare", whole_, cut_, "--allow-truncated"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--allow-incomplete"));
}

// 16 MiB of spaces, gzip level 1, repeated as concatenated gzip members
// (which read as one file): `members` x 16 MiB decompressed from a few
// hundred KB, inside a JSON array (an empty foreign trace).
std::string SpaceBomb(int members) {
  const absl::StatusOr<std::string> head = analysis::GzipCompress("[");
  const absl::StatusOr<std::string> spaces =
      analysis::GzipCompress(std::string(size_t{16} << 20, ' '));
  const absl::StatusOr<std::string> tail = analysis::GzipCompress("]");
  if (!head.ok() || !spaces.ok() || !tail.ok()) return "";
  std::string out = *head;
  for (int i = 0; i < members; ++i) out += *spaces;
  return out + *tail;
}

TEST(InputLimitsCliTest, GzipStopsAt64TimesItsSize) {
  TempDir dir;
  const std::string path = dir.File("bomb.json.gz");
  const std::string bomb = SpaceBomb(1);
  ASSERT_FALSE(bomb.empty());
  ASSERT_LT(bomb.size() * 64, size_t{16} << 20);  // compresses past 64x
  WriteText(path, bomb);
  ProcessResult r = Spanprof({"summarize", path});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(path + ": more than " +
                               std::to_string(bomb.size() * 64) + " bytes"));
  EXPECT_THAT(r.err, HasSubstr("--max-input-bytes raises it"));
  // Raised, it reads (an empty foreign trace).
  r = Spanprof({"summarize", path, "--max-input-bytes", "20000000"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"source\": \"chrome-trace\""));
  // And the flag also lowers it, for every input.
  r = Spanprof({"summarize", path, "--max-input-bytes=1000"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("more than 1000 bytes (--max-input-bytes)"));
}

TEST(InputLimitsCliTest, NonRegularFileIsReadWithALimit) {
  // Read-only; nothing is written to the node.
  const ProcessResult r =
      Spanprof({"validate", "/dev/zero", "--max-input-bytes", "1048576"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("/dev/zero: more than 1048576 bytes"));
}

TEST(InputLimitsCliTest, BadLimitIsAUsageError) {
  for (const char* value : {"0", "-1", "1e6", ""}) {
    const ProcessResult r =
        Spanprof({"validate", "x.json", "--max-input-bytes", value});
    EXPECT_EQ(r.exit_code, 2) << value;
    EXPECT_THAT(r.err, HasSubstr("--max-input-bytes")) << value;
  }
  const ProcessResult r = Spanprof({"validate", "x.json", "--max-input-bytes"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--max-input-bytes needs a value"));
}

// Under a 256 MiB address-space limit, a gzip file that decompresses to
// 1 GiB (allowed by the flag) runs out of memory while it is read.
TEST(InputLimitsCliTest, OutOfMemoryIsReportedAsSuch) {
#ifdef SPANPROF_TEST_SANITIZED
  GTEST_SKIP() << "sanitizers reserve more address space than the limit";
#else
  TempDir dir;
  const std::string path = dir.File("big.json.gz");
  WriteText(path, SpaceBomb(64));
  const ProcessResult r =
      testing::RunProcess({"/bin/sh", "-c",
                           "ulimit -v 262144 && exec \"$0\" summarize \"$1\" "
                           "--max-input-bytes 4000000000",
                           SPANPROF_TEST_BIN_DIR "/spanprof", path});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("out of memory reading " + path + " at byte "));
  EXPECT_THAT(r.err, Not(HasSubstr("empty input")));
#endif
}

}  // namespace
}  // namespace spanprof
