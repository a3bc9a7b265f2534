// The strict event reader on single events: an X or M event as JSON text,
// read into a `TraceEvent` and `PendingSpan` (checked while the parsed
// document, which the pending span's names point into, is alive), or
// refused naming the event's JSON path.
#include "trace/strict_event_reader.h"

#include <simdjson.h>

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "json/strict_json.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis::internal {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kSource = "build/t.json";

// Reads `event` as $.traceEvents[4] and hands the result to `check`.
absl::Status ReadOne(
    const std::string& event,
    const std::function<void(const TraceEvent&, const PendingSpan&, bool)>&
        check = nullptr) {
  const simdjson::padded_string padded("[" + event + "]");
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document document;
  simdjson::ondemand::array events;
  EXPECT_EQ(parser.iterate(padded).get(document), simdjson::SUCCESS);
  EXPECT_EQ(document.get_array().get(events), simdjson::SUCCESS);
  const JsonPath root = JsonPath::Root();
  const JsonPath path = root.Field("traceEvents");
  const JsonPath at = path.Index(4);
  for (auto element : events) {
    simdjson::ondemand::value value;
    EXPECT_EQ(element.get(value), simdjson::SUCCESS);
    TraceEvent read;
    PendingSpan pending;
    bool is_span = false;
    const absl::Status status =
        ReadTraceEvent(kSource, 4, value, at, read, pending, is_span);
    if (status.ok() && check) check(read, pending, is_span);
    return status;
  }
  return absl::InternalError("no event");
}

constexpr std::string_view kSpan =
    R"({"ph":"X","name":"model.forward","cat":"forward","pid":7,"tid":101,)"
    R"("ts":1.5,"dur":0.25,"args":{"span_id":9,"parent_id":3,"depth":1,)"
    R"("heartbeats":2,"site":1,"thread":1,"phase":"forward",)"
    R"("counters":{"hits":4},"args":{"size":4096,"ratio":0.5}}})";

TEST(StrictEventReaderTest, ReadsASpanEventExactly) {
  const absl::Status status =
      ReadOne(std::string(kSpan),
              [](const TraceEvent& e, const PendingSpan& p, bool is_span) {
                EXPECT_TRUE(is_span);
                EXPECT_EQ(e.index, 4u);
                EXPECT_EQ(e.pid, 7);
                EXPECT_EQ(e.tid, 101);
                EXPECT_EQ(e.ts_ns, 1500);
                EXPECT_EQ(e.dur_ns, 250);
                EXPECT_EQ(e.span_id, 9u);
                EXPECT_EQ(p.span.start_ns, 1500);
                EXPECT_EQ(p.span.end_ns, 1750);
                EXPECT_EQ(p.span.parent_id, 3u);
                EXPECT_EQ(p.name, "model.forward");
                EXPECT_EQ(p.cat, "forward");
                EXPECT_EQ(p.site, 1);
                EXPECT_EQ(p.thread, 1);
                ASSERT_TRUE(p.phase.has_value());
                EXPECT_EQ(*p.phase, "forward");
                EXPECT_FALSE(p.module.has_value());
                // The numeric arguments, then the counters, whatever the key
                // order.
                ASSERT_EQ(p.args.size(), 3u);
                EXPECT_EQ(p.args[0].key, "size");
                EXPECT_EQ(p.args[0].int_value, 4096);
                EXPECT_EQ(p.args[1].key, "ratio");
                EXPECT_TRUE(p.args[1].is_double);
                EXPECT_EQ(p.args[2].key, "hits");
                EXPECT_TRUE(p.args[2].is_counter);
              });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(StrictEventReaderTest, ReadsAMetaEvent) {
  const absl::Status status =
      ReadOne(R"({"ph":"M","name":"process_name","pid":7,"tid":7,"ts":0,)"
              R"("args":{"name":"app"}})",
              [](const TraceEvent& e, const PendingSpan&, bool is_span) {
                EXPECT_FALSE(is_span);
                EXPECT_TRUE(e.is_process_name);
                EXPECT_EQ(e.pid, 7);
              });
  EXPECT_TRUE(status.ok()) << status;
}

void ExpectRefused(const std::string& event, std::string_view expected) {
  const absl::Status status = ReadOne(event);
  ASSERT_FALSE(status.ok()) << "accepted: " << event;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(expected)));
}

std::string SpanWith(std::string_view from, std::string_view to) {
  std::string text(kSpan);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(StrictEventReaderTest, RefusesNamingTheEventsField) {
  ExpectRefused(SpanWith("\"ph\":\"X\"", "\"ph\":\"B\""),
                "build/t.json: $.traceEvents[4].ph: expected \"X\" or \"M\", "
                "got \"B\"");
  ExpectRefused(SpanWith("\"ts\":1.5", "\"ts\":1.5e3"),
                "$.traceEvents[4].ts: expected microseconds written as "
                "<integer>.<up to 3 digits>");
  ExpectRefused(SpanWith("\"span_id\":9", "\"span_id\":0"),
                "$.traceEvents[4].args.span_id: span ids start at 1");
  ExpectRefused(SpanWith("\"counters\":{\"hits\":4}",
                         "\"counters\":{\"hits\":4,\"hits\":5}"),
                "$.traceEvents[4].args.counters.hits: duplicate counter");
  ExpectRefused(SpanWith("\"pid\":7,", "\"pid\":7,\"colour\":1,"),
                "$.traceEvents[4]: unknown field \"colour\"");
  ExpectRefused(R"({"ph":"M","name":"thread_colour","pid":7,"tid":7,"ts":0,)"
                R"("args":{"name":"x"}})",
                "$.traceEvents[4].name: expected \"process_name\", "
                "\"thread_name\" or \"thread_sort_index\"");
}

}  // namespace
}  // namespace spanprof::analysis::internal
