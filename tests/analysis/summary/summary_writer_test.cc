#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::testing::HasSubstr;

Capture TinyCapture() {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t run = b.Site("run");
  const uint32_t load = b.Site("input.load", "input", "", "load");
  b.Add(1, 0, run, t, 0, 100).heartbeats = 10;
  b.Add(2, 1, load, t, 10, 40).heartbeats = 4;
  b.Args(2, {CounterArg("rows", 3)});
  Capture& c = b.capture();
  c.process_name = "tiny";
  c.host = "build-7";
  c.wall_clock_uncertainty_ns = 150;
  c.clock = "tsc";
  c.window_ns = 120;
  c.overhead_ns_per_span = 7;
  c.process_resources = {1000, 2000, 59528, 3, 0, 5, 1};
  return b.Build();
}

TEST(SummaryWriterTest, MatchesTheGoldenDocument) {
  const std::string json = SummaryToJson(Summarize(TinyCapture()));
  EXPECT_EQ(json, R"({
  "schema": "spanprof.summary",
  "schema_version": 5,
  "source": "spanprof",
  "clock": "tsc",
  "process_name": "tiny",
  "host": "build-7",
  "pid": 4242,
  "wall_clock_anchor_ns": 1700000000000000000,
  "wall_clock_uncertainty_ns": 150,
  "process_count": 1,
  "event_count": 2,
  "thread_count": 1,
  "max_depth": 1,
  "window_ns": 120,
  "recorded_thread_time_ns": 100,
  "recorded_heartbeats": 10,
  "event_limit": 1000000,
  "overflow_policy": "drop",
  "dropped_events": 0,
  "dropped_args": 0,
  "drops": [],
  "failed_prepares": 0,
  "unfinished_events": 0,
  "complete": true,
  "end_reason": "finished",
  "open_at_exit_events": 0,
  "overhead_ns_per_span": 7,
  "process_resources": {
    "user_cpu_ns": 1000,
    "system_cpu_ns": 2000,
    "peak_rss_kib": 59528,
    "minor_page_faults": 3,
    "major_page_faults": 0,
    "voluntary_context_switches": 5,
    "involuntary_context_switches": 1
  },
  "validation_issues": [],
  "rows": [
    {
      "key": {
        "name": "run",
        "phase": "",
        "module": "",
        "activity": ""
      },
      "label": "run",
      "calls": 1,
      "total_ns": 100,
      "self_ns": 70,
      "min_ns": 100,
      "mean_ns": 100,
      "median_ns": 100,
      "p95_ns": 100,
      "p99_ns": 100,
      "max_ns": 100,
      "tail_ratio": 1.0,
      "log_sigma": null,
      "heavy_tail": false,
      "total_heartbeats": 10,
      "self_heartbeats": 6,
      "alloc_count": null,
      "alloc_bytes": null,
      "share_permille": 700,
      "instrumentation_permille": 70,
      "threads": 1,
      "processes": 1,
      "exceptions": 0,
      "hook_failures": 0,
      "unfinished": 0,
      "dropped": 0,
      "counters": {
        "rows": {
          "total": 3,
          "self": 0
        }
      }
    },
    {
      "key": {
        "name": "input.load",
        "phase": "input",
        "module": "",
        "activity": "load"
      },
      "label": "input.load [phase=input, activity=load]",
      "calls": 1,
      "total_ns": 30,
      "self_ns": 30,
      "min_ns": 30,
      "mean_ns": 30,
      "median_ns": 30,
      "p95_ns": 30,
      "p99_ns": 30,
      "max_ns": 30,
      "tail_ratio": 1.0,
      "log_sigma": null,
      "heavy_tail": false,
      "total_heartbeats": 4,
      "self_heartbeats": 4,
      "alloc_count": null,
      "alloc_bytes": null,
      "share_permille": 300,
      "instrumentation_permille": 233,
      "threads": 1,
      "processes": 1,
      "exceptions": 0,
      "hook_failures": 0,
      "unfinished": 0,
      "dropped": 0,
      "counters": {
        "rows": {
          "total": 3,
          "self": 3
        }
      }
    }
  ]
}
)");
}

TEST(SummaryWriterTest, FieldsAreInTheDesignOrder) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 50, 40);  // a validation issue
  const std::string json = SummaryToJson(Summarize(b.Build()));
  simdjson::dom::parser parser;
  simdjson::dom::object root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS);
  std::vector<std::string_view> keys;
  for (auto field : root) keys.push_back(field.key);
  EXPECT_EQ(keys, (std::vector<std::string_view>{"schema",
                                                 "schema_version",
                                                 "source",
                                                 "clock",
                                                 "process_name",
                                                 "host",
                                                 "pid",
                                                 "wall_clock_anchor_ns",
                                                 "wall_clock_uncertainty_ns",
                                                 "process_count",
                                                 "event_count",
                                                 "thread_count",
                                                 "max_depth",
                                                 "window_ns",
                                                 "recorded_thread_time_ns",
                                                 "recorded_heartbeats",
                                                 "event_limit",
                                                 "overflow_policy",
                                                 "dropped_events",
                                                 "dropped_args",
                                                 "drops",
                                                 "failed_prepares",
                                                 "unfinished_events",
                                                 "complete",
                                                 "end_reason",
                                                 "open_at_exit_events",
                                                 "overhead_ns_per_span",
                                                 "process_resources",
                                                 "validation_issues",
                                                 "rows"}));
  std::vector<std::string_view> issue_keys;
  const simdjson::dom::object issue =
      root["validation_issues"].at(0).get_object().value();
  for (auto field : issue) {
    issue_keys.push_back(field.key);
  }
  EXPECT_EQ(issue_keys, (std::vector<std::string_view>{"span", "message"}));
  std::vector<std::string_view> row_keys;
  const simdjson::dom::object row = root["rows"].at(0).get_object().value();
  for (auto field : row) {
    row_keys.push_back(field.key);
  }
  EXPECT_EQ(row_keys, (std::vector<std::string_view>{"key",
                                                     "label",
                                                     "calls",
                                                     "total_ns",
                                                     "self_ns",
                                                     "min_ns",
                                                     "mean_ns",
                                                     "median_ns",
                                                     "p95_ns",
                                                     "p99_ns",
                                                     "max_ns",
                                                     "tail_ratio",
                                                     "log_sigma",
                                                     "heavy_tail",
                                                     "total_heartbeats",
                                                     "self_heartbeats",
                                                     "alloc_count",
                                                     "alloc_bytes",
                                                     "share_permille",
                                                     "instrumentation_permille",
                                                     "threads",
                                                     "processes",
                                                     "exceptions",
                                                     "hook_failures",
                                                     "unfinished",
                                                     "dropped",
                                                     "counters"}));
}

TEST(SummaryWriterTest, MeasuredAllocationsAreIntegers) {
  Capture capture = TinyCapture();
  capture.alloc_measured = true;
  capture.span_allocs.assign(capture.spans.size(), SpanAllocs{});
  capture.span_allocs[0] = SpanAllocs{5, 640};
  const std::string json = SummaryToJson(Summarize(capture));
  EXPECT_THAT(json,
              HasSubstr("\"alloc_count\": 5,\n      \"alloc_bytes\": 640,"));
  EXPECT_THAT(json,
              HasSubstr("\"alloc_count\": 0,\n      \"alloc_bytes\": 0,"));
  EXPECT_EQ(json.find("\"alloc_count\": null"), std::string::npos);
  EXPECT_EQ(json.find("\"alloc_bytes\": null"), std::string::npos);
}

TEST(SummaryWriterTest, RoundTripsThroughTheStrictReader) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t worker = b.Thread(2, "worker\n");
  const uint32_t run = b.Site("run \"quoted\"\t", "p\x01");
  const uint32_t task = b.Site("task", "", "pool");
  const uint32_t lost = b.Site("lost");
  b.Add(1, 0, run, main, 0, 1000).heartbeats = 99;
  for (uint64_t i = 0; i < 30; ++i) {
    const int64_t start = 10 + static_cast<int64_t>(i) * 30;
    b.Add(2 + i, 1, task, i % 2 == 0 ? main : worker, start,
          start + 5 + static_cast<int64_t>(i % 7))
        .heartbeats = i;
  }
  b.Add(100, 0, run, worker, 2000, 1500);  // end before start: an issue
  b.capture().dropped_events = 3;
  b.capture().dropped_by_site = {{lost, 3}};
  b.capture().process_name = "proc\x1f";
  const Summary summary = Summarize(b.Build());
  ASSERT_FALSE(summary.validation_issues.empty());
  const std::string json = SummaryToJson(summary);
  const absl::StatusOr<Summary> back = ParseSummary(json, "test");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);
}

TEST(SummaryWriterTest, EmptyCaptureRoundTrips) {
  CaptureBuilder b;
  const Summary summary = Summarize(b.Build());
  const std::string json = SummaryToJson(summary);
  EXPECT_THAT(json, HasSubstr("\"rows\": []"));
  const absl::StatusOr<Summary> back = ParseSummary(json, "empty");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);
}

TEST(SummaryWriterTest, OutputIsDeterministic) {
  const Capture capture = TinyCapture();
  Capture reversed = capture;
  std::reverse(reversed.spans.begin(), reversed.spans.end());
  EXPECT_EQ(SummaryToJson(Summarize(capture)),
            SummaryToJson(Summarize(reversed)));
}

TEST(SummaryWriterTest, WriteSummaryWritesAtomicallyAndReadsBack) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("spanprof_summary_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const Summary summary = Summarize(TinyCapture());
  const std::string plain = (dir / "nested" / "summary.json").string();
  ASSERT_TRUE(WriteSummary(summary, plain).ok());
  const absl::StatusOr<std::string> text = ReadFile(plain);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, SummaryToJson(summary));
  const std::string gz = (dir / "summary.json.gz").string();
  ASSERT_TRUE(WriteSummary(summary, gz).ok());
  const absl::StatusOr<std::string> unzipped = ReadFile(gz);
  ASSERT_TRUE(unzipped.ok());
  EXPECT_EQ(*unzipped, SummaryToJson(summary));
  const absl::StatusOr<Summary> back = ReadSummary(gz);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace spanprof::analysis
