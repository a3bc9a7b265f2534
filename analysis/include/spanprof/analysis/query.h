// spanprof/analysis/query.h — SQL over the spans of one or more captures.
//
// `QueryDatabase::Load()` puts captures into an in-memory SQLite database
// whose tables carry Perfetto trace_processor's names and meanings, so a
// query written for trace_processor runs unchanged on what spanprof records:
//
//   slice(id, ts, dur, track_id, category, name, depth, parent_id,
//         arg_set_id, thread_dur)
//   thread_track(id, utid)   thread(utid, tid, name, upid)
//   process(upid, pid, name)
//   args(arg_set_id, flat_key, key, int_value, string_value, real_value,
//        value_type)
//   flow(id, slice_out, slice_in)
//
// plus spanprof's own view `span` (one row per span with its tags, thread,
// process, self time, heartbeats and cross-thread parent). docs/formats.md
// ("Query tables") gives every column. The database is read-only to queries:
// they may read every table and create temporary tables and views of their
// own, but not change the capture's tables, attach files, change settings
// with PRAGMA or load extensions.
//
// clang-format off
// Example:
//
//   spanprof::Capture capture = ...;
//   std::vector<spanprof::analysis::QueryInput> inputs = {
//       {"build/spanprof-trace.json", &capture}};
//   absl::StatusOr<spanprof::analysis::QueryDatabase> db =
//       spanprof::analysis::QueryDatabase::Load(inputs);
//   absl::StatusOr<spanprof::analysis::OutputTable> rows = db->Run(
//       "SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name");
//   std::cout << spanprof::analysis::RenderTable(
//       *rows, spanprof::analysis::TableFormat::kTable);
// clang-format on
#ifndef SPANPROF_ANALYSIS_QUERY_H_
#define SPANPROF_ANALYSIS_QUERY_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "spanprof/analysis/table_output.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

// `QueryInput` is one capture to load and the name messages call it by.
// `capture` must outlive `QueryDatabase::Load()` (not the database).
struct QueryInput {
  std::string name;
  const Capture* capture = nullptr;
};

// `QueryDatabase` is the loaded database. Move-only; not thread-safe (one
// query at a time). Not for the hot path.
class QueryDatabase {
 public:
  // `Load()` creates the database and loads every input in one transaction.
  // Slice ids are the spans' ids, offset by the largest id of the inputs
  // before (so several captures never share an id); utid, upid and track
  // ids count from 0 in input order. Errors only when SQLite fails (out of
  // memory).
  static absl::StatusOr<QueryDatabase> Load(std::span<const QueryInput> inputs);

  // `Run()` runs `sql`, one statement or several separated by ';', and
  // returns the rows of the last statement that returns columns (an empty
  // table when none does). An SQL error or a refused statement is an
  // InvalidArgument error with SQLite's message and where it happened:
  // "line L, column C: MESSAGE", followed by the line and a caret when
  // SQLite names a position.
  absl::StatusOr<OutputTable> Run(std::string_view sql);

  // The number of slices loaded.
  int64_t slice_count() const { return slice_count_; }

  QueryDatabase(QueryDatabase&&) noexcept;
  QueryDatabase& operator=(QueryDatabase&&) noexcept;
  ~QueryDatabase();

 private:
  struct Connection;
  explicit QueryDatabase(std::unique_ptr<Connection> connection);

  std::unique_ptr<Connection> connection_;
  int64_t slice_count_ = 0;
};

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_QUERY_H_
