// spanprof/internal/end_reason.h — the values of a capture's `end_reason`:
// one rule that the stream reader (runtime) and the trace and summary
// readers (analysis) share.
//
// clang-format off
// Example:
//
//   std::string_view text = ...;
//   if (!spanprof::internal::IsEndReason(text)) {
//     return 1;  // a reader's error: not an end reason
//   }
// clang-format on
#ifndef SPANPROF_INTERNAL_END_REASON_H_
#define SPANPROF_INTERNAL_END_REASON_H_

#include <algorithm>
#include <string_view>

namespace spanprof::internal {

inline constexpr std::string_view kEndFinished = "finished";
inline constexpr std::string_view kEndExit = "exit";
inline constexpr std::string_view kEndLost = "lost";
// "signal:" + the name of the termination signal that ended the session.
inline constexpr std::string_view kEndSignalPrefix = "signal:";

// `IsEndReason()` accepts "finished", "exit", "lost", and "signal:NAME" or
// "crash:NAME" where NAME is a signal's name ("SIGTERM") or, for a crash,
// "terminate": 1 to 16 ASCII letters and digits.
inline bool IsEndReason(std::string_view text) {
  if (text == kEndFinished || text == kEndExit || text == kEndLost) {
    return true;
  }
  std::string_view name;
  if (text.substr(0, kEndSignalPrefix.size()) == kEndSignalPrefix) {
    name = text.substr(kEndSignalPrefix.size());
  } else if (text.substr(0, 6) == "crash:") {
    name = text.substr(6);
  } else {
    return false;
  }
  return !name.empty() && name.size() <= 16 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                  (c >= '0' && c <= '9');
         });
}

}  // namespace spanprof::internal

#endif  // SPANPROF_INTERNAL_END_REASON_H_
