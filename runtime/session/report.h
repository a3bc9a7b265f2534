// report.h — where a session's table goes (`SPANPROF_REPORT`,
// `Config::report`) and the lines about a trace's size (private to the
// session glue).
//
// The table goes to standard error by default, so that a program's own
// standard output stays its data (`SPANPROF=1 ./app > out.txt`, `./app | jq`).
// `Config::report` chooses:
//
//   stderr  standard error (the default)
//   stdout  standard output (also `-`, as for the other outputs)
//   off     no table, no forecast line at start, no size hint at the end
//           (what `Config::quiet` / `SPANPROF_QUIET=1` mean too)
//   PATH    a file, written by the rules of every other output (a regular
//           file replaced atomically, a symbolic link written through, a
//           device, FIFO or socket written in place), with the same `%`
//           fields. A PATH holds a `/` or a `.`, so that a misspelt word
//           (`stdrr`) is refused instead of becoming a file: write `./table`.
//
// Example:
//
//   if (absl::Status s = CheckReportValue(config.report); !s.ok()) ...
//   absl::Status written = WriteReport(config, table, fields);
#ifndef SPANPROF_RUNTIME_SESSION_REPORT_H_
#define SPANPROF_RUNTIME_SESSION_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "path_template.h"
#include "spanprof/session.h"

namespace spanprof::internal {

inline constexpr std::string_view kReportStderr = "stderr";
inline constexpr std::string_view kReportStdout = "stdout";
inline constexpr std::string_view kReportOff = "off";

// A JSON trace larger than this gets one line at session end suggesting
// `.pftrace`: the Perfetto UI parses a JSON trace inside a browser tab, and
// traces of several hundred MB (803 MB for 4 M spans) fail to load there.
inline constexpr uint64_t kLargeJsonTraceBytes = uint64_t{256} << 20;

// Bytes a span takes in a written trace, for the forecast at session start:
// measured on the examples' traces (docs/formats.md, "Trace sizes"), spans
// with a few tags and at most one argument. Each further argument adds to
// both.
inline constexpr uint64_t kJsonTraceBytesPerSpan = 215;
inline constexpr uint64_t kPftraceBytesPerSpan = 26;

// OK when `report` is `stderr`, `stdout`, `-`, `off` or a file path (it
// holds a `/` or a `.`, and its `%` fields are known); otherwise an error
// saying what was expected (the caller names the variable or field).
absl::Status CheckReportValue(std::string_view report);

// True when the session prints nothing of its own: `quiet`, or `report`
// is `off`.
bool ReportIsOff(const Config& config);

// True when `report` names a file (not a stream, not `off`).
bool ReportIsPath(std::string_view report);

// Writes `table` where `config.report` says. Errors name `SPANPROF_REPORT`
// (`Config::report`) and the path.
absl::Status WriteReport(const Config& config, const std::string& table,
                         const PathFields& fields);

// The clause the forecast line at session start ends with: the expected
// size of a trace holding `max_events` spans in the format `trace_path`
// chooses ("" when no trace is written).
std::string TraceSizeForecast(std::string_view trace_path, uint64_t max_events);

// The line printed at session end for a JSON trace of `bytes` bytes above
// `threshold`, suggesting `.pftrace`; "" otherwise (a Perfetto trace, or a
// smaller one).
std::string LargeTraceHint(const std::string& trace_path, uint64_t bytes,
                           uint64_t threshold = kLargeJsonTraceBytes);

// Prints `LargeTraceHint()` for the trace written at `trace_path` (a
// regular file; nothing for standard output or a device) on stderr.
void PrintLargeTraceHint(const std::string& trace_path);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SESSION_REPORT_H_
