// query_schema.h — the tables `spanprof query` loads, one description shared
// by the loader (which fills them) and the database (which guards them).
#ifndef SPANPROF_ANALYSIS_SRC_QUERY_QUERY_SCHEMA_H_
#define SPANPROF_ANALYSIS_SRC_QUERY_QUERY_SCHEMA_H_

#include <string_view>

namespace spanprof::analysis::internal::query {

// The tables and views of the capture, created before loading, after the
// virtual table `__spanprof_slice` (slice_table.h). `slice` is a view of it,
// which also holds what the `span` view adds (SQLite flattens both views
// into the queries that read them, so reading `slice` costs what reading the
// table does). Tags live once per site.
// Indexes on the columns queries join on are made after loading
// (kIndexesSql), which is cheaper than keeping them during the inserts.
inline constexpr std::string_view kSchemaSql = R"sql(
CREATE TABLE process(upid INTEGER PRIMARY KEY, pid INTEGER, name TEXT);
CREATE TABLE thread(utid INTEGER PRIMARY KEY, tid INTEGER, name TEXT,
                    upid INTEGER);
CREATE TABLE thread_track(id INTEGER PRIMARY KEY, utid INTEGER);
CREATE TABLE __spanprof_site(site INTEGER PRIMARY KEY, phase TEXT,
                             module TEXT, activity TEXT, backend TEXT,
                             dtype TEXT, device TEXT);
CREATE TABLE args(arg_set_id INTEGER, flat_key TEXT, key TEXT,
                  int_value INTEGER, string_value TEXT, real_value REAL,
                  value_type TEXT);
CREATE TABLE flow(id INTEGER PRIMARY KEY, slice_out INTEGER,
                  slice_in INTEGER);
CREATE VIEW slice AS
  SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
         NULL AS thread_dur
  FROM __spanprof_slice;
CREATE VIEW span AS
  SELECT s.id AS id, s.name AS name, site.phase AS phase,
         site.module AS module, site.activity AS activity,
         site.backend AS backend, site.dtype AS dtype, site.device AS device,
         thread.tid AS tid, thread.name AS thread_name, process.pid AS pid,
         s.ts AS ts, s.dur AS dur, s.self_dur AS self_dur, s.span_depth AS depth,
         s.parent_id AS parent_id,
         s.cross_thread_parent_id AS cross_thread_parent_id,
         s.heartbeats AS heartbeats, s.unfinished AS unfinished
  FROM __spanprof_slice AS s
  JOIN __spanprof_site AS site ON site.site = s.site
  JOIN thread_track ON thread_track.id = s.track_id
  JOIN thread ON thread.utid = thread_track.utid
  LEFT JOIN process ON process.upid = thread.upid;
)sql";

inline constexpr std::string_view kIndexesSql = R"sql(
CREATE INDEX __spanprof_args_by_set ON args(arg_set_id);
)sql";

// The tables queries may read but not change (the authorizer's list).
inline constexpr std::string_view kCaptureTables[] = {"process",
                                                      "thread",
                                                      "thread_track",
                                                      "__spanprof_site",
                                                      "__spanprof_slice",
                                                      "args",
                                                      "flow",
                                                      "slice",
                                                      "span"};

// The prefix of the tag arguments' keys (`tags.phase`).
inline constexpr std::string_view kTagPrefix = "tags.";

}  // namespace spanprof::analysis::internal::query

#endif  // SPANPROF_ANALYSIS_SRC_QUERY_QUERY_SCHEMA_H_
