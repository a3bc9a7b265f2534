// row_key_json.h — the row key object `{name, phase, module, activity}` (and
// `backend`, `dtype`, `device` when set) as the summary writes it (private to
// the analysis library). The comparison and scaling documents write their
// keys with it too, so the key's layout has one description.
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_ROW_KEY_JSON_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_ROW_KEY_JSON_H_

#include "json/json_writer.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis::internal {

// `WriteRowKey()` writes `key` as a JSON object, fields in the summary's
// order (summary_format.h's kRowKeyFields).
void WriteRowKey(JsonWriter& w, const RowKey& key);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_ROW_KEY_JSON_H_
