// Fuzzes the `spanprof compare` argument parser: the input is split into
// words at NUL bytes (one word per argv entry).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/cli/compare_args.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.emplace_back();
    } else {
      words.back().push_back(static_cast<char>(data[i]));
    }
  }
  absl::StatusOr<spanprof::cli::CompareArgs> args =
      spanprof::cli::ParseCompareArgs(words);
  if (!args.ok() || args->help) return 0;
  // A parsed command line is always a usable policy.
  if (args->policy.absolute_tolerance_ns < 0 ||
      args->policy.relative_tolerance_bps < 0 || args->base_path.empty() ||
      args->candidate_path.empty()) {
    std::abort();
  }
  const std::string_view name =
      spanprof::analysis::CompareMetricName(args->policy.metric);
  absl::StatusOr<spanprof::analysis::CompareMetric> metric =
      spanprof::analysis::ParseCompareMetric(name);
  if (!metric.ok() || *metric != args->policy.metric) std::abort();
  return 0;
}
