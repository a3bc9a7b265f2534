// The metadata reader: `$.metadata` of a spanprof JSON trace into a
// `TraceMetadata`. Metadata comes last in the file but is read first (the
// fast line reader parses the trace's tail on its own; the strict reader
// meets it in its one pass and resolves the events after), so that every
// event can be checked against it.
#include "trace/trace_metadata_reader.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/cat.h"
#include "json/strict_json.h"
#include "resources/process_resources.h"
#include "spanprof/capture.h"
#include "spanprof/internal/end_reason.h"
#include "spanprof/internal/hex_id.h"
#include "status_macros.h"
#include "trace/strict_values.h"
#include "trace/trace_format.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

constexpr auto kArgDropFields = RequiredFields(kArgDropKeys);
// dropped_args is optional: traces written before it lack it (read as 0).
constexpr std::array<FieldSpec, kMetadataKeys.size()> kMetadataFields = [] {
  auto specs = RequiredFields(kMetadataKeys);
  specs[kMetaDroppedArgs].required = false;
  // Added with named drops: older traces have none (their dropped_args are
  // "unknown" in the summary).
  specs[kMetaArgDrops].required = false;
  // Added with the multi-process anchors: older traces have none.
  specs[kMetaWallClockUncertaintyNs].required = false;
  specs[kMetaHost].required = false;
  // Added with span hooks and cross-process parents:
  // older traces have none.
  for (size_t f : {kMetaFailedPrepares, kMetaTraceId, kMetaRemoteParentSpanId,
                   kMetaSpanIdSeed, kMetaExportedSpanIds}) {
    specs[f].required = false;
  }
  // Only a merged capture has processes (and threads that name theirs).
  specs[kMetaProcesses].required = false;
  // Added with crash-safe streaming: older traces have none.
  specs[kMetaEndReason].required = false;
  return specs;
}();
constexpr std::array<FieldSpec, kThreadKeys.size()> kThreadFields = [] {
  auto specs = RequiredFields(kThreadKeys);
  specs[3].required = false;
  return specs;
}();
constexpr auto kProcessFields = RequiredFields(kProcessKeys);
// A site's backend, dtype and device (added with span hooks) are written
// only when set.
constexpr std::array<FieldSpec, kSiteKeys.size()> kSiteFields = [] {
  auto specs = RequiredFields(kSiteKeys);
  for (size_t f = kSiteAlwaysWritten; f < specs.size(); ++f) {
    specs[f].required = false;
  }
  return specs;
}();
constexpr std::array<FieldSpec, kDropKeys.size()> kDropFields = [] {
  auto specs = RequiredFields(kDropKeys);
  for (size_t f = kSiteAlwaysWritten + 1; f < kDropCount; ++f) {
    specs[f].required = false;
  }
  return specs;
}();
constexpr auto kExportedSpanIdFields = RequiredFields(kExportedSpanIdKeys);

// A `dropped_by_site` entry, checked against metadata.sites once read.
struct RawDrop {
  int64_t site = 0;
  Site names;
  uint64_t count = 0;
};

// `MetadataReader` fills one `TraceMetadata`; each member reads one field
// (or list) of metadata.
class MetadataReader {
 public:
  MetadataReader(std::string_view source, TraceMetadata& out)
      : json_(source), capture_(out.capture) {}

  absl::Status ReadMetadata(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    return ReadMetadataObject(o, p);
  }

  absl::Status ReadMetadataObject(object& o, const JsonPath& p) {
    std::vector<RawDrop> drops;
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read = json_.ReadObject(
            o, p, kMetadataFields,
            [&](size_t field, value& fv, const JsonPath& fp) {
              return ReadMetadataField(static_cast<MetadataField>(field), fv,
                                       fp, drops);
            });
        !read.ok())
      return read;
    SPANPROF_RETURN_IF_ERROR(ResolveThreadProcesses(p));
    SPANPROF_RETURN_IF_ERROR(
        CheckArgDrops(p.Field(kMetadataKeys[kMetaArgDrops])));
    return ResolveDrops(p.Field(kMetadataKeys[kMetaDroppedBySite]), drops);
  }

 private:
  // A merged capture's threads each name their process; a single-process
  // capture's name none.
  absl::Status ResolveThreadProcesses(const JsonPath& metadata) const {
    const JsonPath threads = metadata.Field(kMetadataKeys[kMetaThreads]);
    const size_t processes = capture_.processes.size();
    for (size_t t = 0; t < capture_.threads.size(); ++t) {
      const JsonPath tp = threads.Index(t);
      const bool has = thread_has_process_[t] != 0;
      if (processes == 0 && has) {
        return json_.Error(tp.Field(kThreadKeys[3]),
                           "a thread names its process only in a merged "
                           "trace (one with metadata.processes)");
      }
      if (processes != 0 && !has) {
        return json_.Error(tp, Cat("missing field \"", kThreadKeys[3],
                                   "\" (the trace has metadata.processes)"));
      }
      if (processes != 0 && capture_.threads[t].process >= processes) {
        return json_.Error(tp.Field(kThreadKeys[3]),
                           Cat("process index ", capture_.threads[t].process,
                               " out of range (", processes, " processes)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadMetadataField(MetadataField field, value& fv,
                                 const JsonPath& fp,
                                 std::vector<RawDrop>& drops) {
    Capture& c = capture_;
    switch (field) {
      case kMetaSchema:
        return CheckTraceSchema(fv, fp);
      case kMetaSchemaVersion:
        return CheckTraceSchemaVersion(fv, fp);
      case kMetaSpanprofVersion:
        return ReadString(fv, fp, c.spanprof_version);
      case kMetaProcessName:
        return ReadString(fv, fp, c.process_name);
      case kMetaPid:
        return Assign(json_.NonNegative(fv, fp), c.pid);
      case kMetaClock:
        return ReadClock(fv, fp, c.clock);
      case kMetaWallClockAnchorNs:
        return Assign(json_.Int(fv, fp, INT64_MIN, INT64_MAX),
                      c.wall_clock_anchor_ns);
      case kMetaWallClockUncertaintyNs:
        return Assign(json_.NonNegative(fv, fp), c.wall_clock_uncertainty_ns);
      case kMetaHost:
        return ReadString(fv, fp, c.host);
      case kMetaTraceId:
        return ReadTraceId(fv, fp, c.trace_id);
      case kMetaRemoteParentSpanId:
        return ReadHexId(fv, fp, /*allow_zero=*/true, c.remote_parent_span_id);
      case kMetaSpanIdSeed:
        return ReadHexId(fv, fp, /*allow_zero=*/true, c.span_id_seed);
      case kMetaExportedSpanIds:
        return ReadExportedSpanIds(fv, fp, c.exported_span_ids);
      case kMetaProcesses:
        return ReadProcesses(fv, fp);
      case kMetaWindowNs:
        return Assign(json_.NonNegative(fv, fp), c.window_ns);
      case kMetaEventLimit:
        return Assign(json_.Unsigned(fv, fp), c.event_limit);
      case kMetaOverflowPolicy:
        return ReadOneOf(fv, fp, "drop", "ring", c.overflow_policy);
      case kMetaDroppedEvents:
        return Assign(json_.Unsigned(fv, fp), c.dropped_events);
      case kMetaDroppedBySite:
        return ReadDrops(fv, fp, drops);
      case kMetaDroppedArgs:
        return Assign(json_.Unsigned(fv, fp), c.dropped_args);
      case kMetaArgDrops:
        return ReadArgDrops(fv, fp, c.arg_drops);
      case kMetaFailedPrepares:
        return Assign(json_.Unsigned(fv, fp), c.failed_prepares);
      case kMetaFinishedNormally:
        return ReadFinishedNormally(fv, fp, c);
      case kMetaEndReason:
        return ReadEndReason(fv, fp, c);
      case kMetaOverheadNsPerSpan:
        return Assign(json_.NonNegative(fv, fp), c.overhead_ns_per_span);
      case kMetaAllocMeasured:
        return Assign(json_.Bool(fv, fp), c.alloc_measured);
      case kMetaProcessResources:
        return ReadProcessResources(json_, fv, fp, c.process_resources);
      case kMetaThreads:
        return ReadThreads(fv, fp);
      case kMetaSites:
        return ReadSites(fv, fp);
    }
    return absl::InternalError("unhandled metadata field");
  }

  absl::Status CheckTraceSchema(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    if (s != kTraceSchema) {
      return json_.Error(
          p, Cat("expected \"", kTraceSchema, "\", got ", Quote(s)));
    }
    return absl::OkStatus();
  }

  absl::Status CheckTraceSchemaVersion(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(int64_t version,
                              json_.Int(v, p, INT64_MIN, INT64_MAX));
    if (version != kTraceSchemaVersion) {
      return json_.Error(
          p, Cat("unsupported schema_version ", version,
                 " (this reader reads version ", kTraceSchemaVersion, ")"));
    }
    return absl::OkStatus();
  }

  // A string that must be `a` or `b`.
  // "unknown" is a foreign capture's clock, as spanprof's own writers write
  // such a capture back (to .pftrace, say).
  absl::Status ReadClock(value& v, const JsonPath& p, std::string& out) {
    SPANPROF_RETURN_IF_ERROR(ReadString(v, p, out));
    if (out != "tsc" && out != "monotonic" && out != "unknown") {
      return json_.Error(
          p, Cat("expected \"tsc\", \"monotonic\" or \"unknown\", got ",
                 Quote(out)));
    }
    return absl::OkStatus();
  }

  // Traces written before `end_reason`: a session that did not finish
  // normally was ended by exit().
  absl::Status ReadFinishedNormally(value& v, const JsonPath& p, Capture& c) {
    SPANPROF_RETURN_IF_ERROR(Assign(json_.Bool(v, p), c.finished_normally));
    if (!c.finished_normally &&
        c.end_reason == spanprof::internal::kEndFinished) {
      c.end_reason = std::string(spanprof::internal::kEndExit);
    }
    return absl::OkStatus();
  }

  absl::Status ReadEndReason(value& v, const JsonPath& p, Capture& c) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json_.String(v, p));
    if (!spanprof::internal::IsEndReason(text)) {
      return json_.Error(p, Cat("expected \"finished\", \"exit\", "
                                "\"lost\", \"signal:NAME\" or "
                                "\"crash:NAME\", got ",
                                Quote(text)));
    }
    c.end_reason = std::string(text);
    return absl::OkStatus();
  }

  absl::Status ReadOneOf(value& v, const JsonPath& p, std::string_view a,
                         std::string_view b, std::string& out) {
    SPANPROF_RETURN_IF_ERROR(ReadString(v, p, out));
    if (out != a && out != b) {
      return json_.Error(
          p, Cat("expected \"", a, "\" or \"", b, "\", got ", Quote(out)));
    }
    return absl::OkStatus();
  }

  absl::Status ReadDrops(value& v, const JsonPath& p,
                         std::vector<RawDrop>& drops) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object eo, json_.Object(ev, ep));
          RawDrop& drop = drops.emplace_back();
          std::string* const names[] = {
              &drop.names.name,     &drop.names.phase,   &drop.names.module,
              &drop.names.activity, &drop.names.backend, &drop.names.dtype,
              &drop.names.device};
          static_assert(std::size(names) == kSiteKeys.size());
          return json_.ReadObject(
              eo, ep, kDropFields,
              [&](size_t df, value& dv, const JsonPath& dp) -> absl::Status {
                if (df == kDropSite)
                  return Assign(json_.NonNegative(dv, dp), drop.site);
                if (df == kDropCount)
                  return Assign(json_.Unsigned(dv, dp), drop.count);
                return ReadString(dv, dp, *names[df - 1]);
              });
        });
  }

  // metadata.arg_drops: its sites are checked once metadata.sites is read
  // (CheckArgDrops).
  absl::Status ReadArgDrops(value& v, const JsonPath& p,
                            std::vector<ArgDrop>& drops) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object eo, json_.Object(ev, ep));
          ArgDrop& drop = drops.emplace_back();
          return json_.ReadObject(eo, ep, kArgDropFields,
                                  [&](size_t f, value& dv, const JsonPath& dp) {
                                    return ReadArgDropField(f, dv, dp, drop);
                                  });
        });
  }

  absl::Status ReadArgDropField(size_t field, value& v, const JsonPath& p,
                                ArgDrop& drop) {
    switch (field) {
      case 0: {
        SPANPROF_ASSIGN_OR_RETURN(std::optional<int64_t> site,
                                  json_.NullableNonNegative(v, p));
        if (site.has_value()) {
          if (*site > UINT32_MAX) return json_.Error(p, "site out of range");
          drop.site = static_cast<uint32_t>(*site);
        }
        return absl::OkStatus();
      }
      case 1:
        return ReadString(v, p, drop.name);
      case 2: {
        std::string kind;
        SPANPROF_RETURN_IF_ERROR(ReadOneOf(v, p, "arg", "count", kind));
        drop.is_counter = kind == "count";
        return absl::OkStatus();
      }
      case 3: {
        SPANPROF_RETURN_IF_ERROR(ReadString(v, p, drop.reason));
        if (std::find(kArgDropReasons.begin(), kArgDropReasons.end(),
                      drop.reason) == kArgDropReasons.end()) {
          return json_.Error(p,
                             Cat("unknown drop reason ", Quote(drop.reason)));
        }
        return absl::OkStatus();
      }
      default:
        return Assign(json_.Unsigned(v, p), drop.count);
    }
  }

  // Every arg_drops site names one of metadata.sites, and the counts add up
  // to at most metadata.dropped_args (a merge of traces that name their
  // drops with older ones that do not names only some).
  absl::Status CheckArgDrops(const JsonPath& path) const {
    const Capture& c = capture_;
    uint64_t total = 0;
    for (size_t i = 0; i < c.arg_drops.size(); ++i) {
      const ArgDrop& drop = c.arg_drops[i];
      if (drop.site.has_value() && *drop.site >= c.sites.size()) {
        return json_.Error(path.Index(i).Field("site"),
                           Cat("site index ", *drop.site, " out of range (",
                               c.sites.size(), " sites)"));
      }
      total = drop.count > UINT64_MAX - total ? UINT64_MAX : total + drop.count;
    }
    if (total > c.dropped_args) {
      return json_.Error(path, Cat("the counts add up to ", total,
                                   ", more than metadata.dropped_args (",
                                   c.dropped_args, ")"));
    }
    return absl::OkStatus();
  }

  // Drops name their site twice (index and names): both must agree.
  absl::Status ResolveDrops(const JsonPath& drops_path,
                            const std::vector<RawDrop>& drops) {
    Capture& c = capture_;
    for (size_t i = 0; i < drops.size(); ++i) {
      const RawDrop& drop = drops[i];
      const JsonPath drop_path = drops_path.Index(i);
      if (static_cast<uint64_t>(drop.site) >= c.sites.size()) {
        return json_.Error(drop_path.Field("site"),
                           Cat("site index ", drop.site, " out of range (",
                               c.sites.size(), " sites)"));
      }
      if (!(drop.names == c.sites[static_cast<size_t>(drop.site)])) {
        return json_.Error(drop_path, Cat("names do not match metadata.sites[",
                                          drop.site, "]"));
      }
      c.dropped_by_site.push_back(
          SiteDrops{static_cast<uint32_t>(drop.site), drop.count});
    }
    return absl::OkStatus();
  }

  absl::Status ReadString(value& v, const JsonPath& p, std::string& out) {
    return internal::ReadString(json_, v, p, out);
  }

  // A W3C trace id (32 lowercase hex digits, not all zero), or "".
  absl::Status ReadTraceId(value& v, const JsonPath& p, std::string& out) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    if (!s.empty() && !spanprof::internal::IsTraceId(s)) {
      return json_.Error(p, Cat("expected a trace id (32 lowercase hex "
                                "digits, not all zero) or \"\", got ",
                                Quote(s)));
    }
    out = std::string(s);
    return absl::OkStatus();
  }

  // A 64-bit id as 16 lowercase hex digits.
  absl::Status ReadHexId(value& v, const JsonPath& p, bool allow_zero,
                         uint64_t& out) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    if (!spanprof::internal::ParseHexId(s, &out) || (!allow_zero && out == 0)) {
      return json_.Error(
          p, Cat(allow_zero ? "expected 16 lowercase hex digits, got "
                            : "expected 16 lowercase hex digits, not all "
                              "zero, got ",
                 Quote(s)));
    }
    return absl::OkStatus();
  }

  // metadata.exported_span_ids: sorted by span (entries of one span keep
  // their export order).
  absl::Status ReadExportedSpanIds(value& v, const JsonPath& p,
                                   std::vector<ExportedSpanId>& out) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          ExportedSpanId& e = out.emplace_back();
          if (absl::Status read = json_.ReadObject(
                  o, ep, kExportedSpanIdFields,
                  [&](size_t field, value& fv, const JsonPath& fp) {
                    if (field == 0) {
                      return Assign(json_.Int(fv, fp, 1, INT64_MAX), e.span);
                    }
                    return ReadHexId(fv, fp, /*allow_zero=*/false,
                                     e.external_id);
                  });
              !read.ok()) {
            return read;
          }
          if (out.size() > 1 && out[out.size() - 2].span > e.span) {
            return json_.Error(ep.Field(kExportedSpanIdKeys[0]),
                               "entries must be sorted by span");
          }
          return absl::OkStatus();
        });
  }

  // metadata.processes: a merged capture's processes (ProcessInfo).
  absl::Status ReadProcesses(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          ProcessInfo& process = capture_.processes.emplace_back();
          return json_.ReadObject(
              o, ep, kProcessFields,
              [&](size_t field, value& fv, const JsonPath& fp) {
                return ReadProcessField(static_cast<ProcessField>(field), fv,
                                        fp, process);
              });
        });
  }

  absl::Status ReadProcessField(ProcessField field, value& fv,
                                const JsonPath& fp, ProcessInfo& process) {
    switch (field) {
      case kProcPid:
        return Assign(json_.NonNegative(fv, fp), process.pid);
      case kProcProcessName:
        return ReadString(fv, fp, process.process_name);
      case kProcHost:
        return ReadString(fv, fp, process.host);
      case kProcClock:
        return ReadOneOf(fv, fp, "tsc", "monotonic", process.clock);
      case kProcTraceId:
        return ReadTraceId(fv, fp, process.trace_id);
      case kProcWallClockAnchorNs:
        return Assign(json_.Int(fv, fp, INT64_MIN, INT64_MAX),
                      process.wall_clock_anchor_ns);
      case kProcWallClockUncertaintyNs:
        return Assign(json_.NonNegative(fv, fp),
                      process.wall_clock_uncertainty_ns);
      case kProcTimeOffsetNs:
        return Assign(json_.NonNegative(fv, fp), process.time_offset_ns);
      case kProcWindowNs:
        return Assign(json_.NonNegative(fv, fp), process.window_ns);
      case kProcRemoteParentSpanId:
        return ReadHexId(fv, fp, /*allow_zero=*/true,
                         process.remote_parent_span_id);
      case kProcSpanIdSeed:
        return ReadHexId(fv, fp, /*allow_zero=*/true, process.span_id_seed);
      case kProcSpanIdOffset:
        return Assign(json_.Unsigned(fv, fp), process.span_id_offset);
      case kProcExportedSpanIds:
        return ReadExportedSpanIds(fv, fp, process.exported_span_ids);
    }
    return absl::InternalError("unhandled process field");
  }

  absl::Status ReadThreads(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          ThreadInfo& thread = capture_.threads.emplace_back();
          uint8_t& has_process = thread_has_process_.emplace_back(0);
          return json_.ReadObject(
              o, ep, kThreadFields,
              [&](size_t field, value& fv, const JsonPath& fp) {
                if (field == 0)
                  return Assign(json_.Unsigned(fv, fp), thread.os_tid);
                if (field == 1) return ReadString(fv, fp, thread.name);
                if (field == 3) {
                  has_process = 1;
                  return Assign(json_.Int(fv, fp, 0, UINT32_MAX),
                                thread.process);
                }
                return Assign(json_.Int(fv, fp, 0, UINT32_MAX),
                              thread.sort_index);
              });
        });
  }

  absl::Status ReadSites(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
          Site& site = capture_.sites.emplace_back();
          std::string* const targets[] = {
              &site.name,    &site.phase, &site.module, &site.activity,
              &site.backend, &site.dtype, &site.device};
          static_assert(std::size(targets) == kSiteKeys.size());
          return json_.ReadObject(
              o, ep, kSiteFields,
              [&](size_t field, value& fv, const JsonPath& fp) {
                return ReadString(fv, fp, *targets[field]);
              });
        });
  }

  StrictJson json_;
  Capture& capture_;
  std::vector<uint8_t> thread_has_process_;  // per metadata.threads entry
};

// `sorted_tids` and `sorted_pids`, from the threads and processes read.
void IndexThreads(TraceMetadata& metadata) {
  const Capture& capture = metadata.capture;
  metadata.sorted_tids.clear();
  for (uint32_t t = 0; t < capture.threads.size(); ++t) {
    metadata.sorted_tids.emplace_back(ThreadPid(capture, t),
                                      capture.threads[t].os_tid);
  }
  std::sort(metadata.sorted_tids.begin(), metadata.sorted_tids.end());
  metadata.sorted_pids.clear();
  for (const ProcessInfo& process : capture.processes) {
    metadata.sorted_pids.push_back(process.pid);
  }
  if (metadata.sorted_pids.empty()) {
    metadata.sorted_pids.push_back(capture.pid);
  }
  std::sort(metadata.sorted_pids.begin(), metadata.sorted_pids.end());
}

}  // namespace

absl::Status ReadTraceMetadata(std::string_view source, value& v,
                               const JsonPath& path, TraceMetadata& out) {
  SPANPROF_RETURN_IF_ERROR(MetadataReader(source, out).ReadMetadata(v, path));
  IndexThreads(out);
  return absl::OkStatus();
}

absl::Status CheckDisplayTimeUnit(const StrictJson& json, value& v,
                                  const JsonPath& path) {
  SPANPROF_ASSIGN_OR_RETURN(std::string_view unit, json.String(v, path));
  if (unit != "ns") {
    return json.Error(path, Cat("expected \"ns\", got ", Quote(unit)));
  }
  return absl::OkStatus();
}

absl::StatusOr<TraceMetadata> ParseTraceMetadata(std::string_view json,
                                                 std::string_view source) {
  const StrictJson strict(source);
  ParsedDocument document(json);
  SPANPROF_ASSIGN_OR_RETURN(object root, document.Start(strict));
  TraceMetadata metadata;
  const JsonPath root_path = JsonPath::Root();
  const JsonPath path = root_path.Field("metadata");
  SPANPROF_RETURN_IF_ERROR(
      MetadataReader(source, metadata).ReadMetadataObject(root, path));
  SPANPROF_RETURN_IF_ERROR(document.Finish(strict));
  IndexThreads(metadata);
  return metadata;
}

}  // namespace spanprof::analysis::internal
