// summary_schema_reader.h — the first step of reading a summary: what the
// document says it is (private to the analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_SCHEMA_READER_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_SCHEMA_READER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "json/strict_json.h"

namespace spanprof::analysis::internal {

// `ReadSchemaVersion()` looks at the root's `schema` and `schema_version`
// before anything else, so that a trace or a future version is named as such
// rather than as an "unknown field", and returns the version (one the reader
// reads; the current one when the document does not say). The caller rewinds
// the document before reading its fields.
absl::StatusOr<int64_t> ReadSchemaVersion(const StrictJson& json,
                                          simdjson::ondemand::object& root);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_SUMMARY_SCHEMA_READER_H_
