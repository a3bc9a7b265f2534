// hex_id.h — the lowercase hexadecimal form of trace and span ids (internal:
// the runtime's traceparent, the trace readers and writers and the OTLP
// exporter share it; not for users).
//
// W3C Trace Context and OTLP/JSON spell a 64-bit span id as 16 lowercase hex
// digits and a 128-bit trace id as 32. Parsing accepts exactly that many
// lowercase digits: no prefix, no uppercase, no sign. Header-only, no
// dependencies.
#ifndef SPANPROF_INTERNAL_HEX_ID_H_
#define SPANPROF_INTERNAL_HEX_ID_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace spanprof::internal {

// `HexId(v)` is `v` as 16 lowercase hex digits, zero-padded.
inline std::string HexId(uint64_t v) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kDigits[v & 0xfu];
    v >>= 4;
  }
  return out;
}

// `ParseHexId(text, &v)` reads exactly 16 lowercase hex digits; false for any
// other text.
inline bool ParseHexId(std::string_view text, uint64_t* out) {
  if (text.size() != 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    uint64_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<uint64_t>(c - 'a') + 10;
    } else {
      return false;
    }
    v = (v << 4) | digit;
  }
  *out = v;
  return true;
}

// `IsTraceId(text)`: 32 lowercase hex digits, not all zero (the W3C rule).
inline bool IsTraceId(std::string_view text) {
  uint64_t high = 0;
  uint64_t low = 0;
  return text.size() == 32 && ParseHexId(text.substr(0, 16), &high) &&
         ParseHexId(text.substr(16), &low) && (high | low) != 0;
}

}  // namespace spanprof::internal

#endif  // SPANPROF_INTERNAL_HEX_ID_H_
