#include "spanprof/cli/compare_args.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flags.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/table_output.h"

namespace spanprof::cli {
namespace {

constexpr internal::FlagSpec kCompareFlags[] = {
    {"--metric", "", true, "M"},
    {"--absolute-tolerance", "", true, "ABS"},
    {"--relative-tolerance", "", true, "REL"},
    {"--relative-tolerance-bps", "", true, "BPS"},
    {"--json", "", true, "OUT"},
    {"--format", "", true, "FORMAT"},
    {"--junit", "", true, "OUT.xml"},
    {"--fail-on-new", "", false, ""},
    {"--fail-on-missing", "", false, ""},
    {"--allow-incomplete", "", false, ""},
    {"--allow-missing", "", false, ""},
    {"--confidence", "", true, "C"},
    {"--fail-on-unknown", "", false, ""},
    {"--group-by-arg", "", true, "ARG"},
};

// A decimal `DIGITS` or `DIGITS.DIGITS`: mantissa / 10^decimals.
struct Decimal {
  absl::uint128 mantissa = 0;
  int decimals = 0;
};

// Nothing but ASCII digits and at most one inner point; at most 28 digits,
// so that the mantissa times a scale up to 10^9 fits 128 bits.
std::optional<Decimal> ParseDecimal(std::string_view text) {
  constexpr size_t kMaxDigits = 28;
  Decimal out;
  bool point = false;
  size_t digits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !point && i > 0 && i + 1 < text.size()) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9' || ++digits > kMaxDigits) return std::nullopt;
    out.mantissa = out.mantissa * 10 + static_cast<uint64_t>(c - '0');
    if (point) ++out.decimals;
  }
  if (digits == 0) return std::nullopt;
  return out;
}

// `value` × `scale` when it is a whole number that fits int64; "fraction"
// and "too large" errors are left to the caller (nullopt, with `whole`
// telling which).
std::optional<int64_t> Scale(const Decimal& value, int64_t scale, bool* whole) {
  absl::uint128 divisor = 1;
  for (int i = 0; i < value.decimals; ++i) divisor *= 10;
  const absl::uint128 scaled = value.mantissa * static_cast<uint64_t>(scale);
  *whole = scaled % divisor == 0;
  if (!*whole) return std::nullopt;
  const absl::uint128 result = scaled / divisor;
  if (result > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(result);
}

// `number` (a decimal) × `scale` as a whole int64, or an error whose
// message says why in parentheses (empty when `number` is no decimal).
absl::StatusOr<int64_t> ScaleDecimal(std::string_view number, int64_t scale,
                                     std::string_view unit) {
  const std::optional<Decimal> value = ParseDecimal(number);
  if (!value.has_value()) return absl::InvalidArgumentError("");
  bool whole = true;
  const std::optional<int64_t> scaled = Scale(*value, scale, &whole);
  if (scaled.has_value()) return *scaled;
  return absl::InvalidArgumentError(
      whole ? std::string(" (too large)")
            : absl::StrFormat(" (finer than %s)", unit));
}

struct Unit {
  std::string_view suffix;
  int64_t ns;
};

// Longest suffixes first: "ms" before "s".
constexpr Unit kDurationUnits[] = {
    {"ns", 1}, {"us", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}};

absl::Status ResolveTolerances(const internal::ParsedFlags& flags,
                               CompareArgs& out) {
  const bool is_duration = analysis::IsDurationMetric(out.policy.metric);
  out.policy.absolute_tolerance_ns =
      analysis::DefaultAbsoluteTolerance(out.policy.metric);
  out.policy.relative_tolerance_bps =
      analysis::DefaultRelativeToleranceBps(out.policy.metric);
  if (std::optional<std::string> text = flags.Value("--absolute-tolerance")) {
    absl::StatusOr<int64_t> v = ParseAbsoluteTolerance(*text, is_duration);
    if (!v.ok()) return v.status();
    out.policy.absolute_tolerance_ns = *v;
    out.absolute_tolerance_given = true;
  }
  const std::optional<std::string> relative =
      flags.Value("--relative-tolerance");
  const std::optional<std::string> bps =
      flags.Value("--relative-tolerance-bps");
  if (relative.has_value() && bps.has_value()) {
    return absl::InvalidArgumentError(
        "--relative-tolerance: give it or --relative-tolerance-bps, not both");
  }
  if (relative.has_value()) {
    absl::StatusOr<int64_t> v = ParseRelativeTolerance(*relative);
    if (!v.ok()) return v.status();
    out.policy.relative_tolerance_bps = *v;
    out.relative_tolerance_given = true;
  }
  if (bps.has_value()) {
    absl::StatusOr<int64_t> v =
        internal::ParseNonNegativeInt("--relative-tolerance-bps", *bps);
    if (!v.ok()) return v.status();
    out.policy.relative_tolerance_bps = *v;
    out.relative_tolerance_given = true;
  }
  return absl::OkStatus();
}

// `--format` and `--junit`: the outputs CI systems read.
absl::Status ParseCiFlags(const internal::ParsedFlags& flags,
                          CompareArgs& out) {
  if (std::optional<std::string> format = flags.Value("--format")) {
    // The table writer's formats, and GitHub workflow commands.
    if (*format != "github") {
      absl::StatusOr<analysis::TableFormat> parsed =
          analysis::ParseTableFormat(*format);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--format: unknown format \"%s\" (known: %s, github)", *format,
            analysis::kTableFormatNames));
      }
    }
    out.format = *format;
  }
  if (std::optional<std::string> junit = flags.Value("--junit")) {
    if (junit->empty()) {
      return absl::InvalidArgumentError("--junit: the output path is empty");
    }
    out.junit_path = *junit;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> ParseAbsoluteTolerance(std::string_view text,
                                               bool is_duration) {
  for (const Unit& unit : kDurationUnits) {
    if (!text.ends_with(unit.suffix)) continue;
    const std::string_view number =
        text.substr(0, text.size() - unit.suffix.size());
    if (!is_duration) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--absolute-tolerance: \"%s\" is a duration, but the metric is a "
          "count; give a plain integer in the metric's unit",
          text));
    }
    const absl::StatusOr<int64_t> ns =
        ScaleDecimal(number, unit.ns, "a nanosecond");
    if (ns.ok()) return *ns;
    return absl::InvalidArgumentError(absl::StrFormat(
        "--absolute-tolerance: expected a non-negative duration such as 50us "
        "or 1.5ms (units ns, us, ms, s), got \"%s\"%s",
        text, ns.status().message()));
  }
  absl::StatusOr<int64_t> ns =
      internal::ParseNonNegativeInt("--absolute-tolerance", text);
  if (ns.ok() || !is_duration) return ns;
  return absl::InvalidArgumentError(
      absl::StrCat(ns.status().message(),
                   "; or a duration with a unit ns, us, ms or s (50us, 1ms)"));
}

absl::StatusOr<int64_t> ParseRelativeTolerance(std::string_view text) {
  const bool percent = text.ends_with("%");
  const absl::StatusOr<int64_t> bps =
      ScaleDecimal(percent ? text.substr(0, text.size() - 1) : text,
                   percent ? 100 : 10'000, "one basis point, 0.01%");
  if (bps.ok() && !percent && *bps > 10'000) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--relative-tolerance: \"%s\" as a fraction is more than 100%%; "
        "write a percentage with %% (e.g. %s%% for %s percent)",
        text, text, text));
  }
  if (bps.ok()) return *bps;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--relative-tolerance: expected a percentage such as 5%% or a fraction "
      "such as 0.05, got \"%s\"%s",
      text, bps.status().message()));
}

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
  if (absl::Status resolved = ResolveTolerances(*flags, out); !resolved.ok()) {
    return resolved;
  }
  if (std::optional<std::string> json = flags->Value("--json")) {
    if (json->empty()) {
      return absl::InvalidArgumentError("--json: the output path is empty");
    }
    out.json_path = *json;
  }
  if (absl::Status ci = ParseCiFlags(*flags, out); !ci.ok()) return ci;
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
  out.policy.allow_missing = flags->Has("--allow-missing");
  return out;
}

namespace internal {

std::vector<FlagSpec> CompareFlagSpecs() {
  return {std::begin(kCompareFlags), std::end(kCompareFlags)};
}

}  // namespace internal

}  // namespace spanprof::cli
