// The `spanprof.comparison` document of a comparison (`ComparisonToJson()`).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "json/json_writer.h"
#include "spanprof/analysis/compare.h"
#include "summary/row_key_json.h"

namespace spanprof::analysis {
namespace {

void WriteOptionalDouble(JsonWriter& w, std::string_view key,
                         std::optional<double> v) {
  w.Key(key);
  if (v.has_value()) {
    w.Double(*v);
  } else {
    w.Null();
  }
}

void WritePolicy(JsonWriter& w, const ComparePolicy& policy, bool runs) {
  w.BeginObject();
  w.Key("absolute_tolerance_ns");
  w.Int(policy.absolute_tolerance_ns);
  w.Key("relative_tolerance_bps");
  w.Int(policy.relative_tolerance_bps);
  w.Key("fail_on_new");
  w.Bool(policy.fail_on_new);
  w.Key("fail_on_missing");
  w.Bool(policy.fail_on_missing);
  w.Key("allow_incomplete");
  w.Bool(policy.allow_incomplete);
  w.Key("allow_missing");
  w.Bool(policy.allow_missing);
  if (runs) {
    w.Key("confidence");
    w.Double(policy.confidence);
    w.Key("fail_on_unknown");
    w.Bool(policy.fail_on_unknown);
  }
  w.EndObject();
}

void WriteOptionalInt(JsonWriter& w, std::string_view key,
                      std::optional<int64_t> v) {
  w.Key(key);
  w.OptionalInt(v);
}

// The verdict of a row compared over runs: null for a key one side lacks.
std::optional<std::string_view> Verdict(const ComparisonRow& row) {
  switch (row.status) {
    case RowStatus::kRegressed:
    case RowStatus::kImproved:
    case RowStatus::kSame:
    case RowStatus::kUnknown:
      return RowStatusName(row.status);
    default:
      return std::nullopt;
  }
}

// Schema version 2's fields of a row compared over runs.
void WriteRunFields(JsonWriter& w, const ComparisonRow& row) {
  w.Key("runs_baseline");
  w.Uint(row.runs_baseline);
  w.Key("runs_candidate");
  w.Uint(row.runs_candidate);
  WriteOptionalDouble(w, "delta_ci_low", row.delta_ci_low);
  WriteOptionalDouble(w, "delta_ci_high", row.delta_ci_high);
  WriteOptionalDouble(w, "p_value", row.p_value);
  w.Key("verdict");
  if (const std::optional<std::string_view> verdict = Verdict(row)) {
    w.String(*verdict);
  } else {
    w.Null();
  }
  w.Key("reason");
  w.String(row.reason);
}

void WriteRow(JsonWriter& w, const ComparisonRow& row, bool runs) {
  w.BeginObject();
  w.Key("key");
  internal::WriteRowKey(w, row.key);
  w.Key("label");
  w.String(row.label);
  w.Key("status");
  w.String(RowStatusName(row.status));
  WriteOptionalInt(w, "base", row.base);
  WriteOptionalInt(w, "candidate", row.candidate);
  if (runs) {
    WriteOptionalDouble(w, "delta", row.shift);
  } else {
    WriteOptionalInt(w, "delta", row.delta);
  }
  WriteOptionalInt(w, "change_bps", row.change_bps);
  w.Key("base_calls");
  w.Uint(row.base_calls);
  w.Key("candidate_calls");
  w.Uint(row.candidate_calls);
  if (runs) WriteRunFields(w, row);
  w.EndObject();
}

void WriteCounts(JsonWriter& w, const ComparisonCounts& c, bool runs) {
  w.BeginObject();
  w.Key("regressed");
  w.Uint(c.regressed);
  w.Key("improved");
  w.Uint(c.improved);
  w.Key("within");
  w.Uint(c.within);
  w.Key("new");
  w.Uint(c.new_keys);
  w.Key("missing");
  w.Uint(c.missing);
  w.Key("not_measured");
  w.Uint(c.not_measured);
  if (runs) {
    w.Key("same");
    w.Uint(c.same);
    w.Key("unknown");
    w.Uint(c.unknown);
  }
  w.EndObject();
}

}  // namespace

std::string ComparisonToJson(const Comparison& comparison) {
  std::string out;
  // Rows one per line: readable in a diff, still compact.
  JsonWriter w(&out, {.indent = 2, .line_depth = 2});
  w.BeginObject();
  w.Key("schema");
  w.String(kComparisonSchema);
  w.Key("schema_version");
  const bool runs = comparison.runs;
  w.Int(runs ? kComparisonRunsSchemaVersion : kComparisonSchemaVersion);
  w.Key("metric");
  w.String(MetricLabel(comparison.policy));
  w.Key("policy");
  WritePolicy(w, comparison.policy, runs);
  w.Key("base");
  w.String(comparison.base_path);
  w.Key("candidate");
  w.String(comparison.candidate_path);
  if (runs) {
    w.Key("base_runs");
    w.Uint(comparison.base_runs);
    w.Key("candidate_runs");
    w.Uint(comparison.candidate_runs);
    w.Key("row_confidence");
    w.Double(comparison.row_confidence);
  }
  w.Key("rows");
  w.BeginArray();
  for (const ComparisonRow& row : comparison.rows) WriteRow(w, row, runs);
  w.EndArray();
  w.Key("counts");
  WriteCounts(w, comparison.counts, runs);
  w.Key("no_evidence");
  if (comparison.no_evidence.empty()) {
    w.Null();
  } else {
    w.String(comparison.no_evidence);
  }
  w.Key("passed");
  w.Bool(comparison.passed);
  w.EndObject();
  w.Newline();
  return out;
}

}  // namespace spanprof::analysis
