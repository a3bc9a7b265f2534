// QueryDatabase: the tables carry what the capture says, with Perfetto
// trace_processor's meanings; the database refuses changes; SQL errors
// name their place.
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/query.h"
#include "spanprof/analysis/table_output.h"
#include "spanprof/analysis/timing.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::spanprof::testing::DoubleArg;
using ::spanprof::testing::IntArg;
using ::spanprof::testing::StringArg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// main: 1 run [0,100) > 2 step [10,40) > 3 leaf [15,25); 4 step [50,90)
// pool: 5 task [20,60), a cross-thread child of 2.
Capture TwoThreadCapture() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(101, "main");
  const uint32_t pool = b.Thread(102, "pool-0");
  const uint32_t run = b.Site("app.run");
  const uint32_t step = b.Site("app.step", "compute", "solver");
  const uint32_t leaf = b.Site("lu.factor", "compute", "lu");
  const uint32_t task = b.Site("pool.task", "io");
  b.Add(1, 0, run, main, 0, 100);
  b.Add(2, 1, step, main, 10, 40).heartbeats = 7;
  b.Add(3, 2, leaf, main, 15, 25);
  b.Add(4, 1, step, main, 50, 90);
  b.Add(5, 2, task, pool, 20, 60).flags = kSpanUnfinished;
  b.Args(3, {IntArg("rows", 64), DoubleArg("ratio", 0.5),
             StringArg("kind", "dense"), CounterArg("flops", 1000)});
  return b.Build();
}

QueryDatabase Load(const std::vector<const Capture*>& captures) {
  std::vector<QueryInput> inputs;
  for (const Capture* capture : captures) inputs.push_back({"test", capture});
  absl::StatusOr<QueryDatabase> db = QueryDatabase::Load(inputs);
  EXPECT_TRUE(db.ok()) << db.status();
  return *std::move(db);
}

// The rows of `sql`, each cell as CellText() shows it ("" for NULL).
std::vector<std::vector<std::string>> Rows(QueryDatabase& db,
                                           const std::string& sql) {
  absl::StatusOr<OutputTable> table = db.Run(sql);
  EXPECT_TRUE(table.ok()) << sql << ": " << table.status();
  std::vector<std::vector<std::string>> rows;
  if (!table.ok()) return rows;
  for (const auto& row : table->rows) {
    std::vector<std::string>& texts = rows.emplace_back();
    for (const TableCell& cell : row) texts.push_back(CellText(cell));
  }
  return rows;
}

using Strings = std::vector<std::string>;

TEST(QueryDatabaseTest, SlicesCarryTheSpansWithSameThreadParents) {
  const Capture capture = TwoThreadCapture();
  QueryDatabase db = Load({&capture});
  EXPECT_EQ(db.slice_count(), 5);
  EXPECT_THAT(
      Rows(db,
           "SELECT id, ts, dur, track_id, category, name, depth, parent_id, "
           "thread_dur FROM slice ORDER BY id"),
      ElementsAre(
          Strings{"1", "0", "100", "0", "spanprof", "app.run", "0", "", ""},
          Strings{"2", "10", "30", "0", "compute", "app.step", "1", "1", ""},
          Strings{"3", "15", "10", "0", "compute", "lu.factor", "2", "2", ""},
          Strings{"4", "50", "40", "0", "compute", "app.step", "1", "1", ""},
          Strings{"5", "20", "40", "1", "io", "pool.task", "0", "", ""}));
}

TEST(QueryDatabaseTest, CrossThreadParentsAreFlows) {
  const Capture capture = TwoThreadCapture();
  QueryDatabase db = Load({&capture});
  EXPECT_THAT(Rows(db, "SELECT id, slice_out, slice_in FROM flow"),
              ElementsAre(Strings{"0", "2", "5"}));
  EXPECT_THAT(Rows(db,
                   "SELECT cross_thread_parent_id, parent_id, depth FROM span "
                   "WHERE id = 5"),
              ElementsAre(Strings{"2", "", "2"}));
}

TEST(QueryDatabaseTest, ThreadsTracksAndProcess) {
  const Capture capture = TwoThreadCapture();
  QueryDatabase db = Load({&capture});
  EXPECT_THAT(Rows(db,
                   "SELECT t.utid, t.tid, t.name, p.pid, p.name FROM thread t "
                   "JOIN process p USING (upid) ORDER BY utid"),
              ElementsAre(Strings{"0", "101", "main", "4242", "test"},
                          Strings{"1", "102", "pool-0", "4242", "test"}));
  EXPECT_THAT(Rows(db, "SELECT id, utid FROM thread_track ORDER BY id"),
              ElementsAre(Strings{"0", "0"}, Strings{"1", "1"}));
}

TEST(QueryDatabaseTest, ArgsHoldArgumentsCountersAndTags) {
  const Capture capture = TwoThreadCapture();
  QueryDatabase db = Load({&capture});
  EXPECT_THAT(
      Rows(db,
           "SELECT flat_key, key, int_value, string_value, real_value, "
           "value_type FROM args JOIN slice USING (arg_set_id) WHERE id = 3 "
           "ORDER BY key"),
      ElementsAre(
          Strings{"args.kind", "args.kind", "", "dense", "", "string"},
          Strings{"args.ratio", "args.ratio", "", "", "0.5", "real"},
          Strings{"args.rows", "args.rows", "64", "", "", "int"},
          Strings{"counters.flops", "counters.flops", "1000", "", "", "int"},
          Strings{"tags.module", "tags.module", "", "lu", "", "string"},
          Strings{"tags.phase", "tags.phase", "", "compute", "", "string"}));
  // Spans with tags only share their site's arg set (as trace_processor
  // shares equal arg sets); spans with neither have none.
  EXPECT_THAT(Rows(db, "SELECT arg_set_id IS NULL FROM slice WHERE id = 1"),
              ElementsAre(Strings{"1"}));
  EXPECT_THAT(Rows(db,
                   "SELECT COUNT(DISTINCT arg_set_id) FROM slice "
                   "WHERE name = 'app.step'"),
              ElementsAre(Strings{"1"}));
}

TEST(QueryDatabaseTest, SpanViewAddsTagsSelfTimeAndFlags) {
  const Capture capture = TwoThreadCapture();
  const std::vector<SpanTiming> timings = ComputeTimings(capture);
  QueryDatabase db = Load({&capture});
  const auto rows =
      Rows(db,
           "SELECT id, name, phase, module, activity, tid, thread_name, pid, "
           "self_dur, heartbeats, unfinished FROM span ORDER BY id");
  ASSERT_EQ(rows.size(), capture.spans.size());
  for (size_t i = 0; i < capture.spans.size(); ++i) {
    const Span& span = capture.spans[i];
    const auto& row = rows[span.id - 1];
    const Site& site = capture.sites[span.site];
    EXPECT_EQ(row[1], site.name);
    EXPECT_EQ(row[2], site.phase);
    EXPECT_EQ(row[3], site.module);
    EXPECT_EQ(row[4], "");
    EXPECT_EQ(row[5], std::to_string(capture.threads[span.thread].os_tid));
    EXPECT_EQ(row[6], capture.threads[span.thread].name);
    EXPECT_EQ(row[7], "4242");
    EXPECT_EQ(row[8], std::to_string(timings[i].self_ns)) << span.id;
    EXPECT_EQ(row[9], std::to_string(span.heartbeats));
    EXPECT_EQ(row[10], (span.flags & kSpanUnfinished) != 0 ? "1" : "0");
  }
}

// Every tag (kTagFields) is a column of `span`, named after it, and a
// `tags.NAME` row of `args`.
TEST(QueryDatabaseTest, EveryTagIsASpanColumnAndATagArg) {
  for (const TagField& tag : kTagFields) {
    SCOPED_TRACE(std::string(tag.name));
    CaptureBuilder b;
    const uint32_t main = b.Thread(101, "main");
    Site site{.name = "tagged"};
    site.*tag.site = "value";
    b.Add(1, 0, b.AddSite(site), main, 0, 10);
    const Capture capture = b.Build();
    QueryDatabase db = Load({&capture});
    std::string columns;
    for (const TagField& other : kTagFields) {
      columns += columns.empty() ? "" : ", ";
      columns += std::string(other.name) + " IS NOT NULL";
    }
    Strings expected;
    for (const TagField& other : kTagFields) {
      expected.push_back(&other == &tag ? "1" : "0");
    }
    EXPECT_THAT(Rows(db, "SELECT " + columns + " FROM span"),
                ElementsAre(expected));
    EXPECT_THAT(Rows(db,
                     "SELECT key, string_value FROM args JOIN slice "
                     "USING (arg_set_id)"),
                ElementsAre(Strings{"tags." + std::string(tag.name), "value"}));
  }
}

TEST(QueryDatabaseTest, SeveralCapturesKeepTheirIdsApart) {
  const Capture first = TwoThreadCapture();
  Capture second = TwoThreadCapture();
  second.pid = 777;
  second.process_name = "other";
  QueryDatabase db = Load({&first, &second});
  EXPECT_THAT(
      Rows(db, "SELECT COUNT(*), COUNT(DISTINCT id), MAX(id) FROM slice"),
      ElementsAre(Strings{"10", "10", "10"}));
  EXPECT_THAT(
      Rows(db, "SELECT upid, pid, name FROM process ORDER BY upid"),
      ElementsAre(Strings{"0", "4242", "test"}, Strings{"1", "777", "other"}));
  // The second capture's cross-thread link points at its own slices.
  EXPECT_THAT(Rows(db, "SELECT slice_out, slice_in FROM flow ORDER BY id"),
              ElementsAre(Strings{"2", "5"}, Strings{"7", "10"}));
  EXPECT_THAT(Rows(db,
                   "SELECT DISTINCT p.pid FROM span s JOIN slice x USING (id) "
                   "JOIN process p ON p.pid = s.pid WHERE s.id > 5"),
              ElementsAre(Strings{"777"}));
}

TEST(QueryDatabaseTest, MergedCaptureHasOneProcessRowEach) {
  Capture capture = TwoThreadCapture();
  capture.processes.resize(2);
  capture.processes[0].pid = 10;
  capture.processes[0].process_name = "coordinator";
  capture.processes[1].pid = 20;
  capture.processes[1].process_name = "worker";
  capture.threads[1].process = 1;
  QueryDatabase db = Load({&capture});
  EXPECT_THAT(Rows(db,
                   "SELECT t.name, p.pid, p.name FROM thread t JOIN process p "
                   "USING (upid) ORDER BY t.utid"),
              ElementsAre(Strings{"main", "10", "coordinator"},
                          Strings{"pool-0", "20", "worker"}));
  EXPECT_THAT(Rows(db, "SELECT pid FROM span WHERE id = 5"),
              ElementsAre(Strings{"20"}));
}

TEST(QueryDatabaseTest, JoinsOnIdFindTheParent) {
  const Capture capture = TwoThreadCapture();
  QueryDatabase db = Load({&capture});
  EXPECT_THAT(Rows(db,
                   "SELECT c.id, p.name FROM slice c JOIN slice p "
                   "ON p.id = c.parent_id ORDER BY c.id"),
              ElementsAre(Strings{"2", "app.run"}, Strings{"3", "app.step"},
                          Strings{"4", "app.run"}));
  EXPECT_THAT(Rows(db, "SELECT name FROM slice WHERE id IN (3, 5, 99)"),
              ElementsAre(Strings{"lu.factor"}, Strings{"pool.task"}));
}

// Ids far apart (a foreign trace's, or OTLP-derived ones) are looked up
// through the sorted index instead of the dense one.
TEST(QueryDatabaseTest, JoinsWorkWithSparseIds) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t root = b.Site("root");
  const uint32_t child = b.Site("child");
  constexpr uint64_t kFar = uint64_t{1} << 60;
  b.Add(kFar, 0, root, main, 0, 100);
  b.Add(7, kFar, child, main, 10, 20);
  b.Add(kFar + 5, kFar, child, main, 30, 40);
  const Capture capture = b.Build();
  QueryDatabase db = Load({&capture});
  EXPECT_THAT(Rows(db,
                   "SELECT c.id, p.name FROM slice c JOIN slice p "
                   "ON p.id = c.parent_id ORDER BY c.ts"),
              ElementsAre(Strings{"7", "root"},
                          Strings{std::to_string(kFar + 5), "root"}));
  EXPECT_THAT(Rows(db, "SELECT name FROM slice WHERE id = 8"), ElementsAre());
}

TEST(QueryDatabaseTest, RefusesChangesAttachPragmaWritesAndExtensions) {
  const Capture capture = TwoThreadCapture();
  QueryDatabase db = Load({&capture});
  for (const char* sql :
       {"ATTACH DATABASE 'x.db' AS x", "PRAGMA journal_mode = WAL",
        "SELECT load_extension('libm')", "DELETE FROM args",
        "UPDATE thread SET name = 'x'", "INSERT INTO process VALUES (9,9,'x')",
        "DROP TABLE flow", "DELETE FROM __spanprof_slice",
        "DELETE FROM slice"}) {
    absl::StatusOr<OutputTable> result = db.Run(sql);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << sql;
  }
  EXPECT_THAT(Rows(db, "SELECT COUNT(*) FROM args"), ElementsAre(Strings{"9"}));
  EXPECT_THAT(Rows(db, "SELECT COUNT(*) FROM process"),
              ElementsAre(Strings{"1"}));
  // Reading pragmas and a query's own temporary tables are allowed.
  EXPECT_FALSE(Rows(db, "PRAGMA table_info(slice)").empty());
  EXPECT_THAT(Rows(db,
                   "CREATE TEMP TABLE steps AS SELECT * FROM slice "
                   "WHERE name = 'app.step'; DELETE FROM steps WHERE id = 2; "
                   "SELECT id FROM steps"),
              ElementsAre(Strings{"4"}));
}

TEST(QueryDatabaseTest, ErrorsNameLineAndColumn) {
  const Capture capture = TwoThreadCapture();
  QueryDatabase db = Load({&capture});
  absl::StatusOr<OutputTable> result =
      db.Run("SELECT name\nFROM slice WHERE nme = 1");
  ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("line 2, column 18: no such column: nme\n"
                        "  FROM slice WHERE nme = 1\n"
                        "                   ^"));
  // In the second statement of several.
  result = db.Run("SELECT 1; SELECT * FROM nowhere");
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("line 1, column 11: no such table: nowhere\n"
                        "  SELECT 1; SELECT * FROM nowhere\n"
                        "            ^"));
  result = db.Run("ATTACH 'x' AS y");
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("ATTACH and DETACH are refused"));
}

TEST(QueryDatabaseTest, TheLastStatementWithColumnsIsTheResult) {
  const Capture capture = TwoThreadCapture();
  QueryDatabase db = Load({&capture});
  absl::StatusOr<OutputTable> result = db.Run(
      "CREATE TEMP VIEW roots AS SELECT * FROM slice WHERE depth = 0;\n"
      "SELECT name FROM roots ORDER BY id;\n-- a comment\n");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->columns, ElementsAre("name"));
  ASSERT_EQ(result->rows.size(), 2u);
  EXPECT_EQ(result->rows[0][0], TableCell::Text("app.run"));
  EXPECT_EQ(result->rows[1][0], TableCell::Text("pool.task"));
}

}  // namespace
}  // namespace spanprof::analysis
