// The summary's `drops` (version 5): each lost argument or count by span
// site, name, kind and reason, written, read back strictly, checked against
// `dropped_args`, carried by the trace, and named by the console table.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kSource = "drops.json";

// run > log.load, with three kinds of drops: ninja's argument made before
// log.load opened, counts of spans the cap dropped, and two the side budget
// refused on run.
Capture DroppingCapture() {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t run = b.Site("run");
  const uint32_t load = b.Site("log.load", "", "", "load");
  b.Add(1, 0, run, t, 0, 1000);
  b.Add(2, 1, load, t, 10, 500);
  Capture c = b.Build();
  c.arg_drops = {
      ArgDrop{load, "bytes", false, "no_open_span", 1},
      ArgDrop{run, "items", true, "cap", 5},
      ArgDrop{run, "size", false, "side_budget", 2},
  };
  c.dropped_args = 8;
  return c;
}

std::string Replace(std::string text, std::string_view from,
                    std::string_view to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

void ExpectRejected(const std::string& json, std::string_view message) {
  const absl::StatusOr<Summary> read = ParseSummary(json, kSource);
  ASSERT_FALSE(read.ok()) << json;
  EXPECT_THAT(read.status().message(), HasSubstr(message));
}

TEST(DropsTest, SummarizeNamesEachDropByItsSiteKey) {
  const Summary summary = Summarize(DroppingCapture());
  EXPECT_EQ(summary.dropped_args, 8u);
  EXPECT_FALSE(summary.complete);
  EXPECT_EQ(summary.drops,
            (std::vector<Drop>{
                {RowKey{.name = "run"}, "items", "count", "cap", 5},
                {RowKey{.name = "run"}, "size", "arg", "side_budget", 2},
                {RowKey{.name = "log.load", .activity = "load"}, "bytes", "arg",
                 "no_open_span", 1},
            }));
}

TEST(DropsTest, WhatTheCaptureDoesNotNameIsUnknown) {
  Capture capture = DroppingCapture();
  capture.dropped_args = 11;  // three more than it names
  Summary summary = Summarize(capture);
  ASSERT_EQ(summary.drops.size(), 4u);
  EXPECT_EQ(summary.drops[1], (Drop{std::nullopt, "", "", "unknown", 3}));
  // More named than counted: the names cannot be trusted.
  capture.dropped_args = 2;
  summary = Summarize(capture);
  EXPECT_EQ(summary.drops,
            (std::vector<Drop>{{std::nullopt, "", "", "unknown", 2}}));
}

TEST(DropsTest, RoundTripsThroughTheStrictReader) {
  const Summary summary = Summarize(DroppingCapture());
  const std::string json = SummaryToJson(summary);
  EXPECT_THAT(json, HasSubstr(R"("dropped_args": 8,
  "drops": [
    {
      "site": {
        "name": "run",
        "phase": "",
        "module": "",
        "activity": ""
      },
      "name": "items",
      "kind": "count",
      "reason": "cap",
      "count": 5
    },)"));
  absl::StatusOr<Summary> back = ParseSummary(json, kSource);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);

  Capture unknown = DroppingCapture();
  unknown.arg_drops.clear();
  const std::string unknown_json = SummaryToJson(Summarize(unknown));
  EXPECT_THAT(unknown_json, HasSubstr(R"("site": null,
      "name": null,
      "kind": null,
      "reason": "unknown",
      "count": 8)"));
  back = ParseSummary(unknown_json, kSource);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, Summarize(unknown));
}

TEST(DropsTest, TheReaderRefusesMalformedEntriesNamingTheField) {
  const std::string json = SummaryToJson(Summarize(DroppingCapture()));
  ExpectRejected(Replace(json, "\"reason\": \"cap\"", "\"reason\": \"oops\""),
                 "$.drops[0].reason: expected \"cap\"");
  ExpectRejected(Replace(json, "\"kind\": \"count\"", "\"kind\": \"counts\""),
                 "$.drops[0].kind: expected \"arg\", \"count\" or null");
  ExpectRejected(Replace(json, "\"name\": \"items\"", "\"name\": null"),
                 "$.drops[0].name: null, but the reason is \"cap\"");
  ExpectRejected(Replace(json, "\"count\": 5", "\"count\": 0"),
                 "$.drops[0].count: expected a positive count");
  ExpectRejected(Replace(json, "\"count\": 5", "\"count\": -5"),
                 "$.drops[0].count");
  ExpectRejected(Replace(json, "\"count\": 5", "\"count\": 5, \"why\": 1"),
                 "$.drops[0]: unknown field \"why\"");
  ExpectRejected(Replace(SummaryToJson(Summarize(CaptureBuilder().Build())),
                         "\"drops\": []", "\"drops\": {}"),
                 "$.drops: expected array");
  ExpectRejected(
      Replace(json, "\"reason\": \"cap\"", "\"reason\": \"unknown\""),
      "$.drops[0]: a drop of reason \"unknown\" has a null site");
}

TEST(DropsTest, TheCountsMustAddUpToDroppedArgs) {
  const std::string json = SummaryToJson(Summarize(DroppingCapture()));
  ExpectRejected(Replace(json, "\"count\": 5", "\"count\": 4"),
                 "$.drops: the counts add up to 7, but dropped_args is 8");
  // Entry 1 made the same as entry 0 but for its count.
  ExpectRejected(
      Replace(
          Replace(Replace(json, "\"name\": \"size\"", "\"name\": \"items\""),
                  "\"kind\": \"arg\"", "\"kind\": \"count\""),
          "\"reason\": \"side_budget\"", "\"reason\": \"cap\""),
      "$.drops[1]: the same site, name, kind and reason as an earlier entry");
}

TEST(DropsTest, TheTraceCarriesTheNamedDrops) {
  const Capture capture = DroppingCapture();
  const std::string json = TraceToJson(capture);
  EXPECT_THAT(json, HasSubstr("\"arg_drops\":[{\"site\":1,\"name\":\"bytes\","
                              "\"kind\":\"arg\",\"reason\":\"no_open_span\","
                              "\"count\":1}"));
  absl::StatusOr<Capture> back = ParseTrace(json, kSource);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->arg_drops, capture.arg_drops);
  EXPECT_EQ(Summarize(*back), Summarize(capture));

  const absl::StatusOr<Capture> bad_site =
      ParseTrace(Replace(json, "\"site\":1,\"name\":\"bytes\"",
                         "\"site\":9,\"name\":\"bytes\""),
                 kSource);
  ASSERT_FALSE(bad_site.ok());
  EXPECT_THAT(bad_site.status().message(),
              HasSubstr("metadata.arg_drops[0].site: site index 9 out of "
                        "range (2 sites)"));
  const absl::StatusOr<Capture> too_many = ParseTrace(
      Replace(json, "\"dropped_args\":8,", "\"dropped_args\":7,"), kSource);
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many.status().message(),
              HasSubstr("metadata.arg_drops: the counts add up to 8, more "
                        "than metadata.dropped_args (7)"));
}

TEST(DropsTest, TheTableNamesTheLargestDropsAndReportListsAll) {
  const Summary summary = Summarize(DroppingCapture());
  const std::string table = FormatTable(summary, {});
  EXPECT_THAT(table,
              HasSubstr("warning: 8 span arguments or counter counts dropped"));
  EXPECT_THAT(table,
              HasSubstr("\n  dropped 5 counts: items on run (its span was "
                        "dropped by the cap)\n  dropped 2 arguments: size on "
                        "run (side record budget full)\n  ... and 1 more "
                        "(spanprof report lists them all)\n"));
  EXPECT_THAT(table, Not(HasSubstr("bytes")));
  const std::string all = FormatTable(summary, {.all_drops = true});
  EXPECT_THAT(all, HasSubstr("\n  dropped 1 argument: bytes before log.load "
                             "[activity=load] (no open span)\n"));
  EXPECT_THAT(all, Not(HasSubstr("more (spanprof report")));
  EXPECT_THAT(FormatTable(Summarize(CaptureBuilder().Build()), {}),
              Not(HasSubstr("dropped")));
}

}  // namespace
}  // namespace spanprof::analysis
