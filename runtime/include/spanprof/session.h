// spanprof/session.h — a profiling session: record, analyse, write, report.
//
// `Profile()` claims the process-wide capture, runs a function inside a root
// span, then collects the capture, analyses it, writes the trace and the
// summary atomically, prints the table (on standard error unless
// `Config::report` says otherwise) and returns the
// function's result. `ProfileFromEnvironment()` does the same with the
// configuration read from the `SPANPROF*` environment variables.
//
// Errors: a bad configuration (including a bad environment variable) and a
// second concurrent session throw `spanprof::Error` before the body runs. When
// the body throws, the capture is still written when possible and the body's
// exception is rethrown (it wins over any output error, which is then printed
// on stderr). When only writing an output fails, `Profile()` throws
// `spanprof::OutputError` naming the path, after the body's result is
// computed, and prints nothing itself: the caller reports `what()`. A session
// finished by `exit()` or `FinishSession()` prints its output errors on
// stderr (there is no caller to throw to). Each failure is reported exactly
// once. Running out of memory at session end (`std::bad_alloc` while
// collecting, analysing or writing) is not thrown: one line on stderr says so,
// no file is left half-written (an output written before is complete), and the
// body's result or exception leaves `Profile()` as without a session.
//
// clang-format off
// Example:
//
//   void ReadSource();  // the program's
//
//   int main() {
//     return spanprof::ProfileFromEnvironment("indexer.run", [] {
//       spanprof::Run("source.read", [] { ReadSource(); });
//       return 0;
//     });
//   }
// clang-format on
#ifndef SPANPROF_SESSION_H_
#define SPANPROF_SESSION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "spanprof/recording.h"
#include "spanprof/span.h"

namespace spanprof {

// `Error` is a configuration or session error (bad environment variable,
// second concurrent session, invalid schedule).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `OutputError` is a failure to write the trace or summary; `what()` names the
// path.
class OutputError : public Error {
 public:
  using Error::Error;
};

inline constexpr const char kDefaultTracePath[] = "build/spanprof-trace.json";
inline constexpr const char kDefaultSummaryPath[] =
    "build/spanprof-summary.json";

// `Config` is one session's configuration. Defaults match the environment's.
//
// Output paths (`trace_path`, `summary_path`, like `SPANPROF_OUT` and
// `SPANPROF_SUMMARY_OUT`): `off` writes no such output; `-` is standard
// output; a regular file is replaced atomically, a symbolic link is written
// through, and a character device, FIFO or socket is written in place. The
// two must not name the same file, and each output's directory must be
// creatable and writable: both are checked when the session starts, before
// the body runs (a `spanprof::Error` naming the variable, the field and the
// path). The table names only the outputs that were written.
struct Config {
  bool enabled = true;
  std::string trace_path = kDefaultTracePath;  // ".json.gz" writes gzip
  std::string summary_path = kDefaultSummaryPath;
  RecordingOptions recording;
  // Where the table goes at session end (SPANPROF_REPORT): "stderr" (the
  // default, so that the program's standard output stays its own),
  // "stdout" (or "-"), "off", or a file path holding a '/' or a '.' (same
  // rules and `%` fields as `trace_path`). A bad value is a
  // `spanprof::Error` at session start. "off" also silences the forecast
  // line at session start and the size hint at the end.
  std::string report = "stderr";
  bool quiet = false;  // the same as report = "off" (SPANPROF_QUIET)
  // The stream file (SPANPROF_STREAM): while the session runs, what the
  // threads recorded is copied there every 10 ms, so that a program that is
  // killed or crashes keeps it (`spanprof recover`). Empty: the trace path
  // with ".stream" added; "off": no stream. Same fields as `trace_path`.
  // Removed when the session ends normally, unless `keep_stream`.
  std::string stream_path;
  bool keep_stream = false;  // SPANPROF_KEEP_STREAM
  // Handle SIGINT, SIGTERM and SIGHUP (end the session, write the outputs,
  // then let the signal end the program) and the fatal signals and
  // std::terminate (push the rings into the stream, name it on stderr); a
  // handler the program installed itself stays. SPANPROF_SIGNALS=off.
  bool signals = true;
};

// `ConfigFromEnvironment()` reads SPANPROF, SPANPROF_OUT,
// SPANPROF_SUMMARY_OUT, SPANPROF_MAX_EVENTS, SPANPROF_OVERFLOW,
// SPANPROF_PROCESS_NAME, SPANPROF_CLOCK, SPANPROF_QUIET, SPANPROF_REPORT,
// SPANPROF_TRACEPARENT (empty: none), SPANPROF_STREAM (a path or "off"),
// SPANPROF_KEEP_STREAM and SPANPROF_SIGNALS strictly: a bad
// value is an error that names the variable and the value. When SPANPROF is
// enabled, each unknown SPANPROF_* variable is a one-line warning on stderr
// naming the closest known one.
absl::StatusOr<Config> ConfigFromEnvironment();

namespace internal {

// Runs `body` inside a session; `body` stores the user result itself. Throws as
// documented above. Not for direct use.
void RunSession(const Config& config, const char* root,
                const std::function<void()>& body);

[[noreturn]] void ThrowConfigError(const absl::Status& status);

}  // namespace internal

// `Profile()` runs `fn` inside a session with root span `root` and returns
// `fn`'s result. `root` is any string that lives for the call: it is copied
// when the session starts, and sessions with equal root names share one
// interned site (the process keeps one entry per distinct root name).
// With `config.enabled == false` it just runs `fn`: nothing is retained and no
// file is written.
template <typename Fn>
decltype(auto) Profile(const Config& config, const char* root, Fn&& fn) {
  using Result = std::invoke_result_t<Fn&>;
  if constexpr (std::is_void_v<Result>) {
    internal::RunSession(config, root, [&] { std::invoke(fn); });
  } else {
    std::optional<Result> result;
    internal::RunSession(config, root,
                         [&] { result.emplace(std::invoke(fn)); });
    return Result(std::move(*result));
  }
}

// `ProfileFromEnvironment()` is `Profile(ConfigFromEnvironment(), root, fn)`;
// a bad environment throws `spanprof::Error` naming the variable.
template <typename Fn>
decltype(auto) ProfileFromEnvironment(const char* root, Fn&& fn) {
  absl::StatusOr<Config> config = ConfigFromEnvironment();
  if (!config.ok()) internal::ThrowConfigError(config.status());
  return Profile(*config, root, std::forward<Fn>(fn));
}

// `FinishSession()` ends this process's running session (`Profile()` or
// `ProfileFromEnvironment()`) now, from any thread and any depth, e.g. just
// before a program's own `exit()` path: it collects, writes the outputs and
// prints the table once, as the session's end would. Spans still open then
// (the root included) end at that moment and are flagged `open_at_exit`;
// the capture is complete unless something else was lost, and its
// `end_reason` is "finished". Later ends are no-ops: a second
// `FinishSession()`, `Profile()` returning (it returns `fn`'s result as
// usual) and `exit()`. Spans begun after it are not recorded. Output errors
// are printed on stderr, not thrown. With no session running (`SPANPROF`
// unset) it does nothing. Thread-safe; not for the hot path. Start no new
// session before the `Profile()` call whose session it ended has returned.
//
// Without it, `exit()` (or a return from `main`) inside a session ends the
// session the same way, with `end_reason` "exit".
void FinishSession();

}  // namespace spanprof

#endif  // SPANPROF_SESSION_H_
