// RenderTable: every format keeps the cells exactly (quoting, escaping,
// integers as integers), and the console table aligns them.
#include "spanprof/analysis/table_output.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace spanprof::analysis {
namespace {

using ::testing::HasSubstr;

OutputTable Sample() {
  OutputTable table;
  table.columns = {"name", "calls", "ratio", "note"};
  table.rows.push_back({TableCell::Text("file.read"), TableCell::Int(120),
                        TableCell::Real(0.25), TableCell::Null()});
  table.rows.push_back({TableCell::Text("a,\"b\"|c\td\n"),
                        TableCell::Int(-9007199254740993),
                        TableCell::Real(1e300), TableCell::Text("\\")});
  return table;
}

TEST(TableOutputTest, ParsesEveryFormatName) {
  EXPECT_EQ(*ParseTableFormat("table"), TableFormat::kTable);
  EXPECT_EQ(*ParseTableFormat("csv"), TableFormat::kCsv);
  EXPECT_EQ(*ParseTableFormat("tsv"), TableFormat::kTsv);
  EXPECT_EQ(*ParseTableFormat("md"), TableFormat::kMarkdown);
  EXPECT_EQ(*ParseTableFormat("json"), TableFormat::kJson);
  EXPECT_EQ(*ParseTableFormat("jsonl"), TableFormat::kJsonl);
  absl::StatusOr<TableFormat> bad = ParseTableFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("--format: unknown format \"xml\" (known: "
                        "table|csv|tsv|md|json|jsonl)"));
}

TEST(TableOutputTest, CsvQuotesWhatNeedsIt) {
  EXPECT_EQ(RenderTable(Sample(), TableFormat::kCsv),
            "name,calls,ratio,note\n"
            "file.read,120,0.25,\n"
            "\"a,\"\"b\"\"|c\td\n\",-9007199254740993,1e+300,\\\n");
}

TEST(TableOutputTest, TsvEscapesTabsNewlinesAndBackslashes) {
  EXPECT_EQ(RenderTable(Sample(), TableFormat::kTsv),
            "name\tcalls\tratio\tnote\n"
            "file.read\t120\t0.25\t\n"
            "a,\"b\"|c\\td\\n\t-9007199254740993\t1e+300\t\\\\\n");
}

TEST(TableOutputTest, JsonKeepsTypes) {
  EXPECT_EQ(
      RenderTable(Sample(), TableFormat::kJsonl),
      "{\"name\":\"file.read\",\"calls\":120,\"ratio\":0.25,"
      "\"note\":null}\n"
      "{\"name\":\"a,\\\"b\\\"|c\\u0009d\\u000a\",\"calls\":-9007199254740993,"
      "\"ratio\":1e+300,\"note\":\"\\\\\"}\n");
  const std::string json = RenderTable(Sample(), TableFormat::kJson);
  EXPECT_EQ(json.front(), '[');
  EXPECT_EQ(json.substr(json.size() - 2), "]\n");
  EXPECT_THAT(json, HasSubstr("\"note\":null},{\"name\""));
}

TEST(TableOutputTest, MarkdownEscapesPipesAndAlignsNumbersRight) {
  EXPECT_EQ(RenderTable(Sample(), TableFormat::kMarkdown),
            "| name | calls | ratio | note |\n"
            "| --- | ---: | ---: | --- |\n"
            "| file.read | 120 | 0.25 |  |\n"
            "| a,\"b\"\\|c\td  | -9007199254740993 | 1e+300 | \\ |\n");
}

TEST(TableOutputTest, ConsoleTableAlignsColumns) {
  OutputTable table;
  table.columns = {"name", "n"};
  table.rows.push_back({TableCell::Text("ab"), TableCell::Int(5)});
  table.rows.push_back({TableCell::Text("größe"), TableCell::Null()});
  table.rows.push_back({TableCell::Text("x")});  // padded with NULL
  EXPECT_EQ(RenderTable(table, TableFormat::kTable),
            "name      n\n"
            "-----  ----\n"
            "ab        5\n"
            "größe  NULL\n"
            "x      NULL\n");
}

TEST(TableOutputTest, EmptyTables) {
  OutputTable table;
  table.columns = {"a"};
  EXPECT_EQ(RenderTable(table, TableFormat::kCsv), "a\n");
  EXPECT_EQ(RenderTable(table, TableFormat::kJson), "[]\n");
  EXPECT_EQ(RenderTable(table, TableFormat::kJsonl), "");
}

}  // namespace
}  // namespace spanprof::analysis
