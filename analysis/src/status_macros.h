// status_macros.h — the two Status macros abseil 20220623 does not ship
// (private to the analysis library).
//
// Example:
//
//   absl::StatusOr<Summary> Load(const std::string& path) {
//     SPANPROF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
//     SPANPROF_RETURN_IF_ERROR(Check(text));
//     return Parse(text);
//   }
#ifndef SPANPROF_ANALYSIS_SRC_STATUS_MACROS_H_
#define SPANPROF_ANALYSIS_SRC_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SPANPROF_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::absl::Status spanprof_status_ = (expr);            \
    if (!spanprof_status_.ok()) return spanprof_status_; \
  } while (false)

#define SPANPROF_STATUS_CONCAT_INNER_(a, b) a##b
#define SPANPROF_STATUS_CONCAT_(a, b) SPANPROF_STATUS_CONCAT_INNER_(a, b)

#define SPANPROF_ASSIGN_OR_RETURN(lhs, expr) \
  SPANPROF_ASSIGN_OR_RETURN_IMPL_(           \
      SPANPROF_STATUS_CONCAT_(spanprof_statusor_, __LINE__), lhs, expr)

// `statusor` names a variable and `lhs` may be a declaration
// (`std::string text`): neither can be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SPANPROF_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                    \
  if (!statusor.ok()) return std::move(statusor).status();   \
  lhs = std::move(statusor).value()
// NOLINTEND(bugprone-macro-parentheses)

#endif  // SPANPROF_ANALYSIS_SRC_STATUS_MACROS_H_
