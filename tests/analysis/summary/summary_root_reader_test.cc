// The reader's top-level step: each field goes to its own member with its
// exact type, and the fields whose values come from a set accept exactly
// that set (for the clock, the set of the document's version).
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/analysis/captures.h"
#include "tests/testing/summary_versions.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::ReplaceFirst;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::SummaryAsVersion;
using ::spanprof::testing::SummaryParseError;
using ::testing::HasSubstr;

std::string ParseError(const std::string& json) {
  return SummaryParseError(json, "r.json");
}

std::string Replaced(const std::string& json, std::string_view from,
                     std::string_view to) {
  const std::string out = ReplaceFirst(json, from, to);
  EXPECT_NE(out, json) << "test bug: no " << from;
  return out;
}

// Distinct values in every top-level scalar, so that a field read into
// another's member shows.
TEST(SummaryRootReaderTest, EachFieldIsReadIntoItsOwnMember) {
  Summary summary = Summarize(RichCapture({.broken = true, .counters = true}));
  summary.process_name = "proc";
  summary.host = "host-1";
  summary.pid = 4242;
  summary.wall_clock_anchor_ns = -17;
  summary.wall_clock_uncertainty_ns = 23;
  summary.max_depth = 31;
  summary.window_ns = 123457;
  summary.event_limit = 999;
  summary.overflow_policy = "ring";
  summary.dropped_events = 0;
  summary.failed_prepares = 5;
  summary.end_reason = "signal:SIGTERM";
  summary.process_resources.peak_rss_kib = 777;
  absl::StatusOr<Summary> read = ParseSummary(SummaryToJson(summary), "r.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, summary);
}

TEST(SummaryRootReaderTest, ValuesFromASetAcceptOnlyTheSet) {
  const std::string json = SummaryToJson(Summarize(RichCapture()));
  EXPECT_THAT(ParseError(Replaced(json, "\"overflow_policy\": \"drop\"",
                                  "\"overflow_policy\": \"wrap\"")),
              HasSubstr("r.json: $.overflow_policy: expected \"drop\" or "
                        "\"ring\", got \"wrap\""));
  EXPECT_THAT(ParseError(Replaced(json, "\"source\": \"spanprof\"",
                                  "\"source\": \"otlp\"")),
              HasSubstr("$.source: expected \"spanprof\" or \"chrome-trace\""));
  EXPECT_THAT(ParseError(Replaced(json, "\"end_reason\": \"finished\"",
                                  "\"end_reason\": \"killed\"")),
              HasSubstr("$.end_reason: expected \"finished\", \"exit\""));
  EXPECT_THAT(ParseError(Replaced(json, "\"process_count\": 1",
                                  "\"process_count\": 0")),
              HasSubstr("$.process_count: a capture has at least one "
                        "process"));
}

// "unknown" (a foreign capture's clock) came with `source` in version 3.
TEST(SummaryRootReaderTest, TheClockSetIsTheVersions) {
  const std::string json = SummaryToJson(Summarize(RichCapture()));
  const std::string foreign =
      Replaced(Replaced(json, "\"source\": \"spanprof\"",
                        "\"source\": \"chrome-trace\""),
               "\"clock\": \"monotonic\"", "\"clock\": \"unknown\"");
  EXPECT_EQ(ParseError(SummaryAsVersion(foreign, 3)), "accepted");
  EXPECT_THAT(ParseError(SummaryAsVersion(foreign, 2)),
              HasSubstr("$.clock: expected \"tsc\" or \"monotonic\", got "
                        "\"unknown\""));
  EXPECT_THAT(ParseError(Replaced(json, "\"clock\": \"monotonic\"",
                                  "\"clock\": \"utc\"")),
              HasSubstr("$.clock: expected \"tsc\" or \"monotonic\" or "
                        "\"unknown\", got \"utc\""));
}

TEST(SummaryRootReaderTest, IssuesHaveASpanAndAMessage) {
  const std::string json =
      SummaryToJson(Summarize(RichCapture({.broken = true})));
  absl::StatusOr<Summary> read = ParseSummary(json, "r.json");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_FALSE(read->validation_issues.empty());
  EXPECT_NE(read->validation_issues[0].span, 0u);
  EXPECT_FALSE(read->validation_issues[0].message.empty());
  EXPECT_THAT(ParseError(Replaced(json, "\"span\": ", "\"span\": -")),
              HasSubstr("$.validation_issues[0].span: "));
}

}  // namespace
}  // namespace spanprof::analysis
