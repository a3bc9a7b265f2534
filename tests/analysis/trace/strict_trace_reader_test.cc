// The strict reader on its own (with the strict event reader and its
// diagnosis): any layout of a spanprof trace, read in one pass, errors
// naming the file, the event and the field.
#include "trace/strict_trace_reader.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/captures.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis::internal {
namespace {

using ::spanprof::testing::ReplaceFirst;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::RichOptions;
using ::testing::HasSubstr;

constexpr std::string_view kSource = "build/t.json";

// The writer's trace on one line: only the strict reader reads it.
std::string OneLine(const std::string& json) {
  std::string out;
  for (char c : json) {
    if (c != '\n') out.push_back(c);
  }
  return out;
}

std::string ErrorOf(const std::string& json) {
  absl::StatusOr<ParsedTrace> read = ReadStrictTrace(json, kSource);
  EXPECT_FALSE(read.ok()) << "accepted:\n" << json;
  return read.ok() ? "" : std::string(read.status().message());
}

TEST(StrictTraceReaderTest, ReadsAnyLayoutToTheExactCapture) {
  for (const RichOptions& options :
       {RichOptions{}, RichOptions{.alloc = true, .unfinished = true},
        RichOptions{.counters = true, .strings = true, .keys = true}}) {
    const Capture capture = RichCapture(options);
    absl::StatusOr<ParsedTrace> read =
        ReadStrictTrace(OneLine(TraceToJson(capture)), kSource);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->capture, capture);
  }
}

TEST(StrictTraceReaderTest, KeepsEveryEventInFileOrder) {
  const Capture capture = RichCapture();
  absl::StatusOr<ParsedTrace> read =
      ReadStrictTrace(OneLine(TraceToJson(capture)), kSource);
  ASSERT_TRUE(read.ok()) << read.status();
  size_t spans = 0;
  for (size_t e = 0; e < read->events.size(); ++e) {
    EXPECT_EQ(read->events[e].index, e);
    spans += read->events[e].is_span ? 1 : 0;
  }
  EXPECT_EQ(spans, capture.spans.size());
}

TEST(StrictTraceReaderTest, EventErrorsNameTheEventAndField) {
  const std::string json = OneLine(TraceToJson(RichCapture()));
  EXPECT_THAT(ErrorOf(ReplaceFirst(json, "{\"ph\":\"X\"", "{\"ph\":\"B\"")),
              HasSubstr("build/t.json: $.traceEvents["));
  EXPECT_THAT(ErrorOf(ReplaceFirst(json, "{\"ph\":\"X\"", "{\"ph\":\"B\"")),
              HasSubstr("].ph: expected \"X\" or \"M\", got \"B\""));
  EXPECT_THAT(ErrorOf(ReplaceFirst(json, "\"span_id\":1,", "\"span_id\":0,")),
              HasSubstr(".args.span_id: span ids start at 1"));
  EXPECT_THAT(ErrorOf(ReplaceFirst(json, "\"dur\":", "\"dur\":\"1\",\"x\":")),
              HasSubstr(".dur: expected microseconds (a number)"));
}

TEST(StrictTraceReaderTest, DiagnosesASummaryAndAForeignTrace) {
  const std::string summary = SummaryToJson(Summarize(RichCapture()));
  EXPECT_THAT(ErrorOf(summary),
              HasSubstr("build/t.json: $: this is a spanprof summary, not a "
                        "trace"));
  EXPECT_THAT(ErrorOf(R"({"traceEvents":[]})"),
              HasSubstr("missing field \"metadata\" (not a spanprof trace; a "
                        "foreign Chrome trace"));
}

TEST(StrictTraceReaderTest, DiagnosisKeepsAnErrorItCannotExplain) {
  const absl::Status error = absl::InvalidArgumentError("the first error");
  const std::string trace = TraceToJson(RichCapture());
  EXPECT_EQ(DiagnoseTraceError(trace, kSource, error), error);
  EXPECT_EQ(DiagnoseTraceError("not json", kSource, error), error);
  EXPECT_THAT(
      std::string(DiagnoseTraceError(ReplaceFirst(trace, "\"spanprof.trace\"",
                                                  "\"other.trace\""),
                                     kSource, error)
                      .message()),
      HasSubstr("$.metadata.schema: expected \"spanprof.trace\""));
}

}  // namespace
}  // namespace spanprof::analysis::internal
