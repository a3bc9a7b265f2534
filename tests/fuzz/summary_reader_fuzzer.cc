// Fuzzes the strict summary reader. Whatever it accepts must survive a round
// trip through the writer unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "absl/status/statusor.h"
#include "spanprof/analysis/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<spanprof::analysis::Summary> summary =
      spanprof::analysis::ParseSummary(json, "fuzz");
  if (!summary.ok()) return 0;
  absl::StatusOr<spanprof::analysis::Summary> again =
      spanprof::analysis::ParseSummary(
          spanprof::analysis::SummaryToJson(*summary), "fuzz-again");
  if (!again.ok() || !(*again == *summary)) std::abort();
  return 0;
}
