// cat.h — `Cat()`: string concatenation over std::string_view and integers
// (private to the analysis library).
//
// Debian's abseil 20220623 has its own `absl::string_view`, so `absl::StrCat`
// does not take `std::string_view`; this is the small replacement the readers
// use to build error messages.
#ifndef SPANPROF_ANALYSIS_SRC_JSON_CAT_H_
#define SPANPROF_ANALYSIS_SRC_JSON_CAT_H_

#include <concepts>
#include <string>
#include <string_view>

namespace spanprof::analysis::internal {

inline void CatAppend(std::string& out, std::string_view piece) {
  out.append(piece.data(), piece.size());
}
inline void CatAppend(std::string& out, char c) { out.push_back(c); }
template <std::integral T>
requires(!std::same_as<T, char> &&
         !std::same_as<T, bool>) void CatAppend(std::string& out, T value) {
  out += std::to_string(value);
}

// `Cat()` concatenates strings, characters and integers.
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (CatAppend(out, args), ...);
  return out;
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_JSON_CAT_H_
