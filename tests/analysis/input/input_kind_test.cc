// The one sniffer: each kind of file the commands read is told by its
// bytes, from the real writers' outputs (and the runtime's stream header),
// and what is none of them is an error naming the file.
#include "input/input_kind.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/src/stream/stream_format.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"
#include "spanprof/capture.h"
#include "tests/analysis/captures.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof::analysis::internal {
namespace {

using ::spanprof::testing::ReplaceFirst;
using ::spanprof::testing::RichCapture;
using ::testing::HasSubstr;

TEST(InputKindTest, TellsEachWritersOutput) {
  const Capture capture = RichCapture();
  const std::string trace = TraceToJson(capture);
  EXPECT_EQ(SniffInput(trace), InputKind::kSpanprofTrace);
  EXPECT_EQ(SniffInput(CaptureToPerfetto(capture)), InputKind::kPerfettoTrace);
  EXPECT_EQ(SniffInput(SummaryToJson(Summarize(capture))), InputKind::kSummary);
  const std::string stream =
      spanprof::internal::StreamFileHeader() + std::string(40, '\0');
  EXPECT_EQ(SniffInput(stream), InputKind::kStreamFile);
}

TEST(InputKindTest, TellsASpanprofTraceInAnyLayout) {
  const std::string trace = TraceToJson(RichCapture());
  // Not the writer's layout: told by walking the top level.
  EXPECT_EQ(SniffInput(ReplaceFirst(trace, "{\n", "{ ")),
            InputKind::kSpanprofTrace);
  // The writer's layout, a broken event: still spanprof's (its reader
  // gives the error).
  EXPECT_EQ(SniffInput(ReplaceFirst(trace, "\"span_id\":1,", "\"span_id\":,")),
            InputKind::kSpanprofTrace);
}

TEST(InputKindTest, ForeignIsATraceWithoutSpanprofMetadata) {
  EXPECT_EQ(SniffInput(R"( [{"ph":"X"}])"), InputKind::kChromeTrace);
  EXPECT_EQ(SniffInput(R"({"traceEvents":[]})"), InputKind::kChromeTrace);
  EXPECT_EQ(SniffInput(R"({"traceEvents":[],"metadata":{"clock-domain":"x"}})"),
            InputKind::kChromeTrace);
  EXPECT_EQ(SniffInput(R"({"metadata":3,"traceEvents":[]})"),
            InputKind::kChromeTrace);
  // spanprof's own traces, even broken ones.
  EXPECT_EQ(
      SniffInput(R"({"traceEvents":[],"metadata":{"spanprof_version":"1"}})"),
      InputKind::kSpanprofTrace);
  EXPECT_EQ(
      SniffInput(R"({"traceEvents":[],"metadata":{"schema":"chrome.trace"}})"),
      InputKind::kSpanprofTrace);
  // Malformed JSON is not foreign: spanprof's reader gives the error.
  EXPECT_NE(SniffInput("{\"traceEvents\": [1,"), InputKind::kChromeTrace);
  // The writer's layout without spanprof's metadata is another tool's.
  const std::string trace = TraceToJson(RichCapture());
  const std::string renamed =
      ReplaceFirst(ReplaceFirst(trace, "\"schema\":", "\"format\":"),
                   "\"spanprof_version\":", "\"tool_version\":");
  ASSERT_NE(renamed, trace);
  EXPECT_EQ(SniffInput(renamed), InputKind::kChromeTrace);
}

TEST(InputKindTest, WhatIsNoKindIsAnErrorNamingTheFile) {
  EXPECT_EQ(SniffInput(""), InputKind::kUnknown);
  EXPECT_EQ(SniffInput("not json"), InputKind::kUnknown);
  absl::StatusOr<InputKind> other = DetectInputKind("{\"a\":1}", "o.json");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(std::string(other.status().message()),
              HasSubstr("o.json: $: neither a spanprof summary (no "
                        "\"schema\") nor a trace (no \"traceEvents\")"));
  EXPECT_FALSE(DetectInputKind("not json", "x").ok());
  EXPECT_EQ(InputKindName(InputKind::kStreamFile), "stream file");
}

TEST(InputKindTest, EntryPointsRefuseAStreamFileNamingWhatReadsIt) {
  const std::string stream =
      spanprof::internal::StreamFileHeader() + std::string(40, '\0');
  absl::StatusOr<Capture> trace = ParseTrace(stream, "s.stream");
  ASSERT_FALSE(trace.ok());
  EXPECT_THAT(std::string(trace.status().message()),
              HasSubstr("s.stream: a spanprof stream file"));
  EXPECT_THAT(std::string(trace.status().message()),
              HasSubstr("spanprof recover"));
  absl::StatusOr<ArtifactKind> kind = DetectArtifactKind(stream, "s.stream");
  ASSERT_FALSE(kind.ok());
  EXPECT_THAT(std::string(kind.status().message()),
              HasSubstr("spanprof recover"));
  const ValidationReport report = ValidateArtifact(stream, "s.stream");
  EXPECT_FALSE(report.kind.has_value());
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_THAT(report.problems[0], HasSubstr("s.stream: a spanprof stream"));
}

TEST(InputKindTest, ArtifactKindsFollowTheSniffer) {
  const Capture capture = RichCapture();
  EXPECT_EQ(DetectArtifactKind(TraceToJson(capture), "t").value(),
            ArtifactKind::kTrace);
  EXPECT_EQ(DetectArtifactKind(CaptureToPerfetto(capture), "t").value(),
            ArtifactKind::kTrace);
  EXPECT_EQ(DetectArtifactKind(R"([{"ph":"X"}])", "t").value(),
            ArtifactKind::kTrace);
  EXPECT_EQ(DetectArtifactKind(SummaryToJson(Summarize(capture)), "s").value(),
            ArtifactKind::kSummary);
}

}  // namespace
}  // namespace spanprof::analysis::internal
