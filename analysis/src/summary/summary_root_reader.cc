// The summary's top-level fields: one case per field of summary_format.h's
// `kSummaryFields`, each read with its exact type and values.
#include "summary/summary_root_reader.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "resources/process_resources.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/internal/end_reason.h"
#include "status_macros.h"
#include "summary/drops.h"
#include "summary/summary_format.h"
#include "summary/summary_row_reader.h"
#include "summary/versioned_object.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::value;

absl::Status ReadText(const StrictJson& json, value& v, const JsonPath& p,
                      std::string& out) {
  SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(v, p));
  out = std::string(text);
  return absl::OkStatus();
}

absl::Status ReadSource(const StrictJson& json, value& v, const JsonPath& p,
                        Summary& s) {
  SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(v, p));
  if (text != kSourceSpanprof && text != kSourceChromeTrace) {
    return json.Error(p, Cat("expected \"", kSourceSpanprof, "\" or \"",
                             kSourceChromeTrace, "\", got ", Quote(text)));
  }
  s.source = std::string(text);
  return absl::OkStatus();
}

// "unknown" is a foreign capture's clock (version 3; the invariants check
// that it goes with a foreign source).
absl::Status ReadClock(const StrictJson& json, value& v, const JsonPath& p,
                       int64_t version, Summary& s) {
  SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(v, p));
  if (text != "tsc" && text != "monotonic" &&
      (version < 3 || text != kClockUnknown)) {
    return json.Error(
        p, Cat("expected \"tsc\" or \"monotonic\"",
               version < 3 ? "" : " or \"unknown\"", ", got ", Quote(text)));
  }
  s.clock = std::string(text);
  return absl::OkStatus();
}

absl::Status ReadEndReason(const StrictJson& json, value& v, const JsonPath& p,
                           Summary& s) {
  SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(v, p));
  if (!spanprof::internal::IsEndReason(text)) {
    return json.Error(p, Cat("expected \"finished\", \"exit\", \"lost\", "
                             "\"signal:NAME\" or \"crash:NAME\", got ",
                             Quote(text)));
  }
  s.end_reason = std::string(text);
  return absl::OkStatus();
}

absl::Status ReadOverflowPolicy(const StrictJson& json, value& v,
                                const JsonPath& p, Summary& s) {
  SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(v, p));
  if (text != "drop" && text != "ring") {
    return json.Error(p,
                      Cat("expected \"drop\" or \"ring\", got ", Quote(text)));
  }
  s.overflow_policy = std::string(text);
  return absl::OkStatus();
}

absl::Status ReadProcessCount(const StrictJson& json, value& v,
                              const JsonPath& p, Summary& s) {
  SPANPROF_RETURN_IF_ERROR(Assign(json.Unsigned(v, p), s.process_count));
  if (s.process_count == 0) {
    return json.Error(p, "a capture has at least one process");
  }
  return absl::OkStatus();
}

absl::Status ReadIssues(const StrictJson& json, value& v, const JsonPath& p,
                        int64_t version, std::vector<ValidationIssue>& issues) {
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::array a, json.Array(v, p));
  return json.ForEachElement(
      a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
        SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object o,
                                  json.Object(ev, ep));
        ValidationIssue& issue = issues.emplace_back();
        return ReadVersionedObject<kIssueFields>(
            json, o, ep, version,
            [&](size_t field, value& fv, const JsonPath& fp) -> absl::Status {
              if (field == kIssueSpan) {
                return Assign(json.Unsigned(fv, fp), issue.span);
              }
              return ReadText(json, fv, fp, issue.message);
            });
      });
}

// One case per field of `kSummaryFields`: a field added to the table is read
// here.
absl::Status ReadRootField(const StrictJson& json, size_t field, value& v,
                           const JsonPath& p, int64_t version, Summary& s) {
  switch (static_cast<SummaryField>(field)) {
    case kRootSchema:
      return ReadText(json, v, p, s.schema);
    case kRootSchemaVersion:
      return Assign(json.Int(v, p, INT64_MIN, INT64_MAX), s.schema_version);
    case kRootSource:
      return ReadSource(json, v, p, s);
    case kRootClock:
      return ReadClock(json, v, p, version, s);
    case kRootProcessName:
      return ReadText(json, v, p, s.process_name);
    case kRootHost:
      return ReadText(json, v, p, s.host);
    case kRootPid:
      return Assign(json.NonNegative(v, p), s.pid);
    case kRootWallClockAnchorNs:
      return Assign(json.Int(v, p, INT64_MIN, INT64_MAX),
                    s.wall_clock_anchor_ns);
    case kRootWallClockUncertaintyNs:
      return Assign(json.NonNegative(v, p), s.wall_clock_uncertainty_ns);
    case kRootProcessCount:
      return ReadProcessCount(json, v, p, s);
    case kRootEventCount:
      return Assign(json.Unsigned(v, p), s.event_count);
    case kRootThreadCount:
      return Assign(json.Unsigned(v, p), s.thread_count);
    case kRootMaxDepth:
      return Assign(json.Unsigned(v, p), s.max_depth);
    case kRootWindowNs:
      return Assign(json.NonNegative(v, p), s.window_ns);
    case kRootRecordedThreadTimeNs:
      return Assign(json.NonNegative(v, p), s.recorded_thread_time_ns);
    case kRootRecordedHeartbeats:
      return Assign(json.Unsigned(v, p), s.recorded_heartbeats);
    case kRootEventLimit:
      return Assign(json.Unsigned(v, p), s.event_limit);
    case kRootOverflowPolicy:
      return ReadOverflowPolicy(json, v, p, s);
    case kRootDroppedEvents:
      return Assign(json.Unsigned(v, p), s.dropped_events);
    case kRootDroppedArgs:
      return Assign(json.Unsigned(v, p), s.dropped_args);
    case kRootDrops:
      return ReadDrops(json, v, p, s.drops);
    case kRootFailedPrepares:
      return Assign(json.Unsigned(v, p), s.failed_prepares);
    case kRootUnfinishedEvents:
      return Assign(json.Unsigned(v, p), s.unfinished_events);
    case kRootOpenAtExitEvents:
      return Assign(json.Unsigned(v, p), s.open_at_exit_events);
    case kRootComplete:
      return Assign(json.Bool(v, p), s.complete);
    case kRootEndReason:
      return ReadEndReason(json, v, p, s);
    case kRootOverheadNsPerSpan:
      return Assign(json.NonNegative(v, p), s.overhead_ns_per_span);
    case kRootProcessResources:
      return ReadProcessResources(json, v, p, s.process_resources);
    case kRootValidationIssues:
      return ReadIssues(json, v, p, version, s.validation_issues);
    case kRootRows:
      return ReadRows(json, v, p, version, s.rows);
    case kRootFieldCount:
      break;
  }
  return absl::InternalError("unhandled summary field");
}

}  // namespace

absl::Status ReadSummaryFields(const StrictJson& json,
                               simdjson::ondemand::object& root,
                               int64_t version, Summary& summary) {
  return ReadVersionedObject<kSummaryFields>(
      json, root, JsonPath::Root(), version,
      [&](size_t field, value& v, const JsonPath& p) {
        return ReadRootField(json, field, v, p, version, summary);
      });
}

}  // namespace spanprof::analysis::internal
