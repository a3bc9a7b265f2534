// spanprof/analysis/table.h — the console table.
//
// Example:
//
//   std::fputs(spanprof::analysis::FormatTable(summary, {.trace_path =
//   "t.json",
//                                                        .summary_path =
//                                                        "s.json"})
//                  .c_str(),
//              stderr);
#ifndef SPANPROF_ANALYSIS_TABLE_H_
#define SPANPROF_ANALYSIS_TABLE_H_

#include <string>

#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

struct TableOptions {
  std::string trace_path;    // "Trace: ..." line when not empty
  std::string summary_path;  // "Summary: ..." line when not empty
  // The capture the summary was made from, when there is one: the
  // heavy-tail note then names the numeric arguments the row's spans already
  // carry, and asks for a size argument only when they carry none. Must
  // outlive the call.
  const Capture* capture = nullptr;
};

// `FormatDuration()` renders ns for humans: "89.89 us", "12.17 ms", "1.50 s".
std::string FormatDuration(int64_t ns);

// `FormatTable()` renders the header lines, one line per row, and the paths.
std::string FormatTable(const Summary& summary, const TableOptions& options);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_TABLE_H_
