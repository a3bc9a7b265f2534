#include "spanprof/analysis/plot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/xml_check.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::IndexOf;
using ::spanprof::testing::ParseXml;
using ::spanprof::testing::XmlElement;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Parses `svg` and checks what every figure must be: one well-formed SVG 1.1
// document whose viewBox matches its size.
XmlElement ParseSvg(const std::string& svg) {
  absl::StatusOr<XmlElement> root = ParseXml(svg);
  EXPECT_TRUE(root.ok()) << root.status() << "\n" << svg.substr(0, 2000);
  if (!root.ok()) return {};
  EXPECT_THAT(svg, StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
  EXPECT_EQ(root->name, "svg");
  EXPECT_EQ(root->Attribute("xmlns"), "http://www.w3.org/2000/svg");
  EXPECT_EQ(root->Attribute("version"), "1.1");
  EXPECT_EQ(root->Attribute("viewBox"), "0 0 " + root->Attribute("width") +
                                            " " + root->Attribute("height"));
  EXPECT_FALSE(root->FindAll("title").empty());
  return std::move(*root);
}

std::vector<std::string> Texts(const XmlElement& root) {
  std::vector<std::string> out;
  for (const XmlElement* text : root.FindAll("text")) {
    out.push_back(text->AllText());
  }
  return out;
}

// The rectangles whose tooltip starts with `prefix`.
std::vector<const XmlElement*> RectsTitled(const XmlElement& root,
                                           const std::string& prefix) {
  std::vector<const XmlElement*> out;
  for (const XmlElement* rect : root.FindAll("rect")) {
    for (const auto& child : rect->children) {
      if (child->name == "title" && child->text.rfind(prefix, 0) == 0) {
        out.push_back(rect);
      }
    }
  }
  return out;
}

double Number(const XmlElement& element, const std::string& attribute) {
  return std::stod(element.Attribute(attribute));
}

// A small indexer run: a main thread that discovers, analyses (handing
// files to two pool threads, one of them unnamed) and writes.
Capture IndexerCapture() {
  CaptureBuilder b;
  b.capture().process_name = "indexer";
  b.capture().window_ns = 20'000'000;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t pool = b.Thread(101, "pool-0");
  const uint32_t unnamed = b.Thread(102);
  const uint32_t run = b.Site("indexer.run");
  const uint32_t discover = b.Site("source.discover", "discover", "indexer");
  const uint32_t analyze = b.Site("index.analyze", "analysis", "indexer");
  const uint32_t read = b.Site("file.read", "read", "io");
  const uint32_t parse = b.Site("file.parse", "parse", "parser");
  const uint32_t tokenize = b.Site("tokenize", "parse", "lexer");
  const uint32_t write = b.Site("index.write", "write", "io");
  b.Add(1, 0, run, main, 0, 19'000'000).heartbeats = 40;
  b.Add(2, 1, discover, main, 100'000, 1'000'000);
  b.Add(3, 1, analyze, main, 1'100'000, 15'000'000);
  b.Add(4, 3, read, pool, 1'200'000, 3'000'000);
  b.Add(5, 3, parse, pool, 3'100'000, 9'000'000);
  b.Add(6, 5, tokenize, pool, 3'200'000, 6'000'000);
  b.Add(7, 3, read, unnamed, 1'300'000, 4'000'000);
  b.Add(8, 3, parse, unnamed, 4'100'000, 14'000'000);
  b.Add(9, 1, write, main, 15'500'000, 18'500'000);
  return b.Build();
}

TEST(PlotTimelineTest, IsWellFormedSvgWithViewBox) {
  const XmlElement root = ParseSvg(PlotTimeline(IndexerCapture()));
  EXPECT_EQ(root.Attribute("width"), "1200");
}

TEST(PlotTimelineTest, IsDeterministic) {
  const Capture capture = IndexerCapture();
  const std::string first = PlotTimeline(capture);
  EXPECT_EQ(first, PlotTimeline(capture));
  EXPECT_EQ(first, PlotTimeline(IndexerCapture()));
  const TimelineOptions options{.width = 700, .start_ns = 1'000'000};
  EXPECT_EQ(PlotTimeline(capture, options), PlotTimeline(capture, options));
}

TEST(PlotTimelineTest, HasALaneLabelPerThreadInSortOrder) {
  Capture capture = IndexerCapture();
  // The unnamed thread sorts first.
  capture.threads[2].sort_index = 0;
  capture.threads[0].sort_index = 1;
  capture.threads[1].sort_index = 2;
  const XmlElement root = ParseSvg(PlotTimeline(capture));
  double main_y = -1;
  double pool_y = -1;
  double unnamed_y = -1;
  for (const XmlElement* text : root.FindAll("text")) {
    const std::string content = text->AllText();
    if (content == "main") main_y = Number(*text, "y");
    if (content == "pool-0") pool_y = Number(*text, "y");
    if (content == "thread-102") unnamed_y = Number(*text, "y");
  }
  ASSERT_GT(main_y, 0);
  ASSERT_GT(pool_y, 0);
  ASSERT_GT(unnamed_y, 0);
  EXPECT_LT(unnamed_y, main_y);
  EXPECT_LT(main_y, pool_y);
  EXPECT_THAT(Texts(root), Contains("tid 100"));
}

TEST(PlotTimelineTest, TitleNamesTheProcessAndTheWindow) {
  const XmlElement root = ParseSvg(PlotTimeline(IndexerCapture()));
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains("indexer \xE2\x80\x94 timeline"));
  EXPECT_THAT(texts, Contains(AllOf(HasSubstr("9 spans on 3 threads"),
                                    HasSubstr("window 20.00 ms"))));
}

TEST(PlotTimelineTest, PutsEachDepthOnItsOwnRowWithinTheLane) {
  const XmlElement root = ParseSvg(PlotTimeline(IndexerCapture()));
  const auto run = RectsTitled(root, "indexer.run");
  const auto discover = RectsTitled(root, "source.discover");
  const auto analyze = RectsTitled(root, "index.analyze");
  const auto parse = RectsTitled(root, "file.parse");
  const auto tokenize = RectsTitled(root, "tokenize");
  ASSERT_EQ(run.size(), 1u);
  ASSERT_EQ(discover.size(), 1u);
  ASSERT_EQ(analyze.size(), 1u);
  ASSERT_EQ(parse.size(), 2u);
  ASSERT_EQ(tokenize.size(), 1u);
  EXPECT_LT(Number(*run[0], "y"), Number(*discover[0], "y"));
  EXPECT_EQ(Number(*discover[0], "y"), Number(*analyze[0], "y"));
  // A span whose parent is on another thread starts its lane's top row; its
  // same-thread child is one row down.
  EXPECT_LT(Number(*parse[0], "y"), Number(*tokenize[0], "y"));
  EXPECT_GT(Number(*parse[0], "y"), Number(*analyze[0], "y"));
}

TEST(PlotTimelineTest, SpansArePlacedOnTheTimeAxis) {
  const XmlElement root = ParseSvg(PlotTimeline(IndexerCapture()));
  const auto run = RectsTitled(root, "indexer.run");
  const auto write = RectsTitled(root, "index.write");
  ASSERT_EQ(run.size(), 1u);
  ASSERT_EQ(write.size(), 1u);
  const double x0 = Number(*run[0], "x");
  const double width = Number(*run[0], "width");  // 19 ms of 20 ms
  const double per_ms = width / 19.0;
  EXPECT_NEAR(Number(*write[0], "x") - x0, 15.5 * per_ms, 0.05);
  EXPECT_NEAR(Number(*write[0], "width"), 3.0 * per_ms, 0.05);
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains("0 ms"));
  EXPECT_THAT(texts, Contains("10 ms"));
  EXPECT_THAT(texts, Contains("20 ms"));
  EXPECT_THAT(texts, Contains("time since session start"));
}

TEST(PlotTimelineTest, TicksUseMicrosecondsForShortWindows) {
  CaptureBuilder b;
  b.capture().window_ns = 40'000;
  const uint32_t t = b.Thread(1, "main");
  b.Add(1, 0, b.Site("short"), t, 0, 40'000);
  const XmlElement root = ParseSvg(PlotTimeline(b.Build()));
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains("0 us"));
  EXPECT_THAT(texts, Contains("20 us"));
  EXPECT_THAT(texts, Not(Contains(HasSubstr(" ms"))));
}

TEST(PlotTimelineTest, ColoursSpansByPhaseWithALegend) {
  const XmlElement root = ParseSvg(PlotTimeline(IndexerCapture()));
  const auto parse = RectsTitled(root, "file.parse");
  const auto tokenize = RectsTitled(root, "tokenize");
  const auto read = RectsTitled(root, "file.read");
  const auto run = RectsTitled(root, "indexer.run");
  ASSERT_EQ(parse.size(), 2u);
  ASSERT_EQ(read.size(), 2u);
  ASSERT_EQ(tokenize.size(), 1u);
  ASSERT_EQ(run.size(), 1u);
  const std::string parse_fill = parse[0]->Attribute("fill");
  EXPECT_EQ(parse[1]->Attribute("fill"), parse_fill);
  EXPECT_EQ(tokenize[0]->Attribute("fill"), parse_fill);  // same phase
  EXPECT_NE(read[0]->Attribute("fill"), parse_fill);
  EXPECT_EQ(run[0]->Attribute("fill"), "#bab0ac");  // no phase: grey
  std::set<std::string> fills;
  for (const char* name : {"source.discover", "index.analyze", "file.read",
                           "file.parse", "index.write"}) {
    fills.insert(RectsTitled(root, name)[0]->Attribute("fill"));
  }
  EXPECT_EQ(fills.size(), 5u) << "every phase has its own colour";
  const std::vector<std::string> texts = Texts(root);
  for (const char* phase : {"analysis", "discover", "parse", "read", "write",
                            "(no phase)", "parent on another thread"}) {
    EXPECT_THAT(texts, Contains(phase));
  }
  // The legend swatch of "parse" has the spans' colour.
  bool swatch_found = false;
  for (const XmlElement* rect : root.FindAll("rect")) {
    if (rect->Attribute("width") == "12" &&
        rect->Attribute("fill") == parse_fill) {
      swatch_found = true;
    }
  }
  EXPECT_TRUE(swatch_found);
}

TEST(PlotTimelineTest, PhaseColoursAreStableAcrossCaptures) {
  // The same phase keeps its colour when another phase joins the figure.
  CaptureBuilder a;
  const uint32_t ta = a.Thread(1, "main");
  a.Add(1, 0, a.Site("x", "parse"), ta, 0, 100);
  CaptureBuilder b;
  const uint32_t tb = b.Thread(1, "main");
  b.Add(1, 0, b.Site("x", "parse"), tb, 0, 100);
  b.Add(2, 0, b.Site("y", "write"), tb, 200, 300);
  const auto fill = [](const Capture& capture) {
    const XmlElement root = ParseSvg(PlotTimeline(capture));
    return RectsTitled(root, "x [phase=parse]").at(0)->Attribute("fill");
  };
  EXPECT_EQ(fill(a.Build()), fill(b.Build()));
}

TEST(PlotTimelineTest, LabelsSpansWhereTheyFit) {
  const XmlElement root = ParseSvg(PlotTimeline(IndexerCapture()));
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains("indexer.run"));
  EXPECT_THAT(texts, Contains("index.analyze"));
  EXPECT_THAT(texts, Contains("file.parse"));
  // A long name in a narrow span is cut with an ellipsis or left out.
  CaptureBuilder b;
  b.capture().window_ns = 1'000'000;
  const uint32_t t = b.Thread(1, "main");
  b.Add(1, 0, b.Site("a.very.long.span.name.that.cannot.fit"), t, 0, 60'000);
  b.Add(2, 0, b.Site("tiny.name.never.shown"), t, 500'000, 500'100);
  const XmlElement narrow = ParseSvg(PlotTimeline(b.Build()));
  const std::vector<std::string> narrow_texts = Texts(narrow);
  EXPECT_THAT(narrow_texts,
              Contains(AllOf(StartsWith("a.ve"), HasSubstr("\xE2\x80\xA6"))));
  EXPECT_THAT(
      narrow_texts,
      Not(Contains(HasSubstr("a.very.long.span.name.that.cannot.fit"))));
  EXPECT_THAT(narrow_texts, Not(Contains(HasSubstr("tiny"))));
  // The tooltip still has the whole name.
  EXPECT_EQ(RectsTitled(narrow, "tiny.name.never.shown").size(), 1u);
}

TEST(PlotTimelineTest, DrawsAnArrowPerCrossThreadLink) {
  const XmlElement root = ParseSvg(PlotTimeline(IndexerCapture()));
  size_t arrows = 0;
  for (const XmlElement* path : root.FindAll("path")) {
    if (path->Attribute("marker-end") == "url(#arrow)") ++arrows;
  }
  // Four spans run on a pool thread under index.analyze, plus the legend's
  // sample arrow.
  EXPECT_EQ(arrows, 5u);
  EXPECT_EQ(root.FindAll("marker").size(), 1u);

  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  b.Add(1, 0, b.Site("root"), t, 0, 100);
  b.Add(2, 1, b.Site("child"), t, 10, 20);
  const XmlElement single = ParseSvg(PlotTimeline(b.Build()));
  for (const XmlElement* path : single.FindAll("path")) {
    EXPECT_NE(path->Attribute("marker-end"), "url(#arrow)");
  }
  EXPECT_THAT(Texts(single), Not(Contains("parent on another thread")));
}

TEST(PlotTimelineTest, MarksExceptionsAndUnfinishedSpans) {
  Capture capture = IndexerCapture();
  capture.spans[IndexOf(capture, 8)].flags = kSpanException;
  capture.spans[IndexOf(capture, 9)].flags = kSpanUnfinished;
  const XmlElement root = ParseSvg(PlotTimeline(capture));
  const auto thrown = RectsTitled(root, "file.parse");
  const auto unfinished = RectsTitled(root, "index.write");
  ASSERT_EQ(unfinished.size(), 1u);
  EXPECT_THAT(unfinished[0]->children[0]->text, HasSubstr("unfinished"));
  EXPECT_TRUE(unfinished[0]->Has("stroke-dasharray"));
  bool red = false;
  for (const XmlElement* rect : thrown) {
    if (rect->Attribute("stroke") == "#d62728") {
      red = true;
      EXPECT_THAT(rect->children[0]->text, HasSubstr("exception"));
    }
  }
  EXPECT_TRUE(red);
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains("left by an exception"));
  EXPECT_THAT(texts, Contains("unfinished at stop"));
}

TEST(PlotTimelineTest, WindowOptionsClipAndSkipSpans) {
  const TimelineOptions options{.start_ns = 2'000'000, .end_ns = 8'000'000};
  const XmlElement root = ParseSvg(PlotTimeline(IndexerCapture(), options));
  EXPECT_TRUE(RectsTitled(root, "source.discover").empty());
  EXPECT_TRUE(RectsTitled(root, "index.write").empty());
  ASSERT_EQ(RectsTitled(root, "indexer.run").size(), 1u);
  const XmlElement& run = *RectsTitled(root, "indexer.run")[0];
  const XmlElement& analyze = *RectsTitled(root, "index.analyze")[0];
  EXPECT_EQ(run.Attribute("x"), analyze.Attribute("x"));  // both clipped
  EXPECT_EQ(run.Attribute("width"), analyze.Attribute("width"));
  EXPECT_THAT(Texts(root), Contains(HasSubstr("showing 2.00 ms to 8.00 ms")));
  // Ticks every 0.5 ms share one decimal.
  EXPECT_THAT(Texts(root), Contains("2.0 ms"));
  EXPECT_THAT(Texts(root), Contains("2.5 ms"));
  EXPECT_THAT(Texts(root), Contains("8.0 ms"));
}

TEST(PlotTimelineTest, KeepsTheLongestSpansOverTheLimit) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t site = b.Site("step");
  for (uint64_t i = 0; i < 50; ++i) {
    const int64_t start = static_cast<int64_t>(i) * 10'000;
    b.Add(i + 1, 0, site, t, start, start + 1'000 + static_cast<int64_t>(i));
  }
  const XmlElement root = ParseSvg(PlotTimeline(b.Build(), {.max_spans = 10}));
  const auto drawn = RectsTitled(root, "step");
  ASSERT_EQ(drawn.size(), 10u);
  for (const XmlElement* rect : drawn) {
    EXPECT_THAT(rect->children[0]->text, HasSubstr("from 4"));  // 400..490 us
  }
  EXPECT_THAT(Texts(root), Contains(HasSubstr("the 10 longest of 50 spans")));
}

TEST(PlotTimelineTest, KeepsTheBusiestThreadsOverTheLimit) {
  CaptureBuilder b;
  const uint32_t site = b.Site("task");
  for (uint64_t t = 0; t < 200; ++t) {
    const uint32_t thread = b.Thread(1000 + t, "worker-" + std::to_string(t));
    // Thread t is busy for 1000 + t ns.
    b.Add(t + 1, 0, site, thread, 0, 1'000 + static_cast<int64_t>(t));
  }
  const XmlElement root = ParseSvg(PlotTimeline(b.Build(), {.max_threads = 3}));
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains("worker-199"));
  EXPECT_THAT(texts, Contains("worker-198"));
  EXPECT_THAT(texts, Contains("worker-197"));
  EXPECT_THAT(texts, Not(Contains("worker-196")));
  EXPECT_EQ(RectsTitled(root, "task").size(), 3u);
  EXPECT_THAT(texts, Contains(HasSubstr("the 3 busiest of 200 threads")));
  // The default keeps the figure a sane height.
  const XmlElement all = ParseSvg(PlotTimeline(b.Build()));
  EXPECT_EQ(RectsTitled(all, "task").size(), 64u);
  EXPECT_LT(std::stod(all.Attribute("height")), 64 * 40 + 400);
}

TEST(PlotTimelineTest, EscapesAnyNameIntoWellFormedXml) {
  CaptureBuilder b;
  b.capture().process_name = "proc <&> \"'";
  const uint32_t t = b.Thread(1, "thr<ead>&\x01");
  b.Add(1, 0, b.Site("a<b>&c\"d'e\x02\x7f", "ph&<>", "m\"", "act'"), t, 0,
        1'000'000);
  b.Add(2, 0, b.Site("bad\xff\xfeutf8\xc3", "\xe2\x82"), t, 1'000'000,
        1'500'000);
  b.Add(3, 0, b.Site("\xED\xA0\x80surrogate\xEF\xBF\xBE"), t, 1'600'000,
        1'700'000);
  const std::string svg = PlotTimeline(b.Build());
  const XmlElement root = ParseSvg(svg);
  EXPECT_THAT(Texts(root), Contains(HasSubstr("a<b>&c\"d'e??")));
  EXPECT_THAT(Texts(root), Contains(HasSubstr("proc <&> \"'")));
}

TEST(PlotTimelineTest, DrawsEmptyAndBrokenCaptures) {
  const XmlElement empty = ParseSvg(PlotTimeline(Capture{}));
  EXPECT_THAT(Texts(empty), Contains("no spans in this window"));

  // Unknown thread and site indexes, a parent loop, a span ending before it
  // starts, duplicate ids: still a figure.
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t s = b.Site("s");
  b.Add(1, 2, s, t, 0, 100);
  b.Add(2, 1, s, t, 10, 50);
  b.Add(3, 0, s, t, 300, 200);
  b.Add(3, 0, 99, t, 400, 500);
  b.Add(4, 0, s, 7, 0, 10);
  const XmlElement broken = ParseSvg(PlotTimeline(b.Build()));
  EXPECT_FALSE(RectsTitled(broken, "(unknown site)").empty());
}

TEST(PlotTimelineTest, CutsAParentLoopWhereTheForestDoes) {
  // 1 and 2 name each other as parent. `Forest` cuts the link of the span
  // its walk starts from (the earlier one), as `ValidateForest()` reports:
  // the outer span is drawn on the top row, the inner one below it.
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  b.Add(1, 2, b.Site("outer"), t, 0, 100);
  b.Add(2, 1, b.Site("inner"), t, 10, 50);
  const Capture capture = b.Build();
  ASSERT_EQ(Forest(capture).cycle_cuts().size(), 1u);
  EXPECT_EQ(capture.spans[Forest(capture).cycle_cuts()[0]].id, 1u);
  const XmlElement root = ParseSvg(PlotTimeline(capture));
  const auto outer = RectsTitled(root, "outer");
  const auto inner = RectsTitled(root, "inner");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_LT(Number(*outer[0], "y"), Number(*inner[0], "y"));
}

TEST(PlotTimelineTest, ClampsTheWidth) {
  EXPECT_EQ(ParseSvg(PlotTimeline(IndexerCapture(), {.width = 10}))
                .Attribute("width"),
            "480");
  EXPECT_EQ(ParseSvg(PlotTimeline(IndexerCapture(), {.width = 100000}))
                .Attribute("width"),
            "8000");
}

Summary IndexerSummary() { return Summarize(IndexerCapture()); }

TEST(PlotBreakdownTest, IsWellFormedAndDeterministic) {
  const Summary summary = IndexerSummary();
  const std::string svg = PlotBreakdown(summary);
  ParseSvg(svg);
  EXPECT_EQ(svg, PlotBreakdown(summary));
  EXPECT_EQ(svg, PlotBreakdown(IndexerSummary()));
}

TEST(PlotBreakdownTest, DrawsInclusiveAndSelfBarsPerRow) {
  const Summary summary = IndexerSummary();
  const XmlElement root = ParseSvg(PlotBreakdown(summary));
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains("indexer \xE2\x80\x94 inclusive and self time "
                              "per row"));
  EXPECT_THAT(texts, Contains("inclusive (total) time"));
  EXPECT_THAT(texts, Contains(HasSubstr("self time")));
  for (const Row& row : summary.rows) {
    EXPECT_THAT(texts, Contains(row.label));
    const auto bars = RectsTitled(root, row.label + ": ");
    ASSERT_EQ(bars.size(), 2u) << row.label;
    EXPECT_EQ(bars[0]->Attribute("fill"), "#a0cbe8");  // inclusive
    EXPECT_EQ(bars[1]->Attribute("fill"), "#2f5d8c");  // self
    EXPECT_GE(Number(*bars[0], "width"), Number(*bars[1], "width"));
  }
  // indexer.run: 19 ms inclusive in 1 call; its self time is what its
  // same-thread children leave (19 − 0.9 − 13.9 − 3 = 1.2 ms).
  EXPECT_THAT(texts, Contains("19.00 ms in 1 call"));
  EXPECT_THAT(texts, Contains(StartsWith("1.20 ms self (")));
  EXPECT_THAT(texts, Contains("15.80 ms in 2 calls"));  // file.parse
  // Rows keep the summary's order: most self time first.
  double previous_y = 0;
  for (const Row& row : summary.rows) {
    for (const XmlElement* text : root.FindAll("text")) {
      if (text->AllText() == row.label) {
        EXPECT_GT(Number(*text, "y"), previous_y);
        previous_y = Number(*text, "y");
      }
    }
  }
}

TEST(PlotBreakdownTest, BarsShareOneLinearScale) {
  const Summary summary = IndexerSummary();
  const XmlElement root = ParseSvg(PlotBreakdown(summary));
  const auto run = RectsTitled(root, "indexer.run: ");
  const auto write =
      RectsTitled(root, "index.write [phase=write, module=io]: ");
  ASSERT_EQ(run.size(), 2u);
  ASSERT_EQ(write.size(), 2u);
  // 19 ms vs 3 ms.
  EXPECT_NEAR(Number(*write[0], "width") / Number(*run[0], "width"), 3.0 / 19.0,
              0.01);
}

TEST(PlotBreakdownTest, LimitsRowsWithANote) {
  const Summary summary = IndexerSummary();
  ASSERT_GT(summary.rows.size(), 3u);
  const XmlElement root = ParseSvg(PlotBreakdown(summary, {.max_rows = 3}));
  EXPECT_THAT(Texts(root),
              Contains(HasSubstr(std::to_string(summary.rows.size() - 3) +
                                 " more rows not shown")));
  EXPECT_EQ(RectsTitled(root, summary.rows[3].label + ": ").size(), 0u);
  const XmlElement all = ParseSvg(PlotBreakdown(summary, {.max_rows = 0}));
  EXPECT_THAT(Texts(all), Not(Contains(HasSubstr("not shown"))));
}

TEST(PlotBreakdownTest, DrawsAnEmptySummary) {
  const XmlElement root = ParseSvg(PlotBreakdown(Summary{}));
  EXPECT_THAT(Texts(root), Contains("the summary has no rows"));
}

// Base and candidate summaries whose comparison has every status.
struct ComparePair {
  Summary base;
  Summary candidate;
};

Row MakeRow(const std::string& name, int64_t p95) {
  Row row;
  row.key.name = name;
  row.label = RowLabel(row.key);
  row.calls = 1;
  row.total_ns = p95;
  row.self_ns = p95;
  row.min_ns = row.mean_ns = row.median_ns = row.p95_ns = row.p99_ns =
      row.max_ns = p95;
  row.total_heartbeats = static_cast<uint64_t>(p95 / 1000);
  return row;
}

ComparePair Pair() {
  ComparePair pair;
  pair.base.rows = {
      MakeRow("regresses", 10'000'000), MakeRow("improves", 8'000'000),
      MakeRow("steady", 5'000'000), MakeRow("goes.away", 2'000'000)};
  pair.candidate.rows = {
      MakeRow("regresses", 15'000'000), MakeRow("improves", 4'000'000),
      MakeRow("steady", 5'200'000), MakeRow("appears", 1'000'000)};
  return pair;
}

Comparison Compared(const CompareMetric metric = CompareMetric::kP95Ns,
                    int64_t absolute_tolerance = 500'000) {
  const ComparePair pair = Pair();
  const ComparePolicy policy{.metric = metric,
                             .absolute_tolerance_ns = absolute_tolerance,
                             .relative_tolerance_bps = 1000,
                             .allow_incomplete = true};
  absl::StatusOr<Comparison> comparison =
      Compare(pair.base, pair.candidate, policy, "/somewhere/base-summary.json",
              "relative/dir/cand-summary.json");
  EXPECT_TRUE(comparison.ok()) << comparison.status();
  return *comparison;
}

TEST(PlotCompareTest, IsWellFormedAndDeterministic) {
  const std::string svg = PlotCompare(Compared());
  ParseSvg(svg);
  EXPECT_EQ(svg, PlotCompare(Compared()));
}

TEST(PlotCompareTest, TitleNamesMetricAndTolerances) {
  const std::string svg = PlotCompare(Compared());
  const XmlElement root = ParseSvg(svg);
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains(AllOf(HasSubstr("p95_ns"), HasSubstr("500.00 us"),
                                    HasSubstr("10%"))));
  EXPECT_THAT(texts,
              Contains(AllOf(HasSubstr("base-summary.json"),
                             HasSubstr("cand-summary.json"),
                             HasSubstr("1 regressed, 1 improved, 1 within, "
                                       "1 new, 1 missing"),
                             HasSubstr("FAIL"))));
  // Only base names: the figure does not depend on where inputs live.
  EXPECT_THAT(svg, Not(HasSubstr("/somewhere")));
  EXPECT_THAT(svg, Not(HasSubstr("relative/dir")));
}

TEST(PlotCompareTest, ColoursCandidatesByStatus) {
  const XmlElement root = ParseSvg(PlotCompare(Compared()));
  const auto candidate_fill = [&](const std::string& name) {
    for (const XmlElement* rect : RectsTitled(root, name + ": ")) {
      const std::string fill = rect->Attribute("fill");
      if (fill != "#ffffff" && fill != "#f2c94c")
        return fill;  // not base, band
    }
    return std::string();
  };
  EXPECT_EQ(candidate_fill("regresses"), "#d62728");
  EXPECT_EQ(candidate_fill("improves"), "#2ca02c");
  EXPECT_EQ(candidate_fill("steady"), "#9e9e9e");
  EXPECT_EQ(candidate_fill("appears"), "#1f77b4");
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains("15.00 ms, +50.0% (+5.00 ms): regressed"));
  EXPECT_THAT(texts, Contains("4.00 ms, -50.0% (-4.00 ms): improved"));
  EXPECT_THAT(texts, Contains("5.20 ms, +4.0% (+200.00 us): within tolerance"));
  EXPECT_THAT(texts, Contains("1.00 ms: new"));
  EXPECT_THAT(texts, Contains("not in base"));
  EXPECT_THAT(texts, Contains("not in candidate"));
  for (const char* legend :
       {"base", "candidate: regressed", "candidate: improved",
        "candidate: within tolerance", "candidate: new", "candidate: missing",
        "within tolerance of base"}) {
    EXPECT_THAT(texts, Contains(legend));
  }
}

TEST(PlotCompareTest, ShowsTheToleranceBandAroundTheBase) {
  const XmlElement root = ParseSvg(PlotCompare(Compared()));
  // regresses: base 10 ms, tolerance max(0.5 ms, 10%) = 1 ms → 9..11 ms.
  const auto bands = RectsTitled(root, "regresses: within tolerance from ");
  ASSERT_EQ(bands.size(), 1u);
  EXPECT_EQ(bands[0]->children[0]->text,
            "regresses: within tolerance from 9.00 ms to 11.00 ms");
  const auto base = RectsTitled(root, "regresses: 10.00 ms");
  ASSERT_EQ(base.size(), 1u);
  const double per_ms = Number(*base[0], "width") / 10.0;
  EXPECT_NEAR(Number(*bands[0], "width"), 2.0 * per_ms, 0.05);
  // improves: base 8 ms, tolerance max(0.5 ms, 0.8 ms).
  EXPECT_EQ(RectsTitled(root, "improves: within tolerance from ")
                .at(0)
                ->children[0]
                ->text,
            "improves: within tolerance from 7.20 ms to 8.80 ms");
  // A new key has no base, so no band.
  EXPECT_TRUE(RectsTitled(root, "appears: within").empty());
}

TEST(PlotCompareTest, FormatsCountMetrics) {
  const XmlElement root =
      ParseSvg(PlotCompare(Compared(CompareMetric::kTotalHeartbeats, 100)));
  const std::vector<std::string> texts = Texts(root);
  EXPECT_THAT(texts, Contains(AllOf(HasSubstr("total_heartbeats"),
                                    HasSubstr("\xCE\x94 > 100 and"))));
  EXPECT_THAT(texts, Contains("10k"));  // axis ticks
  EXPECT_THAT(texts, Contains("15000, +50.0% (+5000): regressed"));
}

TEST(PlotCompareTest, PassingComparisonSaysPass) {
  ComparePair pair = Pair();
  pair.candidate = pair.base;
  absl::StatusOr<Comparison> comparison =
      Compare(pair.base, pair.candidate, ComparePolicy{});
  ASSERT_TRUE(comparison.ok()) << comparison.status();
  const XmlElement root = ParseSvg(PlotCompare(*comparison));
  EXPECT_THAT(Texts(root), Contains(HasSubstr("PASS")));
  EXPECT_THAT(Texts(root), Contains("10.00 ms, no change: within tolerance"));
}

TEST(PlotCompareTest, LimitsRowsAndDrawsEmptyComparisons) {
  const XmlElement limited = ParseSvg(PlotCompare(Compared(), {.max_rows = 2}));
  EXPECT_THAT(Texts(limited), Contains(HasSubstr("3 more rows not shown")));
  const XmlElement empty = ParseSvg(PlotCompare(Comparison{}));
  EXPECT_THAT(Texts(empty), Contains("no rows to compare"));
}

}  // namespace
}  // namespace spanprof::analysis
