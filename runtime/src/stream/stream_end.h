// The end of a streaming session: its capture is read back from the stream
// file it wrote, because its rings reused the memory of what was drained.
//
// Example:
//
//   std::unique_ptr<StreamWriter> writer = watcher.StopAndTakeWriter();
//   Capture capture = StopRecordingThroughStream(*writer, "finished");
//   writer->Close(/*remove=*/true);
#ifndef SPANPROF_RUNTIME_SRC_STREAM_STREAM_END_H_
#define SPANPROF_RUNTIME_SRC_STREAM_STREAM_END_H_

#include <string>
#include <vector>

#include "recorder/recorder_internal.h"
#include "spanprof/capture.h"
#include "stream/stream_writer.h"

namespace spanprof::internal {

// Stops recording, drains what the rings still hold into `writer`'s stream,
// ends it with `end_reason`, gives the rings back and reads the capture from
// the stream. When the stream could not be written, what the rings still
// hold is joined to what the stream has; records that neither has are
// counted on stderr. An empty capture when no session was active.
// `pack_args`: the capture only feeds the session's own outputs, and holds
// its arguments packed (Capture::packed_args).
Capture StopRecordingThroughStream(StreamWriter& writer,
                                   const std::string& end_reason,
                                   bool pack_args = false);

// The steps after the session ended (EndActiveSession): the last drain of
// `rings`, the end chunk, and the capture read back. With `give_back`, the
// rings go back to their threads before the read; without it they stay
// whole (CollectEndedSession() can still take them: tests compare the two
// ways of collecting one session).
Capture CollectThroughStream(StreamWriter& writer, const SessionState& session,
                             const std::vector<ThreadRing*>& rings,
                             const ClockPair& stop,
                             const std::string& end_reason, bool give_back,
                             bool pack_args = false);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_STREAM_STREAM_END_H_
