#include "flags.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "spanprof/internal/closest_name.h"
#include "spanprof/internal/parse_int.h"

namespace spanprof::cli::internal {
namespace {

const FlagSpec* Find(std::span<const FlagSpec> specs, std::string_view word) {
  for (const FlagSpec& spec : specs) {
    if (spec.name == word || (!spec.alias.empty() && spec.alias == word)) {
      return &spec;
    }
  }
  return nullptr;
}

// "unknown flag --metrc (did you mean --metric?)": the suggestion only when
// a declared flag is close to what was typed.
absl::Status UnknownFlag(std::span<const FlagSpec> specs,
                         std::string_view name) {
  std::vector<std::string_view> names;
  for (const FlagSpec& spec : specs) names.push_back(spec.name);
  const std::string_view meant = spanprof::internal::ClosestName(name, names);
  if (meant.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("unknown flag %s", name));
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown flag %s (did you mean %s?)", name, meant));
}

bool IsHelp(std::string_view word) { return word == "--help" || word == "-h"; }

// A word that looks like a flag: "--x" or "-x" (but "-" alone and negative
// numbers such as "-5" are values, so tolerances can be rejected by value).
bool LooksLikeFlag(std::string_view word) {
  if (word.size() < 2 || word[0] != '-') return false;
  if (word[1] >= '0' && word[1] <= '9') return false;
  return true;
}

}  // namespace

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       std::span<const FlagSpec> specs) {
  ParsedFlags parsed;
  for (const std::string& word : args) {
    if (word == "--") break;
    if (IsHelp(word)) {
      parsed.help = true;
      return parsed;
    }
  }
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (flags_done || !LooksLikeFlag(word)) {
      parsed.positionals.push_back(word);
      continue;
    }
    if (word == "--") {
      flags_done = true;
      continue;
    }
    std::string_view name = word;
    std::optional<std::string> inline_value;
    if (const size_t eq = name.find('='); eq != std::string_view::npos) {
      inline_value = std::string(name.substr(eq + 1));
      name = name.substr(0, eq);
    }
    const FlagSpec* spec = Find(specs, name);
    if (spec == nullptr) return UnknownFlag(specs, name);
    const std::string key(spec->name);
    if (parsed.values.contains(key) || parsed.switches.contains(key)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("flag %s given more than once", spec->name));
    }
    if (!spec->takes_value) {
      if (inline_value.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("flag %s takes no value", spec->name));
      }
      parsed.switches.insert(key);
      continue;
    }
    if (!inline_value.has_value()) {
      if (i + 1 >= args.size() || args[i + 1] == "--" ||
          (args[i + 1].size() > 2 && args[i + 1].rfind("--", 0) == 0)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("flag %s needs a value (%s %s)", spec->name,
                            spec->name, spec->value_name));
      }
      inline_value = args[++i];
    }
    parsed.values.emplace(key, *std::move(inline_value));
  }
  return parsed;
}

absl::StatusOr<int64_t> ParseNonNegativeInt(std::string_view flag,
                                            std::string_view text) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected a non-negative integer, got \"%s\"%s", flag, text, why));
  };
  if (text.empty()) return bad("");
  if (text[0] == '-') return bad(" (negative)");
  // Digits beyond int64 are "too large" even when junk follows them.
  uint64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] =
      spanprof::internal::ParseDigits(text.data(), end, &value);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc() && value > static_cast<uint64_t>(INT64_MAX))) {
    return bad(" (too large)");
  }
  if (ec != std::errc() || ptr != end) return bad("");
  return static_cast<int64_t>(value);
}

}  // namespace spanprof::cli::internal
