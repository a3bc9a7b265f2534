// spanprof/analysis/table_output.h — one writer for every table a command
// prints, in the formats people and pipelines read.
//
// A command builds an `OutputTable` (named columns, rows of typed cells) and
// `RenderTable()` writes it as an aligned console table or as CSV, TSV,
// Markdown, JSON or JSON Lines. Machine formats carry the numbers exactly as
// the cells hold them (integer nanoseconds stay integers, no units); the
// console table aligns numbers to the right. Pure; no I/O.
//
// clang-format off
// Example:
//
//   spanprof::analysis::OutputTable table;
//   table.columns = {"name", "calls", "total_ns"};
//   table.rows.push_back({spanprof::analysis::TableCell::Text("file.parse"),
//                         spanprof::analysis::TableCell::Int(40),
//                         spanprof::analysis::TableCell::Int(1234567)});
//   absl::StatusOr<spanprof::analysis::TableFormat> format =
//       spanprof::analysis::ParseTableFormat("csv");
//   std::cout << spanprof::analysis::RenderTable(table, *format);
// clang-format on
#ifndef SPANPROF_ANALYSIS_TABLE_OUTPUT_H_
#define SPANPROF_ANALYSIS_TABLE_OUTPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace spanprof::analysis {

// `TableFormat` is how `RenderTable()` writes a table:
//   kTable     aligned columns for a terminal, NULL for a missing value;
//   kCsv       RFC 4180 (a header line; fields with `,`, `"`, CR or LF are
//              quoted, quotes doubled), an empty field for NULL;
//   kTsv       tab-separated (a header line; tab, newline, CR and backslash in
//              text escaped as \t \n \r \\), an empty field for NULL;
//   kMarkdown  a GitHub-flavoured Markdown table (`|` escaped, line breaks
//              as spaces), numbers right-aligned, an empty cell for NULL;
//   kJson      one array of objects, one object per row, keys the columns;
//   kJsonl     one such object per line (JSON Lines).
enum class TableFormat { kTable, kCsv, kTsv, kMarkdown, kJson, kJsonl };

// The names `--format` takes, in the order of `TableFormat`.
inline constexpr std::string_view kTableFormatNames =
    "table|csv|tsv|md|json|jsonl";

// `ParseTableFormat()` reads a `--format` value (one of kTableFormatNames);
// anything else is an InvalidArgument error that lists them.
absl::StatusOr<TableFormat> ParseTableFormat(std::string_view name);

// `TableCell` is one value: NULL, a 64-bit integer, a real number or text.
// Reals are written as the shortest text that reads back exactly (JSON
// `null` for NaN and infinities).
struct TableCell {
  enum class Kind { kNull, kInt, kReal, kText };
  Kind kind = Kind::kNull;
  int64_t int_value = 0;
  double real_value = 0.0;
  std::string text;

  static TableCell Null() { return {}; }
  static TableCell Int(int64_t value) {
    return {.kind = Kind::kInt, .int_value = value, .text = {}};
  }
  static TableCell Real(double value) {
    return {.kind = Kind::kReal, .real_value = value, .text = {}};
  }
  static TableCell Text(std::string value) {
    return {.kind = Kind::kText, .text = std::move(value)};
  }

  friend bool operator==(const TableCell&, const TableCell&) = default;
};

// `OutputTable` is a table to print: every row has one cell per column.
struct OutputTable {
  std::vector<std::string> columns;
  std::vector<std::vector<TableCell>> rows;
};

// `CellText()` is a cell as the console table, CSV and TSV show it before
// quoting or escaping: the integer, the real, the text, or "" for NULL.
std::string CellText(const TableCell& cell);

// `RenderTable()` writes `table` in `format`. A row with fewer cells than
// columns is padded with NULLs; extra cells are ignored. Every format but
// kJson ends each line with '\n'; kJson is one line ending with '\n'.
std::string RenderTable(const OutputTable& table, TableFormat format);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_TABLE_OUTPUT_H_
