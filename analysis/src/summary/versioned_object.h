// versioned_object.h — reading one object of a summary with the fields that
// the document's version has (private to the analysis library; the reader's
// steps share it).
//
// summary_format.h's tables give each field the versions that have it; here
// each version's list becomes the `FieldSpec`s of `StrictJson::ReadObject()`
// at compile time, so a field of another version is "unknown" and a required
// field of this version that is absent is "missing".
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_VERSIONED_OBJECT_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_VERSIONED_OBJECT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"
#include "summary/summary_format.h"

namespace spanprof::analysis::internal {

// Version `kVersion`'s fields of `kTable` (indexes into the table), and their
// specs in the same order.
template <const auto& kTable, int64_t kVersion>
inline constexpr auto kFieldsOfVersion = FieldsIn<kTable, kVersion>();

template <const auto& kTable, int64_t kVersion>
inline constexpr auto kSpecsOfVersion = [] {
  constexpr auto& fields = kFieldsOfVersion<kTable, kVersion>;
  std::array<FieldSpec, fields.size()> specs{};
  for (size_t i = 0; i < fields.size(); ++i) {
    specs[i] = FieldSpec{kTable[fields[i]].name, kTable[fields[i]].required};
  }
  return specs;
}();

template <const auto& kTable, int64_t kVersion, typename OnField>
absl::Status ReadObjectAs(const StrictJson& json,
                          simdjson::ondemand::object& object,
                          const JsonPath& path, OnField& on_field) {
  return json.ReadObject(
      object, path, kSpecsOfVersion<kTable, kVersion>,
      [&](size_t i, simdjson::ondemand::value& value, const JsonPath& p) {
        return on_field(kFieldsOfVersion<kTable, kVersion>[i], value, p);
      });
}

template <const auto& kTable, typename OnField, int64_t... kBelow>
absl::Status ReadObjectOfVersion(const StrictJson& json,
                                 simdjson::ondemand::object& object,
                                 const JsonPath& path, int64_t version,
                                 OnField& on_field,
                                 std::integer_sequence<int64_t, kBelow...>) {
  absl::Status status;
  const bool known =
      ((version == kBelow + 1 && (status = ReadObjectAs<kTable, kBelow + 1>(
                                      json, object, path, on_field),
                                  true)) ||
       ...);
  if (!known) {
    return absl::InternalError(
        Cat("no field list for summary version ", version));
  }
  return status;
}

// `ReadVersionedObject<kTable>()` is `StrictJson::ReadObject()` over version
// `version`'s fields of `kTable` (1 to `kSummarySchemaVersion`):
// `on_field(field, value, path)` gets `field`, the index into the table
// (`SummaryField`, `RowField`, ...), whatever the version.
template <const auto& kTable, typename OnField>
absl::Status ReadVersionedObject(const StrictJson& json,
                                 simdjson::ondemand::object& object,
                                 const JsonPath& path, int64_t version,
                                 OnField&& on_field) {
  return ReadObjectOfVersion<kTable>(
      json, object, path, version, on_field,
      std::make_integer_sequence<int64_t, kSummarySchemaVersion>());
}

// `Assign()` stores a read value, or returns the error that replaced it.
template <typename T, typename U>
absl::Status Assign(absl::StatusOr<T> result, U& out) {
  if (!result.ok()) return result.status();
  out = *std::move(result);
  return absl::OkStatus();
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_VERSIONED_OBJECT_H_
