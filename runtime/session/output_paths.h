// output_paths.h — the checks a session makes on its output paths when it
// starts, before the body runs (private to the session glue), so that a
// mistake in an output path costs no workload:
//
//   - `off` (`SPANPROF_OUT=off`, `Config::trace_path = "off"`) writes no
//     trace; the same for the summary. Nothing is checked for it.
//   - The trace and the summary must not be one file (after following
//     links; a character device such as /dev/null may be both).
//   - Each output's directory must be writable, or creatable (its nearest
//     existing parent a writable directory); a device, FIFO or socket at the
//     path must be writable; a directory is refused. Nothing is created
//     here: the writers create directories at the end, as before.
//
// Fields are expanded with the values known at the start (the pid, host,
// process name and the current time). The session start stamp `%t` is only
// known once recording starts, so for a template whose directory holds `%t`
// only the directories above that component are checked (the rest are
// created when the outputs are written).
//
// Example:
//
//   if (absl::Status s = CheckOutputPaths(config); !s.ok()) return s;
#ifndef SPANPROF_RUNTIME_SESSION_OUTPUT_PATHS_H_
#define SPANPROF_RUNTIME_SESSION_OUTPUT_PATHS_H_

#include <string_view>

#include "absl/status/status.h"
#include "spanprof/session.h"

namespace spanprof::internal {

// The path value that writes no output.
inline constexpr std::string_view kOutputOff = "off";

// OK, or an error naming the variable, the `Config` field and the path.
// Expects templates already checked with CheckPathTemplate().
absl::Status CheckOutputPaths(const Config& config);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SESSION_OUTPUT_PATHS_H_
