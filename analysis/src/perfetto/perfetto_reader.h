// perfetto_reader.h — reads the Perfetto protobuf trace that
// `CaptureToPerfetto()` writes back into the exact `Capture` (private to the
// analysis library; `ParseTrace()` and `ValidateArtifact()` call it when the
// bytes look like a protobuf trace). docs/formats.md ("Perfetto protobuf
// trace", "Reading it back") describes what is derived and what is read.
#ifndef SPANPROF_ANALYSIS_SRC_PERFETTO_PERFETTO_READER_H_
#define SPANPROF_ANALYSIS_SRC_PERFETTO_PERFETTO_READER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal::perfetto {

// `ParsePerfettoTrace()` decodes `bytes` (not gzip) into the capture. Any
// malformed or foreign input is an InvalidArgument error naming `source`,
// the byte offset and, inside a packet, the packet's index:
// `trace.pftrace: byte 1234: packet 17: TrackEvent.name_iid 9 was never
// interned`. Memory stays proportional to the input.
//
// A trace whose last packet is not spanprof's end packet, or whose end
// packet's counts disagree with what precedes it, is incomplete (cut):
// an error `trace.pftrace: truncated at byte N: ...`, or with
// `allow_truncated` a capture of what is there, the slices the cut left
// open ended as unfinished spans and the reason in `import_issues` (so its
// summary is not complete).
absl::StatusOr<Capture> ParsePerfettoTrace(std::string_view bytes,
                                           std::string_view source,
                                           bool allow_truncated = false);

}  // namespace spanprof::analysis::internal::perfetto

#endif  // SPANPROF_ANALYSIS_SRC_PERFETTO_PERFETTO_READER_H_
