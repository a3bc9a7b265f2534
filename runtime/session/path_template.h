// path_template.h — the fields of an output path (`SPANPROF_OUT`,
// `SPANPROF_SUMMARY_OUT`, `Config::trace_path` and `summary_path`), so that
// many processes writing with one setting never overwrite each other:
//
//   %p  the process id
//   %h  the host name
//   %n  the process name (`SPANPROF_PROCESS_NAME`, else the executable's)
//   %t  the session start, UTC, sortable: 20261201T203300.123Z
//   %%  a percent sign
//
// Any other `%x` (or a `%` at the end) is an error raised at session start,
// before the body runs. Values are made safe for a path: a `/`, a control
// byte or a NUL becomes `_`, a value `.` or `..` becomes `_` or `__` (so a
// field never names a directory or its parent, even as a whole component
// like `out/%n/trace.json`), and an empty value `unknown`.
//
// Example:
//
//   absl::Status ok = CheckPathTemplate("out/%n-%p.json");
//   std::string path = ExpandPathTemplate(
//       "out/%n-%p.json", {.pid = 4242, .process_name = "worker"});
//   // "out/worker-4242.json"
#ifndef SPANPROF_RUNTIME_SESSION_PATH_TEMPLATE_H_
#define SPANPROF_RUNTIME_SESSION_PATH_TEMPLATE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace spanprof::internal {

// The values a template's fields expand to.
struct PathFields {
  int64_t pid = 0;
  std::string host;
  std::string process_name;
  int64_t start_wall_ns = 0;  // CLOCK_REALTIME at the session start
};

// OK when every `%` starts one of the fields above; otherwise an error that
// quotes the offending `%x`.
absl::Status CheckPathTemplate(std::string_view path);

// Expands a checked template (an unknown `%x` is copied as is).
std::string ExpandPathTemplate(std::string_view path, const PathFields& fields);

// `ns` since the Unix epoch as `YYYYMMDDTHHMMSS.mmmZ` (UTC).
std::string UtcStamp(int64_t ns);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SESSION_PATH_TEMPLATE_H_
