// trace_metadata_reader.h — the first step of reading a spanprof JSON trace
// (private to the analysis library): `metadata` into a `TraceMetadata`, the
// value the later steps (the fast line reader, the strict event reader and
// the span resolver) check every event against.
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_TRACE_METADATA_READER_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_TRACE_METADATA_READER_H_

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// `TraceMetadata` is what a trace's `metadata` says: the capture without
// its spans (threads, sites, processes, caps, drops, resources), and the
// lookups the span resolver checks pids and tids with.
struct TraceMetadata {
  Capture capture;  // no spans, span_allocs or args yet
  // metadata.threads' (pid, tid), sorted; the processes' pids (the
  // capture's own pid when it has no processes), sorted.
  std::vector<std::pair<int64_t, uint64_t>> sorted_tids;
  std::vector<int64_t> sorted_pids;
};

// `ReadTraceMetadata()` reads the value of `$.metadata` (`v` at `path`) into
// `out`, with the checks that need metadata alone: the schema and its
// version, each field's type and range, each thread naming its process
// only in a merged trace, each drop naming its site consistently. Errors
// name `source` and the JSON path.
absl::Status ReadTraceMetadata(std::string_view source,
                               simdjson::ondemand::value& v,
                               const JsonPath& path, TraceMetadata& out);

// `CheckDisplayTimeUnit()` checks `$.displayTimeUnit` (`v` at `path`): "ns".
absl::Status CheckDisplayTimeUnit(const StrictJson& json,
                                  simdjson::ondemand::value& v,
                                  const JsonPath& path);

// `ParseTraceMetadata()` reads a metadata object given as text, as if it
// were a trace's `$.metadata` (errors name that path).
absl::StatusOr<TraceMetadata> ParseTraceMetadata(std::string_view json,
                                                 std::string_view source);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_TRACE_METADATA_READER_H_
