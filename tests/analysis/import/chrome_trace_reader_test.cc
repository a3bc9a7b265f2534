// The foreign Chrome trace reader, on real traces (clang -ftime-trace, node
// --trace-events-enabled) and hand-written edge cases checked in under
// tests/data/foreign/: what becomes a span, how nesting is rebuilt, what is
// skipped and noted, what is an import issue and what is an error.
#include "analysis/src/import/chrome_trace_reader.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/captures.h"
#include "tests/testing/lookup.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::FindRow;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::string DataPath(std::string_view name) {
  return std::string(SPANPROF_TEST_SOURCE_DIR) + "/tests/data/foreign/" +
         std::string(name);
}

Capture Read(std::string_view name, const TraceReadOptions& options = {}) {
  absl::StatusOr<Capture> capture = ReadTrace(DataPath(name), options);
  EXPECT_TRUE(capture.ok()) << capture.status();
  return capture.ok() ? *std::move(capture) : Capture();
}

const Span* SpanNamed(const Capture& capture, std::string_view name) {
  for (const Span& span : capture.spans) {
    if (capture.sites[span.site].name == name) return &span;
  }
  ADD_FAILURE() << "no span named " << name;
  return nullptr;
}

bool HasIssue(const Summary& summary, std::string_view text) {
  for (const ValidationIssue& issue : summary.validation_issues) {
    if (issue.message.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(ChromeMicrosTest, ReadsDecimalTextExactly) {
  const auto ns = [](std::string_view text) {
    int64_t out = -1;
    EXPECT_TRUE(internal::ParseChromeMicros(text, &out)) << text;
    return out;
  };
  EXPECT_EQ(ns("12"), 12'000);
  EXPECT_EQ(ns("0"), 0);
  EXPECT_EQ(ns("-0"), 0);
  EXPECT_EQ(ns("1.001"), 1'001);
  EXPECT_EQ(ns("0.001"), 1);
  EXPECT_EQ(ns("2.5"), 2'500);
  // Digits past the nanosecond are dropped, toward zero.
  EXPECT_EQ(ns("1.0005"), 1'000);
  EXPECT_EQ(ns("1.0009999"), 1'000);
  EXPECT_EQ(ns("-1.0009"), -1'000);
  EXPECT_EQ(ns("1e-9"), 0);
  EXPECT_EQ(ns("1.5e1"), 15'000);
  EXPECT_EQ(ns("1E-3"), 1);
  EXPECT_EQ(ns("-3.5e2"), -350'000);
  EXPECT_EQ(ns("0.0000001e10"), 1'000'000);
  EXPECT_EQ(ns("18451897999"), 18'451'897'999'000);
  EXPECT_EQ(ns("9223372036854775.807"), INT64_MAX);
  EXPECT_EQ(ns("-9223372036854775.808"), INT64_MIN);
  int64_t out = 0;
  for (std::string_view bad :
       {"", "abc", "1.", ".5", "01", "1e", "+1", "9223372036854775.808",
        "1e400", "99999999999999999999999", "1.0.0", "NaN"}) {
    EXPECT_FALSE(internal::ParseChromeMicros(bad, &out)) << bad;
  }
}

TEST(ChromeTraceReaderTest, SpanprofTracesKeepTheStrictReader) {
  const Capture capture = testing::RichCapture();
  absl::StatusOr<Capture> back = ParseTrace(TraceToJson(capture), "t.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->source, "spanprof");
  EXPECT_EQ(*back, capture);
}

TEST(ChromeTraceReaderTest, ReadsAClangTimeTrace) {
  std::vector<std::string> notes;
  const Capture capture = Read("clang-tail_shape-O0.json", {.notes = &notes});
  EXPECT_EQ(capture.source, "chrome-trace");
  EXPECT_EQ(capture.clock, "unknown");
  EXPECT_EQ(capture.process_name, "clang");
  EXPECT_THAT(notes, IsEmpty());  // clang writes only X and M events
  ASSERT_FALSE(capture.threads.empty());
  // The compiling thread (clang names it after the driver), first by tid;
  // clang puts each "Total ..." event on a thread of its own.
  EXPECT_EQ(capture.threads[0].name, "clang++");
  const Span* compiler = SpanNamed(capture, "ExecuteCompiler");
  const Span* frontend = SpanNamed(capture, "Frontend");
  ASSERT_NE(compiler, nullptr);
  ASSERT_NE(frontend, nullptr);
  EXPECT_EQ(compiler->parent_id, 0u);
  EXPECT_EQ(frontend->parent_id, compiler->id);
  EXPECT_EQ(frontend->depth, 1u);
  // Times are relative to the first span (clang's "Total" events start at
  // ts 0), exact: ExecuteCompiler is ts 28, dur 527618 in this file.
  EXPECT_EQ(compiler->start_ns, 28'000);
  EXPECT_EQ(compiler->end_ns - compiler->start_ns, 527'618'000);

  const Summary summary = Summarize(capture);
  EXPECT_EQ(summary.source, "chrome-trace");
  EXPECT_TRUE(summary.complete);
  EXPECT_THAT(summary.validation_issues, IsEmpty());
  for (std::string_view name :
       {"Source", "Frontend", "Backend", "ExecuteCompiler", "Total Frontend"}) {
    EXPECT_NE(FindRow(summary, name), nullptr) << name;
  }
  // Self time subtracts the nested phases.
  const Row* execute = FindRow(summary, "ExecuteCompiler");
  ASSERT_NE(execute, nullptr);
  EXPECT_LT(execute->self_ns, execute->total_ns / 10);
  // Numeric args become span arguments: clang's "Total" events carry count.
  const Span* total = SpanNamed(capture, "Total Source");
  ASSERT_NE(total, nullptr);
  ASSERT_GE(total->arg_count, 1u);
  EXPECT_EQ(capture.args[total->first_arg].key, "count");

  // The summary of a foreign trace reads back (version 3, source).
  absl::StatusOr<Summary> back = ParseSummary(SummaryToJson(summary), "s");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);
}

TEST(ChromeTraceReaderTest, GroupsByAStringArgument) {
  std::vector<std::string> notes;
  const Capture capture = Read("clang-tail_shape-O0.json",
                               {.group_by_arg = "detail", .notes = &notes});
  EXPECT_THAT(notes, IsEmpty());
  const Summary summary = Summarize(capture);
  EXPECT_NE(
      FindRow(summary, "Source [detail=analysis/src/summary/tail_shape.h]"),
      nullptr);
  // Events without the argument keep their name.
  EXPECT_NE(FindRow(summary, "Frontend"), nullptr);
  EXPECT_EQ(FindRow(summary, "Source"), nullptr);

  notes.clear();
  Read("clang-tail_shape-O0.json", {.group_by_arg = "nope", .notes = &notes});
  EXPECT_THAT(notes,
              ElementsAre(HasSubstr("no span has a string argument \"nope\"")));
}

TEST(ChromeTraceReaderTest, ReadsANodeTraceAndNotesWhatItSkips) {
  std::vector<std::string> notes;
  const Capture capture = Read("node-trace.json", {.notes = &notes});
  EXPECT_EQ(capture.source, "chrome-trace");
  // 14 X events and one B/E pair.
  EXPECT_EQ(capture.spans.size(), 15u);
  ASSERT_NE(SpanNamed(capture, "ContextifyScript::New"), nullptr);
  EXPECT_THAT(notes,
              ElementsAre(AllOf(HasSubstr("node-trace.json: skipped 6 "
                                          "instant, 16 async events"),
                                HasSubstr("spanprof reads X, B/E and M"))));
  EXPECT_EQ(capture.sites[SpanNamed(capture, "RunTimers")->site].phase,
            "node,node.environment");
  EXPECT_TRUE(Summarize(capture).complete);
}

TEST(ChromeTraceReaderTest, ReadsABareArray) {
  const Capture capture = Read("bare-array.json");
  ASSERT_EQ(capture.spans.size(), 2u);
  const Span* outer = SpanNamed(capture, "outer");
  const Span* inner = SpanNamed(capture, "inner");
  EXPECT_EQ(inner->parent_id, outer->id);
  // Ids are positions in the file plus one.
  EXPECT_EQ(outer->id, 1u);
  EXPECT_EQ(inner->id, 2u);
  const Summary summary = Summarize(capture);
  EXPECT_EQ(FindRow(summary, "outer")->self_ns, 7'000);
  EXPECT_EQ(summary.window_ns, 10'000);
  EXPECT_TRUE(summary.complete);
}

TEST(ChromeTraceReaderTest, MatchesBeginAndEndPerThread) {
  const Capture capture = Read("begin-end.json");
  ASSERT_EQ(capture.spans.size(), 2u);
  const Span* load = SpanNamed(capture, "load");
  const Span* parse = SpanNamed(capture, "parse");
  // The E named "something else" closes "load": names on E are ignored.
  EXPECT_EQ(load->start_ns, 0);
  EXPECT_EQ(load->end_ns, 100'000);
  EXPECT_EQ(parse->start_ns, 10'000);
  EXPECT_EQ(parse->end_ns, 50'000);
  EXPECT_EQ(parse->parent_id, load->id);
  EXPECT_EQ(capture.sites[load->site].phase, "io");
  // The B's numeric args, then the E's.
  ASSERT_EQ(parse->arg_count, 1u);
  EXPECT_EQ(capture.args[parse->first_arg].key, "tokens");
  EXPECT_EQ(capture.args[parse->first_arg].int_value, 12);
  ASSERT_EQ(load->arg_count, 1u);
  EXPECT_EQ(capture.args[load->first_arg].key, "bytes");
  ASSERT_EQ(capture.threads.size(), 1u);
  EXPECT_EQ(capture.threads[0].name, "loader");
  EXPECT_EQ(capture.threads[0].os_tid, 8u);
  EXPECT_EQ(capture.process_name, "app");
  EXPECT_EQ(capture.pid, 7);
}

TEST(ChromeTraceReaderTest, KeepsNanosecondsOfDecimalTimes) {
  const Capture capture = Read("decimals.json");
  // a: ts 1.0005 us -> 1000 ns (the first span: time 0), dur 2.5 us.
  const Span* a = SpanNamed(capture, "a");
  EXPECT_EQ(a->start_ns, 0);
  EXPECT_EQ(a->end_ns, 2'500);
  const Span* b = SpanNamed(capture, "b");
  EXPECT_EQ(b->start_ns, 1);
  EXPECT_EQ(b->end_ns, 2);
  EXPECT_EQ(b->parent_id, a->id);
  const Span* c = SpanNamed(capture, "c");
  EXPECT_EQ(c->start_ns, 14'000);
  EXPECT_EQ(c->end_ns, 14'001);
  EXPECT_EQ(SpanNamed(capture, "d")->start_ns, 19'123);
}

TEST(ChromeTraceReaderTest, MissingPidIsZeroAndMissingTidIsThePid) {
  const Capture capture = Read("missing-ids.json");
  ASSERT_EQ(capture.threads.size(), 2u);
  // Two processes: threads are named PROCESS/THREAD.
  EXPECT_EQ(capture.threads[0].name, "pid 0/tid 0");
  EXPECT_EQ(capture.threads[0].os_tid, 0u);
  EXPECT_EQ(capture.threads[1].name, "server/main");
  EXPECT_EQ(capture.threads[1].os_tid, 42u);
  EXPECT_EQ(capture.threads[1].sort_index, 3u);
  EXPECT_EQ(capture.process_name, "pid 0, server");
  EXPECT_EQ(capture.pid, 0);
}

TEST(ChromeTraceReaderTest, NamesThreadsOfSeveralProcesses) {
  const Capture capture = Read("multi-process.json");
  ASSERT_EQ(capture.threads.size(), 2u);
  EXPECT_EQ(capture.threads[0].name, "Browser/tid 5");
  EXPECT_EQ(capture.threads[1].name, "Renderer/CrRendererMain");
  // Same tid in two processes: two threads, and the spans overlap in time
  // without being nested.
  const Span* paint = SpanNamed(capture, "Paint");
  EXPECT_EQ(paint->parent_id, 0u);
  EXPECT_EQ(paint->thread, 1u);
  // Only numeric args are kept.
  ASSERT_EQ(paint->arg_count, 1u);
  EXPECT_EQ(capture.args[paint->first_arg].key, "layers");
  EXPECT_TRUE(Summarize(capture).complete);
}

TEST(ChromeTraceReaderTest, UnmatchedBeginAndEndAreIssues) {
  const Capture capture = Read("unmatched.json");
  ASSERT_EQ(capture.spans.size(), 2u);
  const Span* never = SpanNamed(capture, "never ends");
  EXPECT_EQ(never->flags, kSpanUnfinished);
  // Closed at the end of the trace (the end of "work", 50 us).
  EXPECT_EQ(never->end_ns, 40'000);
  EXPECT_EQ(SpanNamed(capture, "work")->parent_id, never->id);
  const Summary summary = Summarize(capture);
  EXPECT_FALSE(summary.complete);
  EXPECT_EQ(summary.unfinished_events, 1u);
  EXPECT_TRUE(HasIssue(summary,
                       "$.traceEvents[0]: E event with no open B on pid 1 "
                       "tid 1 (ignored)"));
  EXPECT_TRUE(HasIssue(summary,
                       "$.traceEvents[1]: B event on pid 1 tid 1 "
                       "never ended"));
  EXPECT_EQ(summary.validation_issues[0].span, 0u);
}

// Writers that buffer per thread write B and E events out of time order:
// each thread's pairs are matched by time, not file order (an E closes the
// innermost B open at its time), with file order among equal times (the E
// of "outer" at 100 us comes before the B of "next" at 100 us in the file).
TEST(ChromeTraceReaderTest, BeginEndPairsAreMatchedByTimePerThread) {
  const Capture capture = Read("out-of-order-begin-end.json");
  ASSERT_EQ(capture.spans.size(), 4u);
  const Span* outer = SpanNamed(capture, "outer");
  const Span* inner = SpanNamed(capture, "inner");
  const Span* next = SpanNamed(capture, "next");
  const Span* other = SpanNamed(capture, "other");
  EXPECT_EQ(outer->end_ns - outer->start_ns, 100'000);
  EXPECT_EQ(inner->end_ns - inner->start_ns, 20'000);
  EXPECT_EQ(inner->parent_id, outer->id);
  EXPECT_EQ(next->start_ns, outer->end_ns);
  EXPECT_EQ(next->end_ns - next->start_ns, 20'000);
  EXPECT_EQ(next->parent_id, 0u);
  EXPECT_EQ(other->end_ns - other->start_ns, 40'000);
  EXPECT_NE(other->thread, outer->thread);
  // The E's argument joins its B's span.
  ASSERT_EQ(inner->arg_count, 1u);
  EXPECT_EQ(capture.args[inner->first_arg].key, "rows");
  const Summary summary = Summarize(capture);
  EXPECT_TRUE(summary.complete);
  EXPECT_THAT(summary.validation_issues, IsEmpty());
}

TEST(ChromeTraceReaderTest, OverlapsThatCannotNestAreIssues) {
  const Capture capture = Read("overlap.json");
  ASSERT_EQ(capture.spans.size(), 2u);
  EXPECT_EQ(SpanNamed(capture, "second")->parent_id, 0u);
  const Summary summary = Summarize(capture);
  EXPECT_FALSE(summary.complete);
  ASSERT_EQ(summary.validation_issues.size(), 1u);
  EXPECT_THAT(summary.validation_issues[0].message, HasSubstr("overlap"));
  // The span id is the event's position + 1: "second" is $.traceEvents[1].
  EXPECT_EQ(summary.validation_issues[0].span, 2u);
}

TEST(ChromeTraceReaderTest, NegativeDurationsAreIssues) {
  const Capture capture = Read("negative-dur.json");
  const Span* backwards = SpanNamed(capture, "backwards");
  EXPECT_EQ(backwards->end_ns, backwards->start_ns);
  const Summary summary = Summarize(capture);
  EXPECT_FALSE(summary.complete);
  EXPECT_TRUE(HasIssue(summary,
                       "$.traceEvents[0].dur: negative duration -2 us (read "
                       "as 0)"));
}

TEST(ChromeTraceReaderTest, ATraceWithoutSpansIsAnEmptySummary) {
  std::vector<std::string> notes;
  const Capture capture = Read("only-instants.json", {.notes = &notes});
  EXPECT_THAT(capture.spans, IsEmpty());
  EXPECT_THAT(notes, ElementsAre(HasSubstr(
                         "skipped 2 instant, 1 counter, 2 flow, 2 async, 1 "
                         "object, 1 unknown-phase events")));
  const Summary summary = Summarize(capture);
  EXPECT_TRUE(summary.complete);
  EXPECT_THAT(summary.rows, IsEmpty());
  absl::StatusOr<Summary> back = ParseSummary(SummaryToJson(summary), "s");
  ASSERT_TRUE(back.ok()) << back.status();
}

TEST(ChromeTraceReaderTest, MalformedTracesAreErrorsWithAPath) {
  absl::StatusOr<Capture> capture = ReadTrace(DataPath("malformed-ts.json"));
  ASSERT_FALSE(capture.ok());
  EXPECT_THAT(capture.status().message(),
              HasSubstr("malformed-ts.json: $.traceEvents[1].ts: expected a "
                        "number of microseconds, got \"soon\""));
  capture = ReadTrace(DataPath("truncated.json"));
  ASSERT_FALSE(capture.ok());
  EXPECT_THAT(capture.status().message(), HasSubstr("truncated.json: $"));

  const auto error = [](std::string_view json) {
    absl::StatusOr<Capture> parsed = ParseTrace(json, "t.json");
    EXPECT_FALSE(parsed.ok()) << json;
    return parsed.ok() ? std::string() : std::string(parsed.status().message());
  };
  EXPECT_THAT(error(R"([{"name":"x","ts":1}])"),
              StartsWith("t.json: $[0]: missing field \"ph\""));
  EXPECT_THAT(error(R"([{"ph":"X","name":"x","ts":1,"dur":1,"tid":"main"}])"),
              StartsWith("t.json: $[0].tid: expected integer, got \"main\""));
  EXPECT_THAT(error(R"([{"ph":"X","name":7,"ts":1,"dur":1}])"),
              StartsWith("t.json: $[0].name: expected string, got 7"));
  EXPECT_THAT(error(R"([{"ph":"B","name":"x"}])"),
              StartsWith("t.json: $[0].ts: missing"));
  EXPECT_THAT(error(R"([3])"), StartsWith("t.json: $[0]: expected object"));
  EXPECT_THAT(error(R"({"traceEvents":{}})"),
              StartsWith("t.json: $.traceEvents: expected array"));
  // Fields of skipped events are not judged.
  EXPECT_TRUE(ParseTrace(R"([{"ph":"i","ts":"later","tid":"x"}])", "t").ok());
}

}  // namespace
}  // namespace spanprof::analysis
