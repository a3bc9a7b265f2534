// slice_table.h — the slices of the query database, held in memory by
// spanprof and shown to SQLite as the read-only virtual table
// `__spanprof_slice` (the `slice` and `span` views read it).
//
// Why not an ordinary table: SQLite inserts about a million rows a second
// one statement at a time, and `spanprof query` must load ten million spans
// in a few seconds. Rows here are plain structs filled at memory speed; the
// table answers full scans and lookups by `id` (what joins on `parent_id`
// or `slice_out` need) without any index being built.
#ifndef SPANPROF_ANALYSIS_SRC_QUERY_SLICE_TABLE_H_
#define SPANPROF_ANALYSIS_SRC_QUERY_SLICE_TABLE_H_

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace spanprof::analysis::internal::query {

// `SliceRow` is one slice; 0 in an id field means NULL (span ids are > 0).
struct SliceRow {
  int64_t id = 0;
  int64_t ts = 0;
  int64_t dur = 0;
  int64_t self_dur = 0;
  int64_t parent_id = 0;  // same-thread parent
  int64_t cross_thread_parent_id = 0;
  int64_t arg_set_id = 0;
  uint32_t track_id = 0;
  uint32_t depth = 0;       // on its own thread, as trace_processor's depth
  uint32_t span_depth = 0;  // Span::depth: ancestors on every thread
  uint32_t site = 0;        // index into SliceStore's sites
  uint32_t heartbeats = 0;
  bool unfinished = false;
};

// `SliceStore` holds the rows and their sites' names. Filled before the
// table is created, read-only after `Seal()`.
class SliceStore {
 public:
  // Adds a site; returns its index.
  uint32_t AddSite(std::string name, std::string category);
  void Add(const SliceRow& row) { rows_.push_back(row); }
  void Reserve(size_t rows) { rows_.reserve(rows_.size() + rows); }
  // Builds the lookup by id.
  void Seal();

  size_t size() const { return rows_.size(); }
  const SliceRow& row(size_t i) const { return rows_[i]; }
  const std::string& name(const SliceRow& row) const {
    return sites_[row.site].first;
  }
  const std::string& category(const SliceRow& row) const {
    return sites_[row.site].second;
  }
  // The row of the first slice with `id`, if any.
  std::optional<size_t> Find(int64_t id) const;

 private:
  std::vector<SliceRow> rows_;
  std::vector<std::pair<std::string, std::string>> sites_;
  // Dense lookup (`dense_[id - min_id_]`, UINT32_MAX for none) when the ids
  // cover a range at most a few times the row count, as the runtime's
  // consecutive ids do; sorted (id, row) pairs otherwise.
  int64_t min_id_ = 0;
  std::vector<uint32_t> dense_;
  std::vector<std::pair<int64_t, uint32_t>> sorted_;
  bool is_dense_ = true;
};

// `kSliceColumns` is the virtual table's schema, in column order.
inline constexpr const char* kSliceTableSchema =
    "CREATE TABLE x(id INTEGER, ts INTEGER, dur INTEGER, track_id INTEGER, "
    "category TEXT, name TEXT, depth INTEGER, parent_id INTEGER, "
    "arg_set_id INTEGER, site INTEGER, self_dur INTEGER, heartbeats INTEGER, "
    "unfinished INTEGER, cross_thread_parent_id INTEGER, span_depth INTEGER)";

// `RegisterSliceTable()` registers module "spanprof_slice" over `store`
// (which must outlive `db`) and creates `__spanprof_slice` with it.
absl::Status RegisterSliceTable(sqlite3* db, const SliceStore* store);

}  // namespace spanprof::analysis::internal::query

#endif  // SPANPROF_ANALYSIS_SRC_QUERY_SLICE_TABLE_H_
