// The `process_resources` object's strict reader (the writer is in
// process_resources.cc).
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "resources/process_resources.h"
#include "spanprof/capture.h"
#include "status_macros.h"

namespace spanprof::analysis::internal {
namespace {

constexpr size_t kFieldCount = std::size(kResourceFields);

constexpr std::array<FieldSpec, kFieldCount> ResourceSpecs() {
  std::array<FieldSpec, kFieldCount> specs;
  for (size_t i = 0; i < kFieldCount; ++i) {
    specs[i] = FieldSpec{kResourceFields[i].name};
  }
  return specs;
}
constexpr std::array<FieldSpec, kFieldCount> kResourceSpecs = ResourceSpecs();

}  // namespace

absl::Status ReadProcessResources(const StrictJson& json,
                                  simdjson::ondemand::value& value,
                                  const JsonPath& path,
                                  ProcessResources& resources) {
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object object,
                            json.Object(value, path));
  return json.ReadObject(object, path, kResourceSpecs,
                         [&](size_t field, simdjson::ondemand::value& v,
                             const JsonPath& p) -> absl::Status {
                           SPANPROF_ASSIGN_OR_RETURN(
                               resources.*kResourceFields[field].member,
                               json.NonNegative(v, p));
                           return absl::OkStatus();
                         });
}

}  // namespace spanprof::analysis::internal
