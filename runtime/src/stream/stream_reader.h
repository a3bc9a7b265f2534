// Reading a stream file back into the collector's inputs: the part shared by
// recovery (spanprof/stream.h) and by the end of a streaming session, which
// reads its capture back from the stream it wrote.
//
// Example:
//
//   absl::StatusOr<StreamContents> read = ReadStream(bytes, path);
//   if (read.ok()) capture = AssembleCapture(read->facts, read->inputs);
#ifndef SPANPROF_RUNTIME_SRC_STREAM_STREAM_READER_H_
#define SPANPROF_RUNTIME_SRC_STREAM_STREAM_READER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/assemble.h"
#include "spanprof/stream.h"

namespace spanprof::internal {

// What a stream holds: the session's description, each thread's records
// and side records as the collector takes them, and what the reading found
// (`info`: counts and output paths; its capture is left empty).
struct StreamContents {
  SessionFacts facts;
  CaptureInputs inputs;
  RecoveredCapture info;
  std::string end_reason;  // the end chunk's reason, "" when none
};

// Reads a stream file's bytes (`name` only names it in errors). Corrupt or
// torn chunks are skipped and counted; a file that is not a stream is an
// error naming it. `own_session`: `bytes` is a read-only mapping of this
// process's own stream, read back at its session's end: the inputs' stop
// is left to the caller (the session knows it), pages already scanned
// are given back (madvise) as the scan goes, and the records and side
// records stay where they lie in the mapping (OwnedRecords::InMapping,
// SideRecords::AddMapped), which must outlive the inputs' parse.
absl::StatusOr<StreamContents> ReadStream(std::string_view bytes,
                                          std::string_view name,
                                          bool own_session);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_STREAM_STREAM_READER_H_
