// query_loader.h — fills the query tables (query_schema.h) from captures.
#ifndef SPANPROF_ANALYSIS_SRC_QUERY_QUERY_LOADER_H_
#define SPANPROF_ANALYSIS_SRC_QUERY_QUERY_LOADER_H_

#include <sqlite3.h>

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "query/slice_table.h"
#include "spanprof/analysis/query.h"

namespace spanprof::analysis::internal::query {

// `SqliteError()` is an Internal error naming what failed and SQLite's
// message for `db`.
absl::Status SqliteError(sqlite3* db, std::string_view what);

// `ExecSql()` runs statements that return no rows (schema, transactions).
absl::Status ExecSql(sqlite3* db, std::string_view sql);

// `LoadCaptures()` creates the schema in `db` and loads `inputs`: slices
// into `store` (which must outlive `db`), everything else in one
// transaction; returns the number of slices loaded.
absl::StatusOr<int64_t> LoadCaptures(sqlite3* db,
                                     std::span<const QueryInput> inputs,
                                     SliceStore* store);

}  // namespace spanprof::analysis::internal::query

#endif  // SPANPROF_ANALYSIS_SRC_QUERY_QUERY_LOADER_H_
