// The one writer of command tables (spanprof/analysis/table_output.h).
#include "spanprof/analysis/table_output.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "json/cat.h"
#include "json/json_writer.h"

namespace spanprof::analysis {
namespace {

constexpr std::string_view kFormatNames[] = {"table", "csv",  "tsv",
                                             "md",    "json", "jsonl"};

const TableCell& CellAt(const std::vector<TableCell>& row, size_t column) {
  static const TableCell kNull;
  return column < row.size() ? row[column] : kNull;
}

// Terminal columns: one per code point (UTF-8 continuation bytes add none).
size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width;
  }
  return width;
}

// A column is right-aligned when every value it holds is a number.
std::vector<bool> NumericColumns(const OutputTable& table) {
  std::vector<bool> numeric(table.columns.size(), true);
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const TableCell& cell = CellAt(row, c);
      if (cell.kind == TableCell::Kind::kText) numeric[c] = false;
    }
  }
  return numeric;
}

void AppendPadded(std::string* out, std::string_view text, size_t width,
                  bool right) {
  const size_t pad = width - std::min(width, DisplayWidth(text));
  if (right) out->append(pad, ' ');
  out->append(text);
  if (!right) out->append(pad, ' ');
}

std::string RenderConsole(const OutputTable& table) {
  const size_t n = table.columns.size();
  const std::vector<bool> numeric = NumericColumns(table);
  std::vector<std::vector<std::string>> texts;
  texts.reserve(table.rows.size());
  std::vector<size_t> widths(n);
  for (size_t c = 0; c < n; ++c) widths[c] = DisplayWidth(table.columns[c]);
  for (const auto& row : table.rows) {
    std::vector<std::string>& line = texts.emplace_back(n);
    for (size_t c = 0; c < n; ++c) {
      const TableCell& cell = CellAt(row, c);
      line[c] = cell.kind == TableCell::Kind::kNull ? "NULL" : CellText(cell);
      widths[c] = std::max(widths[c], DisplayWidth(line[c]));
    }
  }
  std::string out;
  auto append_line = [&](const std::vector<std::string>& line) {
    std::string text;
    for (size_t c = 0; c < n; ++c) {
      if (c > 0) text.append("  ");
      AppendPadded(&text, line[c], widths[c], numeric[c]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out.append(text);
    out.push_back('\n');
  };
  append_line(table.columns);
  std::vector<std::string> rule(n);
  for (size_t c = 0; c < n; ++c) rule[c] = std::string(widths[c], '-');
  append_line(rule);
  for (const auto& line : texts) append_line(line);
  return out;
}

void AppendCsvField(std::string* out, std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(text);
    return;
  }
  out->push_back('"');
  for (const char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendTsvField(std::string* out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '\t':
        out->append("\\t");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\\':
        out->append("\\\\");
        break;
      default:
        out->push_back(c);
    }
  }
}

void AppendMarkdownField(std::string* out, std::string_view text) {
  for (const char c : text) {
    if (c == '|') {
      out->append("\\|");
    } else if (c == '\n' || c == '\r') {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
}

std::string RenderDelimited(const OutputTable& table, TableFormat format) {
  const bool csv = format == TableFormat::kCsv;
  const char separator = csv ? ',' : '\t';
  std::string out;
  auto append_field = [&](std::string_view text) {
    if (csv) {
      AppendCsvField(&out, text);
    } else {
      AppendTsvField(&out, text);
    }
  };
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (c > 0) out.push_back(separator);
    append_field(table.columns[c]);
  }
  out.push_back('\n');
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) out.push_back(separator);
      append_field(CellText(CellAt(row, c)));
    }
    out.push_back('\n');
  }
  return out;
}

std::string RenderMarkdown(const OutputTable& table) {
  const std::vector<bool> numeric = NumericColumns(table);
  std::string out = "|";
  for (const std::string& column : table.columns) {
    out.push_back(' ');
    AppendMarkdownField(&out, column);
    out.append(" |");
  }
  out.append("\n|");
  for (size_t c = 0; c < table.columns.size(); ++c) {
    out.append(numeric[c] ? " ---: |" : " --- |");
  }
  out.push_back('\n');
  for (const auto& row : table.rows) {
    out.push_back('|');
    for (size_t c = 0; c < table.columns.size(); ++c) {
      out.push_back(' ');
      AppendMarkdownField(&out, CellText(CellAt(row, c)));
      out.append(" |");
    }
    out.push_back('\n');
  }
  return out;
}

void AppendJsonRow(std::string* out, const OutputTable& table,
                   const std::vector<TableCell>& row) {
  out->push_back('{');
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (c > 0) out->push_back(',');
    AppendJsonString(out, table.columns[c]);
    out->push_back(':');
    const TableCell& cell = CellAt(row, c);
    switch (cell.kind) {
      case TableCell::Kind::kNull:
        out->append("null");
        break;
      case TableCell::Kind::kInt:
        AppendInt(out, cell.int_value);
        break;
      case TableCell::Kind::kReal:
        AppendDouble(out, cell.real_value);
        break;
      case TableCell::Kind::kText:
        AppendJsonString(out, cell.text);
        break;
    }
  }
  out->push_back('}');
}

std::string RenderJson(const OutputTable& table, bool lines) {
  std::string out;
  if (!lines) out.push_back('[');
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (!lines && r > 0) out.push_back(',');
    AppendJsonRow(&out, table, table.rows[r]);
    if (lines) out.push_back('\n');
  }
  if (!lines) out.append("]\n");
  return out;
}

}  // namespace

absl::StatusOr<TableFormat> ParseTableFormat(std::string_view name) {
  for (size_t i = 0; i < std::size(kFormatNames); ++i) {
    if (name == kFormatNames[i]) return static_cast<TableFormat>(i);
  }
  return absl::InvalidArgumentError(
      internal::Cat("--format: unknown format \"", name,
                    "\" (known: ", kTableFormatNames, ")"));
}

std::string CellText(const TableCell& cell) {
  switch (cell.kind) {
    case TableCell::Kind::kNull:
      return "";
    case TableCell::Kind::kInt:
      return internal::Cat(cell.int_value);
    case TableCell::Kind::kReal: {
      if (std::isnan(cell.real_value)) return "nan";
      if (std::isinf(cell.real_value)) {
        return cell.real_value > 0 ? "inf" : "-inf";
      }
      char buffer[40];
      const std::to_chars_result result =
          std::to_chars(buffer, buffer + sizeof(buffer), cell.real_value);
      return std::string(buffer, result.ptr);
    }
    case TableCell::Kind::kText:
      return cell.text;
  }
  return "";
}

std::string RenderTable(const OutputTable& table, TableFormat format) {
  if (table.columns.empty()) {
    return format == TableFormat::kJson ? "[]\n" : "";
  }
  switch (format) {
    case TableFormat::kTable:
      return RenderConsole(table);
    case TableFormat::kCsv:
    case TableFormat::kTsv:
      return RenderDelimited(table, format);
    case TableFormat::kMarkdown:
      return RenderMarkdown(table);
    case TableFormat::kJson:
      return RenderJson(table, false);
    case TableFormat::kJsonl:
      return RenderJson(table, true);
  }
  return "";
}

}  // namespace spanprof::analysis
