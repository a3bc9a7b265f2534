// Summary schema version 2 (tail shape, named counters, dropped_args): the
// writer's output reads back, every new field is checked, and version 1 files
// written by earlier releases still read.
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/lookup.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::spanprof::testing::IntArg;
using ::spanprof::testing::Replace;
using ::spanprof::testing::RowNamed;
using ::testing::HasSubstr;

constexpr std::string_view kSource = "s.json";

// Two rows with counters (one with two), a heavy-tailed row of 40 calls
// (half 1 us, half 1 ms) and a row of one call.
Capture Counted() {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t run = b.Site("run");
  const uint32_t item = b.Site("item", "work");
  const uint32_t once = b.Site("once");
  b.Add(1, 0, run, t, 0, 100'000'000);
  int64_t at = 10;
  for (uint64_t id = 2; id < 42; ++id) {
    const int64_t d = id % 2 == 0 ? 1'000 : 1'000'000;
    b.Add(id, 1, item, t, at, at + d);
    b.Args(id, {IntArg("size", d), CounterArg("bytes", d / 100)});
    at += d + 10;
  }
  b.Add(42, 1, once, t, at, at + 500);
  b.Args(42, {CounterArg("allocs", 2), CounterArg("bytes", 1)});
  b.Args(1, {CounterArg("bytes", 7)});
  return b.Build();
}

std::string Json() { return SummaryToJson(Summarize(Counted())); }

// A summary without counters.
std::string PlainJson() {
  CaptureBuilder b;
  b.Add(1, 0, b.Site("a"), b.Thread(1), 0, 10);
  return SummaryToJson(Summarize(b.Build()));
}

void ExpectRejected(std::string_view json, std::string_view expected) {
  absl::StatusOr<Summary> parsed = ParseSummary(json, kSource);
  ASSERT_FALSE(parsed.ok()) << "accepted:\n" << json;
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr(std::string(expected)));
}

template <typename Mutate>
std::string Mutated(Mutate&& mutate) {
  Summary summary = Summarize(Counted());
  mutate(summary);
  return SummaryToJson(summary);
}

TEST(SummaryV2Test, WritesVersion2WithTheNewFields) {
  const std::string json = Json();
  EXPECT_THAT(json, HasSubstr("\"schema_version\": 5,"));
  EXPECT_THAT(json,
              HasSubstr("\"dropped_events\": 0,\n  \"dropped_args\": 0,"));
  EXPECT_THAT(json, HasSubstr("\"tail_ratio\": 1000.0,"));
  EXPECT_THAT(json, HasSubstr("\"heavy_tail\": true,"));
  EXPECT_THAT(json, HasSubstr("\"log_sigma\": null,"));  // the one call
  EXPECT_THAT(json, HasSubstr("\"counters\": {\n        \"allocs\": {\n"
                              "          \"total\": 2,\n"
                              "          \"self\": 0\n        },"));
}

TEST(SummaryV2Test, RoundTrips) {
  Capture capture = Counted();
  for (const uint64_t dropped : {0, 5}) {
    capture.dropped_args = dropped;
    const Summary summary = Summarize(capture);
    absl::StatusOr<Summary> back =
        ParseSummary(SummaryToJson(summary), kSource);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, summary);
    EXPECT_EQ(back->dropped_args, dropped);
    EXPECT_EQ(back->complete, dropped == 0);
  }
  Summary summary = Summarize(capture);
  EXPECT_EQ(RowNamed(summary, "run").counters,
            (std::vector<RowCounter>{{"allocs", 2, 0}, {"bytes", 200208, 7}}));
  EXPECT_TRUE(RowNamed(summary, "item").heavy_tail);
}

// Version 1 files, as earlier releases wrote them: a real capture's summary
// (docs/captures) and one with allocation counters.
TEST(SummaryV2Test, ReadsVersion1Files) {
  for (const char* name :
       {"v1-baseline-summary.json", "v1-alloc-summary.json"}) {
    SCOPED_TRACE(name);
    const std::string path = std::string(SPANPROF_TEST_SOURCE_DIR) +
                             "/tests/analysis/summary/testdata/" + name;
    absl::StatusOr<Summary> summary = ReadSummary(path);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->schema_version, 1);
    EXPECT_EQ(summary->dropped_args, 0u);
    ASSERT_GE(summary->rows.size(), 3u);
    for (const Row& row : summary->rows) {
      EXPECT_EQ(row.log_sigma, std::nullopt);
      EXPECT_FALSE(row.heavy_tail);
      EXPECT_TRUE(row.counters.empty());
      ASSERT_TRUE(row.tail_ratio.has_value()) << row.label;
      EXPECT_EQ(*row.tail_ratio, static_cast<double>(row.p99_ns) /
                                     static_cast<double>(row.median_ns));
    }
    // Written again, it is a current-version document with the same content.
    absl::StatusOr<Summary> again =
        ParseSummary(SummaryToJson(*summary), kSource);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->schema_version, kSummarySchemaVersion);
    again->schema_version = 1;
    EXPECT_EQ(*again, *summary);
  }
}

std::string Version1Text() {
  absl::StatusOr<std::string> text =
      ReadFile(std::string(SPANPROF_TEST_SOURCE_DIR) +
               "/tests/analysis/summary/testdata/v1-alloc-summary.json");
  EXPECT_TRUE(text.ok());
  return text.ok() ? *text : "";
}

TEST(SummaryV2Test, Version1HasNoVersion2Fields) {
  ExpectRejected(Replace(Version1Text(), "\"dropped_events\": 0,",
                         "\"dropped_events\": 0, \"dropped_args\": 0,"),
                 "$: unknown field \"dropped_args\"");
  ExpectRejected(Replace(Version1Text(), "\"calls\": 1,",
                         "\"calls\": 1, \"heavy_tail\": false,"),
                 "$.rows[0]: unknown field \"heavy_tail\"");
}

TEST(SummaryV2Test, Version2NeedsEveryNewField) {
  ExpectRejected(Replace(Json(), "\"dropped_args\": 0,", ""),
                 "$: missing field \"dropped_args\"");
  for (const char* field : {"tail_ratio", "log_sigma", "heavy_tail"}) {
    const std::string json = Json();
    const size_t at = json.find(std::string("\"") + field + "\"");
    const size_t end = json.find('\n', at);
    ExpectRejected(std::string(json).erase(at, end - at + 1),
                   std::string("missing field \"") + field + "\"");
  }
  ExpectRejected(Replace(PlainJson(), "\"dropped\": 0,\n      \"counters\": {}",
                         "\"dropped\": 0"),
                 "missing field \"counters\"");
}

TEST(SummaryV2Test, RejectsBadTailShape) {
  ExpectRejected(
      Replace(Json(), "\"tail_ratio\": 1000.0", "\"tail_ratio\": 999.0"),
      "tail_ratio is not p99_ns / median_ns (1000000 / 1000)");
  ExpectRejected(
      Replace(Json(), "\"tail_ratio\": 1000.0", "\"tail_ratio\": \"big\""),
      "$.rows[1].tail_ratio: expected a finite number or null, got \"big\"");
  ExpectRejected(
      Replace(Json(), "\"tail_ratio\": 1000.0", "\"tail_ratio\": -1.0"),
      "$.rows[1].tail_ratio: expected a non-negative number");
  ExpectRejected(
      Mutated([](Summary& s) { RowNamed(s, "item").log_sigma = -0.5; }),
      "log_sigma: expected a non-negative number");
  ExpectRejected(
      Mutated([](Summary& s) { RowNamed(s, "once").log_sigma = 0.5; }),
      "log_sigma must be null with fewer than 2 calls");
  ExpectRejected(
      Mutated([](Summary& s) { RowNamed(s, "once").heavy_tail = true; }),
      "heavy_tail is true but log_sigma is null");
  ExpectRejected(Replace(Json(), "\"heavy_tail\": true", "\"heavy_tail\": 1"),
                 "heavy_tail: expected");
}

TEST(SummaryV2Test, RejectsBadCounters) {
  ExpectRejected(Mutated([](Summary& s) {
                   std::swap(RowNamed(s, "run").counters[0],
                             RowNamed(s, "run").counters[1]);
                 }),
                 "$.rows[0].counters.allocs: counters are not sorted by name");
  ExpectRejected(Mutated([](Summary& s) {
                   RowNamed(s, "run").counters[1].name = "allocs";
                 }),
                 "$.rows[0].counters.allocs: duplicate counter");
  ExpectRejected(
      Mutated([](Summary& s) { RowNamed(s, "run").counters[0].name = ""; }),
      "$.rows[0].counters: a counter name is empty");
  ExpectRejected(
      Mutated([](Summary& s) { RowNamed(s, "run").counters[1].self = 200209; }),
      "$.rows[0]: counter \"bytes\": self (200209) > total (200208)");
  ExpectRejected(
      Mutated([](Summary& s) { RowNamed(s, "run").counters[1].total = -1; }),
      "$.rows[0].counters.bytes.total: expected a non-negative "
      "integer, got -1");
  ExpectRejected(Replace(Json(), "\"self\": 2\n", "\"self\": 2, \"mean\": 1\n"),
                 "counters.allocs: unknown field \"mean\"");
  ExpectRejected(Replace(PlainJson(), "\"counters\": {}", "\"counters\": []"),
                 "counters: expected object");
}

TEST(SummaryV2Test, CompleteMeansNoDroppedArgs) {
  ExpectRejected(
      Replace(Json(), "\"dropped_args\": 0,", "\"dropped_args\": 2,"),
      "$.complete: true, but the capture has 0 dropped events, 2 "
      "dropped args");
}

}  // namespace
}  // namespace spanprof::analysis
