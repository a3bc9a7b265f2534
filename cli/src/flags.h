// flags.h — the command-line flag parser shared by every command (private to
// the CLI).
//
// Accepts `--flag VALUE`, `--flag=VALUE`, switches (`--fail-on-new`), short
// aliases (`-o OUT`), and `--` to end flags. `--help` / `-h` anywhere before
// `--` wins over everything else, so `spanprof compare --bogus --help` prints
// help. Unknown flags, a missing value, a value given to a switch and a flag
// given twice are errors naming the flag.
#ifndef SPANPROF_CLI_SRC_FLAGS_H_
#define SPANPROF_CLI_SRC_FLAGS_H_

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace spanprof::cli::internal {

// `FlagSpec` declares one flag of a command.
struct FlagSpec {
  std::string_view name;        // "--metric"
  std::string_view alias;       // "-o", or empty
  bool takes_value = false;     // false: a switch
  std::string_view value_name;  // "M", for usage text
};

// `ParsedFlags` is the result of `ParseFlags()`. Flags are stored under their
// long name.
struct ParsedFlags {
  bool help = false;
  std::vector<std::string> positionals;
  std::map<std::string, std::string, std::less<>> values;
  std::set<std::string, std::less<>> switches;

  bool Has(std::string_view name) const {
    return switches.find(name) != switches.end();
  }
  std::optional<std::string> Value(std::string_view name) const {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
};

// `ParseFlags()` splits `args` (the words after the command name) into
// positionals and flags declared by `specs`.
absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       std::span<const FlagSpec> specs);

// `ParseNonNegativeInt()` reads a flag value that must be a non-negative
// decimal integer fitting int64 (no sign, no spaces, no exponent); errors
// name `flag`.
absl::StatusOr<int64_t> ParseNonNegativeInt(std::string_view flag,
                                            std::string_view text);

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_FLAGS_H_
