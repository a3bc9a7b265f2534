// line_cursor.h — the byte matcher of the fast line reader (private to the
// analysis library).
#ifndef SPANPROF_ANALYSIS_SRC_TRACE_LINE_CURSOR_H_
#define SPANPROF_ANALYSIS_SRC_TRACE_LINE_CURSOR_H_

#include <cstdint>
#include <cstring>
#include <string_view>
#include <system_error>

#include "spanprof/internal/parse_int.h"
#include "trace/trace_format.h"

namespace spanprof::analysis::internal {

// `LineCursor` matches the writer's text from `p` on; every function
// returns false (the cursor then is anywhere) on the first byte that is
// not the writer's layout.
struct LineCursor {
  const char* p;
  const char* end;

  // Inlined, so that each constant literal is compared without a call.
  [[gnu::always_inline]] bool Literal(std::string_view text) {
    if (static_cast<size_t>(end - p) < text.size() ||
        std::memcmp(p, text.data(), text.size()) != 0) {
      return false;
    }
    p += text.size();
    return true;
  }
  bool Peek(char c) const { return p != end && *p == c; }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  // `-?(0|[1-9][0-9]*)` in [0, max] (no sign) or [-max - 1, max] (signed).
  [[gnu::always_inline]] bool Unsigned(uint64_t max, uint64_t* out) {
    uint64_t value = 0;
    const auto [next, ec] = spanprof::internal::ParseDigits(p, end, &value);
    if (ec != std::errc() || value > max || (*p == '0' && next - p > 1)) {
      return false;
    }
    p = next;
    *out = value;
    return true;
  }
  bool Signed(int64_t* out) {
    const bool negative = Peek('-');
    if (negative) ++p;
    constexpr auto kMax = static_cast<uint64_t>(INT64_MAX);
    uint64_t magnitude = 0;
    if (!Unsigned(negative ? kMax + 1 : kMax, &magnitude)) return false;
    *out = negative ? static_cast<int64_t>(0 - magnitude)
                    : static_cast<int64_t>(magnitude);
    return true;
  }
  template <typename T>
  bool Index(T* out) {
    uint64_t value = 0;
    if (!Unsigned(UINT32_MAX, &value)) return false;
    *out = static_cast<T>(value);
    return true;
  }
  // What `ReadMicros()` accepts, up to the next ','.
  [[gnu::always_inline]] bool Micros(int64_t* ns) {
    const char* start = p;
    while (p != end && (IsDigit(*p) || *p == '.' || *p == '-')) ++p;
    return ParseMicros(std::string_view(start, static_cast<size_t>(p - start)),
                       ns);
  }
  // Past a string's closing quote, from just after its opening one. The
  // bytes skipped are checked later against the expected text.
  bool SkipString() {
    while (p != end) {
      const char c = *p++;
      if (c == '"') return true;
      if (c == '\\') {
        if (p == end) return false;
        ++p;
      }
    }
    return false;
  }
  // Digits and a sign, checked later against the expected text.
  void SkipInteger() {
    while (p != end && (IsDigit(*p) || *p == '-')) ++p;
  }
};

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_TRACE_LINE_CURSOR_H_
