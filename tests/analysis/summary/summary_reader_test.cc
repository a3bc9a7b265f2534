// The strict summary reader: round trips of the writer's output, and one
// rejection per kind of malformed input with the message a user sees.
#include <cstdint>
#include <random>
#include <regex>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::Replace;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::RichOptions;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::string_view kSource = "build/x.json";

Summary CleanSummary() { return Summarize(RichCapture()); }

std::string CleanJson() { return SummaryToJson(CleanSummary()); }

// The value of a row field in the pretty-printed JSON, as text.
std::string Field(std::string_view name, int64_t value) {
  return "\"" + std::string(name) + "\": " + std::to_string(value);
}

void ExpectRejected(std::string_view json, std::string_view expected) {
  absl::StatusOr<Summary> parsed = ParseSummary(json, kSource);
  ASSERT_FALSE(parsed.ok()) << "accepted:\n" << json;
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(parsed.status().message());
  EXPECT_THAT(message, StartsWith(std::string(kSource) + ": "));
  EXPECT_THAT(message, HasSubstr(std::string(expected)));
}

// The JSON of `summary` after `mutate`, for invariant violations the writer
// happily writes.
template <typename Mutate>
std::string Mutated(Mutate&& mutate) {
  Summary summary = CleanSummary();
  mutate(summary);
  return SummaryToJson(summary);
}

// Index of the row with `name` in the clean summary.
size_t RowIndex(const Summary& summary, std::string_view name) {
  for (size_t i = 0; i < summary.rows.size(); ++i) {
    if (summary.rows[i].key.name == name) return i;
  }
  ADD_FAILURE() << "no row " << name;
  return 0;
}

TEST(SummaryReaderTest, RoundTripsEveryWriterOutput) {
  const RichOptions variants[] = {
      {},
      {.alloc = true},
      {.drops = true},
      {.unfinished = true},
      {.broken = true},
      {.alloc = true, .drops = true, .unfinished = true, .broken = true},
      {.keys = true},
      {.alloc = true, .drops = true, .keys = true},
  };
  for (const RichOptions& options : variants) {
    const Summary summary = Summarize(RichCapture(options));
    absl::StatusOr<Summary> back = ParseSummary(SummaryToJson(summary), "s");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, summary);
  }
  EXPECT_FALSE(
      Summarize(RichCapture({.broken = true})).validation_issues.empty());
}

// A row key's backend, dtype and device are written only when set; a
// summary without them (written before them, or with none set) reads them as
// "", and a version before 4 knows none of them.
TEST(SummaryReaderTest, KeyFieldsAreWrittenWhenSetAndReadAsEmptyWhenMissing) {
  const std::string plain = CleanJson();
  for (std::string_view key : {"\"backend\"", "\"dtype\"", "\"device\""}) {
    EXPECT_EQ(plain.find(key), std::string::npos) << key;
  }
  absl::StatusOr<Summary> old = ParseSummary(plain, kSource);
  ASSERT_TRUE(old.ok()) << old.status();
  for (const Row& row : old->rows) {
    EXPECT_EQ(row.key.backend, "");
    EXPECT_EQ(row.key.dtype, "");
    EXPECT_EQ(row.key.device, "");
  }

  const Summary keyed = Summarize(RichCapture({.keys = true}));
  const std::string json = SummaryToJson(keyed);
  EXPECT_THAT(json,
              HasSubstr("\"activity\": \"\",\n        \"backend\": "
                        "\"cuda\",\n        \"dtype\": \"f16\",\n"
                        "        \"device\": \"gpu0\"\n      },\n"
                        "      \"label\": \"kernel.matmul [phase=compute, "
                        "backend=cuda, dtype=f16, device=gpu0]\""));
  absl::StatusOr<Summary> back = ParseSummary(json, kSource);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, keyed);

  // Leaving the dtypes out makes the two kernel rows one key (and their labels
  // wrong): the key fields are read, not ignored.
  const std::string no_dtype =
      std::regex_replace(json, std::regex(",\\s*\"dtype\": \"f(16|32)\""), "");
  ASSERT_EQ(no_dtype.find("\"dtype\":"), std::string::npos);
  ExpectRejected(no_dtype, "label");

  // A version 3 summary has no key fields beyond activity.
  std::string v3 = std::regex_replace(
      Replace(json, "\"schema_version\": 5", "\"schema_version\": 3"),
      std::regex("\"(process_count|processes|failed_prepares|hook_failures|"
                 "end_reason|open_at_exit_events|drops)\": "
                 "[^,]+,\\s*"),
      "");
  ExpectRejected(v3, "unknown field \"backend\"");
}

TEST(SummaryReaderTest, RoundTripsRandomCaptures) {
  std::mt19937_64 rng(20260111);
  for (int i = 0; i < 50; ++i) {
    const Summary summary = Summarize(testing::RandomCapture(rng));
    absl::StatusOr<Summary> back = ParseSummary(SummaryToJson(summary), "s");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, summary);
  }
}

TEST(SummaryReaderTest, RoundTripsAnEmptyCapture) {
  Capture capture = RichCapture();
  capture.spans.clear();
  capture.args.clear();
  const Summary summary = Summarize(capture);
  absl::StatusOr<Summary> back = ParseSummary(SummaryToJson(summary), "s");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);
}

TEST(SummaryReaderTest, ReadsAFileAndAGzipFile) {
  testing::TempDir dir;
  const Summary summary = Summarize(RichCapture({.alloc = true}));
  ASSERT_TRUE(WriteSummary(summary, dir.File("sub/s.json")).ok());
  absl::StatusOr<Summary> back = ReadSummary(dir.File("sub/s.json"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);

  absl::StatusOr<std::string> gz = GzipCompress(SummaryToJson(summary));
  ASSERT_TRUE(gz.ok());
  testing::WriteText(dir.File("s.json.gz"), *gz);
  back = ReadSummary(dir.File("s.json.gz"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);
}

TEST(SummaryReaderTest, AcceptsIncompleteWithoutDrops) {
  // A session ended by a signal: complete false, nothing else wrong.
  Capture capture = RichCapture();
  capture.finished_normally = false;
  const Summary summary = Summarize(capture);
  ASSERT_FALSE(summary.complete);
  absl::StatusOr<Summary> back = ParseSummary(SummaryToJson(summary), "s");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->complete);
}

TEST(SummaryReaderTest, AcceptsFieldsInAnyOrder) {
  std::string json = CleanJson();
  // Move "clock" to the end of the top-level object.
  json = Replace(json, "  \"clock\": \"monotonic\",\n", "");
  const size_t end = json.rfind('}');
  json.insert(end, ",\"clock\":\"monotonic\"");
  absl::StatusOr<Summary> back = ParseSummary(json, "s");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, CleanSummary());
}

TEST(SummaryReaderTest, ReadSummaryNamesAMissingFile) {
  absl::StatusOr<Summary> back = ReadSummary("/nonexistent/dir/s.json");
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(std::string(back.status().message()),
              HasSubstr("/nonexistent/dir/s.json"));
}

// --- JSON syntax -----------------------------------------------------------

TEST(SummaryReaderRejectsTest, TruncatedFile) {
  const std::string json = CleanJson();
  ExpectRejected(json.substr(0, json.rfind('}')), "truncated");
  ExpectRejected(json.substr(0, json.size() / 2), "truncated");
}

TEST(SummaryReaderRejectsTest, EmptyInput) {
  ExpectRejected("", "empty input");
  ExpectRejected("   \n", "empty input");
}

TEST(SummaryReaderRejectsTest, TrailingDocument) {
  ExpectRejected(CleanJson() + "{}", "$: unexpected content after");
}

TEST(SummaryReaderRejectsTest, TrailingGarbage) {
  ExpectRejected(CleanJson() + "garbage", "$: ");
}

TEST(SummaryReaderRejectsTest, NotAnObject) {
  ExpectRejected("[1, 2]", "$: expected a JSON object at the top level");
}

TEST(SummaryReaderRejectsTest, NaN) {
  ExpectRejected(
      Replace(CleanJson(), "\"window_ns\": 10000", "\"window_ns\": NaN"),
      "$.window_ns: expected integer, got NaN");
}

TEST(SummaryReaderRejectsTest, Infinity) {
  ExpectRejected(
      Replace(CleanJson(), "\"window_ns\": 10000", "\"window_ns\": Infinity"),
      "$.window_ns: expected integer, got Infinity");
}

TEST(SummaryReaderRejectsTest, InvalidUtf8) {
  ExpectRejected(Replace(CleanJson(), "\"process_name\": \"test\"",
                         "\"process_name\": \"t\xff\""),
                 "UTF-8");
}

// --- schema ----------------------------------------------------------------

TEST(SummaryReaderRejectsTest, WrongSchema) {
  ExpectRejected(
      Replace(CleanJson(), "\"spanprof.summary\"", "\"spanprof.trace\""),
      "$.schema: expected \"spanprof.summary\", got "
      "\"spanprof.trace\"");
}

TEST(SummaryReaderRejectsTest, WrongSchemaVersion) {
  ExpectRejected(
      Replace(CleanJson(), "\"schema_version\": 5", "\"schema_version\": 6"),
      "$.schema_version: unsupported schema_version 6 (this reader reads "
      "versions 1 to 5)");
}

TEST(SummaryReaderRejectsTest, Version3NeedsASource) {
  ExpectRejected(Replace(CleanJson(), "\"source\": \"spanprof\",\n", ""),
                 "$: missing field \"source\"");
  ExpectRejected(
      Replace(CleanJson(), "\"source\": \"spanprof\"", "\"source\": \"otlp\""),
      "$.source: expected \"spanprof\" or \"chrome-trace\", got "
      "\"otlp\"");
}

// A foreign trace's clock is "unknown", and only a foreign trace's.
TEST(SummaryReaderRejectsTest, ClockUnknownGoesWithAForeignSource) {
  ExpectRejected(Replace(CleanJson(), "\"clock\": \"monotonic\"",
                         "\"clock\": \"unknown\""),
                 "$.clock: \"unknown\" with source \"spanprof\"");
  ExpectRejected(Replace(CleanJson(), "\"source\": \"spanprof\"",
                         "\"source\": \"chrome-trace\""),
                 "$.clock: \"monotonic\" with source \"chrome-trace\"");
  const std::string foreign =
      Replace(Replace(CleanJson(), "\"source\": \"spanprof\"",
                      "\"source\": \"chrome-trace\""),
              "\"clock\": \"monotonic\"", "\"clock\": \"unknown\"");
  absl::StatusOr<Summary> parsed = ParseSummary(foreign, kSource);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->source, "chrome-trace");
  EXPECT_EQ(parsed->clock, "unknown");
}

TEST(SummaryReaderRejectsTest, MoreHookFailuresThanCalls) {
  ExpectRejected(
      Replace(CleanJson(), "\"hook_failures\": 0", "\"hook_failures\": 99"),
      "hook_failures (99) > calls");
}

// Version 2 has no source (read as "spanprof") and no "unknown" clock.
TEST(SummaryReaderRejectsTest, Version2HasNoSource) {
  std::string v2 = Replace(
      Replace(CleanJson(), "\"schema_version\": 5", "\"schema_version\": 2"),
      "\"source\": \"spanprof\",\n", "");
  // Nor rows' instrumentation_permille (derived on reading), nor the host,
  // pid and wall-clock anchor.
  v2 = std::regex_replace(
      v2,
      std::regex("\"(instrumentation_permille|host|pid|wall_clock_anchor_ns|"
                 "wall_clock_uncertainty_ns|process_count|processes|"
                 "failed_prepares|hook_failures|end_reason|"
                 "open_at_exit_events|drops)\": "
                 "[^,]+,\\s*"),
      "");
  absl::StatusOr<Summary> parsed = ParseSummary(v2, kSource);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->schema_version, 2);
  EXPECT_EQ(parsed->source, "spanprof");
  ExpectRejected(Replace(Replace(CleanJson(), "\"schema_version\": 5",
                                 "\"schema_version\": 2"),
                         "\"source\": \"spanprof\",", "\"source\": 1,"),
                 "$: unknown field \"source\"");
  ExpectRejected(
      Replace(v2, "\"clock\": \"monotonic\"", "\"clock\": \"unknown\""),
      "$.clock: expected \"tsc\" or \"monotonic\", got");
}

TEST(SummaryReaderRejectsTest, MissingSchema) {
  ExpectRejected(Replace(CleanJson(), "\"schema\": \"spanprof.summary\",", ""),
                 "$: missing field \"schema\"");
}

TEST(SummaryReaderRejectsTest, ATraceIsNotASummary) {
  ExpectRejected(R"({"traceEvents":[],"metadata":{}})",
                 "this is a trace, not a spanprof summary");
}

TEST(SummaryReaderRejectsTest, UnknownTopLevelField) {
  ExpectRejected(
      Replace(CleanJson(), "\"window_ns\"", "\"extra\": 1,\n  \"window_ns\""),
      "$: unknown field \"extra\"");
}

TEST(SummaryReaderRejectsTest, UnknownRowField) {
  ExpectRejected(Replace(CleanJson(), "\"calls\"", "\"color\": 1, \"calls\""),
                 "$.rows[0]: unknown field \"color\"");
}

TEST(SummaryReaderRejectsTest, UnknownKeyField) {
  ASSERT_EQ(CleanSummary().rows[0].key.activity, "load");
  ExpectRejected(Replace(CleanJson(), "\"activity\": \"load\"",
                         "\"activity\": \"load\", \"kind\": \"x\""),
                 "$.rows[0].key: unknown field \"kind\"");
}

TEST(SummaryReaderRejectsTest, UnknownResourceField) {
  ExpectRejected(
      Replace(CleanJson(), "\"user_cpu_ns\"", "\"gpu_ns\": 0, \"user_cpu_ns\""),
      "$.process_resources: unknown field \"gpu_ns\"");
}

TEST(SummaryReaderRejectsTest, UnknownIssueField) {
  const std::string json =
      SummaryToJson(Summarize(RichCapture({.broken = true})));
  ExpectRejected(Replace(json, "\"message\"", "\"level\": 1, \"message\""),
                 "$.validation_issues[0]: unknown field \"level\"");
}

TEST(SummaryReaderRejectsTest, MissingTopLevelField) {
  ExpectRejected(Replace(CleanJson(), "\"window_ns\": 10000,", ""),
                 "$: missing field \"window_ns\"");
}

TEST(SummaryReaderRejectsTest, MissingRowField) {
  ExpectRejected(Replace(CleanJson(), "\"p99_ns\"", "\"p99_ms\""),
                 "$.rows[0]: unknown field \"p99_ms\"");
  const Summary clean = CleanSummary();
  ExpectRejected(
      Replace(CleanJson(), Field("p99_ns", clean.rows[0].p99_ns) + ",", ""),
      "$.rows[0]: missing field \"p99_ns\"");
}

TEST(SummaryReaderRejectsTest, DuplicateField) {
  ExpectRejected(Replace(CleanJson(), "\"window_ns\"",
                         "\"event_count\": 6,\n  \"window_ns\""),
                 "$: duplicate field \"event_count\"");
}

TEST(SummaryReaderRejectsTest, DuplicateRowField) {
  ExpectRejected(
      Replace(CleanJson(), "\"calls\"", "\"label\": \"x\", \"calls\""),
      "$.rows[0]: duplicate field \"label\"");
}

// --- types -----------------------------------------------------------------

TEST(SummaryReaderRejectsTest, StringForInteger) {
  ExpectRejected(
      Replace(CleanJson(), "\"event_count\": 6", "\"event_count\": \"6\""),
      "$.event_count: expected integer, got \"6\"");
}

TEST(SummaryReaderRejectsTest, Fraction) {
  const Summary clean = CleanSummary();
  ExpectRejected(Replace(CleanJson(), Field("p95_ns", clean.rows[0].p95_ns),
                         "\"p95_ns\": 1.5"),
                 "$.rows[0].p95_ns: expected integer, got 1.5");
}

TEST(SummaryReaderRejectsTest, IntegralDouble) {
  ExpectRejected(
      Replace(CleanJson(), "\"event_count\": 6", "\"event_count\": 6.0"),
      "$.event_count: expected integer, got 6.0");
}

TEST(SummaryReaderRejectsTest, Exponent) {
  ExpectRejected(
      Replace(CleanJson(), "\"window_ns\": 10000", "\"window_ns\": 1e4"),
      "$.window_ns: expected integer, got 1e4");
}

TEST(SummaryReaderRejectsTest, HugeInteger) {
  ExpectRejected(Replace(CleanJson(), "\"window_ns\": 10000",
                         "\"window_ns\": 99999999999999999999"),
                 "$.window_ns: integer out of range (beyond int64): "
                 "99999999999999999999");
  // Just past int64 (a valid uint64) is refused too.
  ExpectRejected(Replace(CleanJson(), "\"event_count\": 6",
                         "\"event_count\": 9223372036854775808"),
                 "$.event_count: integer out of range");
}

TEST(SummaryReaderRejectsTest, NegativeCount) {
  ExpectRejected(
      Replace(CleanJson(), "\"dropped_events\": 0", "\"dropped_events\": -1"),
      "$.dropped_events: expected a non-negative integer, got -1");
}

TEST(SummaryReaderRejectsTest, LeadingZero) {
  ExpectRejected(
      Replace(CleanJson(), "\"window_ns\": 10000", "\"window_ns\": 010000"),
      "$.window_ns: invalid number 010000");
}

TEST(SummaryReaderRejectsTest, NumberForBool) {
  ExpectRejected(Replace(CleanJson(), "\"complete\": true", "\"complete\": 1"),
                 "$.complete: expected true or false, got 1");
}

TEST(SummaryReaderRejectsTest, NullForInteger) {
  ExpectRejected(
      Replace(CleanJson(), "\"window_ns\": 10000", "\"window_ns\": null"),
      "$.window_ns: expected integer, got null");
}

TEST(SummaryReaderRejectsTest, StringForAllocCounter) {
  ExpectRejected(
      Replace(CleanJson(), "\"alloc_count\": null", "\"alloc_count\": \"0\""),
      "$.rows[0].alloc_count: expected integer or null, got \"0\"");
}

TEST(SummaryReaderRejectsTest, ObjectForString) {
  ExpectRejected(Replace(CleanJson(), "\"process_name\": \"test\"",
                         "\"process_name\": {}"),
                 "$.process_name: expected string, got an object");
}

TEST(SummaryReaderRejectsTest, ArrayForRows) {
  ExpectRejected(Replace(CleanJson(), "\"validation_issues\": []",
                         "\"validation_issues\": {}"),
                 "$.validation_issues: expected array, got an object");
}

TEST(SummaryReaderRejectsTest, UnknownClock) {
  ExpectRejected(
      Replace(CleanJson(), "\"clock\": \"monotonic\"", "\"clock\": \"cpu\""),
      "$.clock: expected \"tsc\" or \"monotonic\" or \"unknown\", got "
      "\"cpu\"");
}

TEST(SummaryReaderRejectsTest, UnknownOverflowPolicy) {
  ExpectRejected(Replace(CleanJson(), "\"overflow_policy\": \"drop\"",
                         "\"overflow_policy\": \"block\""),
                 "$.overflow_policy: expected \"drop\" or \"ring\"");
}

TEST(SummaryReaderRejectsTest, ShareOutOfRange) {
  ExpectRejected(Replace(CleanJson(), "\"share_permille\"",
                         "\"share_permille\": 1001, \"x_share\""),
                 "$.rows[0].share_permille: integer 1001 outside [0, 1000]");
}

// --- cross-field invariants --------------------------------------------------

TEST(SummaryReaderRejectsTest, CallsDoNotAddUpToEventCount) {
  ExpectRejected(Mutated([](Summary& s) { s.event_count += 1; }),
                 "$.event_count: 7 != sum of rows[].calls (6)");
}

TEST(SummaryReaderRejectsTest, SelfTimesDoNotAddUpToRecordedTime) {
  // Self times: 5300 + 3900 + 100 + 700 on main, 8799 + 1 on the worker.
  ASSERT_EQ(CleanSummary().recorded_thread_time_ns, 18800);
  ExpectRejected(
      Mutated([](Summary& s) { s.recorded_thread_time_ns += 1; }),
      "$.recorded_thread_time_ns: 18801 != sum of rows[].self_ns (18800)");
}

TEST(SummaryReaderRejectsTest, HeartbeatsDoNotAddUp) {
  ExpectRejected(Mutated([](Summary& s) { s.recorded_heartbeats += 1; }),
                 "$.recorded_heartbeats: ");
}

TEST(SummaryReaderRejectsTest, UnfinishedDoNotAddUp) {
  ExpectRejected(Mutated([](Summary& s) {
                   s.unfinished_events = 1;
                   s.complete = false;
                 }),
                 "$.unfinished_events: 1 != sum of rows[].unfinished (0)");
}

TEST(SummaryReaderRejectsTest, PercentilesOutOfOrder) {
  const Summary clean = CleanSummary();
  const size_t forward = RowIndex(clean, "model.forward");
  ASSERT_EQ(clean.rows[forward].calls, 3u);
  const std::string at = "$.rows[" + std::to_string(forward) + "]: ";
  ExpectRejected(Mutated([&](Summary& s) {
                   Row& r = s.rows[forward];
                   r.p95_ns = r.median_ns - 1;
                 }),
                 at + "p95_ns (699) < median_ns (700)");
  ExpectRejected(Mutated([&](Summary& s) {
                   Row& r = s.rows[forward];
                   r.min_ns = r.median_ns + 1;
                 }),
                 at + "median_ns (700) < min_ns (701)");
  ExpectRejected(Mutated([&](Summary& s) {
                   Row& r = s.rows[forward];
                   r.p99_ns = r.p95_ns - 1;
                 }),
                 at + "p99_ns (3999) < p95_ns (4000)");
  ExpectRejected(Mutated([&](Summary& s) {
                   Row& r = s.rows[forward];
                   r.max_ns = r.p99_ns - 1;
                 }),
                 at + "max_ns (3999) < p99_ns (4000)");
}

TEST(SummaryReaderRejectsTest, MeanIsNotFloorOfTotalOverCalls) {
  const Summary clean = CleanSummary();
  const size_t forward = RowIndex(clean, "model.forward");
  // total 4800 over 3 calls: mean 1600.
  ExpectRejected(Mutated([&](Summary& s) { s.rows[forward].mean_ns += 1; }),
                 "mean_ns (1601) != floor(total_ns / calls) (1600)");
}

TEST(SummaryReaderRejectsTest, TotalOutsideCallsTimesMinMax) {
  const Summary clean = CleanSummary();
  const size_t forward = RowIndex(clean, "model.forward");
  ExpectRejected(Mutated([&](Summary& s) {
                   Row& r = s.rows[forward];
                   r.total_ns = r.max_ns * 3 + 3;
                   r.mean_ns = r.total_ns / 3;
                 }),
                 "total_ns (12003) is not within calls");
}

TEST(SummaryReaderRejectsTest, SelfGreaterThanTotal) {
  const Summary clean = CleanSummary();
  const size_t io = RowIndex(clean, "io.read");
  ExpectRejected(Mutated([&](Summary& s) {
                   Row& r = s.rows[io];
                   r.self_ns = r.total_ns + 1;
                 }),
                 "total_ns (8800) < self_ns (8801)");
}

TEST(SummaryReaderRejectsTest, SelfHeartbeatsGreaterThanTotal) {
  const Summary clean = CleanSummary();
  const size_t io = RowIndex(clean, "io.read");
  ExpectRejected(Mutated([&](Summary& s) {
                   s.rows[io].self_heartbeats = s.rows[io].total_heartbeats + 1;
                 }),
                 "self_heartbeats (8) > total_heartbeats (7)");
}

TEST(SummaryReaderRejectsTest, DuplicateKey) {
  ExpectRejected(Mutated([](Summary& s) {
                   // Same key, self 0 so that the order stays valid.
                   Row copy = s.rows.back();
                   s.rows.back().self_ns = 0;
                   s.rows.push_back(copy);
                   s.rows.back().self_ns = 0;
                 }),
                 "duplicate key");
}

TEST(SummaryReaderRejectsTest, ShareDoesNotRecompute) {
  ExpectRejected(Mutated([](Summary& s) { s.rows[0].share_permille -= 1; }),
                 "$.rows[0]: share_permille (");
}

TEST(SummaryReaderRejectsTest, ZeroCallRowWithTiming) {
  const std::string json = Mutated([](Summary& s) {
    s = Summarize(RichCapture({.drops = true}));
    for (Row& r : s.rows) {
      if (r.calls == 0) r.max_ns = 5;
    }
  });
  ExpectRejected(json, "a row with calls 0 must have every timing");
}

TEST(SummaryReaderRejectsTest, ZeroCallRowWithoutDrops) {
  const std::string json = Mutated([](Summary& s) {
    s = Summarize(RichCapture({.drops = true}));
    for (Row& r : s.rows) {
      if (r.calls == 0) r.dropped = 0;
    }
  });
  ExpectRejected(json, "a row with calls 0 exists only for dropped spans");
}

TEST(SummaryReaderRejectsTest, HalfMeasuredAllocations) {
  ExpectRejected(Mutated([](Summary& s) { s.rows[0].alloc_count = 3; }),
                 "$.rows[0]: alloc_count and alloc_bytes must both be null");
}

TEST(SummaryReaderRejectsTest, AllocationsMeasuredInSomeRowsOnly) {
  ExpectRejected(Mutated([](Summary& s) {
                   s.rows[1].alloc_count = 3;
                   s.rows[1].alloc_bytes = 30;
                 }),
                 "$.rows[1]: alloc counters are null in some rows");
}

TEST(SummaryReaderRejectsTest, CompleteDespiteDrops) {
  ExpectRejected(Mutated([](Summary& s) {
                   s = Summarize(RichCapture({.drops = true}));
                   s.complete = true;
                 }),
                 "$.complete: true, but the capture has 3 dropped events");
  ExpectRejected(Mutated([](Summary& s) {
                   s = Summarize(RichCapture({.broken = true}));
                   s.complete = true;
                 }),
                 "$.complete: true, but");
}

TEST(SummaryReaderRejectsTest, RowsOutOfOrder) {
  ExpectRejected(Mutated([](Summary& s) { std::swap(s.rows[0], s.rows[1]); }),
                 "$.rows[1]: rows are not sorted by self_ns descending");
}

TEST(SummaryReaderRejectsTest, LabelDoesNotMatchKey) {
  ExpectRejected(Mutated([](Summary& s) { s.rows[0].label += " "; }),
                 "$.rows[0]: label");
}

TEST(SummaryReaderRejectsTest, NoThreadsForCalls) {
  ExpectRejected(Mutated([](Summary& s) { s.rows[0].threads = 0; }),
                 "$.rows[0]: threads is 0 but calls > 0");
}

TEST(SummaryReaderRejectsTest, MoreThreadsThanTheCapture) {
  ExpectRejected(Mutated([](Summary& s) { s.rows[0].threads = 3; }),
                 "$.rows[0]: threads (3) > thread_count (2)");
}

TEST(SummaryReaderRejectsTest, MoreExceptionsThanCalls) {
  ExpectRejected(
      Mutated([](Summary& s) { s.rows[0].exceptions = s.rows[0].calls + 1; }),
      "$.rows[0]: exceptions (");
}

}  // namespace
}  // namespace spanprof::analysis
