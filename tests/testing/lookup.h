// Lookups by name in what a test got back: a summary's rows and a capture's
// spans. Linear scans: test inputs are small.
//
// Example:
//   const analysis::Row* parse = FindRow(summary, "file.parse");
//   ASSERT_NE(parse, nullptr);
//   EXPECT_EQ(parse->calls, 3u);
#ifndef SPANPROF_TESTS_TESTING_LOOKUP_H_
#define SPANPROF_TESTS_TESTING_LOOKUP_H_

#include <string_view>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::testing {

// The first row of `summary` whose key name is `name`, or nullptr.
inline const analysis::Row* FindRow(const analysis::Summary& summary,
                                    std::string_view name) {
  for (const analysis::Row& row : summary.rows) {
    if (row.key.name == name) return &row;
  }
  return nullptr;
}

// The first row of `summary` whose label (the name with its group-by
// arguments, "step [phase=forward]") is `label`, or nullptr.
inline const analysis::Row* FindRowByLabel(const analysis::Summary& summary,
                                           std::string_view label) {
  for (const analysis::Row& row : summary.rows) {
    if (row.label == label) return &row;
  }
  return nullptr;
}

// The first row of `summary` whose key name is `name`; when there is none,
// a test failure and the first row (so `summary` must have one).
inline analysis::Row& RowNamed(analysis::Summary& summary,
                               std::string_view name) {
  for (analysis::Row& row : summary.rows) {
    if (row.key.name == name) return row;
  }
  ADD_FAILURE() << "no row " << name;
  return summary.rows.front();
}
inline const analysis::Row& RowNamed(const analysis::Summary& summary,
                                     std::string_view name) {
  return RowNamed(const_cast<analysis::Summary&>(summary), name);
}

// The first span of `capture` whose site is named `name`, or nullptr.
inline const Span* FindSpan(const Capture& capture, std::string_view name) {
  for (const Span& span : capture.spans) {
    if (capture.sites[span.site].name == name) return &span;
  }
  return nullptr;
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_LOOKUP_H_
