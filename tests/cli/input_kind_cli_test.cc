// End to end: every command that reads "a trace" or "a summary or a trace"
// asks the one sniffer (analysis/src/input/) what a file is, so a stream
// file left by a session that did not end is refused the same way by each,
// naming the file and the command that reads it (exit 2, or 1 for
// validate's verdict).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/src/stream/stream_format.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;

TEST(InputKindCliTest, EveryReaderRefusesAStreamFileNamingRecover) {
  TempDir dir;
  const std::string stream = dir.File("trace.json.stream");
  testing::WriteText(
      stream, spanprof::internal::StreamFileHeader() + std::string(64, '\0'));
  const std::vector<std::vector<std::string>> commands = {
      {"report", stream},
      {"summarize", stream, "-o", dir.File("s.json")},
      {"plot", "breakdown", stream},
      {"compare", stream, stream}};
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> argv = {SPANPROF_TEST_BIN_DIR "/spanprof"};
    argv.insert(argv.end(), command.begin(), command.end());
    const ProcessResult r = testing::RunProcess(argv);
    EXPECT_EQ(r.exit_code, 2) << command[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(stream + ": a spanprof stream file"))
        << command[0];
    EXPECT_THAT(r.err, HasSubstr("spanprof recover")) << command[0];
  }
  const ProcessResult validate = testing::RunProcess(
      {SPANPROF_TEST_BIN_DIR "/spanprof", "validate", stream});
  EXPECT_EQ(validate.exit_code, 1);
  EXPECT_THAT(validate.out, HasSubstr(stream + ": a spanprof stream file"));
}

}  // namespace
}  // namespace spanprof
