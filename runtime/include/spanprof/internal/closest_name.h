// closest_name.h — "did you mean ...?" for names a person typed (internal:
// the CLI's commands and flags use it; not for users).
//
// Header-only with no dependencies, so that every component can use it.
#ifndef SPANPROF_INTERNAL_CLOSEST_NAME_H_
#define SPANPROF_INTERNAL_CLOSEST_NAME_H_

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

namespace spanprof::internal {

// `EditDistance()` is the optimal string alignment distance between `a` and
// `b`: insertions, deletions, substitutions and swaps of two neighbours each
// cost one ("reprot" is one from "report").
inline size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t change = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + change});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// `ClosestName()` is the candidate closest to `typed` when it is close
// enough to be what was meant: at most 2 edits, and at most a third of the
// longer name (so "x" suggests nothing), ties to the first candidate.
// Empty when none is.
inline std::string_view ClosestName(
    std::string_view typed, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  size_t best_distance = 3;
  for (std::string_view candidate : candidates) {
    const size_t distance = EditDistance(typed, candidate);
    const size_t longer = std::max(typed.size(), candidate.size());
    if (distance < best_distance && distance * 3 <= longer) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace spanprof::internal

#endif  // SPANPROF_INTERNAL_CLOSEST_NAME_H_
