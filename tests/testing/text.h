// Text helpers for tests: edit a known-good document in one place (to make
// it invalid in exactly one way), count what a program wrote, split a log
// into lines.
//
// Example:
//   ExpectRejected(Replace(CleanJson(), "\"dur\":4", "\"dur\":-4"), "dur");
//   EXPECT_EQ(CountOccurrences(r.err, "warning:"), 1u);
//   EXPECT_EQ(ReadLines(log_path).size(), 3u);
#ifndef SPANPROF_TESTS_TESTING_TEXT_H_
#define SPANPROF_TESTS_TESTING_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/test_support.h"

namespace spanprof::testing {

// `text` with the first occurrence of `from` replaced by `to`; `text`
// unchanged when there is none (check for it where that matters).
inline std::string ReplaceFirst(std::string text, std::string_view from,
                                std::string_view to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) return text;
  return text.replace(at, from.size(), to);
}

// `ReplaceFirst`, and a test failure when `text` has no `from`: the edit a
// test means to make must not silently leave the document as it was.
inline std::string Replace(std::string text, std::string_view from,
                           std::string_view to) {
  EXPECT_NE(text.find(from), std::string::npos)
      << "test bug: no \"" << from << "\"";
  return ReplaceFirst(std::move(text), from, to);
}

// How many times `needle` (not empty) occurs in `text`, without overlaps.
inline size_t CountOccurrences(std::string_view text, std::string_view needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// The lines of the file at `path`, without their '\n'; a last line without
// one counts, an empty file has none.
inline std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  const std::string text = ReadText(path);
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_TEXT_H_
