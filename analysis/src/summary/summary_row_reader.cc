// The summary's rows: one case per field of summary_format.h's `kRowFields`,
// and the key with the fields of `kRowKeyFields`.
#include "summary/summary_row_reader.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"
#include "status_macros.h"
#include "summary/row_counters_reader.h"
#include "summary/summary_format.h"
#include "summary/versioned_object.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::value;

// Key fields the version does not have stay "" (so do those a version-4 key
// leaves out because they are not set).
absl::Status ReadKey(const StrictJson& json, value& v, const JsonPath& p,
                     int64_t version, RowKey& key) {
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object o, json.Object(v, p));
  std::string* const targets[] = {&key.name,     &key.phase,   &key.module,
                                  &key.activity, &key.backend, &key.dtype,
                                  &key.device};
  static_assert(std::size(targets) == kRowKeyFields.size());
  return ReadVersionedObject<kRowKeyFields>(
      json, o, p, version,
      [&](size_t field, value& fv, const JsonPath& fp) -> absl::Status {
        SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(fv, fp));
        *targets[field] = std::string(text);
        return absl::OkStatus();
      });
}

// One case per field of `kRowFields`: a row field added to the table is read
// here.
absl::Status ReadRowField(const StrictJson& json, size_t field, value& v,
                          const JsonPath& p, int64_t version, Row& row) {
  switch (static_cast<RowField>(field)) {
    case kRowKey:
      return ReadKey(json, v, p, version, row.key);
    case kRowLabel: {
      SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(v, p));
      row.label = std::string(text);
      return absl::OkStatus();
    }
    case kRowCalls:
      return Assign(json.Unsigned(v, p), row.calls);
    case kRowTotalNs:
      return Assign(json.NonNegative(v, p), row.total_ns);
    case kRowSelfNs:
      return Assign(json.NonNegative(v, p), row.self_ns);
    case kRowMinNs:
      return Assign(json.NonNegative(v, p), row.min_ns);
    case kRowMeanNs:
      return Assign(json.NonNegative(v, p), row.mean_ns);
    case kRowMedianNs:
      return Assign(json.NonNegative(v, p), row.median_ns);
    case kRowP95Ns:
      return Assign(json.NonNegative(v, p), row.p95_ns);
    case kRowP99Ns:
      return Assign(json.NonNegative(v, p), row.p99_ns);
    case kRowMaxNs:
      return Assign(json.NonNegative(v, p), row.max_ns);
    case kRowTailRatio:
      return Assign(json.NullableNonNegativeDouble(v, p), row.tail_ratio);
    case kRowLogSigma:
      return Assign(json.NullableNonNegativeDouble(v, p), row.log_sigma);
    case kRowHeavyTail:
      return Assign(json.Bool(v, p), row.heavy_tail);
    case kRowTotalHeartbeats:
      return Assign(json.Unsigned(v, p), row.total_heartbeats);
    case kRowSelfHeartbeats:
      return Assign(json.Unsigned(v, p), row.self_heartbeats);
    case kRowAllocCount:
      return Assign(json.NullableNonNegative(v, p), row.alloc_count);
    case kRowAllocBytes:
      return Assign(json.NullableNonNegative(v, p), row.alloc_bytes);
    case kRowSharePermille:
      return Assign(json.Int(v, p, 0, 1000), row.share_permille);
    case kRowInstrumentationPermille:
      return Assign(json.Int(v, p, 0, 1000), row.instrumentation_permille);
    case kRowThreads:
      return Assign(json.Unsigned(v, p), row.threads);
    case kRowProcesses:
      return Assign(json.Unsigned(v, p), row.processes);
    case kRowExceptions:
      return Assign(json.Unsigned(v, p), row.exceptions);
    case kRowHookFailures:
      return Assign(json.Unsigned(v, p), row.hook_failures);
    case kRowUnfinished:
      return Assign(json.Unsigned(v, p), row.unfinished);
    case kRowDropped:
      return Assign(json.Unsigned(v, p), row.dropped);
    case kRowCounters:
      return ReadRowCounters(json, v, p, version, row.counters);
    case kRowFieldCount:
      break;
  }
  return absl::InternalError("unhandled row field");
}

}  // namespace

absl::Status ReadRows(const StrictJson& json, simdjson::ondemand::value& value,
                      const JsonPath& path, int64_t version,
                      std::vector<Row>& rows) {
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::array a,
                            json.Array(value, path));
  return json.ForEachElement(
      a, path,
      [&](size_t, simdjson::ondemand::value& ev,
          const JsonPath& ep) -> absl::Status {
        SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object o,
                                  json.Object(ev, ep));
        Row& row = rows.emplace_back();
        return ReadVersionedObject<kRowFields>(
            json, o, ep, version,
            [&](size_t field, simdjson::ondemand::value& fv,
                const JsonPath& fp) {
              return ReadRowField(json, field, fv, fp, version, row);
            });
      });
}

}  // namespace spanprof::analysis::internal
