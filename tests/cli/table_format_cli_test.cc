// End to end: `--format` on report, compare, scaling, overhead and query.
// Every machine format is parsed back here (CSV and TSV by
// tests/testing/csv.h, JSON Lines by simdjson) and compared, number by
// number, with what the analysis library computes from the same files.
#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/overhead.h"
#include "spanprof/analysis/scaling.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/analysis/scaling/sized_captures.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/csv.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ParseCsv;
using ::spanprof::testing::ParseTsv;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Table = std::vector<std::vector<std::string>>;

std::string S(int64_t v) { return std::to_string(v); }

// JSON Lines as rows of text cells in `columns` order ("" for null).
Table ParseJsonl(const std::string& text,
                 const std::vector<std::string>& columns) {
  Table rows;
  simdjson::dom::parser parser;
  simdjson::dom::document_stream stream;
  if (parser.parse_many(text).get(stream) != simdjson::SUCCESS) return rows;
  for (auto doc : stream) {
    simdjson::dom::object object;
    if (doc.get(object) != simdjson::SUCCESS) return {};
    std::vector<std::string>& row = rows.emplace_back();
    for (const std::string& column : columns) {
      simdjson::dom::element value = object[column];
      if (value.is_null()) {
        row.emplace_back();
      } else if (value.is_int64()) {
        row.push_back(S(int64_t(value)));
      } else if (value.is_string()) {
        row.emplace_back(std::string_view(value));
      } else if (value.is_double()) {
        // As CSV writes a real: the shortest text that reads back exactly
        // (JSON adds ".0" to a whole number to keep it a real).
        char buffer[40];
        const auto end =
            std::to_chars(buffer, buffer + sizeof(buffer), double(value)).ptr;
        row.emplace_back(buffer, end);
      } else {
        row.push_back(simdjson::to_string(value));
      }
    }
  }
  return rows;
}

// The rows of `args` run with each machine format, header checked against
// `columns`; all three must agree.
Table RowsInEveryFormat(std::vector<std::string> args,
                        const std::vector<std::string>& columns,
                        int exit_code = 0) {
  Table result;
  for (const char* format : {"csv", "tsv", "jsonl"}) {
    std::vector<std::string> argv = args;
    argv.insert(argv.end(), {"--format", format});
    const ProcessResult run = Spanprof(argv);
    EXPECT_EQ(run.exit_code, exit_code) << format << ": " << run.err;
    Table rows;
    if (std::string(format) == "jsonl") {
      rows = ParseJsonl(run.out, columns);
    } else {
      rows =
          std::string(format) == "csv" ? ParseCsv(run.out) : ParseTsv(run.out);
      EXPECT_FALSE(rows.empty()) << format;
      if (rows.empty()) return {};
      EXPECT_EQ(rows[0], columns) << format;
      rows.erase(rows.begin());
    }
    if (result.empty()) {
      result = rows;
    } else {
      EXPECT_EQ(rows, result) << format;
    }
  }
  return result;
}

// Two summaries of one real run of the indexer and of its --slow-parse
// variant (a real regression of file.tokenize).
class TableFormatTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    for (const char* side : {"base", "slow"}) {
      std::vector<std::string> argv = {SPANPROF_TEST_BIN_DIR "/indexer_example",
                                       "--files", "40"};
      if (std::string(side) == "slow") argv.push_back("--slow-parse");
      const ProcessResult run = testing::RunProcess(
          argv, {{"SPANPROF", "1"},
                 {"SPANPROF_REPORT", "off"},
                 {"SPANPROF_OUT", dir_->File(std::string(side) + ".json")},
                 {"SPANPROF_SUMMARY_OUT",
                  dir_->File(std::string(side) + "-summary.json")}});
      ASSERT_EQ(run.exit_code, 0) << run.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Path(const std::string& name) { return dir_->File(name); }

  static TempDir* dir_;
};
TempDir* TableFormatTest::dir_ = nullptr;

TEST_F(TableFormatTest, ReportRowsAreTheSummarysNumbers) {
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(Path("base-summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  const std::vector<std::string> columns = {"name",
                                            "self_ns",
                                            "total_ns",
                                            "calls",
                                            "mean_ns",
                                            "p95_ns",
                                            "self_heartbeats",
                                            "share_permille",
                                            "counters.bytes_touched"};
  Table expected;
  for (const analysis::Row& row : summary->rows) {
    std::string touched;
    for (const analysis::RowCounter& counter : row.counters) {
      if (counter.name == "bytes_touched") touched = S(counter.total);
    }
    expected.push_back({row.label, S(row.self_ns), S(row.total_ns),
                        S(static_cast<int64_t>(row.calls)), S(row.mean_ns),
                        S(row.p95_ns),
                        S(static_cast<int64_t>(row.self_heartbeats)),
                        S(row.share_permille), touched});
  }
  EXPECT_EQ(RowsInEveryFormat({"report", Path("base-summary.json")}, columns),
            expected);
  // From the trace: the same rows (the summary is a function of the trace).
  EXPECT_EQ(RowsInEveryFormat({"report", Path("base.json")}, columns),
            expected);
}

TEST_F(TableFormatTest, CompareRowsAreTheComparisonsNumbers) {
  absl::StatusOr<analysis::Summary> base =
      analysis::ReadSummary(Path("base-summary.json"));
  absl::StatusOr<analysis::Summary> slow =
      analysis::ReadSummary(Path("slow-summary.json"));
  ASSERT_TRUE(base.ok() && slow.ok());
  analysis::ComparePolicy policy;
  policy.absolute_tolerance_ns = 100000;
  policy.relative_tolerance_bps = 1000;
  absl::StatusOr<analysis::Comparison> comparison =
      analysis::Compare(*base, *slow, policy);
  ASSERT_TRUE(comparison.ok()) << comparison.status();
  ASSERT_GT(comparison->counts.regressed, 0u);
  auto text = [](const std::optional<int64_t>& v) {
    return v.has_value() ? S(*v) : "";
  };
  Table expected;
  for (const analysis::ComparisonRow& row : comparison->rows) {
    expected.push_back({row.label, std::string(RowStatusName(row.status)),
                        text(row.base), text(row.candidate), text(row.delta),
                        text(row.change_bps),
                        S(static_cast<int64_t>(row.base_calls)),
                        S(static_cast<int64_t>(row.candidate_calls))});
  }
  const std::vector<std::string> gate = {"compare",
                                         Path("base-summary.json"),
                                         Path("slow-summary.json"),
                                         "--absolute-tolerance",
                                         "100000",
                                         "--relative-tolerance-bps",
                                         "1000"};
  EXPECT_EQ(RowsInEveryFormat(gate,
                              {"name", "status", "base", "candidate", "delta",
                               "change_bps", "base_calls", "candidate_calls"},
                              1),
            expected);

  // Markdown for $GITHUB_STEP_SUMMARY: the verdict first, then only the
  // rows that moved.
  std::vector<std::string> md = gate;
  md.insert(md.end(), {"--format", "md"});
  const ProcessResult run = Spanprof(md);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.out, StartsWith("**spanprof compare: FAIL** (p95_ns): " +
                                  std::to_string(comparison->counts.regressed) +
                                  " regressed, "));
  size_t table_rows = 0;
  for (const analysis::ComparisonRow& row : comparison->rows) {
    const bool moved = row.status == analysis::RowStatus::kRegressed ||
                       row.status == analysis::RowStatus::kImproved;
    const std::string line = "| " + row.label + " | ";
    EXPECT_EQ(run.out.find(line) != std::string::npos, moved) << row.label;
    table_rows += moved ? 1 : 0;
  }
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'),
            static_cast<long>(table_rows + 4));  // verdict, blank, header, rule
}

TEST_F(TableFormatTest, CompareMarkdownSaysWhenNothingMoved) {
  const ProcessResult run =
      Spanprof({"compare", Path("base-summary.json"), Path("base-summary.json"),
                "--format", "md"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, StartsWith("**spanprof compare: PASS**"));
  EXPECT_THAT(run.out, HasSubstr("No row moved beyond the tolerances."));
}

TEST_F(TableFormatTest, QueryRowsAreTheSummarysNumbers) {
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(Path("base-summary.json"));
  ASSERT_TRUE(summary.ok());
  std::map<std::string, std::vector<std::string>> expected;
  for (const analysis::Row& row : summary->rows) {
    expected[row.label] = {S(static_cast<int64_t>(row.calls)), S(row.total_ns),
                           S(row.self_ns), S(row.min_ns), S(row.max_ns)};
  }
  // The summary's label, rebuilt in SQL from the span view's tags.
  const std::string sql =
      "SELECT name || CASE WHEN phase IS NULL AND module IS NULL THEN '' "
      "ELSE ' [' || COALESCE('phase=' || phase, '') || CASE WHEN phase IS "
      "NOT NULL AND module IS NOT NULL THEN ', ' ELSE '' END || "
      "COALESCE('module=' || module, '') || ']' END AS label, COUNT(*) AS "
      "calls, SUM(dur) AS total_ns, SUM(self_dur) AS self_ns, MIN(dur) AS "
      "min_ns, MAX(dur) AS max_ns "
      "FROM span GROUP BY name, phase, module";
  const Table rows = RowsInEveryFormat(
      {"query", Path("base.json"), sql},
      {"label", "calls", "total_ns", "self_ns", "min_ns", "max_ns"});
  std::map<std::string, std::vector<std::string>> got;
  for (const auto& row : rows) got[row[0]] = {row.begin() + 1, row.end()};
  EXPECT_EQ(got, expected);
}

TEST_F(TableFormatTest, ScalingRowsAreTheReportsNumbers) {
  TempDir dir;
  const std::string trace = dir.File("sized.json");
  ASSERT_TRUE(
      analysis::WriteTrace(
          testing::TokenizeCapture([](double s) { return 2.0 * s; }, 1), trace)
          .ok());
  absl::StatusOr<Capture> capture = analysis::ReadTrace(trace);
  ASSERT_TRUE(capture.ok());
  const std::vector<analysis::NamedCapture> named = {{trace, &*capture}};
  absl::StatusOr<analysis::ScalingReport> report =
      analysis::AnalyzeScaling(named, {});
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->groups.empty());
  const std::vector<std::string> columns = {
      "name",         "size_arg", "spans",           "size_min",
      "size_max",     "exponent", "exponent_ci_low", "exponent_ci_high",
      "p95_exponent", "verdict",  "driver"};
  const Table rows = RowsInEveryFormat({"scaling", trace}, columns);
  ASSERT_EQ(rows.size(), report->groups.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const analysis::ScalingGroup& group = report->groups[i];
    EXPECT_EQ(rows[i][0], group.label);
    EXPECT_EQ(rows[i][1], group.size_arg);
    EXPECT_EQ(rows[i][2], S(static_cast<int64_t>(group.spans)));
    ASSERT_TRUE(group.exponent.has_value());
    // Reals are written as the shortest text that reads back exactly.
    EXPECT_EQ(std::stod(rows[i][5]), group.exponent->estimate);
    EXPECT_EQ(std::stod(rows[i][6]), group.exponent->ci_low);
    EXPECT_EQ(std::stod(rows[i][7]), group.exponent->ci_high);
    EXPECT_EQ(rows[i][9], group.verdict);
  }
}

TEST(TableFormatCliTest, OverheadRowsAreTheGatesNumbers) {
  const std::string data =
      SPANPROF_TEST_SOURCE_DIR "/tests/data/overhead/repetitions.json";
  absl::StatusOr<analysis::OverheadReport> report =
      analysis::ReadOverhead(data, {});
  ASSERT_TRUE(report.ok()) << report.status();
  const Table rows = RowsInEveryFormat(
      {"overhead", data},
      {"name", "off_ns", "on_ns", "ratio", "spans_per_iteration", "verdict"},
      1);
  ASSERT_EQ(rows.size(), report->pairs.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const analysis::OverheadPair& pair = report->pairs[i];
    EXPECT_EQ(rows[i][0], pair.name);
    EXPECT_EQ(std::stod(rows[i][1]), pair.off.median_ns);
    EXPECT_EQ(std::stod(rows[i][2]), pair.on.median_ns);
    EXPECT_EQ(std::stod(rows[i][3]), pair.ratio);
    EXPECT_EQ(rows[i][5], pair.passed ? "pass" : "fail");
  }
}

TEST(TableFormatCliTest, AnUnknownFormatIsAUsageError) {
  const std::vector<std::vector<std::string>> commands = {
      {"report", "x.json"},
      {"query", "x.json", "SELECT 1"},
      {"scaling", "x.json"},
      {"overhead", "x.json"},
      {"compare", "a.json", "b.json"}};
  for (std::vector<std::string> args : commands) {
    args.insert(args.end(), {"--format", "xml"});
    const ProcessResult run = Spanprof(args);
    EXPECT_EQ(run.exit_code, 2) << args[0];
    EXPECT_THAT(run.err, HasSubstr("--format: unknown format \"xml\""))
        << args[0];
  }
}

}  // namespace
}  // namespace spanprof
