// The metadata reader on its own: a trace's `metadata` object, given as
// text, read into a `TraceMetadata` (the capture without its spans, and the
// sorted pid and tid lookups the span resolver uses), with errors naming
// the field under `$.metadata`.
#include "trace/trace_metadata_reader.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/captures.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof::analysis::internal {
namespace {

using ::spanprof::testing::ReplaceFirst;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::RichOptions;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr std::string_view kSource = "build/t.json";

// The text of `"metadata": {...}`'s object in the writer's trace.
std::string MetadataText(const Capture& capture) {
  const std::string json = TraceToJson(capture);
  const std::string key = "\"metadata\":";
  const size_t at = json.rfind(key);
  EXPECT_NE(at, std::string::npos);
  const size_t end = json.rfind('}');  // the top level's
  return json.substr(at + key.size(), end - at - key.size());
}

// The capture as metadata describes it: no spans yet.
Capture WithoutSpans(Capture capture) {
  capture.spans.clear();
  capture.span_allocs.clear();
  capture.args.clear();
  return capture;
}

TEST(TraceMetadataReaderTest, ReadsTheCaptureWithoutItsSpans) {
  for (const RichOptions& options :
       {RichOptions{}, RichOptions{.alloc = true, .drops = true},
        RichOptions{.counters = true, .strings = true, .keys = true}}) {
    const Capture capture = RichCapture(options);
    absl::StatusOr<TraceMetadata> metadata =
        ParseTraceMetadata(MetadataText(capture), kSource);
    ASSERT_TRUE(metadata.ok()) << metadata.status();
    EXPECT_EQ(metadata->capture, WithoutSpans(capture));
  }
}

TEST(TraceMetadataReaderTest, SortsTheThreadsAndProcessesForTheResolver) {
  const Capture capture = RichCapture();  // threads 100 and 101
  absl::StatusOr<TraceMetadata> metadata =
      ParseTraceMetadata(MetadataText(capture), kSource);
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_THAT(metadata->sorted_tids,
              ElementsAre(Pair(capture.pid, 100), Pair(capture.pid, 101)));
  // No metadata.processes: the capture's own pid.
  EXPECT_THAT(metadata->sorted_pids, ElementsAre(capture.pid));
}

void ExpectRejected(const std::string& text, std::string_view expected) {
  absl::StatusOr<TraceMetadata> metadata = ParseTraceMetadata(text, kSource);
  ASSERT_FALSE(metadata.ok()) << "accepted:\n" << text;
  EXPECT_THAT(std::string(metadata.status().message()),
              HasSubstr(std::string(expected)));
}

TEST(TraceMetadataReaderTest, RefusesAnotherSchemaNamingTheField) {
  const std::string text = MetadataText(RichCapture());
  ExpectRejected(
      ReplaceFirst(text, "\"spanprof.trace\"", "\"other.trace\""),
      "build/t.json: $.metadata.schema: expected \"spanprof.trace\", got "
      "\"other.trace\"");
}

TEST(TraceMetadataReaderTest, RefusesAThreadNamingAProcessOutsideAMerge) {
  const std::string text = MetadataText(RichCapture());
  ExpectRejected(ReplaceFirst(text, "\"name\":\"main\"",
                              "\"name\":\"main\",\"process\":0"),
                 "$.metadata.threads[0].process: a thread names its process "
                 "only in a merged trace");
}

TEST(TraceMetadataReaderTest, RefusesADropWhoseNamesDoNotMatchItsSite) {
  const std::string text = MetadataText(RichCapture({.drops = true}));
  const size_t drops = text.find("\"dropped_by_site\"");
  ASSERT_NE(drops, std::string::npos);
  std::string changed = text;
  const size_t name = changed.find("\"lost.work\"", drops);
  ASSERT_NE(name, std::string::npos);
  changed.replace(name, 11, "\"lost.play\"");
  ExpectRejected(changed,
                 "$.metadata.dropped_by_site[0]: names do not match "
                 "metadata.sites[");
}

TEST(TraceMetadataReaderTest, RefusesAnUnknownField) {
  const std::string text = MetadataText(RichCapture());
  ExpectRejected(ReplaceFirst(text, "{", "{\"colour\":1,"),
                 "$.metadata: unknown field \"colour\"");
}

}  // namespace
}  // namespace spanprof::analysis::internal
