// The fast line reader on its own: it reads the writer's layout to the
// capture the strict reader reads, and declines (nullopt) whatever it
// cannot match byte for byte, leaving the error to the strict reader.
#include "trace/fast_line_reader.h"

#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/captures.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"
#include "trace/strict_trace_reader.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis::internal {
namespace {

using ::spanprof::testing::ReplaceFirst;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::RichOptions;

constexpr std::string_view kSource = "build/t.json";

TEST(FastLineReaderTest, ReadsTheWritersLayoutToTheExactCapture) {
  for (const RichOptions& options :
       {RichOptions{}, RichOptions{.alloc = true, .drops = true},
        RichOptions{.unfinished = true, .counters = true, .keys = true}}) {
    const Capture capture = RichCapture(options);
    std::optional<ParsedTrace> read =
        ReadTraceLines(TraceToJson(capture), kSource, /*keep_events=*/false);
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->capture, capture);
    EXPECT_TRUE(read->events.empty());
  }
}

TEST(FastLineReaderTest, LeavesEscapedStringArgumentsToTheStrictReader) {
  // A string argument with an escaped quote, and a truncated one (an
  // object): not matched byte for byte, so declined.
  const Capture capture = RichCapture({.strings = true});
  const std::string json = TraceToJson(capture);
  EXPECT_FALSE(ReadTraceLines(json, kSource, false).has_value());
  absl::StatusOr<ParsedTrace> strict = ReadStrictTrace(json, kSource);
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_EQ(strict->capture, capture);
}

TEST(FastLineReaderTest, KeepsTheSameEventsAsTheStrictReader) {
  std::mt19937_64 rng(5);
  const Capture capture = testing::RandomCapture(rng, 50);
  const std::string json = TraceToJson(capture);
  std::optional<ParsedTrace> fast =
      ReadTraceLines(json, kSource, /*keep_events=*/true);
  absl::StatusOr<ParsedTrace> strict = ReadStrictTrace(json, kSource);
  ASSERT_TRUE(fast.has_value());
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_EQ(fast->capture, strict->capture);
  ASSERT_EQ(fast->events.size(), strict->events.size());
  for (size_t e = 0; e < fast->events.size(); ++e) {
    EXPECT_EQ(fast->events[e].index, strict->events[e].index);
    EXPECT_EQ(fast->events[e].is_span, strict->events[e].is_span);
    EXPECT_EQ(fast->events[e].tid, strict->events[e].tid);
    EXPECT_EQ(fast->events[e].ts_ns, strict->events[e].ts_ns);
    EXPECT_EQ(fast->events[e].span_id, strict->events[e].span_id);
  }
}

TEST(FastLineReaderTest, DeclinesAnotherLayout) {
  const std::string json = TraceToJson(RichCapture());
  // The same trace, valid, without the newline after the opening brace.
  EXPECT_FALSE(ReadTraceLines(ReplaceFirst(json, "{\n", "{"), kSource, false)
                   .has_value());
  // Spaces inside an X line.
  EXPECT_FALSE(
      ReadTraceLines(ReplaceFirst(json, "{\"ph\":\"X\",", "{\"ph\": \"X\","),
                     kSource, false)
          .has_value());
}

TEST(FastLineReaderTest, DeclinesAnEventThatDisagreesWithMetadata) {
  const std::string json = TraceToJson(RichCapture());
  // A name that is not its site's: the strict reader names the field.
  const std::string renamed = ReplaceFirst(
      json, "\"name\":\"model.forward\",\"cat\"", "\"name\":\"x\",\"cat\"");
  ASSERT_NE(renamed, json);
  EXPECT_FALSE(ReadTraceLines(renamed, kSource, false).has_value());
  // A span id of 0.
  const std::string zero =
      ReplaceFirst(json, "\"span_id\":1,", "\"span_id\":0,");
  ASSERT_NE(zero, json);
  EXPECT_FALSE(ReadTraceLines(zero, kSource, false).has_value());
}

TEST(FastLineReaderTest, DeclinesBrokenMetadata) {
  const std::string json = TraceToJson(RichCapture());
  const std::string broken =
      ReplaceFirst(json, "\"spanprof.trace\"", "\"other.trace\"");
  ASSERT_NE(broken, json);
  EXPECT_FALSE(ReadTraceLines(broken, kSource, false).has_value());
}

}  // namespace
}  // namespace spanprof::analysis::internal
