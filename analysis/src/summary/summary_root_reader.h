// summary_root_reader.h — the step that reads the summary's top-level fields
// (private to the analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_ROOT_READER_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_ROOT_READER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis::internal {

// `ReadSummaryFields()` reads every field of the root object that version
// `version` has, with exact types and values (the rows through
// summary_row_reader.h, `process_resources` through process_resources.h),
// into `summary`. Fields that the version does not carry keep their
// defaults; cross-field rules are summary_invariants.h's.
absl::Status ReadSummaryFields(const StrictJson& json,
                               simdjson::ondemand::object& root,
                               int64_t version, Summary& summary);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_ROOT_READER_H_
