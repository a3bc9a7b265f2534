// `spanprof recover`, run as the real binary on real streams (the fuzz
// corpus holds a kept stream of service_example and the same stream cut
// short, as a kill while writing leaves it).
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteText;
using ::testing::HasSubstr;

constexpr char kCorpus[] =
    SPANPROF_TEST_SOURCE_DIR "/tests/fuzz/corpus/stream_reader_fuzzer/";

TEST(RecoverCliTest, WritesATraceAndASummaryThatValidate) {
  TempDir dir;
  const ProcessResult r = Spanprof(
      {"recover", std::string(kCorpus) + "service-finished.stream", "-o",
       dir.File("t.pftrace"), "--summary-out", dir.File("s.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("end_reason finished"));
  EXPECT_THAT(r.out, HasSubstr("request.handle [phase=serve]"));
  EXPECT_EQ(Spanprof({"validate", dir.File("t.pftrace")}).exit_code, 0);
  EXPECT_EQ(Spanprof({"validate", dir.File("s.json")}).exit_code, 0);
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("s.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->end_reason, "finished");
  EXPECT_EQ(summary->event_count, 25u);  // root + 2 workers x 3 x 4
  EXPECT_TRUE(summary->complete);
}

// Without -o, the outputs go where the session would have written them
// (the stream names them: here relative to the working directory).
TEST(RecoverCliTest, WritesWhereTheSessionWouldHave) {
  TempDir dir;
  const ProcessResult r =
      Spanprof({"recover", std::string(kCorpus) + "service-finished.stream"},
               {}, dir.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.File("t.json")));
  EXPECT_TRUE(fs::exists(dir.File("s.json")));
}

TEST(RecoverCliTest, ACutStreamSaysWhatCouldNotBeRead) {
  TempDir dir;
  const ProcessResult r =
      Spanprof({"recover", std::string(kCorpus) + "service-cut.stream", "-o",
                dir.File("t.json"), "--summary-out", dir.File("s.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("end_reason lost"));
  EXPECT_THAT(r.err, HasSubstr("bytes of a cut last chunk"));
  EXPECT_THAT(r.err, HasSubstr("cannot be known"));
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("s.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->end_reason, "lost");
  EXPECT_FALSE(summary->complete);
}

TEST(RecoverCliTest, WhatIsNotAStreamIsExitTwoNamingIt) {
  TempDir dir;
  WriteText(dir.File("trace.json"), "{\"traceEvents\":[]}");
  const ProcessResult r =
      Spanprof({"recover", dir.File("trace.json"), "-o", dir.File("t.json"),
                "--summary-out", dir.File("s.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              HasSubstr(dir.File("trace.json") + ": not a spanprof stream"));
  EXPECT_FALSE(fs::exists(dir.File("t.json")));
  const ProcessResult missing = Spanprof({"recover"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("missing argument STREAM"));
}

TEST(RecoverCliTest, AnOutputThatIsTheStreamIsRefused) {
  TempDir dir;
  const std::string stream = dir.File("s.stream");
  fs::copy_file(std::string(kCorpus) + "service-finished.stream", stream);
  const std::string before = ReadText(stream);
  const ProcessResult r = Spanprof(
      {"recover", stream, "-o", stream, "--summary-out", dir.File("s.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(ReadText(stream), before);
  EXPECT_FALSE(fs::exists(dir.File("s.json")));
}

}  // namespace
}  // namespace spanprof
