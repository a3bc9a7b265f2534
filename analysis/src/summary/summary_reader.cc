// The strict `spanprof.summary` reader: version 4 (the writer's), version 3
// (without `process_count`, the rows' `processes` and the key's `backend`,
// `dtype` and `device`, which version 4 writes only when set), version 2 (also
// without `source`) and version 1 (also without the tail shape, counters and
// `dropped_args`).
//
// Reading happens in two passes over one parsed document: first the root's
// `schema` and `schema_version` are checked (so a trace or a future version is
// named as such rather than as "unknown field"), then every field of that
// version is read with exact types (a field of the other version is unknown),
// and finally the cross-field invariants of DESIGN.md §3 are checked on the
// result.
#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/internal/end_reason.h"
#include "status_macros.h"
#include "summary/process_resources.h"
#include "summary/summary_format.h"
#include "summary/tail_shape.h"

namespace spanprof::analysis {
namespace internal {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

// The specs of the fields `which` of `names`, in that order.
template <size_t N, size_t M>
constexpr std::array<FieldSpec, M> SelectedFields(
    const std::array<std::string_view, N>& names,
    const std::array<size_t, M>& which) {
  std::array<FieldSpec, M> specs{};
  for (size_t i = 0; i < M; ++i) specs[i] = FieldSpec{names[which[i]]};
  return specs;
}

constexpr auto kRootFields = RequiredFields(kSummaryKeys);
constexpr auto kRootFieldsV4 = SelectedFields(kSummaryKeys, kSummaryV4Fields);
constexpr auto kRootFieldsV3 = SelectedFields(kSummaryKeys, kSummaryV3Fields);
constexpr auto kRootFieldsV2 = SelectedFields(kSummaryKeys, kSummaryV2Fields);
constexpr auto kRootFieldsV1 = SelectedFields(kSummaryKeys, kSummaryV1Fields);
constexpr auto kIssueFields = RequiredFields(kIssueKeys);
constexpr std::array<FieldSpec, kRowKeyKeys.size()> kKeyFields = [] {
  auto specs = RequiredFields(kRowKeyKeys);
  for (size_t f = kRowKeyAlwaysWritten; f < specs.size(); ++f) {
    specs[f].required = false;
  }
  return specs;
}();
// Versions 1 to 3 have no backend, dtype and device: there they are unknown.
constexpr auto kKeyFieldsV3 =
    SelectedFields(kRowKeyKeys, std::array<size_t, 4>{0, 1, 2, 3});
static_assert(kRowKeyAlwaysWritten == 4);
constexpr auto kRowFields = RequiredFields(kRowKeys);
constexpr auto kRowFieldsV3 = SelectedFields(kRowKeys, kRowV3Fields);
constexpr auto kRowFieldsV2 = SelectedFields(kRowKeys, kRowV2Fields);
constexpr auto kRowFieldsV1 = SelectedFields(kRowKeys, kRowV1Fields);
constexpr auto kCounterFields = RequiredFields(kRowCounterKeys);

class SummaryReader {
 public:
  explicit SummaryReader(std::string_view source) : json_(source) {}

  // A document that reads cleanly with the right schema and version would
  // have passed `CheckSchema()`, so that pass (a walk over every row) is only
  // made when the single pass fails: then the document is read again from
  // scratch, schema first, so that the error is the one that comes first.
  absl::StatusOr<Summary> Read(std::string_view text) {
    {
      ParsedDocument document(text);
      SPANPROF_ASSIGN_OR_RETURN(object root, document.Start(json_));
      Summary summary;
      version_ = kSummarySchemaVersion;
      if (ReadFields(root, summary).ok() && document.Finish(json_).ok() &&
          summary.schema == kSummarySchema &&
          summary.schema_version == kSummarySchemaVersion) {
        SPANPROF_RETURN_IF_ERROR(CheckInvariants(summary));
        return summary;
      }
    }
    ParsedDocument document(text);
    SPANPROF_ASSIGN_OR_RETURN(object root, document.Start(json_));
    SPANPROF_ASSIGN_OR_RETURN(version_, CheckSchema(root));
    SPANPROF_ASSIGN_OR_RETURN(root, document.Rewind(json_));
    Summary summary;
    SPANPROF_RETURN_IF_ERROR(ReadFields(root, summary));
    SPANPROF_RETURN_IF_ERROR(document.Finish(json_));
    if (version_ == 1) DeriveTailRatios(summary);
    if (version_ < 3) DeriveInstrumentation(summary);
    if (version_ < 4) DeriveProcesses(summary);
    SPANPROF_RETURN_IF_ERROR(CheckInvariants(summary));
    return summary;
  }

 private:
  absl::Status ReadFields(object& root, Summary& summary) {
    const auto on_field = [&](size_t field, value& v, const JsonPath& p) {
      return ReadRootField(field, v, p, summary);
    };
    if (version_ == 1) {
      return json_.ReadObject(root, JsonPath::Root(), kRootFieldsV1,
                              [&](size_t i, value& v, const JsonPath& p) {
                                return on_field(kSummaryV1Fields[i], v, p);
                              });
    }
    if (version_ == 2) {
      return json_.ReadObject(root, JsonPath::Root(), kRootFieldsV2,
                              [&](size_t i, value& v, const JsonPath& p) {
                                return on_field(kSummaryV2Fields[i], v, p);
                              });
    }
    if (version_ == 3) {
      return json_.ReadObject(root, JsonPath::Root(), kRootFieldsV3,
                              [&](size_t i, value& v, const JsonPath& p) {
                                return on_field(kSummaryV3Fields[i], v, p);
                              });
    }
    if (version_ == 4) {
      return json_.ReadObject(root, JsonPath::Root(), kRootFieldsV4,
                              [&](size_t i, value& v, const JsonPath& p) {
                                return on_field(kSummaryV4Fields[i], v, p);
                              });
    }
    return json_.ReadObject(root, JsonPath::Root(), kRootFields, on_field);
  }

  // Versions 1 to 3 are of one process: each row that ran, ran in it.
  static void DeriveProcesses(Summary& summary) {
    summary.process_count = 1;
    for (Row& row : summary.rows) row.processes = row.threads > 0 ? 1 : 0;
  }

  // Versions 1 and 2 have no `instrumentation_permille`; the row's calls and
  // total and the session's overhead give it.
  static void DeriveInstrumentation(Summary& summary) {
    for (Row& row : summary.rows) {
      row.instrumentation_permille = InstrumentationPermille(
          row.calls, summary.overhead_ns_per_span, row.total_ns);
    }
  }

  // Version 1 has no `tail_ratio`, but its p99_ns and median_ns give it.
  static void DeriveTailRatios(Summary& summary) {
    for (Row& row : summary.rows) {
      row.tail_ratio = TailRatio(row.p99_ns, row.median_ns);
    }
  }

  // Looks at `schema` and `schema_version` before anything else; returns the
  // version (one this reader reads).
  absl::StatusOr<int64_t> CheckSchema(object& root) {
    const JsonPath path = JsonPath::Root();
    bool has_schema = false;
    bool has_version = false;
    int64_t version = kSummarySchemaVersion;
    for (auto field_result : root) {
      simdjson::ondemand::field field;
      simdjson::error_code error = std::move(field_result).get(field);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, path);
      std::string_view key;
      error = field.unescaped_key().get(key);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, path);
      value v = field.value();
      if (key == "schema" && !has_schema) {
        has_schema = true;
        SPANPROF_ASSIGN_OR_RETURN(std::string_view schema,
                                  json_.String(v, path.Field("schema")));
        if (schema != kSummarySchema) {
          return json_.Error(
              path.Field("schema"),
              Cat("expected \"", kSummarySchema, "\", got ", Quote(schema)));
        }
      } else if (key == "schema_version" && !has_version) {
        has_version = true;
        const JsonPath version_path = path.Field("schema_version");
        SPANPROF_ASSIGN_OR_RETURN(
            version, json_.Int(v, version_path, INT64_MIN, INT64_MAX));
        if (version < 1 || version > kSummarySchemaVersion) {
          return json_.Error(version_path,
                             Cat("unsupported schema_version ", version,
                                 " (this reader reads versions 1 to ",
                                 kSummarySchemaVersion, ")"));
        }
      } else if (key == "traceEvents") {
        return json_.Error(path,
                           "this is a trace, not a spanprof summary (it has "
                           "\"traceEvents\")");
      }
    }
    if (!has_schema) {
      return json_.Error(path,
                         "missing field \"schema\" (not a spanprof summary)");
    }
    return version;
  }

  absl::Status ReadSource(value& v, const JsonPath& p, Summary& s) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(v, p));
    if (text != kSourceSpanprof && text != kSourceChromeTrace) {
      return json_.Error(p, Cat("expected \"", kSourceSpanprof, "\" or \"",
                                kSourceChromeTrace, "\", got ", Quote(text)));
    }
    s.source = std::string(text);
    return absl::OkStatus();
  }

  // "unknown" is a foreign capture's clock (version 3; CheckInvariants()
  // checks that it goes with a foreign source).
  absl::Status ReadClock(value& v, const JsonPath& p, Summary& s) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(v, p));
    if (text != "tsc" && text != "monotonic" &&
        (version_ < 3 || text != kClockUnknown)) {
      return json_.Error(
          p, Cat("expected \"tsc\" or \"monotonic\"",
                 version_ < 3 ? "" : " or \"unknown\"", ", got ", Quote(text)));
    }
    s.clock = std::string(text);
    return absl::OkStatus();
  }

  absl::Status ReadEndReason(value& v, const JsonPath& p, Summary& s) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(v, p));
    if (!spanprof::internal::IsEndReason(text)) {
      return json_.Error(p, Cat("expected \"finished\", \"exit\", \"lost\", "
                                "\"signal:NAME\" or \"crash:NAME\", got ",
                                Quote(text)));
    }
    s.end_reason = std::string(text);
    return absl::OkStatus();
  }

  absl::Status ReadText(value& v, const JsonPath& p, std::string& out) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(v, p));
    out = std::string(text);
    return absl::OkStatus();
  }

  absl::Status ReadOverflowPolicy(value& v, const JsonPath& p, Summary& s) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(v, p));
    if (text != "drop" && text != "ring") {
      return json_.Error(
          p, Cat("expected \"drop\" or \"ring\", got ", Quote(text)));
    }
    s.overflow_policy = std::string(text);
    return absl::OkStatus();
  }

  absl::Status ReadRootField(size_t field, value& v, const JsonPath& p,
                             Summary& s) {
    switch (static_cast<SummaryField>(field)) {
      case kRootSchema:
        return ReadText(v, p, s.schema);
      case kRootSchemaVersion: {
        SPANPROF_ASSIGN_OR_RETURN(s.schema_version,
                                  json_.Int(v, p, INT64_MIN, INT64_MAX));
        return absl::OkStatus();
      }
      case kRootSource:
        return ReadSource(v, p, s);
      case kRootClock:
        return ReadClock(v, p, s);
      case kRootProcessName:
        return ReadText(v, p, s.process_name);
      case kRootHost:
        return ReadText(v, p, s.host);
      case kRootPid:
        return Assign(json_.NonNegative(v, p), s.pid);
      case kRootWallClockAnchorNs:
        return Assign(json_.Int(v, p, INT64_MIN, INT64_MAX),
                      s.wall_clock_anchor_ns);
      case kRootWallClockUncertaintyNs:
        return Assign(json_.NonNegative(v, p), s.wall_clock_uncertainty_ns);
      case kRootProcessCount:
        SPANPROF_RETURN_IF_ERROR(Assign(json_.Unsigned(v, p), s.process_count));
        if (s.process_count == 0) {
          return json_.Error(p, "a capture has at least one process");
        }
        return absl::OkStatus();
      case kRootEventCount:
        return Assign(json_.Unsigned(v, p), s.event_count);
      case kRootThreadCount:
        return Assign(json_.Unsigned(v, p), s.thread_count);
      case kRootMaxDepth:
        return Assign(json_.Unsigned(v, p), s.max_depth);
      case kRootWindowNs:
        return Assign(json_.NonNegative(v, p), s.window_ns);
      case kRootRecordedThreadTimeNs:
        return Assign(json_.NonNegative(v, p), s.recorded_thread_time_ns);
      case kRootRecordedHeartbeats:
        return Assign(json_.Unsigned(v, p), s.recorded_heartbeats);
      case kRootEventLimit:
        return Assign(json_.Unsigned(v, p), s.event_limit);
      case kRootOverflowPolicy:
        return ReadOverflowPolicy(v, p, s);
      case kRootDroppedEvents:
        return Assign(json_.Unsigned(v, p), s.dropped_events);
      case kRootDroppedArgs:
        return Assign(json_.Unsigned(v, p), s.dropped_args);
      case kRootFailedPrepares:
        return Assign(json_.Unsigned(v, p), s.failed_prepares);
      case kRootUnfinishedEvents:
        return Assign(json_.Unsigned(v, p), s.unfinished_events);
      case kRootOpenAtExitEvents:
        return Assign(json_.Unsigned(v, p), s.open_at_exit_events);
      case kRootComplete:
        return Assign(json_.Bool(v, p), s.complete);
      case kRootEndReason:
        return ReadEndReason(v, p, s);
      case kRootOverheadNsPerSpan:
        return Assign(json_.NonNegative(v, p), s.overhead_ns_per_span);
      case kRootProcessResources:
        return ReadProcessResources(json_, v, p, s.process_resources);
      case kRootValidationIssues:
        return ReadIssues(v, p, s.validation_issues);
      case kRootRows:
        return ReadRows(v, p, s.rows);
    }
    return absl::InternalError("unhandled summary field");
  }

  template <typename T, typename U>
  static absl::Status Assign(absl::StatusOr<T> result, U& out) {
    if (!result.ok()) return result.status();
    out = *std::move(result);
    return absl::OkStatus();
  }

  absl::Status ReadIssues(value& v, const JsonPath& p,
                          std::vector<ValidationIssue>& issues) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          ValidationIssue& issue = issues.emplace_back();
          return json_.ReadObject(
              o, ep, kIssueFields,
              [&](size_t field, value& fv, const JsonPath& fp) -> absl::Status {
                if (field == 0)
                  return Assign(json_.Unsigned(fv, fp), issue.span);
                SPANPROF_ASSIGN_OR_RETURN(std::string_view text,
                                          json_.String(fv, fp));
                issue.message = std::string(text);
                return absl::OkStatus();
              });
        });
  }

  absl::Status ReadKey(value& v, const JsonPath& p, RowKey& key) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    // Field 0 is the name, field i + 1 tag i (kRowKeyKeys).
    const auto on_field = [&](size_t field, value& fv,
                              const JsonPath& fp) -> absl::Status {
      SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(fv, fp));
      (field == 0 ? key.name : key.*kRowKeyTags[field - 1]) = std::string(text);
      return absl::OkStatus();
    };
    if (version_ < 4) return json_.ReadObject(o, p, kKeyFieldsV3, on_field);
    return json_.ReadObject(o, p, kKeyFields, on_field);
  }

  absl::Status ReadRows(value& v, const JsonPath& p, std::vector<Row>& rows) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          Row& row = rows.emplace_back();
          const auto on_field = [&](size_t field, value& fv,
                                    const JsonPath& fp) {
            return ReadRowField(field, fv, fp, row);
          };
          if (version_ == 1) {
            return json_.ReadObject(
                o, ep, kRowFieldsV1,
                [&](size_t i, value& fv, const JsonPath& fp) {
                  return on_field(kRowV1Fields[i], fv, fp);
                });
          }
          if (version_ == 2) {
            return json_.ReadObject(
                o, ep, kRowFieldsV2,
                [&](size_t i, value& fv, const JsonPath& fp) {
                  return on_field(kRowV2Fields[i], fv, fp);
                });
          }
          if (version_ == 3) {
            return json_.ReadObject(
                o, ep, kRowFieldsV3,
                [&](size_t i, value& fv, const JsonPath& fp) {
                  return on_field(kRowV3Fields[i], fv, fp);
                });
          }
          return json_.ReadObject(o, ep, kRowFields, on_field);
        });
  }

  absl::Status ReadRowField(size_t field, value& v, const JsonPath& p,
                            Row& row) {
    switch (static_cast<RowField>(field)) {
      case kRowKey:
        return ReadKey(v, p, row.key);
      case kRowLabel: {
        SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(v, p));
        row.label = std::string(text);
        return absl::OkStatus();
      }
      case kRowCalls:
        return Assign(json_.Unsigned(v, p), row.calls);
      case kRowTotalNs:
        return Assign(json_.NonNegative(v, p), row.total_ns);
      case kRowSelfNs:
        return Assign(json_.NonNegative(v, p), row.self_ns);
      case kRowMinNs:
        return Assign(json_.NonNegative(v, p), row.min_ns);
      case kRowMeanNs:
        return Assign(json_.NonNegative(v, p), row.mean_ns);
      case kRowMedianNs:
        return Assign(json_.NonNegative(v, p), row.median_ns);
      case kRowP95Ns:
        return Assign(json_.NonNegative(v, p), row.p95_ns);
      case kRowP99Ns:
        return Assign(json_.NonNegative(v, p), row.p99_ns);
      case kRowMaxNs:
        return Assign(json_.NonNegative(v, p), row.max_ns);
      case kRowTailRatio:
        return Assign(json_.NullableNonNegativeDouble(v, p), row.tail_ratio);
      case kRowLogSigma:
        return Assign(json_.NullableNonNegativeDouble(v, p), row.log_sigma);
      case kRowHeavyTail:
        return Assign(json_.Bool(v, p), row.heavy_tail);
      case kRowTotalHeartbeats:
        return Assign(json_.Unsigned(v, p), row.total_heartbeats);
      case kRowSelfHeartbeats:
        return Assign(json_.Unsigned(v, p), row.self_heartbeats);
      case kRowAllocCount:
        return Assign(json_.NullableNonNegative(v, p), row.alloc_count);
      case kRowAllocBytes:
        return Assign(json_.NullableNonNegative(v, p), row.alloc_bytes);
      case kRowSharePermille:
        return Assign(json_.Int(v, p, 0, 1000), row.share_permille);
      case kRowInstrumentationPermille:
        return Assign(json_.Int(v, p, 0, 1000), row.instrumentation_permille);
      case kRowThreads:
        return Assign(json_.Unsigned(v, p), row.threads);
      case kRowProcesses:
        return Assign(json_.Unsigned(v, p), row.processes);
      case kRowExceptions:
        return Assign(json_.Unsigned(v, p), row.exceptions);
      case kRowHookFailures:
        return Assign(json_.Unsigned(v, p), row.hook_failures);
      case kRowUnfinished:
        return Assign(json_.Unsigned(v, p), row.unfinished);
      case kRowDropped:
        return Assign(json_.Unsigned(v, p), row.dropped);
      case kRowCounters:
        return ReadCounters(v, p, row.counters);
    }
    return absl::InternalError("unhandled row field");
  }

  // {"NAME": {"total": .., "self": ..}, ...}: non-empty names in strictly
  // increasing (byte) order, so each at most once.
  absl::Status ReadCounters(value& v, const JsonPath& p,
                            std::vector<RowCounter>& counters) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    for (auto field_result : o) {
      simdjson::ondemand::field field;
      simdjson::error_code error = std::move(field_result).get(field);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
      std::string_view name;
      error = field.unescaped_key().get(name);
      if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
      const JsonPath cp = p.Field(name);
      if (name.empty()) return json_.Error(p, "a counter name is empty");
      if (!counters.empty() && name <= counters.back().name) {
        return json_.Error(cp, name == counters.back().name
                                   ? "duplicate counter"
                                   : "counters are not sorted by name");
      }
      RowCounter& counter = counters.emplace_back();
      counter.name = std::string(name);
      SPANPROF_ASSIGN_OR_RETURN(object co, json_.Object(field.value(), cp));
      SPANPROF_RETURN_IF_ERROR(json_.ReadObject(
          co, cp, kCounterFields, [&](size_t f, value& fv, const JsonPath& fp) {
            return Assign(json_.NonNegative(fv, fp),
                          f == 0 ? counter.total : counter.self);
          }));
    }
    return absl::OkStatus();
  }

  absl::Status RowError(size_t index, std::string_view message) const {
    const JsonPath root = JsonPath::Root();
    const JsonPath rows = root.Field("rows");
    return json_.Error(rows.Index(index), message);
  }

  absl::Status CheckOrder(size_t index, std::string_view lo_name, int64_t lo,
                          std::string_view hi_name, int64_t hi) const {
    if (lo <= hi) return absl::OkStatus();
    return RowError(index,
                    Cat(hi_name, " (", hi, ") < ", lo_name, " (", lo, ")"));
  }

  // A row with calls 0: only dropped spans.
  absl::Status CheckUncalledRow(size_t index, const Row& row) const {
    const bool all_zero =
        row.total_ns == 0 && row.self_ns == 0 && row.min_ns == 0 &&
        row.mean_ns == 0 && row.median_ns == 0 && row.p95_ns == 0 &&
        row.p99_ns == 0 && row.max_ns == 0 && row.total_heartbeats == 0 &&
        row.self_heartbeats == 0 && row.threads == 0 && row.processes == 0 &&
        row.exceptions == 0 && row.hook_failures == 0 && row.unfinished == 0 &&
        row.share_permille == 0 && !row.tail_ratio.has_value() &&
        !row.log_sigma.has_value() && !row.heavy_tail && row.counters.empty();
    if (!all_zero) {
      return RowError(index,
                      "a row with calls 0 must have every timing, heartbeat "
                      "and count field 0, no tail shape and no counters");
    }
    if (row.dropped == 0) {
      return RowError(index,
                      "a row with calls 0 exists only for dropped spans, but "
                      "dropped is 0");
    }
    return absl::OkStatus();
  }

  // A row with calls > 0: ordered percentiles, a consistent total and mean,
  // counts within calls.
  absl::Status CheckCalledRow(size_t index, const Row& row) const {
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "min_ns", row.min_ns, "median_ns", row.median_ns));
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "median_ns", row.median_ns, "p95_ns", row.p95_ns));
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "p95_ns", row.p95_ns, "p99_ns", row.p99_ns));
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "p99_ns", row.p99_ns, "max_ns", row.max_ns));
    const absl::int128 calls = row.calls;
    if (absl::int128(row.min_ns) * calls > row.total_ns ||
        absl::int128(row.max_ns) * calls < row.total_ns) {
      return RowError(index, Cat("total_ns (", row.total_ns,
                                 ") is not within calls × [min_ns, "
                                 "max_ns]"));
    }
    const int64_t mean =
        static_cast<int64_t>(absl::int128(row.total_ns) / calls);
    if (row.mean_ns != mean) {
      return RowError(index, Cat("mean_ns (", row.mean_ns,
                                 ") != floor(total_ns / calls) (", mean, ")"));
    }
    if (row.threads == 0) {
      return RowError(index, "threads is 0 but calls > 0");
    }
    if (row.processes == 0) {
      return RowError(index, "processes is 0 but calls > 0");
    }
    SPANPROF_RETURN_IF_ERROR(CheckTailShape(index, row));
    if (row.hook_failures > row.calls) {
      return RowError(index, Cat("hook_failures (", row.hook_failures,
                                 ") > calls (", row.calls, ")"));
    }
    if (row.exceptions > row.calls) {
      return RowError(index, Cat("exceptions (", row.exceptions, ") > calls (",
                                 row.calls, ")"));
    }
    if (row.unfinished > row.calls) {
      return RowError(index, Cat("unfinished (", row.unfinished, ") > calls (",
                                 row.calls, ")"));
    }
    return absl::OkStatus();
  }

  // tail_ratio recomputes; log_sigma needs two calls; heavy_tail needs a
  // log_sigma (the rule's thresholds are not checked: they may change).
  absl::Status CheckTailShape(size_t index, const Row& row) const {
    if (row.tail_ratio != TailRatio(row.p99_ns, row.median_ns)) {
      return RowError(index, row.median_ns == 0
                                 ? "tail_ratio must be null when median_ns is 0"
                                 : Cat("tail_ratio is not p99_ns / median_ns (",
                                       row.p99_ns, " / ", row.median_ns, ")"));
    }
    if (row.log_sigma.has_value() && row.calls < 2) {
      return RowError(index, "log_sigma must be null with fewer than 2 calls");
    }
    if (row.heavy_tail && !row.log_sigma.has_value()) {
      return RowError(index, "heavy_tail is true but log_sigma is null");
    }
    return absl::OkStatus();
  }

  absl::Status CheckCounters(size_t index, const Row& row) const {
    for (const RowCounter& counter : row.counters) {
      if (counter.self > counter.total) {
        return RowError(index,
                        Cat("counter ", Quote(counter.name), ": self (",
                            counter.self, ") > total (", counter.total, ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckRow(size_t index, const Row& row,
                        const Summary& summary) const {
    if (row.label != RowLabel(row.key)) {
      return RowError(index, Cat("label ", Quote(row.label),
                                 " does not match key (expected ",
                                 Quote(RowLabel(row.key)), ")"));
    }
    if (row.alloc_count.has_value() != row.alloc_bytes.has_value()) {
      return RowError(index,
                      "alloc_count and alloc_bytes must both be null or both "
                      "be integers");
    }
    SPANPROF_RETURN_IF_ERROR(row.calls == 0 ? CheckUncalledRow(index, row)
                                            : CheckCalledRow(index, row));
    SPANPROF_RETURN_IF_ERROR(
        CheckOrder(index, "self_ns", row.self_ns, "total_ns", row.total_ns));
    if (row.self_heartbeats > row.total_heartbeats) {
      return RowError(index,
                      Cat("self_heartbeats (", row.self_heartbeats,
                          ") > total_heartbeats (", row.total_heartbeats, ")"));
    }
    if (row.threads > summary.thread_count) {
      return RowError(index, Cat("threads (", row.threads, ") > thread_count (",
                                 summary.thread_count, ")"));
    }
    if (row.processes > row.threads || row.processes > summary.process_count) {
      return RowError(
          index, Cat("processes (", row.processes, ") > threads (", row.threads,
                     ") or process_count (", summary.process_count, ")"));
    }
    return CheckCounters(index, row);
  }

  // Needs a verified recorded_thread_time_ns, so it runs after the totals.
  absl::Status CheckShare(size_t index, const Row& row,
                          const Summary& summary) const {
    const int64_t share =
        summary.recorded_thread_time_ns == 0
            ? 0
            : static_cast<int64_t>(absl::int128(row.self_ns) * 1000 /
                                   summary.recorded_thread_time_ns);
    if (row.share_permille != share) {
      return RowError(index, Cat("share_permille (", row.share_permille,
                                 ") != self_ns * 1000 / "
                                 "recorded_thread_time_ns (",
                                 share, ")"));
    }
    const int64_t instrumentation = InstrumentationPermille(
        row.calls, summary.overhead_ns_per_span, row.total_ns);
    if (row.instrumentation_permille != instrumentation) {
      return RowError(
          index, Cat("instrumentation_permille (", row.instrumentation_permille,
                     ") != calls * overhead_ns_per_span * 1000 / total_ns, "
                     "at most 1000 (",
                     instrumentation, ")"));
    }
    return absl::OkStatus();
  }

  // What the rows add up to, for the totals.
  struct RowSums {
    absl::int128 calls = 0;
    absl::int128 self_ns = 0;
    absl::int128 unfinished = 0;
    absl::int128 self_heartbeats = 0;
  };

  // Each row on its own, then across rows: unique keys, the sort order, alloc
  // counters null in all rows or none.
  absl::Status CheckRows(const Summary& s, RowSums& sums) const {
    using KeyView = std::array<std::string_view, 1 + kTagFields.size()>;
    absl::flat_hash_map<KeyView, size_t> seen;
    seen.reserve(s.rows.size());
    for (size_t i = 0; i < s.rows.size(); ++i) {
      const Row& row = s.rows[i];
      SPANPROF_RETURN_IF_ERROR(CheckRow(i, row, s));
      KeyView key{row.key.name};
      for (size_t t = 0; t < kTagFields.size(); ++t) {
        key[t + 1] = row.key.*kRowKeyTags[t];
      }
      auto [it, inserted] = seen.emplace(key, i);
      if (!inserted) {
        return RowError(i, Cat("duplicate key ", Quote(row.label),
                               " (also $.rows[", it->second, "])"));
      }
      if (i > 0) {
        const Row& prev = s.rows[i - 1];
        const bool ordered =
            prev.self_ns > row.self_ns ||
            (prev.self_ns == row.self_ns && prev.key < row.key);
        if (!ordered) {
          return RowError(i,
                          "rows are not sorted by self_ns descending, then "
                          "key");
        }
      }
      if (i > 0 &&
          row.alloc_count.has_value() != s.rows[0].alloc_count.has_value()) {
        return RowError(i,
                        "alloc counters are null in some rows and integers in "
                        "others");
      }
      sums.calls += row.calls;
      sums.self_ns += row.self_ns;
      sums.unfinished += row.unfinished;
      sums.self_heartbeats += row.self_heartbeats;
    }
    return absl::OkStatus();
  }

  absl::Status CheckTotals(const Summary& s, const RowSums& sums) const {
    const JsonPath root = JsonPath::Root();
    if (sums.calls != absl::int128(s.event_count)) {
      return json_.Error(root.Field("event_count"),
                         Cat(s.event_count, " != sum of rows[].calls (",
                             static_cast<uint64_t>(sums.calls), ")"));
    }
    if (sums.self_ns != s.recorded_thread_time_ns) {
      return json_.Error(
          root.Field("recorded_thread_time_ns"),
          Cat(s.recorded_thread_time_ns, " != sum of rows[].self_ns (",
              static_cast<int64_t>(sums.self_ns), ")"));
    }
    if (sums.unfinished != absl::int128(s.unfinished_events)) {
      return json_.Error(
          root.Field("unfinished_events"),
          Cat(s.unfinished_events, " != sum of rows[].unfinished (",
              static_cast<uint64_t>(sums.unfinished), ")"));
    }
    if (s.open_at_exit_events > s.event_count) {
      return json_.Error(
          root.Field("open_at_exit_events"),
          Cat(s.open_at_exit_events, " > event_count (", s.event_count, ")"));
    }
    if (sums.self_heartbeats != absl::int128(s.recorded_heartbeats)) {
      return json_.Error(
          root.Field("recorded_heartbeats"),
          Cat(s.recorded_heartbeats, " != sum of rows[].self_heartbeats (",
              static_cast<uint64_t>(sums.self_heartbeats), ")"));
    }
    return absl::OkStatus();
  }

  // spanprof knows its own clock, and not a foreign trace's.
  absl::Status CheckSource(const Summary& s) const {
    const bool foreign = s.source != kSourceSpanprof;
    if (foreign != (s.clock == kClockUnknown)) {
      return json_.Error(JsonPath::Root().Field("clock"),
                         Cat(Quote(s.clock), " with source ", Quote(s.source),
                             " (a clock is \"unknown\" exactly when the "
                             "source is not \"spanprof\")"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckInvariants(const Summary& s) const {
    SPANPROF_RETURN_IF_ERROR(CheckSource(s));
    RowSums sums;
    SPANPROF_RETURN_IF_ERROR(CheckRows(s, sums));
    SPANPROF_RETURN_IF_ERROR(CheckTotals(s, sums));
    for (size_t i = 0; i < s.rows.size(); ++i) {
      SPANPROF_RETURN_IF_ERROR(CheckShare(i, s.rows[i], s));
    }
    if (s.complete &&
        (s.dropped_events != 0 || s.dropped_args != 0 ||
         s.unfinished_events != 0 || !s.validation_issues.empty())) {
      const JsonPath root = JsonPath::Root();
      return json_.Error(
          root.Field("complete"),
          Cat("true, but the capture has ", s.dropped_events,
              " dropped events, ", s.dropped_args, " dropped args, ",
              s.unfinished_events, " unfinished events and ",
              s.validation_issues.size(), " validation issues"));
    }
    return absl::OkStatus();
  }

  StrictJson json_;
  int64_t version_ = kSummarySchemaVersion;
};

}  // namespace
}  // namespace internal

absl::StatusOr<Summary> ParseSummary(std::string_view json,
                                     std::string_view source) {
  try {
    return internal::SummaryReader(source).Read(json);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        internal::Cat("out of memory reading ", source, " at byte ",
                      json.size(), " (its whole size: parsing it)"));
  }
}

absl::StatusOr<Summary> ReadSummary(const std::string& path) {
  SPANPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseSummary(text, path);
}

}  // namespace spanprof::analysis
