// strict_values.h — how the trace reader's steps store what `StrictJson`
// read (private to the analysis library): `Assign()` a typed value or its
// error, `ReadString()` into an owned string.
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_STRICT_VALUES_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_STRICT_VALUES_H_

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"

namespace spanprof::analysis::internal {

// `Assign()` stores a read value in `out` (converted to its type), or
// returns the read's error.
template <typename T, typename U>
absl::Status Assign(absl::StatusOr<T> result, U& out) {
  if (!result.ok()) return result.status();
  out = static_cast<U>(*std::move(result));
  return absl::OkStatus();
}

// `ReadString()` reads a JSON string at `p` into `out`.
inline absl::Status ReadString(const StrictJson& json,
                               simdjson::ondemand::value& v, const JsonPath& p,
                               std::string& out) {
  absl::StatusOr<std::string_view> s = json.String(v, p);
  if (!s.ok()) return s.status();
  out.assign(s->data(), s->size());
  return absl::OkStatus();
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_STRICT_VALUES_H_
