// A summary row's named counters (version 2).
#include "summary/row_counters_reader.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"
#include "status_macros.h"
#include "summary/summary_format.h"
#include "summary/versioned_object.h"

namespace spanprof::analysis::internal {

absl::Status ReadRowCounters(const StrictJson& json,
                             simdjson::ondemand::value& value,
                             const JsonPath& path, int64_t version,
                             std::vector<RowCounter>& counters) {
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object o,
                            json.Object(value, path));
  for (auto field_result : o) {
    simdjson::ondemand::field field;
    simdjson::error_code error = std::move(field_result).get(field);
    if (error != simdjson::SUCCESS) return json.Simdjson(error, path);
    std::string_view name;
    error = field.unescaped_key().get(name);
    if (error != simdjson::SUCCESS) return json.Simdjson(error, path);
    const JsonPath cp = path.Field(name);
    if (name.empty()) return json.Error(path, "a counter name is empty");
    if (!counters.empty() && name <= counters.back().name) {
      return json.Error(cp, name == counters.back().name
                                ? "duplicate counter"
                                : "counters are not sorted by name");
    }
    RowCounter& counter = counters.emplace_back();
    counter.name = std::string(name);
    SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object co,
                              json.Object(field.value(), cp));
    SPANPROF_RETURN_IF_ERROR(ReadVersionedObject<kRowCounterFields>(
        json, co, cp, version,
        [&](size_t f, simdjson::ondemand::value& fv, const JsonPath& fp) {
          return Assign(json.NonNegative(fv, fp),
                        f == kCounterTotal ? counter.total : counter.self);
        }));
  }
  return absl::OkStatus();
}

}  // namespace spanprof::analysis::internal
