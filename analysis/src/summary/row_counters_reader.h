// row_counters_reader.h — the step that reads a summary row's `counters`
// (private to the analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_ROW_COUNTERS_READER_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_ROW_COUNTERS_READER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis::internal {

// `ReadRowCounters()` reads `{"NAME": {"total": .., "self": ..}, ...}` at
// `path` into `counters`: non-empty names in strictly increasing (byte)
// order, so each at most once, with the fields of summary_format.h's
// `kRowCounterFields` that version `version` has.
absl::Status ReadRowCounters(const StrictJson& json,
                             simdjson::ondemand::value& value,
                             const JsonPath& path, int64_t version,
                             std::vector<RowCounter>& counters);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_ROW_COUNTERS_READER_H_
