// End to end: the ten questions of docs/guide.md ("Ask the trace: SQL"),
// each query taken from the guide itself, run by the real `spanprof query`
// on traces of the real examples, and checked against numbers computed here
// from the same trace through the analysis library (never hard-coded).
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/timing.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/csv.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ParseCsv;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::RunProcess;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteText;
using Table = std::vector<std::vector<std::string>>;

// The query of the guide block that starts with "-- guide: NAME".
std::string GuideQuery(const std::string& name) {
  const std::string guide = ReadText(SPANPROF_TEST_SOURCE_DIR "/docs/guide.md");
  const std::string marker = "```sql\n-- guide: " + name + "\n";
  const size_t begin = guide.find(marker);
  if (begin == std::string::npos) return "";
  const size_t body = begin + 7;  // after "```sql\n"
  const size_t end = guide.find("```", body);
  return guide.substr(body, end - body);
}

// A trace of a real example run, and the capture read back from it.
struct ExampleTrace {
  std::string path;
  Capture capture;
};

class QueryGuideTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    indexer_ = new ExampleTrace(
        Record({SPANPROF_TEST_BIN_DIR "/indexer_example", "--files", "60"},
               "indexer.pftrace"));
    service_ =
        new ExampleTrace(Record({SPANPROF_TEST_BIN_DIR "/service_example",
                                 "--requests", "40", "--work-ns", "1000"},
                                "service.json"));
  }
  static void TearDownTestSuite() {
    delete indexer_;
    delete service_;
    delete dir_;
  }

  static ExampleTrace Record(const std::vector<std::string>& argv,
                             const std::string& name) {
    ExampleTrace trace{dir_->File(name), {}};
    const ProcessResult run =
        RunProcess(argv, {{"SPANPROF", "1"},
                          {"SPANPROF_REPORT", "off"},
                          {"SPANPROF_OUT", trace.path},
                          {"SPANPROF_SUMMARY_OUT", "off"}});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    absl::StatusOr<Capture> capture = analysis::ReadTrace(trace.path);
    EXPECT_TRUE(capture.ok()) << capture.status();
    if (capture.ok()) trace.capture = *std::move(capture);
    return trace;
  }

  // Runs the guide's query NAME on `trace` (through --file, as the blocks
  // start with a comment) and returns the CSV rows after the header.
  static Table Ask(const std::string& name, const ExampleTrace& trace) {
    const std::string sql = GuideQuery(name);
    EXPECT_FALSE(sql.empty()) << "no query " << name << " in docs/guide.md";
    const std::string file = dir_->File(name + ".sql");
    WriteText(file, sql);
    const ProcessResult result =
        RunProcess({SPANPROF_TEST_BIN_DIR "/spanprof", "query", trace.path,
                    "--file", file, "--format", "csv"});
    EXPECT_EQ(result.exit_code, 0) << name << ": " << result.err;
    Table rows = ParseCsv(result.out);
    if (!rows.empty()) rows.erase(rows.begin());
    return rows;
  }

  static const Site& SiteOf(const Capture& capture, const Span& span) {
    return capture.sites[span.site];
  }
  static std::optional<int64_t> IntArg(const Capture& capture, const Span& span,
                                       const std::string& key, bool counter) {
    for (uint32_t a = 0; a < span.arg_count; ++a) {
      const SpanArg& arg = capture.args[span.first_arg + a];
      if (arg.key == key && arg.is_counter == counter) return arg.int_value;
    }
    return std::nullopt;
  }

  static TempDir* dir_;
  static ExampleTrace* indexer_;
  static ExampleTrace* service_;
};

TempDir* QueryGuideTest::dir_ = nullptr;
ExampleTrace* QueryGuideTest::indexer_ = nullptr;
ExampleTrace* QueryGuideTest::service_ = nullptr;

std::string S(int64_t v) { return std::to_string(v); }

TEST_F(QueryGuideTest, SlowestTokenizingOnEachThread) {
  const Capture& c = indexer_->capture;
  // By thread name: (-dur, id, tokens) of its file.tokenize spans.
  std::map<std::string, std::vector<std::tuple<int64_t, uint64_t, int64_t>>>
      by_thread;
  for (const Span& span : c.spans) {
    if (SiteOf(c, span).name != "file.tokenize") continue;
    by_thread[c.threads[span.thread].name].emplace_back(
        -(span.end_ns - span.start_ns), span.id,
        *IntArg(c, span, "tokens", false));
  }
  Table expected;
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 0; i < spans.size() && i < 3; ++i) {
      const auto& [minus_dur, id, tokens] = spans[i];
      expected.push_back(
          {thread, S(static_cast<int64_t>(id)), S(-minus_dur), S(tokens)});
    }
  }
  ASSERT_GE(expected.size(), 3u);
  EXPECT_EQ(Ask("slowest-tokenize", *indexer_), expected);
}

TEST_F(QueryGuideTest, GapBetweenParseAndFirstQueryOfARequest) {
  const Capture& c = service_->capture;
  std::map<uint64_t, int64_t> parse_end, first_query;  // by request span
  for (const Span& span : c.spans) {
    const std::string& name = SiteOf(c, span).name;
    if (name == "request.parse") parse_end[span.parent_id] = span.end_ns;
    if (name == "db.query") {
      auto [it, fresh] = first_query.emplace(span.parent_id, span.start_ns);
      if (!fresh) it->second = std::min(it->second, span.start_ns);
    }
  }
  int64_t count = 0, sum = 0, low = INT64_MAX, high = INT64_MIN;
  for (const auto& [request, end] : parse_end) {
    if (!first_query.contains(request)) continue;
    const int64_t gap = first_query[request] - end;
    ++count;
    sum += gap;
    low = std::min(low, gap);
    high = std::max(high, gap);
  }
  ASSERT_EQ(count, 80);  // 40 requests on each of two workers
  const Table rows = Ask("parse-to-query", *service_);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].size(), 4u);
  EXPECT_EQ(rows[0][0], S(count));
  EXPECT_EQ(rows[0][1], S(low));
  EXPECT_NEAR(std::stod(rows[0][2]),
              static_cast<double>(sum) / static_cast<double>(count), 1e-6);
  EXPECT_EQ(rows[0][3], S(high));
}

TEST_F(QueryGuideTest, ShareOfAParentSpentInChildrenNamedAlike) {
  const Capture& c = indexer_->capture;
  std::map<uint64_t, int64_t> in_file;  // worker.run id -> file.* time
  std::map<uint64_t, int64_t> dur;
  for (const Span& span : c.spans) {
    if (SiteOf(c, span).name == "worker.run") {
      dur[span.id] = span.end_ns - span.start_ns;
    }
  }
  for (const Span& span : c.spans) {
    if (dur.contains(span.parent_id) &&
        SiteOf(c, span).name.starts_with("file.")) {
      in_file[span.parent_id] += span.end_ns - span.start_ns;
    }
  }
  const Table rows = Ask("share-in-children", *indexer_);
  ASSERT_EQ(rows.size(), in_file.size());  // workers that read a file
  ASSERT_FALSE(rows.empty());
  size_t i = 0;
  for (const auto& [id, file_ns] : in_file) {
    const int64_t total = dur[id];
    EXPECT_EQ(rows[i][0], S(static_cast<int64_t>(id)));
    EXPECT_EQ(rows[i][1], S(total));
    EXPECT_EQ(rows[i][2], S(file_ns));
    EXPECT_NEAR(
        std::stod(rows[i][3]),
        100.0 * static_cast<double>(file_ns) / static_cast<double>(total),
        0.051);
    ++i;
  }
}

TEST_F(QueryGuideTest, SelfTimeByPhase) {
  const Capture& c = indexer_->capture;
  const std::vector<analysis::SpanTiming> timings = analysis::ComputeTimings(c);
  std::map<std::string, std::pair<int64_t, int64_t>> by_phase;
  for (size_t i = 0; i < c.spans.size(); ++i) {
    auto& [spans, self] = by_phase[SiteOf(c, c.spans[i]).phase];
    ++spans;
    self += timings[i].self_ns;
  }
  Table rows = Ask("self-by-phase", *indexer_);
  ASSERT_EQ(rows.size(), by_phase.size());
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GE(std::stoll(rows[i - 1][2]), std::stoll(rows[i][2]));
  }
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 3u);
    const auto it = by_phase.find(row[0]);  // NULL (no phase) reads as ""
    ASSERT_NE(it, by_phase.end()) << row[0];
    EXPECT_EQ(row[1], S(it->second.first)) << row[0];
    EXPECT_EQ(row[2], S(it->second.second)) << row[0];
  }
}

TEST_F(QueryGuideTest, SpansAndBusyTimePerThread) {
  const Capture& c = indexer_->capture;
  // Busy time: the spans with no parent on their own thread.
  const analysis::Forest forest(c);
  std::vector<int64_t> spans(c.threads.size()), busy(c.threads.size());
  for (size_t i = 0; i < c.spans.size(); ++i) {
    const Span& span = c.spans[i];
    ++spans[span.thread];
    const uint32_t p = forest.parent(i);
    if (p == analysis::Forest::kNone || c.spans[p].thread != span.thread) {
      busy[span.thread] += span.end_ns - span.start_ns;
    }
  }
  Table expected;
  for (size_t t = 0; t < c.threads.size(); ++t) {
    expected.push_back({c.threads[t].name, S(spans[t]), S(busy[t])});
  }
  EXPECT_EQ(Ask("per-thread", *indexer_), expected);
}

TEST_F(QueryGuideTest, SlowestReadsAndTheirSizes) {
  const Capture& c = indexer_->capture;
  std::vector<std::tuple<int64_t, uint64_t, int64_t>> reads;
  for (const Span& span : c.spans) {
    if (SiteOf(c, span).name != "file.read") continue;
    reads.emplace_back(-(span.end_ns - span.start_ns), span.id,
                       *IntArg(c, span, "bytes", false));
  }
  std::sort(reads.begin(), reads.end());
  Table expected;
  for (size_t i = 0; i < 3 && i < reads.size(); ++i) {
    const auto& [minus_dur, id, bytes] = reads[i];
    expected.push_back({S(static_cast<int64_t>(id)), S(-minus_dur), S(bytes),
                        S(1000 * bytes / -minus_dur)});
  }
  EXPECT_EQ(Ask("slowest-reads", *indexer_), expected);
}

TEST_F(QueryGuideTest, WhoStartedWhatOnAnotherThread) {
  const Capture& c = indexer_->capture;
  const analysis::Forest forest(c);
  std::vector<
      std::tuple<int64_t, std::string, std::string, std::string, int64_t>>
      links;
  for (size_t i = 0; i < c.spans.size(); ++i) {
    const uint32_t p = forest.parent(i);
    if (p == analysis::Forest::kNone ||
        c.spans[p].thread == c.spans[i].thread) {
      continue;
    }
    links.emplace_back(c.spans[i].start_ns, SiteOf(c, c.spans[p]).name,
                       SiteOf(c, c.spans[i]).name,
                       c.threads[c.spans[i].thread].name,
                       c.spans[i].start_ns - c.spans[p].start_ns);
  }
  std::sort(links.begin(), links.end());
  Table expected;
  for (const auto& [ts, parent, child, thread, delay] : links) {
    expected.push_back({parent, child, thread, S(delay)});
  }
  ASSERT_EQ(expected.size(), 2u);  // one worker.run per worker thread
  EXPECT_EQ(Ask("cross-thread", *indexer_), expected);
}

TEST_F(QueryGuideTest, CostPerToken) {
  const Capture& c = indexer_->capture;
  int64_t files = 0, tokens = 0, ns = 0;
  for (const Span& span : c.spans) {
    if (SiteOf(c, span).name != "file.tokenize") continue;
    ++files;
    tokens += *IntArg(c, span, "tokens", false);
    ns += span.end_ns - span.start_ns;
  }
  EXPECT_EQ(Ask("cost-per-token", *indexer_),
            (Table{{S(files), S(tokens), S(ns), S(ns / tokens)}}));
}

TEST_F(QueryGuideTest, CounterTotalsPerThread) {
  const Capture& c = indexer_->capture;
  std::map<uint32_t, int64_t> touched;
  for (const Span& span : c.spans) {
    if (auto v = IntArg(c, span, "bytes_touched", true)) {
      touched[span.thread] += *v;
    }
  }
  Table expected;
  for (const auto& [thread, bytes] : touched) {
    expected.push_back({c.threads[thread].name, S(bytes)});
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(Ask("counter-per-thread", *indexer_), expected);
}

TEST_F(QueryGuideTest, PhasesOfTheRunAndTheGapsBetween) {
  const Capture& c = indexer_->capture;
  uint64_t root = 0;
  for (const Span& span : c.spans) {
    if (SiteOf(c, span).name == "indexer.run") root = span.id;
  }
  std::vector<const Span*> phases;
  for (const Span& span : c.spans) {
    if (span.parent_id == root && root != 0) phases.push_back(&span);
  }
  std::sort(phases.begin(), phases.end(), [](const Span* a, const Span* b) {
    return a->start_ns < b->start_ns;
  });
  Table expected;
  for (size_t i = 0; i < phases.size(); ++i) {
    const Span& span = *phases[i];
    expected.push_back(
        {SiteOf(c, span).name, S(span.start_ns), S(span.end_ns - span.start_ns),
         i == 0 ? "" : S(span.start_ns - phases[i - 1]->end_ns)});
  }
  ASSERT_EQ(expected.size(), 5u);
  EXPECT_EQ(Ask("top-level-phases", *indexer_), expected);
}

// The per-name totals of the summary, through the query's machine formats:
// every number read back is the summary's.
TEST_F(QueryGuideTest, MachineFormatsRoundTripToTheSummary) {
  const analysis::Summary summary = analysis::Summarize(indexer_->capture);
  std::map<std::string, std::vector<std::string>> expected;
  for (const analysis::Row& row : summary.rows) {
    expected[row.key.name] = {S(static_cast<int64_t>(row.calls)),
                              S(row.total_ns), S(row.self_ns), S(row.max_ns)};
  }
  const std::string sql =
      "SELECT name, COUNT(*) AS calls, SUM(dur) AS total_ns, "
      "SUM(self_dur) AS self_ns, MAX(dur) AS max_ns FROM span GROUP BY name";
  for (const char* format : {"csv", "tsv", "jsonl"}) {
    const ProcessResult result =
        RunProcess({SPANPROF_TEST_BIN_DIR "/spanprof", "query", indexer_->path,
                    sql, "--format", format});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::map<std::string, std::vector<std::string>> got;
    if (std::string(format) == "jsonl") {
      simdjson::dom::parser parser;
      simdjson::dom::document_stream stream;
      ASSERT_EQ(parser.parse_many(result.out).get(stream), simdjson::SUCCESS);
      for (auto doc : stream) {
        simdjson::dom::element row = doc.value();
        got[std::string(std::string_view(row["name"]))] = {
            S(int64_t(row["calls"])), S(int64_t(row["total_ns"])),
            S(int64_t(row["self_ns"])), S(int64_t(row["max_ns"]))};
      }
    } else {
      Table rows = std::string(format) == "csv" ? ParseCsv(result.out)
                                                : testing::ParseTsv(result.out);
      ASSERT_FALSE(rows.empty());
      EXPECT_EQ(rows[0], (std::vector<std::string>{"name", "calls", "total_ns",
                                                   "self_ns", "max_ns"}));
      for (size_t i = 1; i < rows.size(); ++i) {
        got[rows[i][0]] = {rows[i].begin() + 1, rows[i].end()};
      }
    }
    EXPECT_EQ(got, expected) << format;
  }
}

}  // namespace
}  // namespace spanprof
