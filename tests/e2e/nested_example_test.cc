// The real nested_example binary, run with SPANPROF=1 into a temp dir.
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/lookup.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::FindRow;
using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;

TEST(NestedExampleTest, WritesTheExpectedCapture) {
  TempDir dir;
  const auto result = RunProcess({SPANPROF_TEST_BIN_DIR "/nested_example"},
                                 {{"SPANPROF", "1"}}, dir.path().string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // Default paths, relative to the working directory; the table on
  // stderr, so that the program's standard output stays its own.
  EXPECT_NE(result.err.find("spanprof: 7 events, 1 thread,"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("Trace: build/spanprof-trace.json"),
            std::string::npos);
  EXPECT_EQ(result.out, "");
  const auto summary =
      analysis::ReadSummary(dir.File("build/spanprof-summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->event_count, 7u);
  EXPECT_EQ(summary->thread_count, 1u);
  EXPECT_TRUE(summary->complete);
  ASSERT_EQ(summary->rows.size(), 3u);

  const analysis::Row* forward = FindRow(*summary, "model.forward");
  const analysis::Row* load = FindRow(*summary, "input.load");
  const analysis::Row* root = FindRow(*summary, "example.nested-spans");
  ASSERT_TRUE(forward && load && root);
  EXPECT_EQ(forward->calls, 3u);
  EXPECT_EQ(load->calls, 3u);
  EXPECT_EQ(root->calls, 1u);
  EXPECT_EQ(forward->key.phase, "forward");
  EXPECT_EQ(forward->key.module, "encoder.block");
  EXPECT_EQ(load->key.activity, "load");
  // Leaves: self == total. Root: its children's time is taken out of its
  // own, exactly (both leaves are its children). No timing ratio: under
  // ASan at -O0 the root's own code took 10% of a 21 ms run once.
  EXPECT_EQ(forward->self_ns, forward->total_ns);
  EXPECT_EQ(load->self_ns, load->total_ns);
  EXPECT_EQ(root->self_ns, root->total_ns - forward->total_ns - load->total_ns);
  EXPECT_LT(root->self_ns, root->total_ns);
  // Sleeps of 4 ms and 2 ms last at least that long. (How the two compare
  // is up to the scheduler: on a loaded machine a 2 ms sleep has taken
  // longer than a 4 ms one, so no ratio of the two is asserted.)
  EXPECT_GE(forward->total_ns, 3 * 4'000'000);
  EXPECT_GE(load->total_ns, 3 * 2'000'000);
  // The shares of the recorded thread time add up to the whole (each is
  // rounded to a permille).
  const int64_t shares =
      forward->share_permille + load->share_permille + root->share_permille;
  EXPECT_GE(shares, 998);
  EXPECT_LE(shares, 1002);
  EXPECT_GT(forward->share_permille, 0);
  EXPECT_GT(load->share_permille, 0);
  // Self time adds up to the recorded thread time.
  EXPECT_EQ(forward->self_ns + load->self_ns + root->self_ns,
            summary->recorded_thread_time_ns);

  const auto trace = analysis::ReadTrace(dir.File("build/spanprof-trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->spans.size(), 7u);
  // The summary is a pure function of the trace.
  analysis::Summary again = analysis::Summarize(*trace);
  EXPECT_EQ(again.rows, summary->rows);
  EXPECT_EQ(again.recorded_thread_time_ns, summary->recorded_thread_time_ns);
}

TEST(NestedExampleTest, DisabledRunWritesNothing) {
  TempDir dir;
  const auto result = RunProcess({SPANPROF_TEST_BIN_DIR "/nested_example"},
                                 {{"SPANPROF", "0"}}, dir.path().string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir.File("build")));
}

TEST(NestedExampleTest, BadEnvironmentFailsNamingTheVariable) {
  TempDir dir;
  const auto result =
      RunProcess({SPANPROF_TEST_BIN_DIR "/nested_example"},
                 {{"SPANPROF", "1"}, {"SPANPROF_OVERFLOW", "oldest"}},
                 dir.path().string());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("SPANPROF_OVERFLOW"), std::string::npos)
      << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("build")));
}

// An output that cannot be written is reported once, at session start
// (before the workload): the library throws spanprof::Error naming the
// variable and the directory, and the example prints what() — the library
// does not print it too.
TEST(NestedExampleTest, UnwritableOutputIsReportedExactlyOnce) {
  TempDir dir;
  testing::WriteText(dir.File("nope"), "a file where a directory must be");
  const auto result = RunProcess({SPANPROF_TEST_BIN_DIR "/nested_example"},
                                 {{"SPANPROF", "1"},
                                  {"SPANPROF_QUIET", "1"},
                                  {"SPANPROF_OUT", dir.File("nope/t.json")},
                                  {"SPANPROF_SUMMARY_OUT", dir.File("s.json")}},
                                 dir.path().string());
  EXPECT_EQ(result.exit_code, 2) << result.err;
  const std::string message = "SPANPROF_OUT (Config::trace_path)";
  const size_t first = result.err.find(message);
  ASSERT_NE(first, std::string::npos) << result.err;
  EXPECT_EQ(result.err.find(message, first + message.size()), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find(dir.File("nope")), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("s.json")));
}

TEST(NestedExampleTest, GzipTraceWhenThePathEndsInGz) {
  TempDir dir;
  const auto result =
      RunProcess({SPANPROF_TEST_BIN_DIR "/nested_example"},
                 {{"SPANPROF", "1"},
                  {"SPANPROF_QUIET", "1"},
                  {"SPANPROF_OUT", dir.File("t/trace.json.gz")},
                  {"SPANPROF_SUMMARY_OUT", dir.File("t/summary.json")}},
                 dir.path().string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "");  // quiet
  const std::string bytes = testing::ReadText(dir.File("t/trace.json.gz"));
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  const auto trace = analysis::ReadTrace(dir.File("t/trace.json.gz"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->spans.size(), 7u);
}

}  // namespace
}  // namespace spanprof
