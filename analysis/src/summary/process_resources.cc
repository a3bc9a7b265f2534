// The `process_resources` object's writer and reader.
#include "summary/process_resources.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/json_writer.h"
#include "json/strict_json.h"
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

void WriteProcessResources(JsonWriter& w, const ProcessResources& resources) {
  w.BeginObject();
  for (const ResourceField& field : kResourceFields) {
    w.Key(field.name);
    w.Int(resources.*field.member);
  }
  w.EndObject();
}

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
