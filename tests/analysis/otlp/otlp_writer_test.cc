#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "spanprof/analysis/merge.h"
#include "spanprof/analysis/otlp.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::spanprof::testing::DoubleArg;
using ::spanprof::testing::IndexOf;
using ::spanprof::testing::IntArg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr char kTraceId[] = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr int64_t kAnchor = 1'700'000'000'123'456'789;

// One attribute: its value's JSON type key ("intValue", ...) and the value
// as text (strings and 64-bit ints unquoted, doubles as simdjson prints).
struct Value {
  std::string type;
  std::string text;
};

struct DecodedSpan {
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id;  // "" when absent
  std::string name;
  int64_t kind = -1;
  std::string start;
  std::string end;
  std::map<std::string, Value> attributes;
  bool has_status = false;
  int64_t status_code = -1;
  std::string status_message;
};

struct DecodedResource {
  std::map<std::string, Value> attributes;
  std::string scope_name;
  std::vector<DecodedSpan> spans;
};

std::map<std::string, Value> Attributes(simdjson::dom::array array) {
  std::map<std::string, Value> out;
  for (simdjson::dom::object kv : array) {
    std::string_view key;
    EXPECT_EQ(kv["key"].get(key), simdjson::SUCCESS);
    simdjson::dom::object value;
    EXPECT_EQ(kv["value"].get(value), simdjson::SUCCESS);
    EXPECT_EQ(value.size(), 1u) << key;
    for (auto field : value) {
      Value v{std::string(field.key), ""};
      if (field.value.is_string()) {
        v.text = std::string(field.value.get_string().value());
      } else {
        v.text = simdjson::to_string(field.value);
      }
      EXPECT_TRUE(out.emplace(std::string(key), v).second)
          << "duplicate attribute " << key;
    }
  }
  return out;
}

// Parses an export strictly (simdjson, independently of the writer).
std::vector<DecodedResource> Decode(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  EXPECT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  simdjson::dom::object top;
  EXPECT_EQ(root.get(top), simdjson::SUCCESS);
  EXPECT_EQ(top.size(), 1u);
  std::vector<DecodedResource> out;
  for (simdjson::dom::object rs : top["resourceSpans"].get_array()) {
    DecodedResource resource;
    resource.attributes =
        Attributes(rs["resource"]["attributes"].get_array().value());
    simdjson::dom::array scopes = rs["scopeSpans"].get_array();
    EXPECT_EQ(scopes.size(), 1u);
    for (simdjson::dom::object scope : scopes) {
      resource.scope_name =
          std::string(scope["scope"]["name"].get_string().value());
      for (simdjson::dom::object s : scope["spans"].get_array()) {
        DecodedSpan span;
        span.trace_id = std::string(s["traceId"].get_string().value());
        span.span_id = std::string(s["spanId"].get_string().value());
        std::string_view parent;
        if (s["parentSpanId"].get(parent) == simdjson::SUCCESS) {
          span.parent_span_id = std::string(parent);
        }
        span.name = std::string(s["name"].get_string().value());
        span.kind = s["kind"].get_int64().value();
        span.start = std::string(s["startTimeUnixNano"].get_string().value());
        span.end = std::string(s["endTimeUnixNano"].get_string().value());
        span.attributes = Attributes(s["attributes"].get_array().value());
        simdjson::dom::object status;
        if (s["status"].get(status) == simdjson::SUCCESS) {
          span.has_status = true;
          span.status_code = status["code"].get_int64().value();
          span.status_message =
              std::string(status["message"].get_string().value());
        }
        resource.spans.push_back(span);
      }
    }
    out.push_back(resource);
  }
  return out;
}

OtlpExport ExportOne(const Capture& capture, const std::string& path = "a") {
  const OtlpInput inputs[] = {{path, &capture}};
  absl::StatusOr<OtlpExport> out = ExportOtlp(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : OtlpExport{};
}

const DecodedSpan& SpanNamed(const std::vector<DecodedResource>& resources,
                             const std::string& name) {
  for (const DecodedResource& r : resources) {
    for (const DecodedSpan& s : r.spans) {
      if (s.name == name) return s;
    }
  }
  ADD_FAILURE() << "no span " << name;
  static const DecodedSpan kNone;
  return kNone;
}

std::string HexOf(const Capture& capture, uint64_t id) {
  return OtlpSpanIdHex(
      ExternalSpanId(capture, capture.spans[IndexOf(capture, id)]));
}

// A root on "main", a same-thread child, and a child on "worker" (a
// cross-thread parent).
Capture ThreeSpans() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t worker = b.Thread(101, "worker");
  const uint32_t root = b.Site("app.run");
  const uint32_t read = b.Site("source.read", "input", "io", "load");
  const uint32_t task = b.Site("pool.task");
  b.Add(1, 0, root, main, 0, 1000);
  b.Add(2, 1, read, main, 10, 400);
  b.Add(3, 1, task, worker, 20, 900);
  b.capture().trace_id = kTraceId;
  b.capture().span_id_seed = 0x1234;
  b.capture().wall_clock_anchor_ns = kAnchor;
  b.capture().host = "build-07";
  b.capture().pid = 4711;
  b.capture().process_name = "indexer";
  return b.Build();
}

TEST(OtlpWriterTest, IdsAreTheCapturesExternalIds) {
  const Capture capture = ThreeSpans();
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  ASSERT_THAT(out, SizeIs(1));
  ASSERT_THAT(out[0].spans, SizeIs(3));
  for (const Span& span : capture.spans) {
    const DecodedSpan& s = SpanNamed(out, capture.sites[span.site].name);
    EXPECT_EQ(s.trace_id, kTraceId);
    EXPECT_EQ(s.span_id, OtlpSpanIdHex(ExternalSpanId(capture, span)));
    EXPECT_THAT(s.span_id, SizeIs(16));
    EXPECT_EQ(s.kind, 1);  // SPAN_KIND_INTERNAL
  }
  EXPECT_EQ(OtlpSpanIdHex(DerivedSpanId(0x1234, 1)),
            SpanNamed(out, "app.run").span_id);
}

TEST(OtlpWriterTest, ParentsLinkOnTheSameThreadAndAcrossThreads) {
  const Capture capture = ThreeSpans();
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  EXPECT_EQ(SpanNamed(out, "app.run").parent_span_id, "");
  EXPECT_EQ(SpanNamed(out, "source.read").parent_span_id, HexOf(capture, 1));
  EXPECT_EQ(SpanNamed(out, "pool.task").parent_span_id, HexOf(capture, 1));
  EXPECT_NE(SpanNamed(out, "pool.task").attributes.at("thread.id").text,
            SpanNamed(out, "app.run").attributes.at("thread.id").text);
}

TEST(OtlpWriterTest, RootsAreChildrenOfTheRemoteParent) {
  Capture capture = ThreeSpans();
  capture.remote_parent_span_id = 0x00f067aa0ba902b7;
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  EXPECT_EQ(SpanNamed(out, "app.run").parent_span_id, "00f067aa0ba902b7");
  EXPECT_EQ(SpanNamed(out, "source.read").parent_span_id, HexOf(capture, 1));
}

TEST(OtlpWriterTest, AnExportedSpanKeepsTheIdItHandedOut) {
  Capture capture = ThreeSpans();
  capture.exported_span_ids = {{1, 0xfeedface00000001}, {1, 0xfeedface2}};
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  EXPECT_EQ(SpanNamed(out, "app.run").span_id, "feedface00000001");
  EXPECT_EQ(SpanNamed(out, "pool.task").parent_span_id, "feedface00000001");
}

TEST(OtlpWriterTest, TimesAreTheAnchorPlusSessionTimeAsExactStrings) {
  const Capture capture = ThreeSpans();
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  // Beyond a double's 53 bits: a float conversion would round these.
  EXPECT_EQ(SpanNamed(out, "app.run").start, "1700000000123456789");
  EXPECT_EQ(SpanNamed(out, "app.run").end, "1700000000123457789");
  EXPECT_EQ(SpanNamed(out, "pool.task").start, "1700000000123456809");
  EXPECT_EQ(SpanNamed(out, "pool.task").end, "1700000000123457689");
}

TEST(OtlpWriterTest, AnExceptionIsAnErrorStatus) {
  Capture capture = ThreeSpans();
  capture.spans[IndexOf(capture, 2)].flags = kSpanException;
  capture.spans[IndexOf(capture, 3)].flags = kSpanUnfinished;
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  const DecodedSpan& thrown = SpanNamed(out, "source.read");
  ASSERT_TRUE(thrown.has_status);
  EXPECT_EQ(thrown.status_code, 2);  // STATUS_CODE_ERROR
  EXPECT_THAT(thrown.status_message, HasSubstr("exception"));
  EXPECT_EQ(thrown.attributes.at("spanprof.exception").text, "true");
  // Unfinished: exported up to the stop, flagged, status unset.
  const DecodedSpan& open = SpanNamed(out, "pool.task");
  EXPECT_FALSE(open.has_status);
  EXPECT_EQ(open.attributes.at("spanprof.unfinished").text, "true");
  EXPECT_FALSE(SpanNamed(out, "app.run").has_status);
  EXPECT_EQ(SpanNamed(out, "app.run").attributes.count("spanprof.unfinished"),
            0u);
}

TEST(OtlpWriterTest, OpenAtExitIsAFlagWithoutAStatus) {
  Capture capture = ThreeSpans();
  capture.spans[IndexOf(capture, 3)].flags = kSpanOpenAtExit;
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  const DecodedSpan& open = SpanNamed(out, "pool.task");
  EXPECT_FALSE(open.has_status);
  EXPECT_EQ(open.attributes.at("spanprof.open_at_exit").text, "true");
  EXPECT_EQ(open.attributes.count("spanprof.unfinished"), 0u);
  EXPECT_EQ(SpanNamed(out, "app.run").attributes.count("spanprof.open_at_exit"),
            0u);
}

TEST(OtlpWriterTest, TagsArgumentsCountersAndThreadAreAttributes) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t unnamed = b.Thread(102);
  const uint32_t site = b.Site("file.parse", "parse", "indexer", "cpu");
  b.Add(1, 0, site, main, 0, 10).heartbeats = 7;
  b.Add(2, 0, b.Site("bare"), unnamed, 0, 10);
  const uint32_t kernel = b.AddSite(Site{
      .name = "kernel", .backend = "cuda", .dtype = "f16", .device = "gpu0"});
  b.Add(3, 0, kernel, main, 20, 30);
  b.Args(1, {IntArg("size", -9'007'199'254'740'993), DoubleArg("ratio", 0.25),
             DoubleArg("bad", std::numeric_limits<double>::quiet_NaN()),
             CounterArg("bytes_copied", 4096)});
  b.capture().trace_id = kTraceId;
  const Capture capture = b.Build();
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  const std::map<std::string, Value>& a =
      SpanNamed(out, "file.parse").attributes;
  auto is = [&](const std::string& key, const std::string& type,
                const std::string& text) {
    ASSERT_EQ(a.count(key), 1u) << key;
    EXPECT_EQ(a.at(key).type, type) << key;
    EXPECT_EQ(a.at(key).text, text) << key;
  };
  is("thread.id", "intValue", "100");
  is("thread.name", "stringValue", "main");
  is("spanprof.phase", "stringValue", "parse");
  is("spanprof.module", "stringValue", "indexer");
  is("spanprof.activity", "stringValue", "cpu");
  is("spanprof.heartbeats", "intValue", "7");
  is("spanprof.arg.size", "intValue", "-9007199254740993");
  is("spanprof.arg.ratio", "doubleValue", "0.25");
  is("spanprof.arg.bad", "doubleValue", "NaN");
  is("spanprof.count.bytes_copied", "intValue", "4096");
  EXPECT_EQ(a.count("spanprof.alloc_count"), 0u);  // not measured
  EXPECT_EQ(a.count("spanprof.backend"), 0u);      // unset tags are left out
  const std::map<std::string, Value>& k = SpanNamed(out, "kernel").attributes;
  ASSERT_EQ(k.count("spanprof.backend"), 1u);
  EXPECT_EQ(k.at("spanprof.backend").text, "cuda");
  EXPECT_EQ(k.at("spanprof.dtype").text, "f16");
  EXPECT_EQ(k.at("spanprof.device").text, "gpu0");
  EXPECT_EQ(k.count("spanprof.phase"), 0u);
  // No tags, no heartbeats, no thread name: only the thread id.
  const std::map<std::string, Value>& bare = SpanNamed(out, "bare").attributes;
  EXPECT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare.at("thread.id").text, "102");
}

TEST(OtlpWriterTest, TheResourceIsTheProcess) {
  const Capture capture = ThreeSpans();
  const std::vector<DecodedResource> out = Decode(ExportOne(capture).json);
  const std::map<std::string, Value>& r = out[0].attributes;
  EXPECT_EQ(r.at("service.name").text, "indexer");
  EXPECT_EQ(r.at("host.name").text, "build-07");
  EXPECT_EQ(r.at("process.pid").type, "intValue");
  EXPECT_EQ(r.at("process.pid").text, "4711");
  EXPECT_EQ(r.at("telemetry.sdk.name").text, "spanprof");
  EXPECT_EQ(out[0].scope_name, "spanprof");
}

TEST(OtlpWriterTest, ACaptureWithoutAnchorIsAnErrorNamingTheFile) {
  Capture capture = ThreeSpans();
  capture.wall_clock_anchor_ns = 0;
  const OtlpInput inputs[] = {{"old/trace.json", &capture}};
  absl::StatusOr<OtlpExport> out = ExportOtlp(inputs);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("old/trace.json"));
  EXPECT_THAT(out.status().message(), HasSubstr("wall-clock anchor"));
}

TEST(OtlpWriterTest, MalformedTraceIdsAreErrors) {
  for (const char* bad : {"4BF92F3577B34DA6A3CE929D0E0E4736", "1234",
                          "00000000000000000000000000000000",
                          "4bf92f3577b34da6a3ce929d0e0e473g"}) {
    Capture capture = ThreeSpans();
    capture.trace_id = bad;
    const OtlpInput inputs[] = {{"t.json", &capture}};
    absl::StatusOr<OtlpExport> out = ExportOtlp(inputs);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_THAT(out.status().message(), HasSubstr("malformed trace id"));
  }
  EXPECT_FALSE(ExportOtlp({}).ok());
}

TEST(OtlpWriterTest, WithoutATraceIdOneIsDerivedWithANote) {
  Capture capture = ThreeSpans();
  capture.trace_id.clear();
  const OtlpExport out = ExportOne(capture, "old.json");
  const std::string derived = DerivedTraceId(capture);
  EXPECT_TRUE(IsOtlpTraceId(derived)) << derived;
  EXPECT_EQ(derived, DerivedTraceId(capture));
  EXPECT_THAT(out.trace_ids, ElementsAre(derived));
  ASSERT_THAT(out.notes, SizeIs(1));
  EXPECT_THAT(out.notes[0], HasSubstr("old.json"));
  EXPECT_THAT(out.notes[0], HasSubstr(derived));
  EXPECT_EQ(Decode(out.json)[0].spans[0].trace_id, derived);
  Capture other = capture;
  other.pid += 1;
  EXPECT_NE(DerivedTraceId(other), derived);
}

TEST(OtlpWriterTest, TheSameCaptureTwiceIsRefused) {
  const Capture capture = ThreeSpans();
  const OtlpInput inputs[] = {{"a.json", &capture}, {"b.json", &capture}};
  absl::StatusOr<OtlpExport> out = ExportOtlp(inputs);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("b.json"));
  EXPECT_THAT(out.status().message(), HasSubstr("a.json"));
}

TEST(OtlpWriterTest, SeveralCapturesAreOneResourceEachAndMixedTracesNoted) {
  const Capture a = ThreeSpans();
  Capture b = ThreeSpans();
  b.pid = 4712;
  b.span_id_seed = 0x5678;
  b.trace_id = "0af7651916cd43dd8448eb211c80319c";
  const OtlpInput inputs[] = {{"a.json", &a}, {"b.json", &b}};
  absl::StatusOr<OtlpExport> out = ExportOtlp(inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<DecodedResource> decoded = Decode(out->json);
  ASSERT_THAT(decoded, SizeIs(2));
  EXPECT_EQ(decoded[0].attributes.at("process.pid").text, "4711");
  EXPECT_EQ(decoded[1].attributes.at("process.pid").text, "4712");
  EXPECT_EQ(decoded[0].spans[0].trace_id, kTraceId);
  EXPECT_EQ(decoded[1].spans[0].trace_id, b.trace_id);
  EXPECT_EQ(out->span_count, 6u);
  ASSERT_THAT(out->notes, SizeIs(1));
  EXPECT_THAT(out->notes[0], HasSubstr("2 different traces"));
}

// A child process whose remote parent is a later (alias) id of a span of
// its parent process links to that span's primary id.
TEST(OtlpWriterTest, ARemoteParentNamedByAnAliasLinksToThePrimaryId) {
  Capture parent = ThreeSpans();
  parent.exported_span_ids = {{3, 0x1111}, {3, 0x2222}};
  Capture child = ThreeSpans();
  child.pid = 4800;
  child.span_id_seed = 0x9999;
  child.remote_parent_span_id = 0x2222;
  const OtlpInput inputs[] = {{"parent.json", &parent}, {"child.json", &child}};
  absl::StatusOr<OtlpExport> out = ExportOtlp(inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->rewritten_remote_parents, 1u);
  EXPECT_TRUE(out->notes.empty());
  const std::vector<DecodedResource> decoded = Decode(out->json);
  EXPECT_EQ(decoded[0].spans[0].name, "app.run");
  for (const DecodedSpan& s : decoded[0].spans) {
    if (s.name == "pool.task") EXPECT_EQ(s.span_id, "0000000000001111");
  }
  for (const DecodedSpan& s : decoded[1].spans) {
    if (s.name == "app.run") EXPECT_EQ(s.parent_span_id, "0000000000001111");
  }
  // Of another trace, the same number is not that span.
  child.trace_id = "0af7651916cd43dd8448eb211c80319c";
  out = ExportOtlp(inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->rewritten_remote_parents, 0u);
}

TEST(OtlpWriterTest, ASpanWhoseParentIsMissingIsARootWithANote) {
  Capture capture = ThreeSpans();
  capture.spans[IndexOf(capture, 3)].parent_id = 77;
  const OtlpExport out = ExportOne(capture, "gap.json");
  EXPECT_EQ(SpanNamed(Decode(out.json), "pool.task").parent_span_id, "");
  ASSERT_THAT(out.notes, SizeIs(1));
  EXPECT_THAT(out.notes[0], HasSubstr("gap.json: 1 span(s)"));
}

TEST(OtlpWriterTest, ATimeBeyondInt64IsAnError) {
  Capture capture = ThreeSpans();
  capture.spans[0].end_ns = std::numeric_limits<int64_t>::max();
  const OtlpInput inputs[] = {{"far.json", &capture}};
  absl::StatusOr<OtlpExport> out = ExportOtlp(inputs);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("far.json"));
}

// A merged capture holds several processes: each is its own resource, with
// its own service.name, host.name and process.pid, and holds its own spans
// under the ids that process handed out.
TEST(OtlpWriterTest, AMergedCaptureIsOneResourcePerProcess) {
  const Capture coordinator = ThreeSpans();
  Capture worker = ThreeSpans();
  worker.pid = 4712;
  worker.host = "build-08";
  worker.process_name = "worker";
  worker.span_id_seed = 0x5678;
  worker.wall_clock_anchor_ns = kAnchor + 5000;
  absl::StatusOr<MergeResult> merged = MergeCaptures(
      {{"coordinator.json", coordinator}, {"worker.json", worker}});
  ASSERT_TRUE(merged.ok()) << merged.status();
  const Capture& capture = merged->capture;
  ASSERT_THAT(capture.processes, SizeIs(2));
  const std::vector<DecodedResource> out =
      Decode(ExportOne(capture, "merged.json").json);
  ASSERT_THAT(out, SizeIs(2));
  EXPECT_EQ(out[0].attributes.at("service.name").text, "indexer");
  EXPECT_EQ(out[0].attributes.at("host.name").text, "build-07");
  EXPECT_EQ(out[0].attributes.at("process.pid").text, "4711");
  EXPECT_EQ(out[1].attributes.at("service.name").text, "worker");
  EXPECT_EQ(out[1].attributes.at("host.name").text, "build-08");
  EXPECT_EQ(out[1].attributes.at("process.pid").text, "4712");
  // Summed over processes, drops would be counted once per resource.
  EXPECT_EQ(out[0].attributes.count("spanprof.dropped_events"), 0u);
  const Capture* sides[] = {&coordinator, &worker};
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_THAT(out[k].spans, SizeIs(3));
    for (uint64_t id = 1; id <= 3; ++id) {
      EXPECT_EQ(out[k].spans[id - 1].span_id, HexOf(*sides[k], id)) << k;
      EXPECT_EQ(out[k].spans[id - 1].trace_id, kTraceId);
    }
    // The worker's spans were shifted by its anchor's lead: the same
    // wall-clock times as its own capture's.
    EXPECT_EQ(out[k].spans[0].start,
              std::to_string(sides[k]->wall_clock_anchor_ns));
  }
  EXPECT_EQ(out[1].spans[1].parent_span_id, HexOf(worker, 1));
}

// Spans no OTLP consumer can place are named, each with its input, id and
// name; ExportOtlp itself writes them as they are.
TEST(OtlpWriterTest, InvalidSpansAreNamed) {
  const Capture good = ThreeSpans();
  const OtlpInput good_inputs[] = {{"good.json", &good}};
  EXPECT_THAT(InvalidOtlpSpans(good_inputs), ::testing::IsEmpty());

  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  b.Add(1, 0, b.Site("app.run"), main, 0, 1000);
  b.Add(2, 1, b.Site("backwards"), main, 500, 400);
  b.Add(3, 3, b.Site("selfish"), main, 600, 700);
  b.Add(4, 5, b.Site("loop.a"), main, 710, 720);
  b.Add(5, 4, b.Site("loop.b"), main, 730, 740);
  b.capture().trace_id = kTraceId;
  b.capture().wall_clock_anchor_ns = kAnchor;
  const Capture bad = b.Build();
  const OtlpInput inputs[] = {{"good.json", &good}, {"bad.json", &bad}};
  const std::vector<std::string> invalid = InvalidOtlpSpans(inputs);
  ASSERT_THAT(invalid, SizeIs(3));
  EXPECT_EQ(invalid[0],
            "bad.json: span 2 'backwards' ends before it starts (start 500 "
            "ns, end 400 ns)");
  EXPECT_EQ(invalid[1], "bad.json: span 3 'selfish' is its own parent");
  EXPECT_THAT(invalid[2], HasSubstr("its parent chain loops back to it"));
  EXPECT_THAT(invalid[2], ::testing::AnyOf(HasSubstr("span 4 'loop.a'"),
                                           HasSubstr("span 5 'loop.b'")));
  EXPECT_TRUE(ExportOtlp(inputs).ok());
}

TEST(OtlpWriterTest, SpanIdHexIsSixteenLowercaseDigits) {
  EXPECT_EQ(OtlpSpanIdHex(0), "0000000000000000");
  EXPECT_EQ(OtlpSpanIdHex(0xABCDEF0123456789), "abcdef0123456789");
  EXPECT_TRUE(IsOtlpTraceId(kTraceId));
  EXPECT_FALSE(IsOtlpTraceId(""));
}

}  // namespace
}  // namespace spanprof::analysis
