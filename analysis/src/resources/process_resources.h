// process_resources.h — the `process_resources` object that traces (in
// `metadata`) and summaries both carry (private to the analysis library):
// its fields in order, their one writer and their one strict reader.
#ifndef SPANPROF_ANALYSIS_SRC_RESOURCES_PROCESS_RESOURCES_H_
#define SPANPROF_ANALYSIS_SRC_RESOURCES_PROCESS_RESOURCES_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "json/json_writer.h"
#include "json/strict_json.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// `ResourceField` is one field: its JSON name and the member it holds.
struct ResourceField {
  std::string_view name;
  int64_t ProcessResources::*member;
};
inline constexpr ResourceField kResourceFields[] = {
    {"user_cpu_ns", &ProcessResources::user_cpu_ns},
    {"system_cpu_ns", &ProcessResources::system_cpu_ns},
    {"peak_rss_kib", &ProcessResources::peak_rss_kib},
    {"minor_page_faults", &ProcessResources::minor_page_faults},
    {"major_page_faults", &ProcessResources::major_page_faults},
    {"voluntary_context_switches",
     &ProcessResources::voluntary_context_switches},
    {"involuntary_context_switches",
     &ProcessResources::involuntary_context_switches},
};

// `WriteProcessResources()` writes the object (the key is the caller's).
void WriteProcessResources(JsonWriter& w, const ProcessResources& resources);

// `ReadProcessResources()` reads the object at `path`: exactly the fields
// above, each a non-negative integer.
absl::Status ReadProcessResources(const StrictJson& json,
                                  simdjson::ondemand::value& value,
                                  const JsonPath& path,
                                  ProcessResources& resources);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_RESOURCES_PROCESS_RESOURCES_H_
