// spanprof/analysis/compare_ci.h — a comparison in the formats CI systems
// read: GitHub Actions workflow commands and JUnit XML.
//
// clang-format off
// Example:
//
//   #include <spanprof/analysis/file_io.h>
//
//   spanprof::analysis::Summary base = ..., candidate = ...;
//   absl::StatusOr<spanprof::analysis::Comparison> c =
//       spanprof::analysis::Compare(base, candidate, {});
//   std::cout << spanprof::analysis::ComparisonToGithub(*c);
//   absl::Status written = spanprof::analysis::WriteFileAtomically(
//       "build/spanprof-junit.xml", spanprof::analysis::ComparisonToJunit(*c));
// clang-format on
#ifndef SPANPROF_ANALYSIS_COMPARE_CI_H_
#define SPANPROF_ANALYSIS_COMPARE_CI_H_

#include <string>

#include "spanprof/analysis/compare.h"

namespace spanprof::analysis {

// `ComparisonToGithub()` renders the rows that need a reader's eye as GitHub
// Actions workflow commands, one a line: `::error title=...::MESSAGE` for a
// regressed row (and for new or missing rows when the policy fails on
// them), `::warning title=...::MESSAGE` for an unknown row; then one plain
// line with the verdict (`spanprof compare: PASS ...` or `FAIL ...`).
// Values are escaped as the runner expects (`%`, CR and LF in messages;
// also `:` and `,` in the title). Pure.
std::string ComparisonToGithub(const Comparison& comparison);

// `ComparisonToJunit()` renders a JUnit XML report: one `<testsuite
// name="spanprof compare">` with one `<testcase>` per row (its label as the
// name, the metric as the class name), a `<failure>` for a regressed row
// (and a new or missing row the policy fails on), `<skipped>` for a row not
// measured; the suite's `tests`, `failures` and `skipped` count them. Pure.
std::string ComparisonToJunit(const Comparison& comparison);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_COMPARE_CI_H_
