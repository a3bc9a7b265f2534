// The fuzz targets' properties over the checked-in seed corpus and every
// input a fuzzer ever failed on (tests/fuzz/regressions/), in every build —
// no clang or libFuzzer needed.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fuzz/fuzz_properties.h"
#include "tests/testing/test_support.h"

namespace spanprof::fuzzing {
namespace {

std::vector<std::filesystem::path> Inputs(const std::string& target) {
  std::vector<std::filesystem::path> files;
  for (const char* kind : {"corpus", "regressions"}) {
    const std::filesystem::path dir =
        std::filesystem::path(SPANPROF_TEST_SOURCE_DIR) / "tests/fuzz" / kind /
        target;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  }
  return files;
}

TEST(FuzzRegressionTest, SummaryReader) {
  const std::vector<std::filesystem::path> files =
      Inputs("summary_reader_fuzzer");
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    EXPECT_TRUE(SummaryReaderHolds(testing::ReadText(file.string()))) << file;
  }
}

TEST(FuzzRegressionTest, TraceReader) {
  const std::vector<std::filesystem::path> files =
      Inputs("trace_reader_fuzzer");
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    EXPECT_TRUE(TraceReaderHolds(testing::ReadText(file.string()))) << file;
  }
}

TEST(FuzzRegressionTest, PerfettoReader) {
  const std::vector<std::filesystem::path> files =
      Inputs("perfetto_reader_fuzzer");
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    EXPECT_TRUE(PerfettoReaderHolds(testing::ReadText(file.string()))) << file;
  }
}

TEST(FuzzRegressionTest, ChromeTraceReader) {
  const std::vector<std::filesystem::path> files =
      Inputs("chrome_trace_reader_fuzzer");
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    EXPECT_TRUE(ChromeTraceReaderHolds(testing::ReadText(file.string())))
        << file;
  }
}

TEST(FuzzRegressionTest, Merge) {
  const std::vector<std::filesystem::path> files = Inputs("merge_fuzzer");
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    EXPECT_TRUE(MergeHolds(testing::ReadText(file.string()))) << file;
  }
}

// The merge seeds hold two traces each, and the real parent-and-child pairs
// merge into one capture with the link between them.
TEST(FuzzRegressionTest, MergeSeedsMerge) {
  size_t linked = 0;
  for (const auto& file : Inputs("merge_fuzzer")) {
    if (file.string().find("/corpus/") == std::string::npos) continue;
    const std::string text = testing::ReadText(file.string());
    const size_t cut = text.find(kMergeInputSeparator);
    ASSERT_NE(cut, std::string::npos) << file;
    absl::StatusOr<Capture> a = analysis::ParseTrace(text.substr(0, cut), "a");
    absl::StatusOr<Capture> b = analysis::ParseTrace(
        text.substr(cut + kMergeInputSeparator.size()), "b");
    ASSERT_TRUE(a.ok() && b.ok()) << file;
    absl::StatusOr<analysis::MergeResult> merged =
        analysis::MergeCaptures({{"a", *a}, {"b", *b}});
    if (merged.ok() && merged->linked_roots == 1) ++linked;
  }
  EXPECT_GE(linked, 3u);
}

TEST(FuzzRegressionTest, CompareArgs) {
  const std::vector<std::filesystem::path> files =
      Inputs("compare_args_fuzzer");
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    EXPECT_TRUE(CompareArgsHold(testing::ReadText(file.string()))) << file;
  }
}

TEST(FuzzRegressionTest, Traceparent) {
  const std::vector<std::filesystem::path> files = Inputs("traceparent_fuzzer");
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    EXPECT_TRUE(TraceparentHolds(testing::ReadText(file.string()))) << file;
  }
}

TEST(FuzzRegressionTest, StreamReader) {
  const std::vector<std::filesystem::path> files =
      Inputs("stream_reader_fuzzer");
  ASSERT_GE(files.size(), 2u);
  for (const auto& file : files) {
    EXPECT_TRUE(StreamReaderHolds(testing::ReadText(file.string()))) << file;
  }
}

// The seeds are real outputs: the readers accept them (so the fuzzers start
// from deep inside the accepted language, not at the first error).
TEST(FuzzRegressionTest, SeedsAreAccepted) {
  for (const auto& file : Inputs("summary_reader_fuzzer")) {
    if (file.string().find("/corpus/") == std::string::npos) continue;
    EXPECT_TRUE(
        analysis::ParseSummary(testing::ReadText(file.string()), "seed").ok())
        << file;
  }
  for (const char* target : {"trace_reader_fuzzer", "perfetto_reader_fuzzer",
                             "chrome_trace_reader_fuzzer"}) {
    for (const auto& file : Inputs(target)) {
      if (file.string().find("/corpus/") == std::string::npos) continue;
      EXPECT_TRUE(
          analysis::ParseTrace(testing::ReadText(file.string()), "seed").ok())
          << file;
    }
  }
}

}  // namespace
}  // namespace spanprof::fuzzing
