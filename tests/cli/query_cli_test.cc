// End to end: `spanprof query` on every kind of trace it reads (spanprof
// JSON and .pftrace of a real run, a merged multi-process trace, a foreign
// Chrome trace, several traces at once), its read-only guard and its errors.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/csv.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ParseCsv;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using Table = std::vector<std::vector<std::string>>;

class QueryCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    for (const char* run : {"a", "b"}) {
      const ProcessResult result = testing::RunProcess(
          {SPANPROF_TEST_BIN_DIR "/indexer_example", "--files", "20"},
          {{"SPANPROF", "1"},
           {"SPANPROF_REPORT", "off"},
           {"SPANPROF_OUT", Path(std::string(run) + ".json")},
           {"SPANPROF_SUMMARY_OUT", "off"}});
      ASSERT_EQ(result.exit_code, 0) << result.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Path(const std::string& name) { return dir_->File(name); }

  // The CSV rows of `sql` on `traces`, header included.
  static Table Csv(std::vector<std::string> traces, const std::string& sql) {
    std::vector<std::string> args = {"query"};
    args.insert(args.end(), traces.begin(), traces.end());
    args.insert(args.end(), {sql, "--format", "csv"});
    const ProcessResult result = Spanprof(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return ParseCsv(result.out);
  }

  static TempDir* dir_;
};
TempDir* QueryCliTest::dir_ = nullptr;

// The same capture as JSON and as a Perfetto protobuf trace fills the same
// tables.
TEST_F(QueryCliTest, JsonAndPftraceGiveTheSameTables) {
  absl::StatusOr<Capture> capture = analysis::ReadTrace(Path("a.json"));
  ASSERT_TRUE(capture.ok()) << capture.status();
  ASSERT_TRUE(analysis::WriteTrace(*capture, Path("a.pftrace")).ok());
  for (const char* sql :
       {"SELECT * FROM slice ORDER BY id", "SELECT * FROM span ORDER BY id",
        "SELECT * FROM args ORDER BY arg_set_id, key",
        "SELECT * FROM flow ORDER BY id", "SELECT * FROM thread ORDER BY utid",
        "SELECT * FROM process"}) {
    const Table json = Csv({Path("a.json")}, sql);
    EXPECT_GT(json.size(), 1u) << sql;
    EXPECT_EQ(Csv({Path("a.pftrace")}, sql), json) << sql;
  }
  // Every span is a slice.
  EXPECT_EQ(Csv({Path("a.pftrace")}, "SELECT COUNT(*) FROM slice"),
            (Table{{"COUNT(*)"}, {std::to_string(capture->spans.size())}}));
}

TEST_F(QueryCliTest, SeveralTracesLoadSideBySide) {
  absl::StatusOr<Capture> a = analysis::ReadTrace(Path("a.json"));
  absl::StatusOr<Capture> b = analysis::ReadTrace(Path("b.json"));
  ASSERT_TRUE(a.ok() && b.ok());
  const Table rows =
      Csv({Path("a.json"), Path("b.json")},
          "SELECT COUNT(*), COUNT(DISTINCT id), "
          "(SELECT COUNT(*) FROM process), "
          "(SELECT COUNT(*) FROM flow f JOIN slice o ON o.id = f.slice_out "
          "JOIN slice i ON i.id = f.slice_in WHERE o.ts <= i.ts) FROM slice");
  const std::string spans = std::to_string(a->spans.size() + b->spans.size());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], spans);
  EXPECT_EQ(rows[1][1], spans);
  EXPECT_EQ(rows[1][2], "2");
  EXPECT_EQ(rows[1][3], "4");  // two workers started in each run
}

TEST_F(QueryCliTest, AMergedTraceHasOneProcessRowPerProcess) {
  const ProcessResult merged = Spanprof(
      {"merge", Path("a.json"), Path("b.json"), "-o", Path("merged.pftrace")});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  absl::StatusOr<Capture> capture = analysis::ReadTrace(Path("merged.pftrace"));
  ASSERT_TRUE(capture.ok()) << capture.status();
  ASSERT_EQ(capture->processes.size(), 2u);
  Table expected = {{"pid", "name", "spans"}};
  for (size_t p = 0; p < capture->processes.size(); ++p) {
    size_t spans = 0;
    for (const Span& span : capture->spans) {
      spans += capture->threads[span.thread].process == p ? 1 : 0;
    }
    expected.push_back({std::to_string(capture->processes[p].pid),
                        capture->processes[p].process_name,
                        std::to_string(spans)});
  }
  EXPECT_EQ(Csv({Path("merged.pftrace")},
                "SELECT p.pid, p.name, COUNT(*) AS spans FROM slice s "
                "JOIN thread_track tt ON s.track_id = tt.id "
                "JOIN thread USING (utid) JOIN process p USING (upid) "
                "GROUP BY p.upid ORDER BY p.upid"),
            expected);
}

TEST_F(QueryCliTest, AForeignChromeTraceIsQueriedToo) {
  const std::string trace =
      SPANPROF_TEST_SOURCE_DIR "/tests/data/foreign/multi-process.json";
  EXPECT_EQ(Csv({trace},
                "SELECT s.name, s.category, s.dur, a.int_value FROM slice s "
                "LEFT JOIN args a ON a.arg_set_id = s.arg_set_id "
                "AND a.key = 'args.layers' ORDER BY s.ts"),
            (Table{{"name", "category", "dur", "int_value"},
                   {"Task", "toplevel", "80000", ""},
                   {"Paint", "blink", "50000", "3"}}));
}

TEST_F(QueryCliTest, TheQueryMayComeFromAFile) {
  const std::string file = Path("q.sql");
  testing::WriteText(file,
                     "-- the root span\nSELECT name FROM slice\n"
                     "WHERE depth = 0 AND parent_id IS NULL\n"
                     "  AND name = 'indexer.run';\n");
  const ProcessResult result =
      Spanprof({"query", Path("a.json"), "--file", file});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "name\n-----------\nindexer.run\n");
}

TEST_F(QueryCliTest, AnSqlErrorIsExit2WithItsPlace) {
  const ProcessResult result = Spanprof(
      {"query", Path("a.json"), "SELECT name FROM slice WHERE dru > 1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "spanprof query: line 1, column 30: no such column: dru\n"
            "  SELECT name FROM slice WHERE dru > 1\n"
            "                               ^\n");
}

TEST_F(QueryCliTest, ChangesAttachAndPragmaWritesAreRefused) {
  for (const char* sql :
       {"ATTACH DATABASE 'x.db' AS x", "PRAGMA writable_schema = ON",
        "DELETE FROM args", "SELECT load_extension('x')"}) {
    const ProcessResult result = Spanprof({"query", Path("a.json"), sql});
    EXPECT_EQ(result.exit_code, 2) << sql;
    EXPECT_THAT(result.err, HasSubstr("refused")) << sql;
  }
  EXPECT_FALSE(std::filesystem::exists("x.db"));
}

TEST_F(QueryCliTest, MissingArgumentsAndUnreadableTracesAreExit2) {
  ProcessResult result = Spanprof({"query", Path("a.json")});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("missing argument SQL"));
  result = Spanprof({"query", Path("nope.json"), "SELECT 1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("nope.json"));
  result = Spanprof({"query", Path("a.json"), "--file", Path("nope.sql")});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("nope.sql"));
}

}  // namespace
}  // namespace spanprof
