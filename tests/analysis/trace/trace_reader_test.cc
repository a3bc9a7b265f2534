// The strict trace reader: every writer output reads back to the exact
// capture (so to the same summary), nanoseconds survive exactly, and
// malformed traces are refused with the event's JSON path.
#include "analysis/src/trace/trace_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/src/trace/trace_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::Replace;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::RichOptions;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::string_view kSource = "build/t.json";

std::string CleanJson() { return TraceToJson(RichCapture()); }

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
      {.counters = true},
      {.keys = true},
      {.alloc = true,
       .drops = true,
       .unfinished = true,
       .broken = true,
       .counters = true,
       .keys = true},
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
    bool chunked_was_fast = false;
    bool one_pass_was_fast = true;
    absl::StatusOr<internal::ParsedTrace> chunked =
        internal::ParseTraceDocument(json, kSource, &chunked_was_fast);
    absl::StatusOr<internal::ParsedTrace> one_pass =
        internal::ParseTraceDocument(OneLine(json), kSource,
                                     &one_pass_was_fast);
    ASSERT_TRUE(chunked.ok()) << chunked.status();
    ASSERT_TRUE(one_pass.ok()) << one_pass.status();
    EXPECT_TRUE(chunked_was_fast);
    EXPECT_FALSE(one_pass_was_fast);
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

// X events in the writer's layout are matched byte by byte against what the
// writer renders for their site and thread; anything else (here: the first
// line joined to the second) is read by the one-pass reader. Both must give
// the same capture, events and errors.
std::string OnePassLayout(std::string json) {
  return Replace(std::move(json), "{\n\"traceEvents\"", "{\"traceEvents\"");
}

// Named counters after some spans' arguments (or alone): distinct names per
// span, one of them also an argument's name, counts of any sign.
void AddRandomCounters(std::mt19937_64& rng, Capture& capture,
                       std::vector<SpanArg>& args) {
  std::vector<SpanArg> out;
  const char* names[] = {"bytes_copied", "size", "n\xc3\xa4me", "hits"};
  for (Span& span : capture.spans) {
    const uint32_t first = static_cast<uint32_t>(out.size());
    for (uint32_t a = 0; a < span.arg_count; ++a) {
      out.push_back(args[span.first_arg + a]);
    }
    span.first_arg = first;
    for (const char* name : names) {
      if (rng() % 4 != 0) continue;
      out.push_back(testing::CounterArg(
          name, static_cast<int64_t>(rng() % 1'000'000) - 1000));
    }
    span.arg_count = static_cast<uint32_t>(out.size()) - first;
    if (span.arg_count == 0) span.first_arg = 0;
  }
  args = std::move(out);
}

// Random captures with what the X events can carry: several threads,
// cross-thread parents (flows), tags, names that need escapes or are not
// ASCII, flags, allocations, integer and double arguments, and named
// counters.
Capture RandomRichCapture(std::mt19937_64& rng, int spans) {
  CaptureBuilder b;
  std::uniform_int_distribution<int> coin(0, 1);
  std::uniform_int_distribution<int> die(0, 5);
  const int threads = 2 + die(rng) % 2;
  std::vector<uint32_t> thread_ids;
  for (int t = 0; t < threads; ++t) {
    thread_ids.push_back(
        b.Thread(static_cast<uint64_t>(1000 + 7 * t), t == 0 ? "main" : ""));
  }
  const std::vector<uint32_t> sites = {
      b.Site("a"),
      b.Site("b.c", "p"),
      b.Site("q\"uo\\te\nx", "ph;", "mod", "act"),
      b.Site("caf\xc3\xa9", "", "m\xc3\xa9", ""),
      b.Site("d", "", "", "act"),
      b.AddSite(Site{.name = "k",
                     .module = "m",
                     .backend = "cuda",
                     .dtype = "f16",
                     .device = "gpu0"}),
  };
  const bool alloc = coin(rng) == 1;
  std::uniform_int_distribution<int64_t> length(0, 5'000'000);
  std::uniform_int_distribution<size_t> pick_site(0, sites.size() - 1);
  std::uniform_int_distribution<size_t> pick_thread(0, thread_ids.size() - 1);
  std::vector<std::pair<uint64_t, int64_t>> opened;  // id, start
  for (uint64_t id = 1; id <= static_cast<uint64_t>(spans); ++id) {
    const int64_t start = length(rng) - 1'000'000;
    uint64_t parent = 0;
    if (!opened.empty() && coin(rng) == 1) {
      parent = opened[static_cast<size_t>(rng() % opened.size())].first;
    }
    Span& span =
        b.Add(id, parent, sites[pick_site(rng)], thread_ids[pick_thread(rng)],
              start, start + length(rng) + (coin(rng) == 1 ? 0 : 1));
    span.depth = parent == 0 ? 0 : 1;
    span.heartbeats = static_cast<uint32_t>(die(rng));
    span.flags = static_cast<uint16_t>(rng() % 8);
    if (alloc) {
      const int64_t count = static_cast<int64_t>(rng() % 100) - 10;
      b.Allocs(id, count, static_cast<int64_t>(rng()) / 3);
    }
    opened.emplace_back(id, start);
  }
  b.capture().alloc_measured = alloc;
  Capture capture = b.Build();
  std::vector<SpanArg> args;
  for (Span& span : capture.spans) {
    const int count = die(rng) % 4;
    if (count == 0) continue;
    span.first_arg = static_cast<uint32_t>(args.size());
    span.arg_count = static_cast<uint32_t>(count);
    for (int a = 0; a < count; ++a) {
      switch (die(rng)) {
        case 0:
          args.push_back(testing::DoubleArg("ratio", 0.125 * die(rng)));
          break;
        case 1:
          args.push_back(testing::DoubleArg("big", -1.5e300));
          break;
        case 2:
          args.push_back(testing::IntArg("min", INT64_MIN));
          break;
        case 3:
          args.push_back(
              testing::IntArg("gr\xc3\xb6\xc3\x9f"
                              "e",
                              0));
          break;
        default:
          args.push_back(testing::IntArg("size", static_cast<int64_t>(rng())));
          break;
      }
    }
  }
  AddRandomCounters(rng, capture, args);
  capture.args = args;
  capture.dropped_args = rng() % 3;
  return capture;
}

void ExpectSameEvents(const internal::ParsedTrace& a,
                      const internal::ParsedTrace& b) {
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t e = 0; e < a.events.size(); ++e) {
    const internal::TraceEvent& x = a.events[e];
    const internal::TraceEvent& y = b.events[e];
    EXPECT_EQ(std::tie(x.index, x.is_span, x.is_process_name, x.pid, x.tid,
                       x.ts_ns, x.dur_ns, x.span_id, x.has_bind_id, x.bind_id,
                       x.flow_in, x.flow_out),
              std::tie(y.index, y.is_span, y.is_process_name, y.pid, y.tid,
                       y.ts_ns, y.dur_ns, y.span_id, y.has_bind_id, y.bind_id,
                       y.flow_in, y.flow_out))
        << "event " << e;
  }
}

TEST(TraceReaderTest, LineMatcherAndOnePassAgreeOnRichRandomCaptures) {
  std::mt19937_64 rng(21);
  int flows = 0;
  for (int i = 0; i < 40; ++i) {
    const Capture capture = RandomRichCapture(rng, i < 36 ? 60 : 3000);
    const std::string json = TraceToJson(capture);
    flows += json.find("\"flow_in\":true") != std::string::npos ? 1 : 0;
    bool fast_was_fast = false;
    bool one_pass_was_fast = true;
    absl::StatusOr<internal::ParsedTrace> fast =
        internal::ParseTraceDocument(json, kSource, &fast_was_fast);
    absl::StatusOr<internal::ParsedTrace> one_pass =
        internal::ParseTraceDocument(OnePassLayout(json), kSource,
                                     &one_pass_was_fast);
    ASSERT_TRUE(fast.ok()) << fast.status();
    ASSERT_TRUE(one_pass.ok()) << one_pass.status();
    EXPECT_TRUE(fast_was_fast);
    EXPECT_FALSE(one_pass_was_fast);
    EXPECT_EQ(fast->capture, capture);
    EXPECT_EQ(one_pass->capture, capture);
    ExpectSameEvents(*fast, *one_pass);
    EXPECT_EQ(ParseTrace(json, kSource).value(), capture);
  }
  EXPECT_GT(flows, 20);
}

// Every one-byte change to an X event line: both readers accept it with the
// same result, or refuse it with the same error.
TEST(TraceReaderTest, LineMatcherAndOnePassAgreeOnMutatedEvents) {
  std::mt19937_64 rng(22);
  const std::string json = TraceToJson(RandomRichCapture(rng, 40));
  const size_t first = json.find("{\"ph\":\"X\"");
  const size_t last = json.rfind("\n],");
  ASSERT_NE(first, std::string::npos);
  constexpr std::string_view kBytes =
      "0123456789.-+eE,:{}[]\"\\ \nnulltrx\x01\xc3";
  std::uniform_int_distribution<size_t> where(first, last);
  std::uniform_int_distribution<size_t> which(0, kBytes.size() - 1);
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = json;
    const size_t at = where(rng);
    switch (trial % 3) {
      case 0:
        bad[at] = kBytes[which(rng)];
        break;
      case 1:
        bad.insert(at, 1, kBytes[which(rng)]);
        break;
      default:
        bad.erase(at, 1);
        break;
    }
    absl::StatusOr<internal::ParsedTrace> fast =
        internal::ParseTraceDocument(bad, kSource);
    absl::StatusOr<internal::ParsedTrace> one_pass =
        internal::ParseTraceDocument(OnePassLayout(bad), kSource);
    ASSERT_EQ(fast.ok(), one_pass.ok()) << "trial " << trial << ":\n" << bad;
    if (!fast.ok()) {
      EXPECT_EQ(fast.status(), one_pass.status()) << "trial " << trial;
      continue;
    }
    ++accepted;
    EXPECT_EQ(fast->capture, one_pass->capture) << "trial " << trial;
    ExpectSameEvents(*fast, *one_pass);
  }
  EXPECT_GT(accepted, 0);
}

// A bad value deep in a large trace, in each field the line matcher reads:
// the error is the one-pass reader's, with the event's path.
TEST(TraceReaderTest, LineMatcherReportsTheOnePassErrorDeepInATrace) {
  std::mt19937_64 rng(23);
  Capture capture = RandomRichCapture(rng, 4000);
  const std::string json = TraceToJson(capture);
  const size_t deep = json.find("{\"ph\":\"X\"", json.size() * 9 / 10);
  ASSERT_NE(deep, std::string::npos);
  const std::pair<std::string_view, std::string_view> edits[] = {
      {"\"ts\":", "\"ts\":01"},
      {"\"dur\":", "\"dur\":1e3,\"x\":"},
      {"\"span_id\":", "\"span_id\":0"},
      {"\"parent_id\":", "\"parent_id\":-1"},
      {"\"depth\":", "\"depth\":4294967296"},
      {"\"heartbeats\":", "\"heartbeats\":1.0,\"y\":"},
      {"\"site\":", "\"site\":99"},
      {"\"thread\":", "\"thread\":77"},
      {"\"tid\":", "\"tid\":5"},
      {"\"pid\":", "\"pid\":-"},
      {"\"name\":\"", "\"name\":\"z"},
      {"\"cat\":\"", "\"cat\":\"z"},
      {"}}", "},\"extra\":1}"},
      {"\"ph\":\"X\"", "\"ph\":\"Y\""},
  };
  for (const auto& [from, to] : edits) {
    std::string bad = json;
    const size_t at = bad.find(from, deep);
    ASSERT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    absl::StatusOr<Capture> fast = ParseTrace(bad, kSource);
    absl::StatusOr<Capture> one_pass = ParseTrace(OnePassLayout(bad), kSource);
    ASSERT_FALSE(fast.ok()) << to;
    ASSERT_FALSE(one_pass.ok()) << to;
    EXPECT_EQ(fast.status(), one_pass.status()) << to;
    EXPECT_THAT(std::string(fast.status().message()),
                HasSubstr("$.traceEvents["))
        << to;
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

// Counters come after the numeric arguments in the capture, whatever the key
// order in the file; a span may have counters and no arguments.
TEST(TraceReaderTest, ReadsCountersAfterTheArgumentsInAnyKeyOrder) {
  const Capture capture = RichCapture({.counters = true});
  const std::string json = TraceToJson(capture);
  const std::string swapped =
      Replace(json,
              "\"args\":{\"size\":4096,\"ratio\":0.25,\"size\":-1},"
              "\"counters\":{\"bytes_copied\":4567,\"size\":2}",
              "\"counters\":{\"bytes_copied\":4567,\"size\":2},"
              "\"args\":{\"size\":4096,\"ratio\":0.25,\"size\":-1}");
  for (const std::string& text : {json, OnePassLayout(json), swapped}) {
    absl::StatusOr<Capture> back = ParseTrace(text, kSource);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, capture);
  }
}

// Traces written before metadata.dropped_args read as 0 refused arguments.
TEST(TraceReaderTest, ReadsATraceWithoutDroppedArgs) {
  const Capture capture = RichCapture();
  const std::string json =
      Replace(TraceToJson(capture), "\"dropped_args\":0,", "");
  ASSERT_EQ(json.find("dropped_args"), std::string::npos);
  for (const std::string& text : {json, OnePassLayout(json)}) {
    absl::StatusOr<Capture> back = ParseTrace(text, kSource);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->dropped_args, 0u);
    EXPECT_EQ(*back, capture);
  }
  const std::string with_drops = TraceToJson(RichCapture({.counters = true}));
  EXPECT_THAT(with_drops, HasSubstr("\"dropped_args\":7,"));
  EXPECT_EQ(ParseTrace(with_drops, kSource)->dropped_args, 7u);
}

// A site's backend, dtype and device (added later) are written only when set,
// in metadata.sites, dropped_by_site and the X events' args; traces written
// before them have none and read as "".
TEST(TraceReaderTest, KeyFieldsAreWrittenWhenSetAndOptionalOnRead) {
  const std::string plain = CleanJson();
  for (std::string_view key : {"\"backend\"", "\"dtype\"", "\"device\""}) {
    EXPECT_EQ(plain.find(key), std::string::npos) << key;
  }
  absl::StatusOr<Capture> old = ParseTrace(plain, kSource);
  ASSERT_TRUE(old.ok()) << old.status();
  for (const Site& site : old->sites) {
    EXPECT_EQ(site.backend, "");
    EXPECT_EQ(site.dtype, "");
    EXPECT_EQ(site.device, "");
  }

  Capture capture = RichCapture({.keys = true});
  const uint32_t f16 = static_cast<uint32_t>(capture.sites.size() - 2);
  capture.dropped_by_site.push_back(SiteDrops{f16, 2});
  capture.dropped_events = 2;
  const std::string json = TraceToJson(capture);
  EXPECT_THAT(json, HasSubstr("{\"name\":\"kernel.matmul\",\"phase\":"
                              "\"compute\",\"module\":\"\",\"activity\":\"\","
                              "\"backend\":\"cuda\",\"dtype\":\"f16\","
                              "\"device\":\"gpu0\"}"));
  EXPECT_THAT(json, HasSubstr("\"phase\":\"compute\",\"backend\":\"cuda\","
                              "\"dtype\":\"f32\",\"device\":\"gpu0\""));
  EXPECT_THAT(json, HasSubstr("\"device\":\"gpu0\",\"count\":2}"));
  bool fast = false;
  absl::StatusOr<internal::ParsedTrace> back =
      internal::ParseTraceDocument(json, kSource, &fast);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(fast);
  EXPECT_EQ(back->capture, capture);
  absl::StatusOr<Capture> one_pass = ParseTrace(OnePassLayout(json), kSource);
  ASSERT_TRUE(one_pass.ok()) << one_pass.status();
  EXPECT_EQ(*one_pass, capture);

  // An X event must repeat its site's key fields.
  ExpectRejected(Replace(json, "\"backend\":\"cuda\",\"dtype\":\"f32\",",
                         "\"backend\":\"cuda\","),
                 "does not match metadata.sites[");
}

// Traces written before cross-process parents have no trace id,
// remote parent, seed or exported ids: they read as "" and 0.
TEST(TraceReaderTest, ReadsATraceWithoutTraceIds) {
  Capture capture = RichCapture();
  capture.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  capture.remote_parent_span_id = 7;
  capture.span_id_seed = 9;
  capture.exported_span_ids = {{1, 5}, {1, 6}};
  const std::string json = TraceToJson(capture);
  absl::StatusOr<Capture> full = ParseTrace(json, kSource);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(*full, capture);
  const std::string old = Replace(
      Replace(
          Replace(
              Replace(json,
                      "\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",", ""),
              "\"remote_parent_span_id\":\"0000000000000007\",", ""),
          "\"span_id_seed\":\"0000000000000009\",", ""),
      "\"exported_span_ids\":[{\"span\":1,\"external_id\":\"0000000000000005\"}"
      ","
      "{\"span\":1,\"external_id\":\"0000000000000006\"}],",
      "");
  ASSERT_EQ(old.find("span_id_seed"), std::string::npos);
  ASSERT_EQ(old.find("exported_span_ids"), std::string::npos);
  absl::StatusOr<Capture> back = ParseTrace(old, kSource);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->trace_id, "");
  EXPECT_EQ(back->remote_parent_span_id, 0u);
  EXPECT_TRUE(back->exported_span_ids.empty());
}

TEST(TraceReaderRejectsTest, MalformedTraceIds) {
  Capture capture = RichCapture();
  capture.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  capture.exported_span_ids = {{1, 5}, {2, 6}};
  const std::string json = TraceToJson(capture);
  ExpectRejected(Replace(json, "4bf92f3577b34da6a3ce929d0e0e4736",
                         "4BF92F3577B34DA6A3CE929D0E0E4736"),
                 "$.metadata.trace_id: expected a trace id");
  ExpectRejected(Replace(json, "4bf92f3577b34da6a3ce929d0e0e4736",
                         "00000000000000000000000000000000"),
                 "$.metadata.trace_id: expected a trace id");
  ExpectRejected(Replace(json, "\"external_id\":\"0000000000000005\"",
                         "\"external_id\":\"0000000000000000\""),
                 "external_id: expected 16 lowercase hex digits, not all zero");
  ExpectRejected(Replace(json, "\"span_id_seed\":\"0000000000000000\"",
                         "\"span_id_seed\":\"0x0\""),
                 "$.metadata.span_id_seed: expected 16 lowercase hex digits");
  ExpectRejected(Replace(json, "{\"span\":2,", "{\"span\":0,"),
                 "exported_span_ids[1].span");
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

TEST(TraceReaderRejectsTest, UserArgumentOfAnotherType) {
  ExpectRejected(Replace(CleanJson(), "\"size\":4096", "\"size\":[4096]"),
                 ".args.args.size: expected a number, null, a string or");
  ExpectRejected(Replace(CleanJson(), "\"size\":4096", "\"size\":true"),
                 ".args.args.size: expected a number, null, a string or");
}

// String arguments (SPANPROF_ARG_STR): a string, or a truncated one as
// {"text", "truncated": true}; at most kMaxArgTextBytes bytes.
TEST(TraceReaderTest, ReadsStringArguments) {
  const std::string json = Replace(CleanJson(), "\"size\":4096",
                                   "\"size\":\"4096\",\"file\":{\"text\":"
                                   "\"a\\u00e9\",\"truncated\":true}");
  absl::StatusOr<Capture> c = ParseTrace(json, kSource);
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<SpanArg> strings;
  for (const SpanArg& arg : c->args) {
    if (arg.is_string) strings.push_back(arg);
  }
  ASSERT_EQ(strings.size(), 2u);
  EXPECT_EQ(strings[0].key, "size");
  EXPECT_EQ(strings[0].text, "4096");
  EXPECT_FALSE(strings[0].truncated);
  EXPECT_EQ(strings[1].key, "file");
  EXPECT_EQ(strings[1].text, "a\xC3\xA9");
  EXPECT_TRUE(strings[1].truncated);
  // Written back the same way.
  EXPECT_THAT(TraceToJson(*c), HasSubstr("\"size\":\"4096\",\"file\":{"
                                         "\"text\":\"a\xC3\xA9\",\"truncated\":"
                                         "true}"));
  ExpectRejected(Replace(CleanJson(), "\"size\":4096",
                         "\"size\":\"" + std::string(65, 'x') + "\""),
                 ".args.args.size: a string argument has at most 64 bytes");
  ExpectRejected(Replace(CleanJson(), "\"size\":4096",
                         "\"size\":{\"text\":\"x\",\"truncated\":false}"),
                 ".args.args.size.truncated: expected true");
}

std::string CountersJson() {
  return TraceToJson(RichCapture({.counters = true}));
}

TEST(TraceReaderRejectsTest, CounterThatIsNotAnInteger) {
  const std::string json = CountersJson();
  const std::string index = std::to_string(EventIndex(json, 2));
  for (const std::string bad : {"4567.0", "4.567e3", "null", "\"4567\""}) {
    ExpectRejected(
        Replace(json, "\"bytes_copied\":4567", "\"bytes_copied\":" + bad),
        "$.traceEvents[" + index +
            "].args.counters.bytes_copied: expected integer, got " + bad);
  }
  ExpectRejected(Replace(json, "\"bytes_copied\":4567",
                         "\"bytes_copied\":99999999999999999999"),
                 ".args.counters.bytes_copied: integer out of range");
}

TEST(TraceReaderRejectsTest, CountersThatAreNotAnObject) {
  ExpectRejected(
      Replace(CountersJson(), "\"counters\":{\"bytes_copied\":4567,\"size\":2}",
              "\"counters\":[4567,2]"),
      ".args.counters: expected object, got an array");
}

TEST(TraceReaderRejectsTest, EmptyCounterName) {
  ExpectRejected(Replace(CountersJson(), "\"bytes_copied\":4567", "\"\":4567"),
                 ".args.counters: empty counter name");
}

TEST(TraceReaderRejectsTest, DuplicateCounter) {
  ExpectRejected(Replace(CountersJson(), "\"bytes_copied\":4567,\"size\":2",
                         "\"size\":4567,\"size\":2"),
                 ".args.counters.size: duplicate counter \"size\"");
}

TEST(TraceReaderRejectsTest, NegativeDroppedArgs) {
  ExpectRejected(
      Replace(CountersJson(), "\"dropped_args\":7", "\"dropped_args\":-7"),
      "$.metadata.dropped_args: expected a non-negative integer, got -7");
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

// A trace without metadata is a foreign Chrome trace
// (tests/analysis/import/), but metadata with spanprof's marks is spanprof's,
// so a broken one is still an error.
TEST(TraceReaderRejectsTest, MetadataWithoutSchema) {
  ExpectRejected(R"({"traceEvents":[],"displayTimeUnit":"ns",)"
                 R"("metadata":{"spanprof_version":"1.0"}})",
                 "$.metadata: no \"schema\" string");
}

TEST(TraceReaderRejectsTest, ASummaryIsNotATrace) {
  ExpectRejected(SummaryToJson(Summarize(RichCapture())),
                 "$: this is a spanprof summary, not a trace");
}

TEST(TraceReaderRejectsTest, UnknownMetadataField) {
  ExpectRejected(Replace(CleanJson(), "\"schema\":\"spanprof.trace\"",
                         "\"schema\":\"spanprof.trace\",\"hostname\":\"a\""),
                 "$.metadata: unknown field \"hostname\"");
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

// Span::heartbeats is 32 bits, as the runtime counts a span's heartbeats.
TEST(TraceReaderRejectsTest, HeartbeatsPast32Bits) {
  ExpectRejected(
      Replace(CleanJson(), "\"heartbeats\":50", "\"heartbeats\":4294967296"),
      ".args.heartbeats: ");
  absl::StatusOr<Capture> most = ParseTrace(
      Replace(CleanJson(), "\"heartbeats\":50", "\"heartbeats\":4294967295"),
      kSource);
  ASSERT_TRUE(most.ok()) << most.status();
  EXPECT_TRUE(std::any_of(
      most->spans.begin(), most->spans.end(),
      [](const Span& span) { return span.heartbeats == UINT32_MAX; }));
}

TEST(TraceReaderRejectsTest, HugeInteger) {
  ExpectRejected(Replace(CleanJson(), "\"heartbeats\":50",
                         "\"heartbeats\":123456789012345678901234"),
                 ".args.heartbeats: integer out of range");
}

}  // namespace
}  // namespace spanprof::analysis
