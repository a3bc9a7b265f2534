#include "spanprof/analysis/table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(TableTest, FormatsDurationsForHumans) {
  EXPECT_EQ(FormatDuration(0), "0 ns");
  EXPECT_EQ(FormatDuration(950), "950 ns");
  EXPECT_EQ(FormatDuration(999), "999 ns");
  EXPECT_EQ(FormatDuration(1000), "1.00 us");
  EXPECT_EQ(FormatDuration(89'890), "89.89 us");
  EXPECT_EQ(FormatDuration(999'999), "999.99 us");
  EXPECT_EQ(FormatDuration(1'000'000), "1.00 ms");
  EXPECT_EQ(FormatDuration(4'059'000), "4.05 ms");  // truncated, as DESIGN's
  EXPECT_EQ(FormatDuration(12'177'000), "12.17 ms");
  EXPECT_EQ(FormatDuration(18'447'890), "18.44 ms");
  EXPECT_EQ(FormatDuration(1'500'000'000), "1.50 s");
  EXPECT_EQ(FormatDuration(3'600'000'000'000), "3600.00 s");
  EXPECT_EQ(FormatDuration(-950), "-950 ns");
  EXPECT_EQ(FormatDuration(-2'500'000), "-2.50 ms");
  EXPECT_EQ(FormatDuration(INT64_MIN), "-9223372036.85 s");
}

// A capture whose summary is exactly DESIGN.md §3's example table.
Capture DesignExampleCapture() {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t root = b.Site("example.nested-spans");
  const uint32_t forward = b.Site("model.forward", "forward", "encoder");
  const uint32_t load = b.Site("input.load", "input", "", "load");
  // Root self 89.89 us; children 12.177 ms and 6.181 ms in total.
  b.Add(1, 0, root, t, 0, 18'447'890).heartbeats = 290;
  int64_t at = 10'000;
  uint64_t id = 2;
  for (int64_t d : {4'056'000, 4'059'000, 4'062'000}) {
    b.Add(id++, 1, forward, t, at, at + d).heartbeats = 2;
    at += d + 10'000;
  }
  for (int64_t d : {2'059'000, 2'060'000, 2'062'000}) {
    b.Add(id++, 1, load, t, at, at + d).heartbeats = 2;
    at += d + 10'000;
  }
  Capture& c = b.capture();
  c.window_ns = 18'447'890;
  c.process_resources.user_cpu_ns = 400'000;
  c.process_resources.system_cpu_ns = 999'999;
  c.process_resources.peak_rss_kib = 59528;
  c.process_resources.voluntary_context_switches = 5;
  c.process_resources.involuntary_context_switches = 1;
  return b.Build();
}

TEST(TableTest, ReproducesTheDesignExample) {
  const Summary summary = Summarize(DesignExampleCapture());
  const std::string table =
      FormatTable(summary, {.trace_path = "build/spanprof-trace.json",
                            .summary_path = "build/spanprof-summary.json"});
  EXPECT_EQ(
      table,
      "spanprof: 7 events, 1 thread, window 18.44 ms, recorded thread time "
      "18.44 ms, 290 heartbeats\n"
      "Process resources: user CPU 0 ms, system CPU 0 ms, peak RSS 59,528 KiB, "
      "context switches 6\n"
      "\n"
      "Name                                      Self       Total  Calls      "
      "Mean       P95  Self HB      %\n"
      "model.forward [phase=forward, module=en\xE2\x80\xA6  12.17 ms   12.17 "
      "ms      3   4.05 ms   4.06 ms        6  66.0%\n"
      "input.load [phase=input, activity=load]    6.18 ms    6.18 ms      3 "
      "  2.06 ms   2.06 ms        6  33.5%\n"
      "example.nested-spans                      89.89 us   18.44 ms      1  "
      "18.44 ms  18.44 ms      278   0.4%\n"
      "\n"
      "Trace: build/spanprof-trace.json\n"
      "Summary: build/spanprof-summary.json\n");
}

TEST(TableTest, GroupsDigitsByThousands) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(4'000'000), "4,000,000");
  EXPECT_EQ(FormatCount(123'456'789'012), "123,456,789,012");
  EXPECT_EQ(FormatCount(UINT64_MAX), "18,446,744,073,709,551,615");
}

TEST(TableTest, SaysOneThreadAndOneEventInTheSingular) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  b.Add(1, 0, b.Site("only"), t, 0, 100).heartbeats = 1;
  const std::string table = FormatTable(Summarize(b.Build()), {});
  EXPECT_THAT(table, HasSubstr("spanprof: 1 event, 1 thread, window"));
  EXPECT_THAT(table, HasSubstr(", 1 heartbeat\n"));
}

// The column of each line where `header`'s word `column` ends.
size_t EndOf(std::string_view line, std::string_view word) {
  const size_t at = line.find(word);
  return at == std::string_view::npos ? 0 : at + word.size();
}

TEST(TableTest, TheCallsColumnFitsTenDigitCounts) {
  Summary summary = Summarize(DesignExampleCapture());
  // Rows 1 and 2 (input.load, example.nested-spans) have uncut labels, so
  // that byte offsets are column offsets.
  summary.rows[1].calls = 4'000'000'000;
  summary.rows[2].self_heartbeats = 9'876'543'210;
  const std::string table = FormatTable(summary, {});
  EXPECT_THAT(table, HasSubstr(" ms  4,000,000,000  "));
  EXPECT_THAT(table, HasSubstr(" ms  9,876,543,210  "));
  // Under their headers, as DESIGN.md's header places them (its names end
  // three characters before their numbers).
  const size_t header = table.find("Name ");
  const std::string_view header_line(table.data() + header,
                                     table.find('\n', header) - header);
  const size_t row = table.find("input.load");
  const std::string_view row_line(table.data() + row,
                                  table.find('\n', row) - row);
  EXPECT_EQ(EndOf(header_line, "Calls") + 3, EndOf(row_line, "4,000,000,000"));
  const size_t root = table.find("example.nested-spans");
  const std::string_view root_line(table.data() + root,
                                   table.find('\n', root) - root);
  EXPECT_EQ(EndOf(header_line, "Self HB") + 3,
            EndOf(root_line, "9,876,543,210"));
}

TEST(TableTest, WideKeepsWholeLabels) {
  const Summary summary = Summarize(DesignExampleCapture());
  const std::string label = "model.forward [phase=forward, module=encoder]";
  EXPECT_THAT(FormatTable(summary, {}), Not(HasSubstr(label)));
  const std::string wide = FormatTable(summary, {.wide = true});
  EXPECT_THAT(wide, HasSubstr(label + "  12.17 ms"));
  // The other rows and the header pad to the same width.
  EXPECT_THAT(wide, HasSubstr("\nName" + std::string(label.size() - 4, ' ') +
                              "  Self       Total"));
  EXPECT_THAT(wide,
              HasSubstr("\nexample.nested-spans" +
                        std::string(label.size() - 20, ' ') + "  89.89 us"));
}

TEST(TableTest, SaysHowManyRowsTheCallerLeftOut) {
  Summary summary = Summarize(DesignExampleCapture());
  summary.rows.resize(1);
  const std::string table =
      FormatTable(summary, {.rows_left_out = 2, .rows_left_out_by = "--top 1"});
  EXPECT_THAT(table, HasSubstr("66.0%\n(2 more rows not shown: --top 1)\n"));
  EXPECT_THAT(FormatTable(summary, {}), Not(HasSubstr("not shown")));
}

TEST(TableTest, OmitsThePathBlockWhenNoPathIsSet) {
  const std::string table = FormatTable(Summarize(DesignExampleCapture()), {});
  EXPECT_EQ(table.find("Trace:"), std::string::npos);
  EXPECT_EQ(table.find("Summary:"), std::string::npos);
  EXPECT_THAT(table, ::testing::EndsWith("278   0.4%\n"));
}

TEST(TableTest, PadsAndCutsNamesByCharactersNotBytes) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  // 40 characters, 2 of them two-byte: fits exactly, no ellipsis.
  const std::string exact_name =
      "caf\xC3\xA9 caf\xC3\xA9 012345678901234567890123456789";
  const uint32_t exact = b.Site(exact_name);
  // 41 characters: cut to 39 + "…".
  const uint32_t long_name = b.Site(std::string(41, 'x'));
  const uint32_t control = b.Site("tab\there");
  b.Add(1, 0, exact, t, 0, 30);
  b.Add(2, 0, long_name, t, 100, 120);
  b.Add(3, 0, control, t, 200, 210);
  const std::string table = FormatTable(Summarize(b.Build()), {});
  EXPECT_THAT(table, HasSubstr("\n" + exact_name + "     30 ns"));
  EXPECT_THAT(table, HasSubstr("\n" + std::string(39, 'x') + "\xE2\x80\xA6" +
                               "     20 ns"));
  EXPECT_THAT(table,
              HasSubstr("\ntab?here" + std::string(32, ' ') + "     10 ns"));
}

TEST(TableTest, WarnsAboutDroppedSpans) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 10);
  b.capture().event_limit = 100;
  b.capture().dropped_events = 12;
  b.capture().dropped_by_site = {{s, 12}};
  const std::string table = FormatTable(Summarize(b.Build()), {});
  EXPECT_THAT(table,
              HasSubstr("\nwarning: 12 spans dropped by the cap "
                        "(SPANPROF_MAX_EVENTS=100), summary incomplete\n"));
  b.capture().overflow_policy = "ring";
  EXPECT_THAT(FormatTable(Summarize(b.Build()), {}),
              HasSubstr("ring mode kept the newest"));
}

TEST(TableTest, WarnsAboutUnfinishedSpansAndValidationIssues) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, t, 0, 10).flags = kSpanUnfinished;
  b.Add(2, 77, s, t, 20, 30);
  const std::string table = FormatTable(Summarize(b.Build()), {});
  EXPECT_THAT(table, HasSubstr("warning: 1 spans were still open"));
  EXPECT_THAT(table, HasSubstr("warning: 1 validation issue in the span forest "
                               "(first: span 2: parent span 77 is not in the "
                               "capture), summary incomplete\n"));
}

TEST(TableTest, WarnsWhenTheSessionDidNotFinishNormally) {
  CaptureBuilder b;
  b.capture().finished_normally = false;
  EXPECT_THAT(FormatTable(Summarize(b.Build()), {}),
              HasSubstr("warning: the session did not finish normally"));
}

TEST(TableTest, CompleteSummaryHasNoWarning) {
  EXPECT_EQ(FormatTable(Summarize(DesignExampleCapture()), {}).find("warning"),
            std::string::npos);
}

// The line of `text` that starts with `prefix` ("" when none).
std::string LineStartingWith(const std::string& text, std::string_view prefix) {
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(
        at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(prefix, 0) == 0) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  ADD_FAILURE() << "no line starting with " << prefix << " in\n" << text;
  return "";
}

// A row of 40 calls: half 1 us, half 1 ms (p99 / median = 1000).
Capture HeavyTailCapture() {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t run = b.Site("run");
  const uint32_t item = b.Site("item.parse", "parse");
  b.Add(1, 0, run, t, 0, 100'000'000);
  int64_t at = 10;
  for (uint64_t id = 2; id < 42; ++id) {
    const int64_t d = id % 2 == 0 ? 1'000 : 1'000'000;
    b.Add(id, 1, item, t, at, at + d);
    at += d + 10;
  }
  return b.Build();
}

TEST(TableTest, MarksHeavyTailedRowsAndSaysWhatToDoNext) {
  const std::string table =
      FormatTable(Summarize(HeavyTailCapture()), {.trace_path = "t.json"});
  EXPECT_THAT(table, HasSubstr("Self HB      %  Tail\n"));
  // The heavy row ends with the mark; the other row has none.
  EXPECT_THAT(LineStartingWith(table, "item.parse"),
              ::testing::EndsWith("% heavy"));
  EXPECT_THAT(LineStartingWith(table, "run "), ::testing::EndsWith("%"));
  // From a summary alone, whether the span has a size argument is unknown.
  EXPECT_THAT(table,
              HasSubstr("heavy tail: 1 row (first: item.parse [phase=parse], "
                        "p99 = 1000.0x median): run `spanprof scaling t.json` "
                        "(give the span a size argument, "
                        "SPANPROF_ARG(\"size\", n), if it has none)"));
  // Without a trace path, the command names its argument.
  EXPECT_THAT(FormatTable(Summarize(HeavyTailCapture()), {}),
              HasSubstr("run `spanprof scaling TRACE`"));
}

// With the capture at hand, the note asks for a size argument only when the
// row's spans carry none, and otherwise names the one they carry.
TEST(TableTest, TheHeavyTailNoteNamesTheSizeArgumentTheSpansCarry) {
  const Capture bare = HeavyTailCapture();
  const std::string asks =
      FormatTable(Summarize(bare), {.trace_path = "t.json", .capture = &bare});
  EXPECT_THAT(asks, HasSubstr("p99 = 1000.0x median): add a size argument to "
                              "the span (SPANPROF_ARG(\"size\", n)) and run "
                              "`spanprof scaling t.json` to see"));

  Capture sized = HeavyTailCapture();
  CaptureBuilder b;
  b.capture() = sized;
  b.Args(1, {testing::IntArg("files", 40)});  // the root's, another row
  for (uint64_t id = 2; id < 42; ++id) {
    b.Args(id, {testing::IntArg("bytes", static_cast<int64_t>(id) * 100),
                testing::CounterArg("copies", 3)});
  }
  sized = b.Build();
  const std::string names = FormatTable(
      Summarize(sized), {.trace_path = "t.json", .capture = &sized});
  EXPECT_THAT(names, HasSubstr("p99 = 1000.0x median): its spans carry the "
                               "argument bytes: run `spanprof scaling t.json "
                               "--size bytes` to see whether its cost grows "
                               "faster than its size\n"));
  EXPECT_THAT(names, Not(HasSubstr("add a size argument")));

  // Spans that count work but carry no size: the counter is the size.
  Capture counted = HeavyTailCapture();
  b.capture() = counted;
  for (uint64_t id = 2; id < 42; ++id) {
    b.Args(id, {testing::CounterArg("entries", static_cast<int64_t>(id))});
  }
  counted = b.Build();
  EXPECT_THAT(FormatTable(Summarize(counted),
                          {.trace_path = "t.json", .capture = &counted}),
              HasSubstr("p99 = 1000.0x median): its spans count the counter "
                        "entries: run `spanprof scaling t.json --size "
                        "counter:entries` to see whether its cost grows "
                        "faster than that count\n"));
}

TEST(TableTest, NoTailColumnOrNoteWithoutHeavyTails) {
  const std::string table = FormatTable(Summarize(DesignExampleCapture()), {});
  EXPECT_THAT(table, Not(HasSubstr("Tail")));
  EXPECT_THAT(table, Not(HasSubstr("heavy")));
  EXPECT_THAT(table, Not(HasSubstr("Counter columns")));
}

// Four counters: `bytes` counts most, then `tokens`, `allocs`, `zz`.
Capture CountedCapture() {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t run = b.Site("run");
  const uint32_t parse = b.Site("parse");
  b.Add(1, 0, run, t, 0, 1000);
  b.Add(2, 1, parse, t, 10, 500);
  b.Args(1, {CounterArg("zz", 1)});
  b.Args(2, {CounterArg("tokens", 50), CounterArg("bytes", 9000),
             CounterArg("allocs", 7)});
  return b.Build();
}

TEST(TableTest, ShowsTheThreeLargestCountersAsInclusiveColumns) {
  const std::string table = FormatTable(Summarize(CountedCapture()), {});
  EXPECT_THAT(table,
              HasSubstr("Self HB      %     bytes    tokens    allocs\n"));
  // run: inclusive counts of its child; parse: its own.
  EXPECT_THAT(table, HasSubstr("%      9000        50         7\n"));
  EXPECT_THAT(table,
              HasSubstr("Counter columns: inclusive totals (the span and its "
                        "same-thread descendants); not shown: zz (see the "
                        "summary's rows[].counters)\n"));
}

TEST(TableTest, ARowWithoutACounterShowsADash) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  b.Add(1, 0, b.Site("a"), t, 0, 100);
  b.Add(2, 0, b.Site("b"), t, 200, 250);
  b.Args(1, {CounterArg("a_very_long_counter_name_indeed", 4)});
  const std::string table = FormatTable(Summarize(b.Build()), {});
  // The header cuts the name at 16 characters; the cell is 18 wide.
  EXPECT_THAT(table, HasSubstr("%  a_very_long_cou\xE2\x80\xA6\n"));
  EXPECT_THAT(table, HasSubstr("%" + std::string(17, ' ') + "4\n"));
  EXPECT_THAT(table, HasSubstr("%" + std::string(17, ' ') + "-\n"));
  EXPECT_THAT(table, Not(HasSubstr("not shown")));
}

TEST(TableTest, ACounterColumnWidensForLargeTotalsAndNamesStayOnOneLine) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  b.Add(1, 0, b.Site("a"), t, 0, 100);
  b.Args(1, {CounterArg("n", 123'456'789'012'345)});
  const std::string table = FormatTable(Summarize(b.Build()), {});
  EXPECT_THAT(table, HasSubstr("%                n\n"));  // 17 wide
  EXPECT_THAT(table, HasSubstr("%  123456789012345\n"));
}

TEST(TableTest, TheHeavyTailNoteCannotBeBrokenByAName) {
  Capture capture = HeavyTailCapture();
  capture.sites[1].name = "item\nparse";
  const std::string table = FormatTable(Summarize(capture), {});
  EXPECT_THAT(table, HasSubstr("heavy tail: 1 row (first: item?parse "
                               "[phase=parse], p99"));
}

TEST(TableTest, WarnsAboutDroppedArgs) {
  Capture capture = CountedCapture();
  capture.dropped_args = 4;
  const std::string table = FormatTable(Summarize(capture), {});
  EXPECT_THAT(table, HasSubstr("warning: 4 span arguments or counter counts "
                               "dropped (refused by the cap, or counted with "
                               "no span open), summary incomplete\n"));
  EXPECT_THAT(table, Not(HasSubstr("did not finish normally")));
}

}  // namespace
}  // namespace spanprof::analysis
