// spanprof/analysis/table.h — the console table.
//
// clang-format off
// Example:
//
//   spanprof::analysis::Summary summary = ...;
//   std::fputs(spanprof::analysis::FormatTable(
//                  summary, {.trace_path = "t.json", .summary_path = "s.json"})
//                  .c_str(),
//              stderr);
// clang-format on
#ifndef SPANPROF_ANALYSIS_TABLE_H_
#define SPANPROF_ANALYSIS_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

struct TableOptions {
  std::string trace_path = {};    // "Trace: ..." line when not empty
  std::string summary_path = {};  // "Summary: ..." line when not empty
  // The capture the summary was made from, when there is one: the
  // heavy-tail note then names the numeric arguments the row's spans already
  // carry, and asks for a size argument only when they carry none. Must
  // outlive the call.
  const Capture* capture = nullptr;
  // Labels are cut to 40 characters (ending in "…") unless `wide`: then the
  // Name column is as wide as the longest label.
  bool wide = false;
  // Rows of the summary that the caller left out of `summary.rows` (a
  // filter, a top N): a line after the rows says how many and, from
  // `rows_left_out_by`, why ("--top 10").
  size_t rows_left_out = 0;
  std::string rows_left_out_by = {};
  // The lines under the dropped-arguments warning name every drop of
  // `Summary::drops` (site, name, kind, reason), not only the two largest.
  bool all_drops = false;
};

// `FormatCount()` renders an integer with its digits grouped by thousands:
// "4,000,000".
std::string FormatCount(uint64_t count);

// `FormatDuration()` renders ns for humans: "89.89 us", "12.17 ms", "1.50 s".
std::string FormatDuration(int64_t ns);

// `FormatTable()` renders the header lines, one line per row, and the paths.
std::string FormatTable(const Summary& summary, const TableOptions& options);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_TABLE_H_
