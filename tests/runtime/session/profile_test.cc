// Sessions: Profile() writes both files, one session at a time, disabled
// sessions write nothing, a throwing body still writes its capture.
#include <filesystem>
#include <stdexcept>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/spanprof.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof {
namespace {

using spanprof::testing::CountOccurrences;
using spanprof::testing::QuietConfig;
using spanprof::testing::ReadText;
using spanprof::testing::TempDir;

TEST(ProfileTest, WritesTraceAndSummaryAndReturnsTheResult) {
  TempDir dir;
  const int result = Profile(QuietConfig(dir), "test.root", [] {
    SPANPROF_SCOPE("work", {.phase = "compute"});
    return 7;
  });
  EXPECT_EQ(result, 7);
  ASSERT_TRUE(std::filesystem::exists(dir.File("out/trace.json")));
  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->event_count, 2u);
  EXPECT_TRUE(summary->complete);
  ASSERT_EQ(summary->rows.size(), 2u);
  EXPECT_NE(ReadText(dir.File("out/trace.json")).find("\"test.root\""),
            std::string::npos);
}

TEST(ProfileTest, DisabledSessionRunsTheBodyAndWritesNothing) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.enabled = false;
  bool ran = false;
  Profile(config, "test.root", [&] {
    SPANPROF_SCOPE("work");
    ran = true;
    EXPECT_FALSE(IsRecording());
  });
  EXPECT_TRUE(ran);
  EXPECT_FALSE(std::filesystem::exists(dir.File("out")));
}

TEST(ProfileTest, SecondConcurrentSessionIsAnError) {
  TempDir dir;
  Profile(QuietConfig(dir), "outer.root", [&] {
    TempDir inner_dir;
    bool inner_ran = false;
    try {
      Profile(QuietConfig(inner_dir), "inner.root", [&] { inner_ran = true; });
      ADD_FAILURE() << "expected spanprof::Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("already active"),
                std::string::npos);
    }
    EXPECT_FALSE(inner_ran);
    EXPECT_FALSE(std::filesystem::exists(inner_dir.File("out")));
  });
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/summary.json")));
}

TEST(ProfileTest, ThrowingBodyStillWritesItsCaptureAndRethrows) {
  TempDir dir;
  EXPECT_THROW(Profile(QuietConfig(dir), "test.root",
                       [] {
                         SPANPROF_SCOPE("doomed");
                         throw std::runtime_error("body failed");
                       }),
               std::runtime_error);
  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->event_count, 2u);
  uint64_t exceptions = 0;
  for (const analysis::Row& row : summary->rows) exceptions += row.exceptions;
  EXPECT_EQ(exceptions, 2u);  // "doomed" and the root were left by it
  // The session is over: a new one can start.
  Profile(QuietConfig(dir), "again", [] {});
}

// A directory made at the trace path by the body: an output error that the
// checks at session start cannot foresee.
void BlockTracePath(const Config& config) {
  std::filesystem::create_directories(config.trace_path);
}

TEST(ProfileTest, OutputErrorNamesThePathAfterTheBodyRan) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.trace_path = dir.File("blocker/trace.json");
  bool ran = false;
  try {
    Profile(config, "test.root", [&] {
      ran = true;
      BlockTracePath(config);
    });
    FAIL() << "expected spanprof::OutputError";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("blocker"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(ran);
  // The summary, which could be written, was.
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/summary.json")));
}

TEST(ProfileTest, OutputErrorIsThrownAndNotAlsoPrinted) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.trace_path = dir.File("blocker/trace.json");
  std::string message;
  ::testing::internal::CaptureStderr();
  try {
    Profile(config, "test.root", [&] { BlockTracePath(config); });
  } catch (const OutputError& e) {
    message = e.what();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("could not write outputs"), std::string::npos)
      << message;
  EXPECT_EQ(CountOccurrences(err, "could not write outputs"), 0u) << err;
}

TEST(ProfileTest, OutputErrorIsPrintedOnceWhenTheBodysExceptionWins) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.trace_path = dir.File("blocker/trace.json");
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(Profile(config, "test.root",
                       [&] {
                         BlockTracePath(config);
                         throw std::runtime_error("body failed");
                       }),
               std::runtime_error);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(CountOccurrences(err, "could not write outputs"), 1u) << err;
  EXPECT_NE(err.find("blocker"), std::string::npos) << err;
}

// The root name is copied: a later session whose root string sits at the same
// address (a reused buffer) reports its own name, not the first one.
TEST(ProfileTest, RootNameIsCopiedNotKeyedByAddress) {
  TempDir dir;
  std::string root = "first.root.name";
  const char* const address = root.c_str();
  Profile(QuietConfig(dir), root.c_str(), [] {});
  EXPECT_NE(ReadText(dir.File("out/trace.json")).find("\"first.root.name\""),
            std::string::npos);
  root = "other.root.name";  // same length: the buffer is reused
  ASSERT_EQ(root.c_str(), address);
  Profile(QuietConfig(dir), root.c_str(), [] {});
  const std::string trace = ReadText(dir.File("out/trace.json"));
  EXPECT_NE(trace.find("\"other.root.name\""), std::string::npos);
  EXPECT_EQ(trace.find("first.root.name"), std::string::npos);
}

TEST(ProfileTest, CapRetainsExactlyNSpansAndTheForestStaysValid) {
  TempDir dir;
  Config config = QuietConfig(dir);
  config.recording.max_events = 100;
  Profile(config, "capped.root", [] {
    for (int i = 0; i < 1000; ++i) {
      SPANPROF_SCOPE("outer");
      SPANPROF_SCOPE("inner");
    }
  });
  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->event_count, 100u);
  EXPECT_EQ(summary->dropped_events, 2001u - 100u);
  EXPECT_FALSE(summary->complete);
  EXPECT_TRUE(summary->validation_issues.empty());
  uint64_t dropped = 0;
  for (const analysis::Row& row : summary->rows) dropped += row.dropped;
  EXPECT_EQ(dropped, summary->dropped_events);
}

}  // namespace
}  // namespace spanprof
