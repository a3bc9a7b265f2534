// `end_reason`: how a session ended, carried by the trace metadata and the
// summary (version 5), read back strictly, and derived for older files.
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::Replace;
using ::spanprof::testing::RichCapture;
using ::testing::HasSubstr;

Capture EndedBy(std::string_view reason) {
  Capture capture = RichCapture();
  capture.end_reason = std::string(reason);
  capture.finished_normally = reason == "finished";
  return capture;
}

TEST(EndReasonTest, EveryKindRoundTripsThroughTraceAndSummary) {
  for (const char* reason : {"finished", "exit", "signal:SIGTERM",
                             "crash:SIGSEGV", "crash:terminate", "lost"}) {
    const Capture capture = EndedBy(reason);
    absl::StatusOr<Capture> trace = ParseTrace(TraceToJson(capture), "t");
    ASSERT_TRUE(trace.ok()) << reason << ": " << trace.status();
    EXPECT_EQ(trace->end_reason, reason);
    EXPECT_EQ(trace->finished_normally, capture.finished_normally);
    const std::string json = SummaryToJson(Summarize(*trace));
    EXPECT_THAT(json, HasSubstr(std::string("\"end_reason\": \"") + reason));
    absl::StatusOr<Summary> summary = ParseSummary(json, "s");
    ASSERT_TRUE(summary.ok()) << reason << ": " << summary.status();
    EXPECT_EQ(summary->end_reason, reason);
    // A capture that did not finish normally is never complete.
    if (std::string_view(reason) != "finished") EXPECT_FALSE(summary->complete);
  }
}

TEST(EndReasonTest, AnUnknownValueIsRejectedNamingTheField) {
  const std::string summary = SummaryToJson(Summarize(EndedBy("lost")));
  absl::StatusOr<Summary> bad =
      ParseSummary(Replace(summary, "\"lost\"", "\"crash:\""), "s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("$.end_reason: expected \"finished\""));
  const std::string trace = TraceToJson(EndedBy("lost"));
  absl::StatusOr<Capture> bad_trace = ParseTrace(
      Replace(trace, "\"end_reason\":\"lost\"", "\"end_reason\":\"killed\""),
      "t.json");
  ASSERT_FALSE(bad_trace.ok());
  EXPECT_THAT(std::string(bad_trace.status().message()),
              HasSubstr("end_reason"));
}

// Files written before `end_reason` read unchanged: a version 4 summary as
// "finished"; a trace without the field by `finished_normally`.
TEST(EndReasonTest, OlderFilesReadWithADerivedValue) {
  std::string v4 = SummaryToJson(Summarize(EndedBy("finished")));
  v4 = Replace(v4, "\"schema_version\": 5", "\"schema_version\": 4");
  v4 = Replace(v4, "  \"end_reason\": \"finished\",\n", "");
  v4 = Replace(v4, "  \"open_at_exit_events\": 0,\n", "");
  v4 = Replace(v4, "  \"drops\": [],\n", "");
  absl::StatusOr<Summary> summary = ParseSummary(v4, "v4.json");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->schema_version, 4);
  EXPECT_EQ(summary->end_reason, "finished");
  // Version 4 has no end_reason: there it is an unknown field.
  // (Nor `drops`, which comes first: left out here.)
  absl::StatusOr<Summary> mixed = ParseSummary(
      Replace(Replace(SummaryToJson(Summarize(EndedBy("finished"))),
                      "\"schema_version\": 5", "\"schema_version\": 4"),
              "  \"drops\": [],\n", ""),
      "mixed.json");
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(std::string(mixed.status().message()),
              HasSubstr("unknown field \"end_reason\""));

  const std::string exited = TraceToJson(EndedBy("exit"));
  absl::StatusOr<Capture> old =
      ParseTrace(Replace(exited, "\"end_reason\":\"exit\",\n", ""), "old.json");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->end_reason, "exit");
  const std::string finished = TraceToJson(EndedBy("finished"));
  absl::StatusOr<Capture> old_finished = ParseTrace(
      Replace(finished, "\"end_reason\":\"finished\",\n", ""), "old.json");
  ASSERT_TRUE(old_finished.ok()) << old_finished.status();
  EXPECT_EQ(old_finished->end_reason, "finished");
}

}  // namespace
}  // namespace spanprof::analysis
