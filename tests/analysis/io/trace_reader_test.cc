// The strict trace reader: every writer output reads back to the exact
// capture (so to the same summary), nanoseconds survive exactly, and
// malformed traces are refused with the event's JSON path.
#include "analysis/src/trace_reader.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <tuple>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/analysis/io/captures.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::RichOptions;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::string_view kSource = "build/t.json";

std::string CleanJson() { return TraceToJson(RichCapture()); }

std::string Replace(std::string text, std::string_view from,
                    std::string_view to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: no \"" << from << "\"";
  if (at == std::string::npos) return text;
  return text.replace(at, from.size(), to);
}

void ExpectRejected(std::string_view json, std::string_view expected) {
  absl::StatusOr<Capture> parsed = ParseTrace(json, kSource);
  ASSERT_FALSE(parsed.ok()) << "accepted:\n" << json;
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(parsed.status().message());
  EXPECT_THAT(message, StartsWith(std::string(kSource) + ": "));
  EXPECT_THAT(message, HasSubstr(std::string(expected)));
}

// The index in $.traceEvents of the X event of span `id`.
size_t EventIndex(const std::string& json, uint64_t id) {
  const std::string needle = "\"span_id\":" + std::to_string(id) + ",";
  const size_t at = json.find(needle);
  EXPECT_NE(at, std::string::npos);
  size_t index = 0;
  for (size_t pos = json.find("{\"ph\":"); pos < at;
       pos = json.find("{\"ph\":", pos + 1)) {
    ++index;
  }
  return index - 1;
}

TEST(TraceReaderTest, RoundTripsTheExactCapture) {
  const RichOptions variants[] = {
      {},
      {.alloc = true},
      {.drops = true},
      {.unfinished = true},
      {.broken = true},
      {.alloc = true, .drops = true, .unfinished = true, .broken = true},
  };
  for (const RichOptions& options : variants) {
    const Capture capture = RichCapture(options);
    absl::StatusOr<Capture> back = ParseTrace(TraceToJson(capture), kSource);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, capture);
    EXPECT_EQ(Summarize(*back), Summarize(capture));
  }
}

TEST(TraceReaderTest, RoundTripsRandomCaptures) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) {
    const Capture capture = testing::RandomCapture(rng);
    absl::StatusOr<Capture> back = ParseTrace(TraceToJson(capture), kSource);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, capture);
    // What `spanprof summarize` relies on: the same summary, byte for byte.
    EXPECT_EQ(SummaryToJson(Summarize(*back)),
              SummaryToJson(Summarize(capture)));
  }
}

// The writer's layout (one event per line) is read in chunks of lines; any
// other layout by the one-pass reader. Both must give the same capture and
// the same events, also across chunk boundaries (traces over 256 KiB) and
// when the file's order is not the capture's (several threads).
std::string OneLine(std::string json) {
  std::string out;
  for (char c : json) {
    if (c != '\n') out.push_back(c);
  }
  return out;
}

TEST(TraceReaderTest, ChunkedAndOnePassReadsAgreeOnLargeTraces) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 4; ++i) {
    const Capture capture = testing::RandomCapture(rng, 2000);
    const std::string json = TraceToJson(capture);
    ASSERT_GT(json.size(), size_t{300} << 10);
    absl::StatusOr<internal::ParsedTrace> chunked =
        internal::ParseTraceDocument(json, kSource);
    absl::StatusOr<internal::ParsedTrace> one_pass =
        internal::ParseTraceDocument(OneLine(json), kSource);
    ASSERT_TRUE(chunked.ok()) << chunked.status();
    ASSERT_TRUE(one_pass.ok()) << one_pass.status();
    EXPECT_EQ(chunked->capture, capture);
    EXPECT_EQ(one_pass->capture, capture);
    ASSERT_EQ(chunked->events.size(), one_pass->events.size());
    for (size_t e = 0; e < chunked->events.size(); ++e) {
      const internal::TraceEvent& a = chunked->events[e];
      const internal::TraceEvent& b = one_pass->events[e];
      EXPECT_EQ(std::tie(a.index, a.is_span, a.is_process_name, a.pid, a.tid,
                         a.ts_ns, a.dur_ns, a.span_id, a.has_bind_id, a.bind_id,
                         a.flow_in, a.flow_out),
                std::tie(b.index, b.is_span, b.is_process_name, b.pid, b.tid,
                         b.ts_ns, b.dur_ns, b.span_id, b.has_bind_id, b.bind_id,
                         b.flow_in, b.flow_out))
          << "event " << e;
    }
    EXPECT_EQ(ParseTrace(json, kSource).value(), capture);
  }
}

TEST(TraceReaderTest, ChunkedReadReportsTheOnePassError) {
  std::mt19937_64 rng(12);
  const std::string json = TraceToJson(testing::RandomCapture(rng, 2000));
  // Errors deep in the file (past the first chunk), in metadata, and a
  // trailing comma after the last event.
  const size_t late = json.find("\"span_id\":", json.size() * 3 / 4);
  ASSERT_NE(late, std::string::npos);
  std::string bad_event = json;
  bad_event.replace(late, 10, "\"span_id\":-");
  const size_t last_event_end = json.rfind("\n],");
  std::string trailing_comma = json;
  trailing_comma.insert(last_event_end, ",");
  const std::string bad_metadata =
      Replace(json, "\"schema_version\":1", "\"schema_version\":2");
  for (const std::string& bad : {bad_event, trailing_comma, bad_metadata}) {
    absl::StatusOr<Capture> chunked = ParseTrace(bad, kSource);
    absl::StatusOr<Capture> one_pass = ParseTrace(OneLine(bad), kSource);
    ASSERT_FALSE(chunked.ok());
    ASSERT_FALSE(one_pass.ok());
    EXPECT_EQ(chunked.status(), one_pass.status());
  }
}

TEST(TraceReaderTest, RoundTripsAnEmptyCapture) {
  Capture capture;
  capture.clock = "tsc";
  capture.overflow_policy = "ring";
  absl::StatusOr<Capture> back = ParseTrace(TraceToJson(capture), kSource);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, capture);
}

TEST(TraceReaderTest, KeepsNanosecondsExactBeyondDoublePrecision) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("x");
  // 2^53 + 1 ns does not survive a double; nor do 1 ns steps an hour in.
  const int64_t far = (int64_t{1} << 53) + 1;
  b.Add(1, 0, s, t, far, far + 1);
  b.Add(2, 0, s, t, far + 2, far + 3);
  b.Add(3, 0, s, t, 3'600'000'000'001, 3'600'000'000'002);
  b.Add(4, 0, s, t, 0, 0);
  const Capture capture = b.Build();
  const std::string json = TraceToJson(capture);
  EXPECT_THAT(json, HasSubstr("\"ts\":9007199254740.993"));
  absl::StatusOr<Capture> back = ParseTrace(json, kSource);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, capture);
}

TEST(TraceReaderTest, ReadsPlainAndGzipFiles) {
  testing::TempDir dir;
  const Capture capture = RichCapture({.alloc = true});
  for (const char* name : {"t.json", "t.json.gz"}) {
    ASSERT_TRUE(WriteTrace(capture, dir.File(name)).ok());
    absl::StatusOr<Capture> back = ReadTrace(dir.File(name));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, capture);
  }
}

TEST(TraceReaderTest, ReadsNonFiniteDoublesAsNaN) {
  Capture capture = RichCapture();
  capture.args[1].double_value = INFINITY;  // "ratio", written as null
  absl::StatusOr<Capture> back = ParseTrace(TraceToJson(capture), kSource);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->args.size(), capture.args.size());
  EXPECT_TRUE(back->args[1].is_double);
  EXPECT_TRUE(std::isnan(back->args[1].double_value));
}

TEST(TraceReaderTest, KeepsFileOrderOfEventsForValidation) {
  const std::string json = CleanJson();
  absl::StatusOr<internal::ParsedTrace> parsed =
      internal::ParseTraceDocument(json, kSource);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  // process_name + two M events per thread, then one X event per span.
  ASSERT_EQ(parsed->events.size(), 5 + parsed->capture.spans.size());
  const internal::TraceEvent& event = parsed->events[EventIndex(json, 4)];
  EXPECT_TRUE(event.is_span);
  EXPECT_EQ(event.span_id, 4u);
  EXPECT_EQ(event.tid, 101);
  EXPECT_EQ(event.ts_ns, 200);
  EXPECT_EQ(event.dur_ns, 8800);
  // Span 4 is the worker-thread child of span 1: a flow_in bound to 1.
  EXPECT_TRUE(event.has_bind_id);
  EXPECT_TRUE(event.flow_in);
  EXPECT_EQ(event.bind_id, 1u);
}

TEST(ParseMicrosTest, ParsesExactly) {
  int64_t ns = -1;
  EXPECT_TRUE(internal::ParseMicros("0.000", &ns));
  EXPECT_EQ(ns, 0);
  EXPECT_TRUE(internal::ParseMicros("0", &ns));
  EXPECT_EQ(ns, 0);
  EXPECT_TRUE(internal::ParseMicros("1234.567", &ns));
  EXPECT_EQ(ns, 1'234'567);
  EXPECT_TRUE(internal::ParseMicros("1.5", &ns));
  EXPECT_EQ(ns, 1'500);
  EXPECT_TRUE(internal::ParseMicros("-0.005", &ns));
  EXPECT_EQ(ns, -5);
  EXPECT_TRUE(internal::ParseMicros("9223372036854775.807", &ns));
  EXPECT_EQ(ns, INT64_MAX);
  EXPECT_TRUE(internal::ParseMicros("-9223372036854775.808", &ns));
  EXPECT_EQ(ns, INT64_MIN);
  for (const char* bad : {"", "-", "1.", ".5", "1.2345", "1e3", "01.000",
                          "1.0x", "9223372036854775.808", "+1.000", "1 "}) {
    EXPECT_FALSE(internal::ParseMicros(bad, &ns)) << bad;
  }
}

TEST(TraceReaderRejectsTest, ExponentTimestamp) {
  const std::string json = CleanJson();
  const size_t index = EventIndex(json, 2);
  ExpectRejected(Replace(json, "\"ts\":0.100", "\"ts\":1e-1"),
                 "$.traceEvents[" + std::to_string(index) +
                     "].ts: expected microseconds written as "
                     "<integer>.<up to 3 digits> within int64 ns, got 1e-1");
}

TEST(TraceReaderRejectsTest, SubNanosecondTimestamp) {
  ExpectRejected(Replace(CleanJson(), "\"ts\":0.100", "\"ts\":0.1001"),
                 ".ts: expected microseconds");
}

TEST(TraceReaderRejectsTest, StringDuration) {
  ExpectRejected(Replace(CleanJson(), "\"dur\":4.000", "\"dur\":\"4.000\""),
                 ".dur: expected microseconds (a number), got \"4.000\"");
}

TEST(TraceReaderRejectsTest, OverflowingEnd) {
  ExpectRejected(
      Replace(CleanJson(), "\"dur\":4.000", "\"dur\":9223372036854775.800"),
      ".dur: ts + dur overflows int64 ns");
}

TEST(TraceReaderRejectsTest, MissingSpanId) {
  ExpectRejected(Replace(CleanJson(), "\"span_id\":2,", ""),
                 ".args: missing field \"span_id\"");
}

TEST(TraceReaderRejectsTest, ZeroSpanId) {
  ExpectRejected(Replace(CleanJson(), "\"span_id\":2,", "\"span_id\":0,"),
                 ".args.span_id: span ids start at 1");
}

TEST(TraceReaderRejectsTest, UnknownEventField) {
  const std::string json = CleanJson();
  const size_t index = EventIndex(json, 1);
  ExpectRejected(
      Replace(json, "\"cat\":\"spanprof\"", "\"cat\":\"spanprof\",\"s\":\"t\""),
      "$.traceEvents[" + std::to_string(index) + "]: unknown field \"s\"");
}

TEST(TraceReaderRejectsTest, UnknownArgsField) {
  ExpectRejected(
      Replace(CleanJson(), "\"span_id\":2,", "\"span_id\":2,\"color\":1,"),
      ".args: unknown field \"color\"");
}

TEST(TraceReaderRejectsTest, DuplicateEventField) {
  ExpectRejected(
      Replace(CleanJson(), "\"dur\":4.000", "\"dur\":4.000,\"ts\":1"),
      ": duplicate field \"ts\"");
}

TEST(TraceReaderRejectsTest, UnsupportedPhase) {
  ExpectRejected(Replace(CleanJson(), "{\"ph\":\"X\"", "{\"ph\":\"B\""),
                 ".ph: expected \"X\" or \"M\", got \"B\"");
}

TEST(TraceReaderRejectsTest, SiteOutOfRange) {
  ExpectRejected(Replace(CleanJson(), "\"site\":1,", "\"site\":99,"),
                 ".args.site: site index 99 out of range (5 sites)");
}

TEST(TraceReaderRejectsTest, NameDoesNotMatchSite) {
  ExpectRejected(Replace(CleanJson(), "\"name\":\"app.run\",\"cat\"",
                         "\"name\":\"app.walk\",\"cat\""),
                 ".name: \"app.walk\" != metadata.sites[0].name \"app.run\"");
}

TEST(TraceReaderRejectsTest, TagDoesNotMatchSite) {
  ExpectRejected(
      Replace(CleanJson(), "\"module\":\"encoder\"", "\"module\":\"decoder\""),
      ".args.module: does not match metadata.sites[1].module");
}

TEST(TraceReaderRejectsTest, TidDoesNotMatchThread) {
  ExpectRejected(Replace(CleanJson(), "\"tid\":101,\"ts\":0.200",
                         "\"tid\":102,\"ts\":0.200"),
                 ".tid: 102 != metadata.threads[1].tid (101)");
}

TEST(TraceReaderRejectsTest, PidDoesNotMatchMetadata) {
  ExpectRejected(Replace(CleanJson(), "\"pid\":4242,\"tid\":101,\"ts\":0.200",
                         "\"pid\":4243,\"tid\":101,\"ts\":0.200"),
                 ".pid: 4243 != metadata.pid (4242)");
}

TEST(TraceReaderRejectsTest, MetadataEventForAnUnknownThread) {
  ExpectRejected(
      Replace(CleanJson(), "\"tid\":101,\"ts\":0,", "\"tid\":102,\"ts\":0,"),
      "$.traceEvents[3].tid: 102 is not the tid of any thread in "
      "metadata.threads");
}

TEST(TraceReaderRejectsTest, MetadataEventOfAnotherProcess) {
  ExpectRejected(Replace(CleanJson(), "\"pid\":4242,\"tid\":4242",
                         "\"pid\":1,\"tid\":4242"),
                 "$.traceEvents[0].pid: 1 != metadata.pid (4242)");
}

TEST(TraceReaderRejectsTest, UnknownFlag) {
  ExpectRejected(Replace(CleanJson(), "\"exception\"", "\"crashed\""),
                 ".args.flags[0]: unknown flag \"crashed\"");
}

TEST(TraceReaderRejectsTest, AllocationsWhenNotMeasured) {
  ExpectRejected(Replace(CleanJson(), "\"span_id\":2,",
                         "\"span_id\":2,\"alloc_count\":1,"),
                 "alloc_count and alloc_bytes must be left out");
}

TEST(TraceReaderRejectsTest, UserArgumentThatIsNotANumber) {
  ExpectRejected(Replace(CleanJson(), "\"size\":4096", "\"size\":\"4096\""),
                 ".args.args.size: expected a number or null, got \"4096\"");
}

TEST(TraceReaderRejectsTest, WrongDisplayTimeUnit) {
  ExpectRejected(Replace(CleanJson(), "\"displayTimeUnit\":\"ns\"",
                         "\"displayTimeUnit\":\"ms\""),
                 "$.displayTimeUnit: expected \"ns\", got \"ms\"");
}

TEST(TraceReaderRejectsTest, WrongTraceSchema) {
  ExpectRejected(Replace(CleanJson(), "\"schema\":\"spanprof.trace\"",
                         "\"schema\":\"chrome.trace\""),
                 "$.metadata.schema: expected \"spanprof.trace\"");
}

TEST(TraceReaderRejectsTest, WrongTraceSchemaVersion) {
  ExpectRejected(
      Replace(CleanJson(), "\"schema_version\":1", "\"schema_version\":2"),
      "$.metadata.schema_version: unsupported schema_version 2");
}

TEST(TraceReaderRejectsTest, MissingMetadata) {
  ExpectRejected(R"({"traceEvents":[],"displayTimeUnit":"ns"})",
                 "$: missing field \"metadata\" (not a spanprof trace)");
}

TEST(TraceReaderRejectsTest, ASummaryIsNotATrace) {
  ExpectRejected(SummaryToJson(Summarize(RichCapture())),
                 "$: this is a spanprof summary, not a trace");
}

TEST(TraceReaderRejectsTest, UnknownMetadataField) {
  ExpectRejected(Replace(CleanJson(), "\"schema\":\"spanprof.trace\"",
                         "\"schema\":\"spanprof.trace\",\"host\":\"a\""),
                 "$.metadata: unknown field \"host\"");
}

TEST(TraceReaderRejectsTest, DropNamesDoNotMatchSite) {
  const std::string json = TraceToJson(RichCapture({.drops = true}));
  ExpectRejected(Replace(json, "\"name\":\"lost.work\",\"phase\":\"lost\"",
                         "\"name\":\"lost.play\",\"phase\":\"lost\""),
                 "$.metadata.dropped_by_site[0]: names do not match "
                 "metadata.sites[4]");
}

TEST(TraceReaderRejectsTest, Truncated) {
  const std::string json = CleanJson();
  ExpectRejected(json.substr(0, json.size() / 2), "truncated");
}

TEST(TraceReaderRejectsTest, TrailingDocument) {
  ExpectRejected(CleanJson() + "{}", "$: unexpected content after");
}

TEST(TraceReaderRejectsTest, HugeInteger) {
  ExpectRejected(Replace(CleanJson(), "\"heartbeats\":50",
                         "\"heartbeats\":123456789012345678901234"),
                 ".args.heartbeats: integer out of range");
}

}  // namespace
}  // namespace spanprof::analysis
