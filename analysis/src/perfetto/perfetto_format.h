// perfetto_format.h — the one description of the Perfetto protobuf trace that
// spanprof writes (docs/formats.md, "Perfetto protobuf trace"): the field
// numbers of Perfetto's published protos (protos/perfetto/trace/...) that
// the writer uses, the enum values, spanprof's sequence and clock layout,
// and the test that tells a protobuf trace from a JSON one. A reader of the
// format compiles against the same constants.
#ifndef SPANPROF_ANALYSIS_SRC_PERFETTO_PERFETTO_FORMAT_H_
#define SPANPROF_ANALYSIS_SRC_PERFETTO_PERFETTO_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "spanprof/capture.h"

namespace spanprof::analysis::internal::perfetto {

// trace.proto: message Trace.
inline constexpr uint32_t kTracePacket = 1;  // repeated TracePacket packet

// trace_packet.proto: message TracePacket.
inline constexpr uint32_t kPacketClockSnapshot = 6;  // ClockSnapshot
inline constexpr uint32_t kPacketTimestamp = 8;      // uint64
inline constexpr uint32_t kPacketSequenceId = 10;  // trusted_packet_sequence_id
inline constexpr uint32_t kPacketTrackEvent = 11;  // TrackEvent
inline constexpr uint32_t kPacketInternedData = 12;      // InternedData
inline constexpr uint32_t kPacketSequenceFlags = 13;     // uint32
inline constexpr uint32_t kPacketTimestampClockId = 58;  // uint32
inline constexpr uint32_t kPacketTracePacketDefaults =
    59;                                                 // TracePacketDefaults
inline constexpr uint32_t kPacketTrackDescriptor = 60;  // TrackDescriptor

// TracePacket.SequenceFlags. spanprof sets only the first on a thread
// sequence's first packet; SEQ_NEEDS_INCREMENTAL_STATE is not written
// (docs/formats.md, "Sequence flags", says why) and the reader needs
// neither on later packets.
inline constexpr uint64_t kSeqIncrementalStateCleared = 1;
inline constexpr uint64_t kSeqNeedsIncrementalState = 2;

// trace_packet_defaults.proto: message TracePacketDefaults.
inline constexpr uint32_t kDefaultsTimestampClockId = 58;  // uint32
inline constexpr uint32_t kDefaultsTrackEventDefaults =
    11;  // TrackEventDefaults
// track_event.proto: message TrackEventDefaults.
inline constexpr uint32_t kEventDefaultsTrackUuid = 11;  // uint64

// clock_snapshot.proto: message ClockSnapshot and ClockSnapshot.Clock.
inline constexpr uint32_t kSnapshotClocks = 1;             // repeated Clock
inline constexpr uint32_t kSnapshotPrimaryTraceClock = 2;  // BuiltinClock
inline constexpr uint32_t kClockId = 1;                    // uint32
inline constexpr uint32_t kClockTimestamp = 2;             // uint64
inline constexpr uint32_t kClockIsIncremental = 3;         // bool
// builtin_clock.proto: BuiltinClock.BUILTIN_CLOCK_REALTIME.
inline constexpr uint64_t kBuiltinClockRealtime = 1;
// The sequence-scoped clock (ids 64..127 are scoped to one sequence) whose
// timestamps are deltas from the previous packet of the sequence that used
// it; ns, starting at the wall-clock anchor.
inline constexpr uint64_t kIncrementalClockId = 64;

// track_descriptor.proto: message TrackDescriptor.
inline constexpr uint32_t kTrackUuid = 1;        // uint64
inline constexpr uint32_t kTrackProcess = 3;     // ProcessDescriptor
inline constexpr uint32_t kTrackThread = 4;      // ThreadDescriptor
inline constexpr uint32_t kTrackParentUuid = 5;  // uint64
// process_descriptor.proto: message ProcessDescriptor.
inline constexpr uint32_t kProcessPid = 1;   // int32
inline constexpr uint32_t kProcessName = 6;  // string process_name
// thread_descriptor.proto: message ThreadDescriptor.
inline constexpr uint32_t kThreadPid = 1;   // int32
inline constexpr uint32_t kThreadTid = 2;   // int32
inline constexpr uint32_t kThreadName = 5;  // string thread_name

// track_event.proto: message TrackEvent.
inline constexpr uint32_t kEventCategoryIids = 3;  // repeated uint64
inline constexpr uint32_t kEventDebugAnnotations =
    4;                                           // repeated DebugAnnotation
inline constexpr uint32_t kEventType = 9;        // TrackEvent.Type
inline constexpr uint32_t kEventNameIid = 10;    // uint64
inline constexpr uint32_t kEventTrackUuid = 11;  // uint64
inline constexpr uint32_t kEventName = 23;       // string (not interned)
inline constexpr uint32_t kEventFlowIds = 47;    // repeated fixed64
inline constexpr uint32_t kEventTerminatingFlowIds = 48;  // repeated fixed64
// TrackEvent.Type.
inline constexpr uint64_t kTypeSliceBegin = 1;
inline constexpr uint64_t kTypeSliceEnd = 2;
inline constexpr uint64_t kTypeInstant = 3;

// debug_annotation.proto: message DebugAnnotation.
inline constexpr uint32_t kAnnotationNameIid = 1;  // uint64
inline constexpr uint32_t kAnnotationBool = 2;     // bool bool_value
inline constexpr uint32_t kAnnotationInt = 4;      // int64 int_value
inline constexpr uint32_t kAnnotationDouble = 5;   // double double_value
inline constexpr uint32_t kAnnotationString = 6;   // string string_value
inline constexpr uint32_t kAnnotationName = 10;    // string (not interned)

// interned_data.proto: message InternedData; the interned entries
// (EventCategory, EventName, DebugAnnotationName) are all {iid = 1, name = 2}.
inline constexpr uint32_t kInternedEventCategories = 1;
inline constexpr uint32_t kInternedEventNames = 2;
inline constexpr uint32_t kInternedAnnotationNames = 3;
inline constexpr uint32_t kInternedIid = 1;   // uint64
inline constexpr uint32_t kInternedName = 2;  // string

// spanprof's layout: sequence 1 holds the clock snapshot and the track
// descriptors (no incremental state); the thread at index k writes its
// slices on sequence k + 2.
inline constexpr uint32_t kDescriptorSequenceId = 1;
inline constexpr uint32_t ThreadSequenceId(uint32_t thread) {
  return thread + 2;
}
// Track uuids: the process's is (pid + 1) << 32 (non-zero for any pid), a
// thread's adds its index + 1.
inline constexpr uint64_t ProcessTrackUuid(int64_t pid) {
  return (static_cast<uint64_t>(pid) + 1) << 32;
}
inline constexpr uint64_t ThreadTrackUuid(int64_t pid, uint32_t thread) {
  return ProcessTrackUuid(pid) + thread + 1;
}
// A merged capture (Capture::processes) has one process track per process:
// process k's is 2^63 + k + 1, apart from every thread track (whose pid is
// below 2^31) and unique even when two processes (of two hosts) share a pid.
// Its threads keep ThreadTrackUuid(capture.pid, thread) and name their own
// process's track as parent and its pid in their ThreadDescriptor.
inline constexpr uint64_t MergedProcessTrackUuid(uint32_t process) {
  return (uint64_t{1} << 63) + process + 1;
}
// The track of a capture's process `process` (ignored when not merged).
inline uint64_t ProcessTrackUuidOf(const Capture& capture, uint32_t process) {
  return capture.processes.empty() ? ProcessTrackUuid(capture.pid)
                                   : MergedProcessTrackUuid(process);
}

// Debug annotation names. The user's arguments are kArgPrefix + key and
// named counters kCounterPrefix + name (as the JSON trace nests them in
// "args" and "counters"); every other name is spanprof's own, so a user
// argument can never pass for one of them.
inline constexpr std::string_view kArgPrefix = "args.";
inline constexpr std::string_view kCounterPrefix = "counters.";
// A string argument cut at kMaxArgTextBytes (SpanArg::truncated).
inline constexpr std::string_view kTruncatedArgPrefix = "truncated_args.";
inline constexpr std::string_view kAnnotationHeartbeats = "heartbeats";
inline constexpr std::string_view kAnnotationAllocCount = "alloc_count";
inline constexpr std::string_view kAnnotationAllocBytes = "alloc_bytes";
// The flags are bool annotations named as in the JSON trace's "flags"
// (trace_format.h's kFlagNames). The rest are written only when the reader
// could not derive the value from the slice's place (docs/formats.md,
// "Reading it back"): int_value, the capture's value.
inline constexpr std::string_view kAnnotationSpanId = "span_id";
inline constexpr std::string_view kAnnotationParentId = "parent_id";
inline constexpr std::string_view kAnnotationDepth = "depth";
inline constexpr std::string_view kAnnotationStartNs = "start_ns";
inline constexpr std::string_view kAnnotationEndNs = "end_ns";

// The capture's metadata: one instant event on the process track, on the
// descriptor sequence, named kMetadataEventName, with one debug annotation
// named kMetadataAnnotation whose string_value is the JSON trace of the
// capture without its spans (TraceToJson: its "metadata" object and thread
// names), which the reader reads with the JSON trace reader.
inline constexpr std::string_view kMetadataEventName = "spanprof metadata";
inline constexpr std::string_view kMetadataAnnotation = "spanprof.trace";

// The end packet: the trace's last packet, an instant event on the process
// track on the descriptor sequence named kEndEventName, at the end of the
// session window (anchor + window_ns), with two int debug annotations: the
// number of slices begun before it (kEndSpans) and the number of bytes of
// the file before it (kEndBytes, the offset of its own Trace.packet key).
// Perfetto shows it as one more instant; spanprof's reader requires it, so
// that a trace cut at a packet boundary is not read as a smaller complete
// one (docs/formats.md, "Completeness").
inline constexpr std::string_view kEndEventName = "spanprof end";
inline constexpr std::string_view kEndSpans = "spanprof.spans";
inline constexpr std::string_view kEndBytes = "spanprof.bytes";

// The category of a site: its set tags as
// `phase=…,module=…,activity=…,backend=…,dtype=…,device=…` (Perfetto joins an
// event's categories with commas the same way), or "" when it has none. For
// display only: the reader takes the tags from the metadata's sites and
// checks that the category is this rendering.
inline std::string SiteCategory(const Site& site) {
  std::string out;
  for (const TagField& tag : kTagFields) {
    const std::string& value = site.*tag.site;
    if (value.empty()) continue;
    if (!out.empty()) out.push_back(',');
    out.append(tag.name);
    out.push_back('=');
    out.append(value);
  }
  return out;
}

// True when `bytes` starts like a protobuf Trace rather than JSON: the key of
// `Trace.packet` (0x0a, which is also '\n') followed, within the first 64
// bytes, by a control byte that strict JSON never contains raw.
inline bool LooksLikeProtobufTrace(std::string_view bytes) {
  if (bytes.size() < 2 || bytes[0] != '\x0a') return false;
  const size_t n = bytes.size() < 64 ? bytes.size() : 64;
  for (size_t i = 1; i < n; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return true;
  }
  return false;
}

}  // namespace spanprof::analysis::internal::perfetto

#endif  // SPANPROF_ANALYSIS_SRC_PERFETTO_PERFETTO_FORMAT_H_
