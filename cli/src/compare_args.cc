#include "spanprof/cli/compare_args.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "flags.h"
#include "spanprof/analysis/compare.h"

namespace spanprof::cli {
namespace {

constexpr internal::FlagSpec kCompareFlags[] = {
    {"--metric", "", true, "M"},
    {"--absolute-tolerance", "", true, "NS"},
    {"--relative-tolerance-bps", "", true, "BPS"},
    {"--json", "", true, "OUT"},
    {"--fail-on-new", "", false, ""},
    {"--fail-on-missing", "", false, ""},
    {"--allow-incomplete", "", false, ""},
    {"--confidence", "", true, "C"},
    {"--fail-on-unknown", "", false, ""},
    {"--group-by-arg", "", true, "ARG"},
};

}  // namespace

absl::StatusOr<CompareArgs> ParseCompareArgs(
    const std::vector<std::string>& args) {
  absl::StatusOr<internal::ParsedFlags> flags =
      internal::ParseFlags(args, kCompareFlags);
  if (!flags.ok()) return flags.status();
  CompareArgs out;
  if (flags->help) {
    out.help = true;
    return out;
  }
  if (flags->positionals.size() < 2) {
    return absl::InvalidArgumentError(flags->positionals.empty()
                                          ? "missing arguments BASE and CAND"
                                          : "missing argument CAND");
  }
  if (flags->positionals.size() > 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unexpected argument \"%s\" (compare takes BASE and CAND)",
        flags->positionals[2]));
  }
  out.base_path = flags->positionals[0];
  out.candidate_path = flags->positionals[1];
  if (out.base_path.empty() || out.candidate_path.empty()) {
    return absl::InvalidArgumentError("BASE and CAND must not be empty");
  }
  if (std::optional<std::string> metric = flags->Value("--metric")) {
    absl::Status parsed = analysis::ParseMetric(*metric, out.policy);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--metric: %s", parsed.message()));
    }
  }
  if (std::optional<std::string> text = flags->Value("--absolute-tolerance")) {
    absl::StatusOr<int64_t> v =
        internal::ParseNonNegativeInt("--absolute-tolerance", *text);
    if (!v.ok()) return v.status();
    out.policy.absolute_tolerance_ns = *v;
  }
  if (std::optional<std::string> text =
          flags->Value("--relative-tolerance-bps")) {
    absl::StatusOr<int64_t> v =
        internal::ParseNonNegativeInt("--relative-tolerance-bps", *text);
    if (!v.ok()) return v.status();
    out.policy.relative_tolerance_bps = *v;
    out.relative_tolerance_given = true;
  }
  if (std::optional<std::string> json = flags->Value("--json")) {
    if (json->empty()) {
      return absl::InvalidArgumentError("--json: the output path is empty");
    }
    out.json_path = *json;
  }
  if (std::optional<std::string> text = flags->Value("--confidence")) {
    double confidence = 0;
    if (!absl::SimpleAtod(*text, &confidence) || !(confidence > 0.5) ||
        !(confidence < 1)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--confidence: \"%s\" is not a number between 0.5 and 1 "
          "(e.g. 0.95)",
          *text));
    }
    out.policy.confidence = confidence;
  }
  if (std::optional<std::string> arg = flags->Value("--group-by-arg")) {
    if (arg->empty()) {
      return absl::InvalidArgumentError(
          "--group-by-arg: the argument name is empty");
    }
    out.group_by_arg = *arg;
  }
  out.policy.fail_on_unknown = flags->Has("--fail-on-unknown");
  out.policy.fail_on_new = flags->Has("--fail-on-new");
  out.policy.fail_on_missing = flags->Has("--fail-on-missing");
  out.policy.allow_incomplete = flags->Has("--allow-incomplete");
  return out;
}

}  // namespace spanprof::cli
