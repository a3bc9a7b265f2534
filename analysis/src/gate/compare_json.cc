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

void WritePolicy(JsonWriter& w, const ComparePolicy& policy) {
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
  w.EndObject();
}

void WriteOptionalInt(JsonWriter& w, std::string_view key,
                      std::optional<int64_t> v) {
  w.Key(key);
  w.OptionalInt(v);
}

void WriteRow(JsonWriter& w, const ComparisonRow& row) {
  w.BeginObject();
  w.Key("key");
  internal::WriteRowKey(w, row.key);
  w.Key("label");
  w.String(row.label);
  w.Key("status");
  w.String(RowStatusName(row.status));
  WriteOptionalInt(w, "base", row.base);
  WriteOptionalInt(w, "candidate", row.candidate);
  WriteOptionalInt(w, "delta", row.delta);
  WriteOptionalInt(w, "change_bps", row.change_bps);
  w.Key("base_calls");
  w.Uint(row.base_calls);
  w.Key("candidate_calls");
  w.Uint(row.candidate_calls);
  w.EndObject();
}

void WriteCounts(JsonWriter& w, const ComparisonCounts& c) {
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
  w.Int(kComparisonSchemaVersion);
  w.Key("metric");
  w.String(MetricLabel(comparison.policy));
  w.Key("policy");
  WritePolicy(w, comparison.policy);
  w.Key("base");
  w.String(comparison.base_path);
  w.Key("candidate");
  w.String(comparison.candidate_path);
  w.Key("rows");
  w.BeginArray();
  for (const ComparisonRow& row : comparison.rows) WriteRow(w, row);
  w.EndArray();
  w.Key("counts");
  WriteCounts(w, comparison.counts);
  w.Key("passed");
  w.Bool(comparison.passed);
  w.EndObject();
  w.Newline();
  return out;
}

}  // namespace spanprof::analysis
