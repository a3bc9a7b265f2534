// spanprof/stream.h — reading back the stream file of a session whose
// program did not end normally (`spanprof recover`).
//
// While a session runs, a helper thread copies what the recording threads
// have published into the session's stream file (SPANPROF_STREAM, by default
// the trace path with ".stream" added) every few milliseconds. A session that
// ends normally removes it. When the program is killed or crashes, the file
// stays, and `RecoverStream()` turns it into a capture: spans still open at
// the last drain end there and are flagged unfinished, the capture is marked
// not finished normally, and `end_reason` says what the stream knows
// ("crash:SIGSEGV" when the crash handler wrote its end, else "lost").
//
// clang-format off
// Example:
//
//   #include <spanprof/analysis/trace.h>
//
//   std::string bytes = ...;  // the stream file's bytes
//   absl::StatusOr<spanprof::RecoveredCapture> recovered =
//       spanprof::RecoverStream(bytes, "build/spanprof-trace.json.stream");
//   if (recovered.ok()) {
//     absl::Status s =
//         spanprof::analysis::WriteTrace(recovered->capture, "recovered.json");
//   }
// clang-format on
#ifndef SPANPROF_STREAM_H_
#define SPANPROF_STREAM_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/capture.h"

namespace spanprof {

// `RecoveredCapture` is a capture read back from a stream, with what the
// stream said about its outputs and what could not be read.
struct RecoveredCapture {
  Capture capture;
  // The outputs the session was configured to write (paths expanded).
  std::string trace_path;
  std::string summary_path;
  uint64_t chunks = 0;          // whole, valid chunks read
  uint64_t skipped_chunks = 0;  // chunks whose checksum or layout was wrong
  uint64_t skipped_bytes = 0;   // bytes skipped with them (resynchronising)
  uint64_t torn_bytes = 0;      // a last chunk cut short (still being written)
  // Records of a thread after a gap in its stream (a skipped chunk): what
  // follows a gap cannot be placed, so it is counted, not used.
  uint64_t lost_records = 0;
  bool ended = false;  // the stream holds an end chunk (a crash handler's)
};

// `RecoverStream()` reads a `spanprof.stream` file's bytes (`name` only
// names it in errors). A file that is not a stream, or whose first chunk is
// not a valid session description, is an error naming it; corrupt or torn
// chunks later in the file are skipped and counted. Thread-safe; not for the
// hot path.
absl::StatusOr<RecoveredCapture> RecoverStream(std::string_view bytes,
                                               std::string_view name);

// `RecoverStream()` over the files of one stream, oldest first: a flight
// recorder (ring mode) bounds its stream by starting a new file when one is
// full, the full one kept as `<path>.old`; read together (`.old` first),
// they hold its newest spans (at most its cap). A file of another session
// adds nothing.
absl::StatusOr<RecoveredCapture> RecoverStream(
    const std::vector<std::string_view>& files, std::string_view name);

}  // namespace spanprof

#endif  // SPANPROF_STREAM_H_
