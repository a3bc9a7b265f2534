#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::spanprof::testing::DoubleArg;
using ::spanprof::testing::IntArg;
using ::testing::HasSubstr;

constexpr int64_t kHourNs = 3'600'000'000'000;

// One X event as a test sees it: the raw text of ts/dur and the parsed rest.
struct XEvent {
  std::string name;
  std::string cat;
  int64_t pid = 0;
  uint64_t tid = 0;
  std::string ts;
  std::string dur;
  std::optional<uint64_t> bind_id;
  bool flow_in = false;
  bool flow_out = false;
  uint64_t span_id = 0;
  uint64_t parent_id = 0;
  uint64_t depth = 0;
  uint64_t thread = 0;
  std::string args_json;  // the whole args object, minified
};

struct ParsedTrace {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  std::vector<simdjson::dom::object> metadata_events;
  std::vector<XEvent> spans;
  std::vector<std::string> raw_lines;
};

// Parses a trace strictly and splits its events. `ts` and `dur` are taken
// from the source text, as a reader must, since the exact digits matter.
void Parse(const std::string& json, ParsedTrace& trace) {
  ASSERT_EQ(trace.parser.parse(json).get(trace.root), simdjson::SUCCESS)
      << json;
  size_t line_start = 0;
  while (line_start < json.size()) {
    size_t end = json.find('\n', line_start);
    if (end == std::string::npos) end = json.size();
    trace.raw_lines.push_back(json.substr(line_start, end - line_start));
    line_start = end + 1;
  }
  simdjson::dom::array events;
  ASSERT_EQ(trace.root["traceEvents"].get(events), simdjson::SUCCESS);
  auto raw_field = [](const std::string& line, std::string_view key) {
    const std::string needle = "\"" + std::string(key) + "\":";
    const size_t at = line.find(needle);
    if (at == std::string::npos) return std::string();
    const size_t from = at + needle.size();
    const size_t to = line.find_first_of(",}", from);
    return line.substr(from, to - from);
  };
  for (simdjson::dom::element event : events) {
    std::string_view ph;
    ASSERT_EQ(event["ph"].get(ph), simdjson::SUCCESS);
    if (ph == "M") {
      trace.metadata_events.push_back(event.get_object().value());
      continue;
    }
    ASSERT_EQ(ph, "X");
    XEvent x;
    x.name = std::string(event["name"].get_string().value());
    x.cat = std::string(event["cat"].get_string().value());
    x.pid = event["pid"].get_int64().value();
    x.tid = event["tid"].get_uint64().value();
    uint64_t bind = 0;
    if (event["bind_id"].get(bind) == simdjson::SUCCESS) x.bind_id = bind;
    bool flag = false;
    if (event["flow_in"].get(flag) == simdjson::SUCCESS) x.flow_in = flag;
    if (event["flow_out"].get(flag) == simdjson::SUCCESS) x.flow_out = flag;
    simdjson::dom::object args = event["args"].get_object().value();
    x.span_id = args["span_id"].get_uint64().value();
    x.parent_id = args["parent_id"].get_uint64().value();
    x.depth = args["depth"].get_uint64().value();
    x.thread = args["thread"].get_uint64().value();
    x.args_json = simdjson::minify(args);
    // Find this event's source line by its unique span id.
    const std::string id_key = "\"span_id\":" + std::to_string(x.span_id) + ",";
    for (const std::string& line : trace.raw_lines) {
      if (line.find(id_key) != std::string::npos &&
          line.find("\"ph\":\"X\"") != std::string::npos) {
        x.ts = raw_field(line, "ts");
        x.dur = raw_field(line, "dur");
      }
    }
    trace.spans.push_back(std::move(x));
  }
}

const XEvent* FindSpan(const ParsedTrace& trace, uint64_t id) {
  for (const XEvent& x : trace.spans) {
    if (x.span_id == id) return &x;
  }
  return nullptr;
}

TEST(TraceWriterTest, FormatsMicrosecondsExactly) {
  EXPECT_EQ(FormatMicros(0), "0.000");
  EXPECT_EQ(FormatMicros(1), "0.001");
  EXPECT_EQ(FormatMicros(999), "0.999");
  EXPECT_EQ(FormatMicros(1000), "1.000");
  EXPECT_EQ(FormatMicros(1001), "1.001");
  EXPECT_EQ(FormatMicros(1234567), "1234.567");
  EXPECT_EQ(FormatMicros(kHourNs), "3600000000.000");
  EXPECT_EQ(FormatMicros(kHourNs + 7), "3600000000.007");
  EXPECT_EQ(FormatMicros(-1), "-0.001");
  EXPECT_EQ(FormatMicros(-1234567), "-1234.567");
  EXPECT_EQ(FormatMicros(INT64_MAX), "9223372036854775.807");
  EXPECT_EQ(FormatMicros(INT64_MIN), "-9223372036854775.808");
}

Capture SmallCapture() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(4242, "main");
  const uint32_t worker = b.Thread(4250);
  const uint32_t run = b.Site("indexer.run");
  const uint32_t parse = b.Site("file.parse", "parse", "indexer", "io");
  b.Add(1, 0, run, main, 0, 1834512).heartbeats = 290;
  b.Add(2, 1, parse, main, 1000, 1234567);
  b.Add(3, 1, parse, worker, 12345, 15345).heartbeats = 6;
  b.Args(3, {IntArg("size", 4096), DoubleArg("ratio", 3.0),
             DoubleArg("bad", std::numeric_limits<double>::quiet_NaN())});
  b.capture().spanprof_version = "0.1.0";
  b.capture().wall_clock_anchor_ns = 1'700'000'000'123'456'789;
  b.capture().window_ns = 1834512;
  return b.Build();
}

TEST(TraceWriterTest, OutputIsStrictJsonWithTheDocumentedTopLevel) {
  const std::string json = TraceToJson(SmallCapture());
  ParsedTrace trace;
  Parse(json, trace);
  simdjson::dom::object root = trace.root.get_object().value();
  std::vector<std::string_view> keys;
  for (auto field : root) keys.push_back(field.key);
  EXPECT_EQ(keys, (std::vector<std::string_view>{
                      "traceEvents", "displayTimeUnit", "metadata"}));
  EXPECT_EQ(root["displayTimeUnit"].get_string().value(), "ns");
  EXPECT_EQ(json.find("NaN"), std::string::npos);
  EXPECT_EQ(json.find("nan"), std::string::npos);
  EXPECT_EQ(json.find("Infinity"), std::string::npos);
  EXPECT_EQ(json.back(), '\n');
}

TEST(TraceWriterTest, WritesMetadataEventsForProcessAndThreads) {
  ParsedTrace trace;
  Parse(TraceToJson(SmallCapture()), trace);
  ASSERT_EQ(trace.metadata_events.size(), 5u);
  auto name_of = [](simdjson::dom::object e) {
    return std::string(e["name"].get_string().value());
  };
  EXPECT_EQ(name_of(trace.metadata_events[0]), "process_name");
  EXPECT_EQ(trace.metadata_events[0]["pid"].get_int64().value(), 4242);
  EXPECT_EQ(trace.metadata_events[0]["args"]["name"].get_string().value(),
            "test");
  EXPECT_EQ(name_of(trace.metadata_events[1]), "thread_name");
  EXPECT_EQ(trace.metadata_events[1]["tid"].get_int64().value(), 4242);
  EXPECT_EQ(trace.metadata_events[1]["args"]["name"].get_string().value(),
            "main");
  EXPECT_EQ(name_of(trace.metadata_events[2]), "thread_sort_index");
  EXPECT_EQ(trace.metadata_events[2]["args"]["sort_index"].get_int64().value(),
            0);
  // An unnamed thread is shown as thread-<tid>.
  EXPECT_EQ(trace.metadata_events[3]["args"]["name"].get_string().value(),
            "thread-4250");
  EXPECT_EQ(trace.metadata_events[4]["args"]["sort_index"].get_int64().value(),
            1);
}

TEST(TraceWriterTest, WritesSpansAsCompleteEventsWithExactMicroseconds) {
  ParsedTrace trace;
  Parse(TraceToJson(SmallCapture()), trace);
  ASSERT_EQ(trace.spans.size(), 3u);
  const XEvent* root = FindSpan(trace, 1);
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->name, "indexer.run");
  EXPECT_EQ(root->cat, "spanprof");
  EXPECT_EQ(root->pid, 4242);
  EXPECT_EQ(root->tid, 4242u);
  EXPECT_EQ(root->ts, "0.000");
  EXPECT_EQ(root->dur, "1834.512");
  const XEvent* child = FindSpan(trace, 2);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->cat, "parse");
  EXPECT_EQ(child->ts, "1.000");
  EXPECT_EQ(child->dur, "1233.567");
  const XEvent* worker = FindSpan(trace, 3);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->tid, 4250u);
  EXPECT_EQ(worker->ts, "12.345");
  EXPECT_EQ(worker->dur, "3.000");
}

TEST(TraceWriterTest, ArgsCarryIdsTagsAndUserArguments) {
  ParsedTrace trace;
  Parse(TraceToJson(SmallCapture()), trace);
  EXPECT_EQ(FindSpan(trace, 1)->args_json,
            "{\"span_id\":1,\"parent_id\":0,\"depth\":0,\"heartbeats\":290,"
            "\"site\":0,\"thread\":0}");
  // Tags only when set; user args keep int vs double, NaN is null.
  const XEvent* worker = FindSpan(trace, 3);
  EXPECT_THAT(worker->args_json,
              HasSubstr("\"depth\":1,\"heartbeats\":6,\"site\":1,\"thread\":1,"
                        "\"phase\":\"parse\",\"module\":\"indexer\","
                        "\"activity\":\"io\""));
  EXPECT_THAT(worker->args_json, HasSubstr("\"args\":{\"size\":4096,"));
  EXPECT_EQ(worker->args_json.find("alloc_count"), std::string::npos);
  EXPECT_EQ(worker->args_json.find("flags"), std::string::npos);
  const std::string json = TraceToJson(SmallCapture());
  EXPECT_THAT(json, HasSubstr("\"args\":{\"size\":4096,\"ratio\":3.0,"
                              "\"bad\":null}"));
}

// Counters are a nested "counters" object after the user arguments; each
// object is there only when it has an entry.
TEST(TraceWriterTest, CountersFollowTheUserArgumentsInTheirOwnObject) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 100).flags = kSpanException;
  b.Add(2, 1, s, t, 10, 20);
  b.Add(3, 1, s, t, 30, 40);
  b.Add(4, 1, s, t, 50, 60);
  b.Args(1, {IntArg("tokens", 300), DoubleArg("ratio", 0.5),
             CounterArg("bytes_copied", 4567), CounterArg("tokens", 2)});
  b.Args(2, {CounterArg("q\"uote", 1)});
  b.Args(3, {IntArg("size", 9)});
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  EXPECT_THAT(FindSpan(trace, 1)->args_json,
              HasSubstr("\"flags\":[\"exception\"],\"args\":{\"tokens\":300,"
                        "\"ratio\":0.5},\"counters\":{\"bytes_copied\":4567,"
                        "\"tokens\":2}}"));
  EXPECT_THAT(FindSpan(trace, 2)->args_json,
              HasSubstr("\"thread\":0,\"counters\":{\"q\\\"uote\":1}}"));
  EXPECT_EQ(FindSpan(trace, 3)->args_json.find("counters"), std::string::npos);
  EXPECT_EQ(FindSpan(trace, 4)->args_json.find("counters"), std::string::npos);
  EXPECT_EQ(FindSpan(trace, 4)->args_json.find("\"args\""), std::string::npos);
}

TEST(TraceWriterTest, FlagsAndAllocationsArePresentOnlyWhenSet) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  Span& span = b.Add(1, 0, s, t, 0, 10);
  span.flags = kSpanUnfinished | kSpanException | kSpanRerooted;
  b.Allocs(1, 3, -64);
  b.Add(2, 0, s, t, 20, 30).flags = kSpanException;
  b.capture().alloc_measured = true;
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  EXPECT_THAT(FindSpan(trace, 1)->args_json,
              HasSubstr("\"alloc_count\":3,\"alloc_bytes\":-64,\"flags\":["
                        "\"unfinished\",\"exception\",\"rerooted\"]"));
  EXPECT_THAT(FindSpan(trace, 2)->args_json,
              HasSubstr("\"flags\":[\"exception\"]"));
}

TEST(TraceWriterTest, SortsEventsByStartThenLongerFirstThenDepth) {
  CaptureBuilder b;
  const uint32_t t0 = b.Thread(1);
  const uint32_t t1 = b.Thread(2);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t1, 50, 60);
  b.Add(2, 0, s, t0, 0, 100);
  b.Add(3, 2, s, t0, 0, 100);  // same interval, deeper
  b.Add(4, 3, s, t0, 0, 40);   // same start, shorter
  b.Add(5, 0, s, t1, 0, 10);
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  std::vector<uint64_t> order;
  for (const XEvent& x : trace.spans) order.push_back(x.span_id);
  EXPECT_EQ(order, (std::vector<uint64_t>{2, 3, 4, 5, 1}));
}

TEST(TraceWriterTest, HourLongCaptureKeepsNanosecondDigits) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("long");
  b.Add(1, 0, s, t, 0, kHourNs + 1);
  b.Add(2, 1, s, t, kHourNs - 999, kHourNs);
  b.capture().window_ns = kHourNs + 1;
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  EXPECT_EQ(FindSpan(trace, 1)->dur, "3600000000.001");
  EXPECT_EQ(FindSpan(trace, 2)->ts, "3599999999.001");
  EXPECT_EQ(FindSpan(trace, 2)->dur, "0.999");
  EXPECT_EQ(trace.root["metadata"]["window_ns"].get_int64().value(),
            kHourNs + 1);
}

TEST(TraceWriterTest, EscapesControlCharactersInNames) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, std::string("tab\there\x01", 10));
  const uint32_t s = b.Site("line\nbreak \"quoted\" back\\slash", "ph\x1f");
  b.Add(1, 0, s, t, 0, 10);
  b.capture().process_name = "proc\r";
  const std::string json = TraceToJson(b.Build());
  for (char c : json) {
    if (c != '\n') EXPECT_GE(static_cast<unsigned char>(c), 0x20);
  }
  ParsedTrace trace;
  Parse(json, trace);
  EXPECT_EQ(FindSpan(trace, 1)->name, "line\nbreak \"quoted\" back\\slash");
  EXPECT_EQ(FindSpan(trace, 1)->cat, "ph\x1f");
  EXPECT_EQ(trace.root["metadata"]["process_name"].get_string().value(),
            "proc\r");
}

TEST(TraceWriterTest, MetadataCarriesEverythingToRebuildTheCapture) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(77, "main");
  const uint32_t kept = b.Site("kept");
  const uint32_t lost = b.Site("lost", "io", "disk", "read");
  b.Add(1, 0, kept, t, 0, 10);
  Capture& c = b.capture();
  c.clock = "tsc";
  c.event_limit = 100;
  c.overflow_policy = "ring";
  c.dropped_events = 12;
  c.dropped_by_site = {{lost, 12}};
  c.dropped_args = 4;
  c.finished_normally = false;
  c.overhead_ns_per_span = 9;
  c.process_resources = {1, 2, 3, 4, 5, 6, 7};
  c.wall_clock_uncertainty_ns = 120;
  c.host = "build-7";
  c.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  c.remote_parent_span_id = 0x00f067aa0ba902b7u;
  c.span_id_seed = 0xabcdef;
  c.exported_span_ids = {{1, 0x1234}};
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  simdjson::dom::object metadata = trace.root["metadata"].get_object().value();
  std::vector<std::string_view> keys;
  for (auto field : metadata) keys.push_back(field.key);
  EXPECT_EQ(keys, (std::vector<std::string_view>{"schema",
                                                 "schema_version",
                                                 "spanprof_version",
                                                 "process_name",
                                                 "pid",
                                                 "clock",
                                                 "wall_clock_anchor_ns",
                                                 "wall_clock_uncertainty_ns",
                                                 "host",
                                                 "trace_id",
                                                 "remote_parent_span_id",
                                                 "span_id_seed",
                                                 "exported_span_ids",
                                                 "window_ns",
                                                 "event_limit",
                                                 "overflow_policy",
                                                 "dropped_events",
                                                 "dropped_by_site",
                                                 "dropped_args",
                                                 "arg_drops",
                                                 "failed_prepares",
                                                 "finished_normally",
                                                 "end_reason",
                                                 "overhead_ns_per_span",
                                                 "alloc_measured",
                                                 "process_resources",
                                                 "threads",
                                                 "sites"}));
  EXPECT_EQ(metadata["schema"].get_string().value(), "spanprof.trace");
  EXPECT_EQ(metadata["schema_version"].get_int64().value(), 1);
  EXPECT_EQ(metadata["clock"].get_string().value(), "tsc");
  EXPECT_EQ(metadata["wall_clock_anchor_ns"].get_int64().value(),
            c.wall_clock_anchor_ns);
  EXPECT_EQ(metadata["wall_clock_uncertainty_ns"].get_int64().value(), 120);
  EXPECT_EQ(metadata["host"].get_string().value(), "build-7");
  EXPECT_EQ(metadata["trace_id"].get_string().value(),
            "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(metadata["remote_parent_span_id"].get_string().value(),
            "00f067aa0ba902b7");
  EXPECT_EQ(metadata["span_id_seed"].get_string().value(), "0000000000abcdef");
  EXPECT_EQ(simdjson::minify(metadata["exported_span_ids"].value()),
            "[{\"span\":1,\"external_id\":\"0000000000001234\"}]");
  EXPECT_EQ(metadata["finished_normally"].get_bool().value(), false);
  EXPECT_EQ(metadata["dropped_args"].get_uint64().value(), 4u);
  EXPECT_EQ(simdjson::minify(metadata["dropped_by_site"].value()),
            "[{\"site\":1,\"name\":\"lost\",\"phase\":\"io\",\"module\":"
            "\"disk\",\"activity\":\"read\",\"count\":12}]");
  EXPECT_EQ(simdjson::minify(metadata["threads"].value()),
            "[{\"tid\":77,\"name\":\"main\",\"sort_index\":0}]");
  EXPECT_EQ(simdjson::minify(metadata["sites"].value()),
            "[{\"name\":\"kept\",\"phase\":\"\",\"module\":\"\",\"activity\":"
            "\"\"},{\"name\":\"lost\",\"phase\":\"io\",\"module\":\"disk\","
            "\"activity\":\"read\"}]");
  EXPECT_EQ(simdjson::minify(metadata["process_resources"].value()),
            "{\"user_cpu_ns\":1,\"system_cpu_ns\":2,\"peak_rss_kib\":3,"
            "\"minor_page_faults\":4,\"major_page_faults\":5,"
            "\"voluntary_context_switches\":6,"
            "\"involuntary_context_switches\":7}");
}

TEST(TraceWriterTest, NoEventHasAnArrayValuedTopLevelField) {
  // Perfetto's JSON tokenizer rejects the whole file otherwise.
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a", "p");
  b.Add(1, 0, s, t, 0, 10).flags = kSpanUnfinished;
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  simdjson::dom::array events = trace.root["traceEvents"].get_array().value();
  for (simdjson::dom::element event : events) {
    const simdjson::dom::object fields = event.get_object().value();
    for (auto field : fields) {
      EXPECT_FALSE(field.value.is_array()) << field.key;
    }
  }
}

TEST(TraceWriterTest, OneFlowOutPerCrossThreadParentAndOneFlowInPerChild) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1);
  const uint32_t w1 = b.Thread(2);
  const uint32_t w2 = b.Thread(3);
  const uint32_t s = b.Site("a");
  b.Add(10, 0, s, main, 0, 1000);
  b.Add(11, 10, s, main, 5, 50);   // same-thread child: no flow
  b.Add(12, 10, s, w1, 100, 200);  // cross-thread children
  b.Add(13, 10, s, w1, 300, 400);
  b.Add(14, 10, s, w2, 150, 250);
  b.Add(15, 14, s, w2, 160, 170);  // same-thread child of a cross child
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  const XEvent* parent = FindSpan(trace, 10);
  ASSERT_TRUE(parent->bind_id.has_value());
  EXPECT_EQ(*parent->bind_id, 10u);
  EXPECT_TRUE(parent->flow_out);
  EXPECT_FALSE(parent->flow_in);
  for (uint64_t id : {12, 13, 14}) {
    const XEvent* child = FindSpan(trace, id);
    ASSERT_TRUE(child->bind_id.has_value()) << id;
    EXPECT_EQ(*child->bind_id, 10u);
    EXPECT_TRUE(child->flow_in);
    EXPECT_FALSE(child->flow_out);
  }
  EXPECT_FALSE(FindSpan(trace, 11)->bind_id.has_value());
  EXPECT_FALSE(FindSpan(trace, 15)->bind_id.has_value());
  // The flow fields sit between dur and args.
  const std::string json = TraceToJson(b.Build());
  EXPECT_THAT(json, HasSubstr("\"dur\":0.100,\"bind_id\":10,\"flow_in\":true,"
                              "\"args\":{\"span_id\":12,"));
}

TEST(TraceWriterTest, SameThreadOnlyCaptureHasNoFlows) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 100);
  b.Add(2, 1, s, t, 10, 20);
  const std::string json = TraceToJson(b.Build());
  EXPECT_EQ(json.find("bind_id"), std::string::npos);
  EXPECT_EQ(json.find("\"flow_in\""), std::string::npos);
  EXPECT_EQ(json.find("\"flow_out\""), std::string::npos);
}

TEST(TraceWriterTest, HandOffChainKeepsTheIncomingArrow) {
  // A (t0) -> B (t1) -> C (t2): B can bind only one flow; either choice draws
  // one arrow, and the tie goes to B's incoming arrow.
  CaptureBuilder b;
  const uint32_t t0 = b.Thread(1);
  const uint32_t t1 = b.Thread(2);
  const uint32_t t2 = b.Thread(3);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t0, 0, 1000);
  b.Add(2, 1, s, t1, 10, 900);
  b.Add(3, 2, s, t2, 20, 800);
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  EXPECT_TRUE(FindSpan(trace, 1)->flow_out);
  EXPECT_TRUE(FindSpan(trace, 2)->flow_in);
  EXPECT_EQ(FindSpan(trace, 2)->bind_id, 1u);
  EXPECT_FALSE(FindSpan(trace, 3)->bind_id.has_value());
}

TEST(TraceWriterTest, NestedFanOutKeepsTheMostArrows) {
  // A (t0) -> B (t1) -> C1, C2 (t2): B binding flow_out draws two arrows,
  // flow_in only one, so B is a source and A draws nothing.
  CaptureBuilder b;
  const uint32_t t0 = b.Thread(1);
  const uint32_t t1 = b.Thread(2);
  const uint32_t t2 = b.Thread(3);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t0, 0, 1000);
  b.Add(2, 1, s, t1, 10, 900);
  b.Add(3, 2, s, t2, 20, 30);
  b.Add(4, 2, s, t2, 40, 50);
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  EXPECT_FALSE(FindSpan(trace, 1)->bind_id.has_value());
  EXPECT_TRUE(FindSpan(trace, 2)->flow_out);
  EXPECT_EQ(FindSpan(trace, 2)->bind_id, 2u);
  EXPECT_TRUE(FindSpan(trace, 3)->flow_in);
  EXPECT_EQ(FindSpan(trace, 3)->bind_id, 2u);
  EXPECT_TRUE(FindSpan(trace, 4)->flow_in);
}

TEST(TraceWriterTest, ChildImportedBeforeItsParentGetsNoFlow) {
  // Perfetto imports equal-ts X events longest first: a cross-thread child
  // that starts with its parent and outlives it would come first and its
  // flow_in would find no flow_out.
  CaptureBuilder b;
  const uint32_t t0 = b.Thread(1);
  const uint32_t t1 = b.Thread(2);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t0, 100, 200);
  b.Add(2, 1, s, t1, 100, 500);
  b.Add(3, 1, s, t1, 50, 60);  // starts before its parent
  const std::string json = TraceToJson(b.Build());
  EXPECT_EQ(json.find("bind_id"), std::string::npos);
}

// Property: on random multi-thread forests, every flow_in has exactly one
// flow_out with its bind_id, on the parent's X event, on another thread;
// flow_out ids are unique and every flow_out has at least one flow_in.
TEST(TraceWriterTest, FlowBindingsAreConsistentOnRandomForests) {
  std::mt19937 rng(17);
  for (int round = 0; round < 50; ++round) {
    CaptureBuilder b;
    const int threads = 1 + static_cast<int>(rng() % 4);
    for (int t = 0; t < threads; ++t) b.Thread(100 + static_cast<uint64_t>(t));
    const uint32_t s = b.Site("a");
    const int spans = 1 + static_cast<int>(rng() % 60);
    for (int i = 1; i <= spans; ++i) {
      const uint64_t parent = (i > 1 && rng() % 4 != 0)
                                  ? 1 + rng() % static_cast<uint64_t>(i - 1)
                                  : 0;
      const int64_t start = static_cast<int64_t>(rng() % 1000);
      const int64_t end = start + static_cast<int64_t>(rng() % 500);
      b.Add(static_cast<uint64_t>(i), parent, s,
            static_cast<uint32_t>(rng() % static_cast<uint32_t>(threads)),
            start, end);
    }
    const Capture capture = b.Build();
    ParsedTrace trace;
    Parse(TraceToJson(capture), trace);
    std::map<uint64_t, const XEvent*> outs;
    std::map<uint64_t, int> ins_per_out;
    for (const XEvent& x : trace.spans) {
      EXPECT_FALSE(x.flow_in && x.flow_out);
      if (x.flow_out) {
        EXPECT_EQ(x.bind_id, x.span_id);
        EXPECT_TRUE(outs.emplace(*x.bind_id, &x).second) << "duplicate";
      }
    }
    for (const XEvent& x : trace.spans) {
      if (!x.flow_in) continue;
      EXPECT_EQ(x.bind_id, x.parent_id);
      auto it = outs.find(*x.bind_id);
      ASSERT_NE(it, outs.end()) << "flow_in without flow_out";
      EXPECT_NE(it->second->thread, x.thread);
      ++ins_per_out[*x.bind_id];
    }
    for (const auto& [id, out] : outs) {
      EXPECT_GT(ins_per_out[id], 0) << "flow_out " << id << " has no flow_in";
    }
  }
}

TEST(TraceWriterTest, OutputIsDeterministicWhateverTheSpanOrder) {
  const Capture capture = SmallCapture();
  Capture reversed = capture;
  std::reverse(reversed.spans.begin(), reversed.spans.end());
  EXPECT_EQ(TraceToJson(capture), TraceToJson(capture));
  EXPECT_EQ(TraceToJson(capture), TraceToJson(reversed));
}

TEST(TraceWriterTest, EmptyCaptureIsAValidTrace) {
  CaptureBuilder b;
  ParsedTrace trace;
  Parse(TraceToJson(b.Build()), trace);
  EXPECT_TRUE(trace.spans.empty());
  EXPECT_EQ(trace.metadata_events.size(), 1u);  // process_name
}

class WriteTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("spanprof_trace_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(WriteTraceTest, WritesPlainJsonAndCreatesDirectories) {
  const std::string path = (dir_ / "out" / "trace.json").string();
  ASSERT_TRUE(WriteTrace(SmallCapture(), path).ok());
  const absl::StatusOr<std::string> back = ReadFile(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, TraceToJson(SmallCapture()));
}

TEST_F(WriteTraceTest, GzipPathWritesGzipThatDecompressesToTheSameJson) {
  const std::string path = (dir_ / "trace.json.gz").string();
  ASSERT_TRUE(WriteTrace(SmallCapture(), path).ok());
  gzFile file = gzopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  unsigned char magic[2] = {0, 0};
  std::string text;
  char buffer[4096];
  int n;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) {
    text.append(buffer, static_cast<size_t>(n));
  }
  EXPECT_EQ(gzdirect(file), 0) << "the file is not compressed";
  gzclose(file);
  FILE* raw = std::fopen(path.c_str(), "rb");
  ASSERT_NE(raw, nullptr);
  ASSERT_EQ(std::fread(magic, 1, 2, raw), 2u);
  std::fclose(raw);
  EXPECT_EQ(magic[0], 0x1f);
  EXPECT_EQ(magic[1], 0x8b);
  EXPECT_EQ(text, TraceToJson(SmallCapture()));
}

}  // namespace
}  // namespace spanprof::analysis

namespace spanprof::analysis {
namespace {

// A capture big enough that WriteTrace streams several chunks.
Capture LargeCapture() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t worker = b.Thread(2, "worker");
  const uint32_t run = b.Site("run");
  const uint32_t step = b.Site("step", "compute", "solver");
  b.Add(1, 0, run, main, 0, 100'000'000);
  uint64_t id = 2;
  for (int i = 0; i < 12000; ++i) {
    const int64_t start = 10 + int64_t{i} * 8000;
    b.Add(id++, 1, step, i % 3 == 0 ? worker : main, start, start + 5000)
        .heartbeats = static_cast<uint64_t>(i);
  }
  return b.Build();
}

TEST_F(WriteTraceTest, StreamsLargeTracesInChunksToTheSameBytes) {
  const Capture capture = LargeCapture();
  const std::string expected = TraceToJson(capture);
  ASSERT_GT(expected.size(), size_t{2} << 20);  // several 1 MiB chunks
  const std::string plain = (dir_ / "large.json").string();
  ASSERT_TRUE(WriteTrace(capture, plain).ok());
  absl::StatusOr<std::string> back = ReadFile(plain);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, expected);
  const std::string gz = (dir_ / "large.json.gz").string();
  ASSERT_TRUE(WriteTrace(capture, gz).ok());
  back = ReadFile(gz);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, expected);
}

TEST_F(WriteTraceTest, FailedWriteLeavesTheOldTraceAndNoTemporaryFile) {
  const std::filesystem::path path = dir_ / "keep" / "trace.json";
  ASSERT_TRUE(WriteTrace(SmallCapture(), path.string()).ok());
  const absl::StatusOr<std::string> before = ReadFile(path.string());
  ASSERT_TRUE(before.ok());
  // A directory where the temporary file would go makes the write fail
  // (even for root): the target is a directory, so the rename fails.
  const std::filesystem::path blocked = dir_ / "blocked.json";
  std::filesystem::create_directories(blocked / "x");
  const absl::Status status = WriteTrace(LargeCapture(), blocked.string());
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("blocked.json"));
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator(dir_)) {
    ++entries;
  }
  EXPECT_EQ(entries, 2u);  // keep/ and blocked.json/, no temporary file
  EXPECT_EQ(*ReadFile(path.string()), *before);
}

// The strict reader rebuilds the exact capture, so the summary of the trace
// is the summary of the capture.
TEST(TraceRoundTripTest, ReaderRebuildsTheExactCapture) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(4242, "main");
  const uint32_t worker = b.Thread(4250);
  const uint32_t reused = b.Thread(4250, "reused tid");  // OS tid reuse
  const uint32_t run = b.Site("indexer.run");
  const uint32_t parse = b.Site("file.parse", "parse", "indexer", "io");
  const uint32_t twin = b.Site("file.parse", "parse", "indexer", "io");
  const uint32_t lost = b.Site("lost \"quoted\"\n", "", "m");
  b.Add(1, 0, run, main, 0, 1834512).heartbeats = 290;
  b.Add(2, 1, parse, main, 1000, 1234567).flags = kSpanException;
  Span& cross = b.Add(3, 1, twin, worker, 12345, 15345);
  cross.heartbeats = 6;
  b.Allocs(3, 2, 128);
  b.Add(4, 1, parse, reused, 20000, 20000).flags =
      kSpanUnfinished | kSpanRerooted;
  b.Args(3, {IntArg("size", 4096), DoubleArg("ratio", 3.0),
             DoubleArg("tiny", 1e-300), IntArg("neg", INT64_MIN),
             CounterArg("bytes_copied", 1 << 20), CounterArg("size", 0)});
  b.Args(4, {CounterArg("hits", INT64_MAX)});
  Capture& c = b.capture();
  c.dropped_args = 3;
  c.alloc_measured = true;
  c.clock = "tsc";
  c.dropped_events = 5;
  c.dropped_by_site = {{lost, 5}};
  c.finished_normally = false;
  c.process_resources = {1, 2, 3, 4, 5, 6, 7};
  const Capture capture = b.Build();
  const absl::StatusOr<Capture> back =
      ParseTrace(TraceToJson(capture), "round-trip");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, capture);
  EXPECT_EQ(Summarize(*back), Summarize(capture));
}

}  // namespace
}  // namespace spanprof::analysis
