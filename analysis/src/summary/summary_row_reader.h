// summary_row_reader.h — the step that reads the summary's `rows` (private to
// the analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_ROW_READER_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_ROW_READER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis::internal {

// `ReadRows()` reads the `rows` array at `path`: each row with the fields
// version `version` has (its `key` with that version's key fields, its
// `counters` through row_counters_reader.h), appended to `rows`. Rules
// between rows and with the totals are summary_invariants.h's.
absl::Status ReadRows(const StrictJson& json, simdjson::ondemand::value& value,
                      const JsonPath& path, int64_t version,
                      std::vector<Row>& rows);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_ROW_READER_H_
