// The names of a series of runs (cli/src/run_directory.h): zero-padded run
// numbers that sort, and the summaries of a scheduled program's cycles.
#include "cli/src/run_directory.h"

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_support.h"

namespace spanprof::cli::internal {
namespace {

using ::spanprof::testing::TempDir;
using ::testing::ElementsAre;

TEST(RunFilesTest, NumbersArePaddedToAtLeastThreeDigits) {
  const RunFiles files("out/", 10);
  EXPECT_EQ(files.dir(), "out");
  EXPECT_EQ(files.Name(7), "run-007");
  EXPECT_EQ(files.Summary(7), "out/run-007.summary.json");
  EXPECT_EQ(files.Trace(10), "out/traces/run-010.trace.json");
  EXPECT_EQ(files.Stdout(1), "out/logs/run-001.stdout");
  EXPECT_EQ(files.Stderr(1), "out/logs/run-001.stderr");
}

TEST(RunFilesTest, LongSeriesGetWiderNumbersSoNamesStillSort) {
  EXPECT_EQ(RunFiles("d", 999).Name(5), "run-005");
  EXPECT_EQ(RunFiles("d", 1000).Name(5), "run-0005");
  EXPECT_EQ(RunFiles("d", 100000).Name(42), "run-000042");
}

TEST(RunFilesTest, ASummaryPerCycleCountsAsTheRunsSummaries) {
  TempDir dir;
  const RunFiles files(dir.path().string(), 3);
  EXPECT_TRUE(files.SummariesOf(1).empty());
  testing::WriteText(dir.File("run-001.summary-cycle1.json"), "{}");
  testing::WriteText(dir.File("run-001.summary-cycle0.json"), "{}");
  testing::WriteText(dir.File("run-002.summary-cycle0.json"), "{}");
  EXPECT_THAT(files.SummariesOf(1),
              ElementsAre(dir.File("run-001.summary-cycle0.json"),
                          dir.File("run-001.summary-cycle1.json")));
  testing::WriteText(dir.File("run-001.summary.json"), "{}");
  EXPECT_THAT(files.SummariesOf(1),
              ElementsAre(dir.File("run-001.summary.json")));
}

TEST(RunDirectoryTest, AMissingOrUnrelatedDirectoryIsAccepted) {
  TempDir dir;
  const RunFiles missing(dir.File("new/deeper"), 2);
  EXPECT_TRUE(CheckRunDirectory(missing, false).ok());
  ASSERT_TRUE(ResetRunDirectory(missing, /*trace=*/true).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir.File("new/deeper/logs")));
  EXPECT_TRUE(std::filesystem::is_directory(dir.File("new/deeper/traces")));
  testing::WriteText(dir.File("file"), "x");
  EXPECT_FALSE(CheckRunDirectory(RunFiles(dir.File("file"), 2), true).ok());
}

TEST(RunDirectoryTest, ForceDeletesOnlyTheFilesOfEarlierRuns) {
  TempDir dir;
  const RunFiles files(dir.path().string(), 2);
  ASSERT_TRUE(ResetRunDirectory(files, /*trace=*/true).ok());
  for (const char* name : {"run-001.summary.json", "run-07.summary-cycle0.json",
                           "logs/run-001.stdout", "traces/run-001.trace.json",
                           "logs/keep.txt", "run-notes.txt", "README"}) {
    testing::WriteText(dir.File(name), "x");
  }
  EXPECT_FALSE(CheckRunDirectory(files, /*force=*/false).ok());
  ASSERT_TRUE(CheckRunDirectory(files, /*force=*/true).ok());
  ASSERT_TRUE(ResetRunDirectory(files, /*trace=*/false).ok());
  for (const char* gone :
       {"run-001.summary.json", "run-07.summary-cycle0.json",
        "logs/run-001.stdout", "traces/run-001.trace.json"}) {
    EXPECT_FALSE(std::filesystem::exists(dir.File(gone))) << gone;
  }
  for (const char* kept : {"logs/keep.txt", "run-notes.txt", "README"}) {
    EXPECT_TRUE(std::filesystem::exists(dir.File(kept))) << kept;
  }
  EXPECT_TRUE(CheckRunDirectory(files, /*force=*/false).ok());
}

}  // namespace
}  // namespace spanprof::cli::internal
