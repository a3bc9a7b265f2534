// `open_at_exit`: spans still open when the program ended its session
// (exit(), FinishSession()) are a normal end, carried by the JSON trace, the
// .pftrace and the summary, and accepted by the gate without a flag.
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using spanprof::testing::CaptureBuilder;
using ::testing::HasSubstr;
using ::testing::Not;

// A program that called exit() inside `work`: the root and `work` were open.
Capture ExitedCapture() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t root = b.Site("app.run");
  const uint32_t step = b.Site("step");
  const uint32_t work = b.Site("work");
  b.Add(1, 0, root, main, 0, 1000).flags = kSpanOpenAtExit;
  b.Add(2, 1, step, main, 10, 100);
  b.Add(3, 1, work, main, 200, 1000).flags = kSpanOpenAtExit;
  b.capture().end_reason = "exit";
  b.capture().finished_normally = true;
  return b.Build();
}

TEST(OpenAtExitTest, TheFlagRoundTripsThroughTraceAndPftrace) {
  const Capture capture = ExitedCapture();
  const std::string json = TraceToJson(capture);
  EXPECT_THAT(json, HasSubstr("\"flags\":[\"open_at_exit\"]"));
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"t.json", json},
        {"t.pftrace", CaptureToPerfetto(capture)}}) {
    const absl::StatusOr<Capture> back = ParseTrace(text, name);
    ASSERT_TRUE(back.ok()) << name << ": " << back.status();
    EXPECT_EQ(back->spans, capture.spans) << name;
    EXPECT_EQ(back->end_reason, "exit") << name;
    EXPECT_TRUE(back->finished_normally) << name;
    EXPECT_EQ(back->spans[0].flags, kSpanOpenAtExit) << name;
  }
  // Beside another flag, in the documented order.
  Capture both = capture;
  both.spans[2].flags |= kSpanException;
  EXPECT_THAT(TraceToJson(both),
              HasSubstr("\"flags\":[\"exception\",\"open_at_exit\"]"));
  const absl::StatusOr<Capture> back = ParseTrace(TraceToJson(both), "b.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spans[2].flags, kSpanException | kSpanOpenAtExit);
}

TEST(OpenAtExitTest, TheSummaryIsCompleteAndCountsThem) {
  const Summary summary = Summarize(ExitedCapture());
  EXPECT_TRUE(summary.complete);
  EXPECT_EQ(summary.end_reason, "exit");
  EXPECT_EQ(summary.open_at_exit_events, 2u);
  EXPECT_EQ(summary.unfinished_events, 0u);
  const std::string json = SummaryToJson(summary);
  EXPECT_THAT(json, HasSubstr("\"open_at_exit_events\": 2"));
  const absl::StatusOr<Summary> back = ParseSummary(json, "s.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);
  // More than there are spans cannot be.
  const absl::StatusOr<Summary> bad =
      ParseSummary(testing::ReplaceFirst(json, "\"open_at_exit_events\": 2",
                                         "\"open_at_exit_events\": 4"),
                   "s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("$.open_at_exit_events: 4 > event_count (3)"));
}

// Unfinished spans (a signal, a stop with spans open) stay a loss.
TEST(OpenAtExitTest, UnfinishedSpansStillMakeItIncomplete) {
  Capture capture = ExitedCapture();
  capture.spans[2].flags = kSpanUnfinished;
  const Summary summary = Summarize(capture);
  EXPECT_FALSE(summary.complete);
  EXPECT_EQ(summary.open_at_exit_events, 1u);
  EXPECT_EQ(summary.unfinished_events, 1u);
}

TEST(OpenAtExitTest, TheTableShowsOneQuietLine) {
  const std::string table = FormatTable(Summarize(ExitedCapture()), {});
  EXPECT_THAT(table,
              HasSubstr("note: 2 spans were open when the program ended the "
                        "session (exit() or FinishSession()), closed then "
                        "(flagged open_at_exit)\n"));
  EXPECT_THAT(table, Not(HasSubstr("warning")));
}

TEST(OpenAtExitTest, TheGateNeedsNoFlag) {
  const Summary summary = Summarize(ExitedCapture());
  EXPECT_TRUE(CheckComparable(summary, "s.json", false).ok());
  const absl::StatusOr<Comparison> comparison =
      Compare(summary, summary, ComparePolicy{});
  ASSERT_TRUE(comparison.ok()) << comparison.status();
}

}  // namespace
}  // namespace spanprof::analysis
