// `ParseCsv()` / `ParseTsv()`: read back the tables `--format csv|tsv`
// writes (spanprof/analysis/table_output.h), independently of the writer: a
// test compares what it parses with numbers it computed itself.
#ifndef SPANPROF_TESTS_TESTING_CSV_H_
#define SPANPROF_TESTS_TESTING_CSV_H_

#include <string>
#include <string_view>
#include <vector>

namespace spanprof::testing {

// RFC 4180: fields separated by ',', records by '\n' (or "\r\n"); a quoted
// field may hold ',', '"' (doubled) and line breaks. The header is row 0.
inline std::vector<std::vector<std::string>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  bool in_record = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    in_record = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
      in_record = false;
    } else {
      field.push_back(c);
    }
  }
  if (in_record) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Tab-separated, one record a line, with \t \n \r \\ unescaped.
inline std::vector<std::vector<std::string>> ParseTsv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      const char e = text[++i];
      field.push_back(e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e);
    } else if (c == '\t') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field.push_back(c);
    }
  }
  return rows;
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_CSV_H_
