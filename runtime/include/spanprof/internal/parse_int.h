// parse_int.h — the one decimal integer parser of spanprof (internal: the
// environment, the CLI flags and the analysis readers share it; not for
// users).
//
// Built on `std::from_chars`, so it accepts `[0-9]+` (with a leading '-' for
// the signed form): no '+', no spaces, no suffix. Leading zeros are accepted;
// a caller whose grammar forbids them (JSON) checks `HasLeadingZero()`.
// Header-only with no dependencies, so that every component can use it.
#ifndef SPANPROF_INTERNAL_PARSE_INT_H_
#define SPANPROF_INTERNAL_PARSE_INT_H_

#include <charconv>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace spanprof::internal {

// `ParseDigits()` reads the decimal digits at the start of [first, last)
// into `*out` (no sign). `ec` is `std::errc()` on success,
// `std::errc::invalid_argument` when no digit starts the range, and
// `std::errc::result_out_of_range` when the digits exceed uint64 (then `ptr`
// is still past them). For cursors that do not know where a number ends.
inline std::from_chars_result ParseDigits(const char* first, const char* last,
                                          uint64_t* out) {
  return std::from_chars(first, last, *out);
}

// `ParseUint64()` reads all of `text` as `[0-9]+` into `*out`. Returns
// `std::errc()`, `std::errc::invalid_argument` (empty, a sign, any other
// character) or `std::errc::result_out_of_range` (all digits, beyond uint64).
// `*out` is written only on success.
inline std::errc ParseUint64(std::string_view text, uint64_t* out) {
  uint64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = ParseDigits(text.data(), end, &value);
  if (ec == std::errc::invalid_argument || ptr != end) {
    return std::errc::invalid_argument;
  }
  if (ec != std::errc()) return ec;
  *out = value;
  return std::errc();
}

// `ParseInt64()` reads all of `text` as `-?[0-9]+` into `*out` (INT64_MIN
// included), with the results of `ParseUint64()`.
inline std::errc ParseInt64(std::string_view text, int64_t* out) {
  int64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::invalid_argument || ptr != end) {
    return std::errc::invalid_argument;
  }
  if (ec != std::errc()) return ec;
  *out = value;
  return std::errc();
}

// `HasLeadingZero()` is true when the digits of `text` (after an optional
// '-') start with a '0' that is not the only digit: "01", "-00"; not "0",
// "-0" or "10".
constexpr bool HasLeadingZero(std::string_view text) {
  if (!text.empty() && text[0] == '-') text.remove_prefix(1);
  return text.size() > 1 && text[0] == '0' && text[1] >= '0' && text[1] <= '9';
}

}  // namespace spanprof::internal

#endif  // SPANPROF_INTERNAL_PARSE_INT_H_
