// Fuzzes the strict trace reader and everything that consumes its capture:
// validation, the summary and folded stacks. An accepted trace must survive
// a round trip through the writer (compared as text, so NaN arguments count
// as equal).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "spanprof/analysis/folded.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  spanprof::analysis::ValidateArtifact(json, "fuzz");
  absl::StatusOr<spanprof::Capture> capture =
      spanprof::analysis::ParseTrace(json, "fuzz");
  if (!capture.ok()) return 0;
  const std::string written = spanprof::analysis::TraceToJson(*capture);
  absl::StatusOr<spanprof::Capture> again =
      spanprof::analysis::ParseTrace(written, "fuzz-again");
  if (!again.ok() || spanprof::analysis::TraceToJson(*again) != written) {
    std::abort();
  }
  const spanprof::analysis::Summary summary =
      spanprof::analysis::Summarize(*capture);
  if (!spanprof::analysis::ParseSummary(
           spanprof::analysis::SummaryToJson(summary), "fuzz-summary")
           .ok()) {
    std::abort();
  }
  spanprof::analysis::FoldedStacks(*capture);
  return 0;
}
