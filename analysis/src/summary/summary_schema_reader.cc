// The summary's schema and version, checked before its fields are read.
#include "summary/summary_schema_reader.h"

#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"
#include "status_macros.h"
#include "summary/summary_format.h"

namespace spanprof::analysis::internal {

absl::StatusOr<int64_t> ReadSchemaVersion(const StrictJson& json,
                                          simdjson::ondemand::object& root) {
  const JsonPath path = JsonPath::Root();
  const std::string_view schema_key = kSummaryFields[kRootSchema].name;
  const std::string_view version_key = kSummaryFields[kRootSchemaVersion].name;
  bool has_schema = false;
  bool has_version = false;
  int64_t version = kSummarySchemaVersion;
  for (auto field_result : root) {
    simdjson::ondemand::field field;
    simdjson::error_code error = std::move(field_result).get(field);
    if (error != simdjson::SUCCESS) return json.Simdjson(error, path);
    std::string_view key;
    error = field.unescaped_key().get(key);
    if (error != simdjson::SUCCESS) return json.Simdjson(error, path);
    simdjson::ondemand::value v = field.value();
    if (key == schema_key && !has_schema) {
      has_schema = true;
      SPANPROF_ASSIGN_OR_RETURN(std::string_view schema,
                                json.String(v, path.Field(schema_key)));
      if (schema != kSummarySchema) {
        return json.Error(
            path.Field(schema_key),
            Cat("expected \"", kSummarySchema, "\", got ", Quote(schema)));
      }
    } else if (key == version_key && !has_version) {
      has_version = true;
      const JsonPath version_path = path.Field(version_key);
      SPANPROF_ASSIGN_OR_RETURN(
          version, json.Int(v, version_path, INT64_MIN, INT64_MAX));
      if (version < 1 || version > kSummarySchemaVersion) {
        return json.Error(version_path,
                          Cat("unsupported schema_version ", version,
                              " (this reader reads versions 1 to ",
                              kSummarySchemaVersion, ")"));
      }
    } else if (key == "traceEvents") {
      return json.Error(path,
                        "this is a trace, not a spanprof summary (it has "
                        "\"traceEvents\")");
    }
  }
  if (!has_schema) {
    return json.Error(path,
                      "missing field \"schema\" (not a spanprof summary)");
  }
  return version;
}

}  // namespace spanprof::analysis::internal
