#include "output_paths.h"

#include <ostream>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "spanprof/analysis/file_io.h"

namespace spanprof::cli::internal {

absl::Status CheckOutputPaths(std::span<const std::string> inputs,
                              std::span<const OutputPath> outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputPath& output = outputs[i];
    for (const std::string& input : inputs) {
      if (output.path == analysis::kStandardOutputPath) break;
      if (analysis::SameOutputTarget(output.path, input)) {
        return absl::InvalidArgumentError(absl::StrCat(
            output.flag, " ", output.path, " is the input ", input,
            ": refusing to overwrite an input (write elsewhere, then move "
            "it)"));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (analysis::SameOutputTarget(output.path, outputs[j].path)) {
        return absl::InvalidArgumentError(
            absl::StrCat(outputs[j].flag, " ", outputs[j].path, " and ",
                         output.flag, " ", output.path,
                         " name the same file: one output would replace the "
                         "other"));
      }
    }
  }
  return absl::OkStatus();
}

std::ostream& TextStream(const CommandIo& io,
                         std::span<const OutputPath> outputs) {
  for (const OutputPath& output : outputs) {
    if (output.path == analysis::kStandardOutputPath) return io.err;
  }
  return io.out;
}

}  // namespace spanprof::cli::internal
