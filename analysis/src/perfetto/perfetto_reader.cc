// The Perfetto protobuf trace reader: see docs/formats.md ("Perfetto protobuf
// trace", "Reading it back"), and perfetto_format.h for the field numbers the
// writer uses too.
//
// One pass over the packets in file order. The descriptor sequence gives the
// tracks and the metadata (the JSON trace of the capture without spans, read
// by the JSON reader, so every metadata rule is the JSON trace's). Each
// thread sequence then replays its slices with a stack: a begin's span id is
// the previous begin's + 1, its parent the open slice below it (or the start
// of the flow it ends), its depth the parent's + 1, unless an annotation
// says otherwise. Links and depths that need spans not read yet are
// resolved after the pass.
#include "perfetto/perfetto_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/cat.h"
#include "model/capture_format.h"
#include "model/capture_order.h"
#include "perfetto/perfetto_format.h"
#include "perfetto/proto_decoder.h"
#include "simdjson.h"
#include "spanprof/capture.h"
#include "status_macros.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis::internal::perfetto {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

std::string_view WireName(WireType type) {
  switch (type) {
    case kWireVarint:
      return "varint";
    case kWireFixed64:
      return "fixed64";
    case kWireLengthDelimited:
      return "length-delimited";
    case kWireFixed32:
      return "fixed32";
  }
  return "?";
}

// The fields of one TracePacket that spanprof writes.
struct Packet {
  bool has_timestamp = false;
  uint64_t timestamp = 0;
  uint32_t sequence = 0;
  bool has_clock_id = false;
  uint64_t clock_id = 0;
  uint64_t flags = 0;
  ProtoField snapshot;  // type stays kWireVarint (0) when absent
  ProtoField event;
  ProtoField interned;
  ProtoField defaults;
  ProtoField track;
};

bool Present(const ProtoField& f) { return f.type == kWireLengthDelimited; }

// A thread sequence's incremental state and its open slices.
struct Sequence {
  bool cleared = false;
  bool has_clock = false;  // clock 64 defined by a snapshot
  uint64_t clock = 0;      // clock 64's current value (REALTIME ns)
  bool has_default_clock = false;
  uint64_t default_clock = 0;
  bool has_track = false;
  uint64_t track = 0;
  uint32_t thread = kNone;      // resolved at the first slice
  int64_t last_ns = INT64_MIN;  // the latest event time read
  absl::flat_hash_map<uint64_t, std::string> names;
  absl::flat_hash_map<uint64_t, std::string> categories;
  absl::flat_hash_map<uint64_t, std::string> annotations;
  struct Open {
    uint32_t span;
    size_t offset;  // of its packet
    size_t packet;
  };
  std::vector<Open> stack;
};

struct Track {
  bool is_thread = false;
  uint64_t pid = 0;
  uint64_t tid = 0;
};

// How a span's parent is found once every span is read.
struct Link {
  uint32_t span = 0;
  bool by_flow = false;  // else by the parent_id annotation
  uint64_t key = 0;      // the flow id, or the parent id
  size_t offset = 0;
  size_t packet = 0;
};

// What one begin's annotations say.
struct BeginAnnotations {
  bool has_span_id = false;
  bool has_parent_id = false;
  bool has_depth = false;
  bool has_start = false;
  bool has_end = false;
  bool has_alloc_count = false;
  bool has_alloc_bytes = false;
  uint64_t span_id = 0;
  uint64_t parent_id = 0;
  uint32_t depth = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  SpanAllocs allocs;
  uint32_t seen = 0;  // bits of spanprof's own names, against duplicates
};

// One decoded DebugAnnotation.
struct AnnotationValue {
  uint64_t name_iid = 0;
  bool has_name = false;
  WireType type = kWireVarint;
  uint32_t field = 0;  // the value's field number; 0 when none
  uint64_t value = 0;
  std::string_view text;  // string_value
  size_t offset = 0;
};

class PerfettoReader {
 public:
  PerfettoReader(std::string_view bytes, std::string_view source,
                 bool allow_truncated)
      : bytes_(bytes), source_(source), allow_truncated_(allow_truncated) {}

  absl::StatusOr<Capture> Read();

 private:
  absl::Status Error(size_t offset, std::string_view what) const {
    if (!in_packet_) {
      return absl::InvalidArgumentError(
          Cat(source_, ": byte ", offset, ": ", what));
    }
    return absl::InvalidArgumentError(
        Cat(source_, ": byte ", offset, ": packet ", packet_, ": ", what));
  }
  absl::Status DecodeError(const ProtoDecoder& d, std::string_view message) {
    return Error(d.error_offset(), Cat(message, ": ", d.error()));
  }
  absl::Status WireError(const ProtoField& f, std::string_view name,
                         WireType want) const {
    return Error(f.offset, Cat(name, ": wire type ", WireName(f.type),
                               ", expected ", WireName(want)));
  }
  absl::Status Expect(const ProtoField& f, std::string_view name,
                      WireType want) const {
    return f.type == want ? absl::OkStatus() : WireError(f, name, want);
  }

  absl::Status ReadPacket(const ProtoField& field);
  absl::Status DecodePacket(const ProtoField& field, Packet& p);
  absl::Status ReadDescriptorPacket(const Packet& p);
  absl::Status ReadTrackDescriptor(const ProtoField& f);
  absl::Status ReadThreadDescriptor(const ProtoField& f, Track& track);
  absl::Status ReadDescriptorEvent(const ProtoField& f);
  absl::Status ReadMetadataEvent(const ProtoField& f,
                                 const ProtoField& annotation);
  absl::Status ReadEndEvent(const ProtoField& f,
                            const std::vector<ProtoField>& annotations);
  absl::Status CheckEnd(size_t spans, size_t bytes, size_t offset);
  absl::Status Incomplete(std::string message);
  absl::Status CheckComplete(const ProtoDecoder& trace);
  void CloseOpenSlices();
  absl::Status ReadMetadataAnnotation(const ProtoField& f);
  absl::Status ReadThreadPacket(const Packet& p);
  absl::Status ReadSnapshot(const ProtoField& f, Sequence& s);
  absl::Status ReadDefaults(const ProtoField& f, Sequence& s);
  absl::Status ReadInterned(const ProtoField& f, Sequence& s);
  absl::Status ReadInternedEntry(const ProtoField& f,
                                 absl::flat_hash_map<uint64_t, std::string>& m);
  absl::StatusOr<int64_t> EventTime(const Packet& p, Sequence& s);
  absl::Status ReadEvent(const Packet& p, Sequence& s);
  absl::Status ResolveThread(const ProtoField& event, Sequence& s);
  absl::Status BeginSlice(const ProtoField& event, Sequence& s, int64_t ns,
                          uint64_t name_iid, const std::vector<ProtoField>& c,
                          const std::vector<ProtoField>& annotations,
                          const std::vector<ProtoField>& flows);
  absl::Status CheckSiteStrings(const ProtoField& event, const Sequence& s,
                                uint64_t name_iid,
                                const std::vector<ProtoField>& categories);
  absl::Status ReadAnnotation(const ProtoField& f, const Sequence& s,
                              Span& span, BeginAnnotations& own);
  absl::Status ApplyAnnotation(const AnnotationValue& a, std::string_view name,
                               Span& span, BeginAnnotations& own);
  absl::Status ApplyOwnAnnotation(const AnnotationValue& a,
                                  std::string_view name, Span& span,
                                  BeginAnnotations& own);
  absl::Status LinkParent(const ProtoField& event, const Sequence& s,
                          const BeginAnnotations& own,
                          const std::vector<ProtoField>& flows, uint32_t index);
  absl::Status EndSlice(const ProtoField& event, Sequence& s, int64_t ns);
  absl::Status Finish();
  absl::Status ResolveLinks();
  absl::Status ResolveDepths();
  Capture Assemble();

  std::string_view bytes_;
  std::string_view source_;
  bool allow_truncated_ = false;
  bool ended_ = false;       // the end packet was read
  bool incomplete_ = false;  // allow_truncated_ and the file is not whole
  bool in_packet_ = false;
  size_t packet_ = 0;
  size_t packet_offset_ = 0;
  bool have_metadata_ = false;
  Capture capture_;
  std::vector<std::string> site_categories_;
  absl::flat_hash_map<uint64_t, Track> tracks_;
  absl::flat_hash_map<uint32_t, Sequence> sequences_;
  std::vector<Span> spans_;         // file order
  std::vector<SpanAllocs> allocs_;  // spans_'s, when alloc_measured
  std::vector<SpanArg> args_;       // file order
  std::vector<uint32_t> parent_;    // per span: the parent's index, or kNone
  std::vector<uint8_t> depth_known_;
  std::vector<Link> links_;
  std::vector<std::pair<uint32_t, int64_t>> end_overrides_;
  absl::flat_hash_map<uint64_t, uint32_t> flow_starts_;
  uint64_t last_id_ = 0;
  std::vector<ProtoField> categories_;  // of the event being read
  std::vector<ProtoField> annotations_;
  std::vector<ProtoField> flows_;
};

absl::StatusOr<Capture> PerfettoReader::Read() {
  ProtoDecoder trace(bytes_, 0);
  ProtoField field;
  while (trace.Next(&field)) {
    if (field.number != kTracePacket) continue;  // unknown: skipped
    SPANPROF_RETURN_IF_ERROR(
        Expect(field, "Trace.packet", kWireLengthDelimited));
    if (ended_) {
      return Error(field.offset, Cat("a packet after the \"", kEndEventName,
                                     "\" packet (it is the last)"));
    }
    in_packet_ = true;
    packet_offset_ = field.offset;
    SPANPROF_RETURN_IF_ERROR(ReadPacket(field));
    in_packet_ = false;
    ++packet_;
  }
  SPANPROF_RETURN_IF_ERROR(CheckComplete(trace));
  SPANPROF_RETURN_IF_ERROR(Finish());
  return Assemble();
}

// A trace is whole when its last packet is the end packet: a file cut
// anywhere (in a packet or between two) lacks it. A cut packet is the only
// decoding error at the top level that truncation makes; others (a bad
// field number or wire type) are corruption.
absl::Status PerfettoReader::CheckComplete(const ProtoDecoder& trace) {
  if (!have_metadata_) {
    // Nothing to read. A foreign trace (Perfetto's SDK, traced) has no
    // metadata event at all; spanprof's has it within its first packets.
    return absl::InvalidArgumentError(
        Cat(source_, ": truncated at byte ", bytes_.size(),
            " or not a trace spanprof wrote: no \"", kMetadataEventName,
            "\" event (spanprof reads the Perfetto traces it writes)"));
  }
  if (trace.error() != nullptr) {
    const std::string_view what = trace.error();
    const bool cut = what.find("truncated") != std::string_view::npos ||
                     what.find("beyond the end") != std::string_view::npos;
    if (!cut) {
      return Error(trace.error_offset(),
                   Cat("after packet ", packet_, ": ", trace.error()));
    }
    SPANPROF_RETURN_IF_ERROR(Incomplete(
        Cat(source_, ": truncated at byte ", bytes_.size(), ": packet ",
            packet_, " (at byte ", trace.error_offset(), ") is cut: ", what)));
  } else if (!ended_) {
    SPANPROF_RETURN_IF_ERROR(Incomplete(
        Cat(source_, ": truncated at byte ", bytes_.size(), ": no \"",
            kEndEventName, "\" packet after packet ", packet_,
            " (spanprof writes it last, stating the spans and bytes "
            "before it)")));
  }
  return absl::OkStatus();
}

// A trace that is not whole is an error, or with allow_truncated_ an
// import issue of the capture (its summary is then not complete).
absl::Status PerfettoReader::Incomplete(std::string message) {
  if (!allow_truncated_) {
    return absl::InvalidArgumentError(
        Cat(message, " (--allow-truncated reads what is there)"));
  }
  incomplete_ = true;
  capture_.import_issues.push_back(std::move(message));
  return absl::OkStatus();
}

absl::Status PerfettoReader::DecodePacket(const ProtoField& field, Packet& p) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  while (d.Next(&f)) {
    switch (f.number) {
      case kPacketTimestamp:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TracePacket.timestamp", kWireVarint));
        p.has_timestamp = true;
        p.timestamp = f.value;
        break;
      case kPacketSequenceId:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TracePacket.trusted_packet_sequence_id", kWireVarint));
        if (f.value == 0 || f.value > UINT32_MAX) {
          return Error(f.offset, Cat("trusted_packet_sequence_id ", f.value,
                                     " out of range"));
        }
        p.sequence = static_cast<uint32_t>(f.value);
        break;
      case kPacketTimestampClockId:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TracePacket.timestamp_clock_id", kWireVarint));
        p.has_clock_id = true;
        p.clock_id = f.value;
        break;
      case kPacketSequenceFlags:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TracePacket.sequence_flags", kWireVarint));
        p.flags = f.value;
        break;
      case kPacketClockSnapshot:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TracePacket.clock_snapshot", kWireLengthDelimited));
        p.snapshot = f;
        break;
      case kPacketTrackEvent:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TracePacket.track_event", kWireLengthDelimited));
        p.event = f;
        break;
      case kPacketInternedData:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TracePacket.interned_data", kWireLengthDelimited));
        p.interned = f;
        break;
      case kPacketTracePacketDefaults:
        SPANPROF_RETURN_IF_ERROR(Expect(f, "TracePacket.trace_packet_defaults",
                                        kWireLengthDelimited));
        p.defaults = f;
        break;
      case kPacketTrackDescriptor:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TracePacket.track_descriptor", kWireLengthDelimited));
        p.track = f;
        break;
      default:
        break;  // unknown: skipped
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "TracePacket");
  return absl::OkStatus();
}

absl::Status PerfettoReader::ReadPacket(const ProtoField& field) {
  Packet p;
  SPANPROF_RETURN_IF_ERROR(DecodePacket(field, p));
  if (p.sequence == 0) {
    return Error(field.offset,
                 "no trusted_packet_sequence_id (spanprof "
                 "writes one on every packet)");
  }
  if (p.sequence == kDescriptorSequenceId) return ReadDescriptorPacket(p);
  return ReadThreadPacket(p);
}

// Sequence 1: the clock snapshot (nothing to read: the thread sequences
// carry their own), the track descriptors and the metadata event.
absl::Status PerfettoReader::ReadDescriptorPacket(const Packet& p) {
  if (Present(p.track)) SPANPROF_RETURN_IF_ERROR(ReadTrackDescriptor(p.track));
  if (Present(p.event)) SPANPROF_RETURN_IF_ERROR(ReadDescriptorEvent(p.event));
  if (Present(p.interned) || Present(p.defaults)) {
    return Error(packet_offset_,
                 "incremental state on the descriptor sequence 1");
  }
  return absl::OkStatus();
}

absl::Status PerfettoReader::ReadTrackDescriptor(const ProtoField& field) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  bool has_uuid = false;
  uint64_t uuid = 0;
  Track track;
  while (d.Next(&f)) {
    if (f.number == kTrackUuid) {
      SPANPROF_RETURN_IF_ERROR(Expect(f, "TrackDescriptor.uuid", kWireVarint));
      has_uuid = true;
      uuid = f.value;
    } else if (f.number == kTrackThread) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "TrackDescriptor.thread", kWireLengthDelimited));
      SPANPROF_RETURN_IF_ERROR(ReadThreadDescriptor(f, track));
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "TrackDescriptor");
  if (!has_uuid) return Error(field.offset, "TrackDescriptor without uuid");
  if (!tracks_.try_emplace(uuid, track).second) {
    return Error(field.offset,
                 Cat("a second TrackDescriptor for track uuid ", uuid));
  }
  return absl::OkStatus();
}

absl::Status PerfettoReader::ReadThreadDescriptor(const ProtoField& field,
                                                  Track& track) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  track.is_thread = true;
  while (d.Next(&f)) {
    if (f.number == kThreadPid) {
      SPANPROF_RETURN_IF_ERROR(Expect(f, "ThreadDescriptor.pid", kWireVarint));
      track.pid = f.value;
    } else if (f.number == kThreadTid) {
      SPANPROF_RETURN_IF_ERROR(Expect(f, "ThreadDescriptor.tid", kWireVarint));
      track.tid = f.value;
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "ThreadDescriptor");
  return absl::OkStatus();
}

// The events of sequence 1: the metadata event and the end packet's.
absl::Status PerfettoReader::ReadDescriptorEvent(const ProtoField& field) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  std::string_view name;
  std::vector<ProtoField>& annotations = annotations_;
  annotations.clear();
  while (d.Next(&f)) {
    if (f.number == kEventName) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "TrackEvent.name", kWireLengthDelimited));
      name = f.bytes;
    } else if (f.number == kEventDebugAnnotations) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "TrackEvent.debug_annotations", kWireLengthDelimited));
      annotations.push_back(f);
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "TrackEvent");
  if (name == kEndEventName) return ReadEndEvent(field, annotations);
  if (name != kMetadataEventName || annotations.empty()) {
    return Error(field.offset,
                 Cat("the events on sequence 1 are the \"", kMetadataEventName,
                     "\" instant with its \"", kMetadataAnnotation,
                     "\" annotation and the \"", kEndEventName, "\" instant"));
  }
  return ReadMetadataEvent(field, annotations.back());
}

// The end packet: two int annotations, the spans and bytes before it.
absl::Status PerfettoReader::ReadEndEvent(
    const ProtoField& field, const std::vector<ProtoField>& annotations) {
  if (!have_metadata_) {
    return Error(field.offset, Cat("the \"", kEndEventName,
                                   "\" event before the metadata event"));
  }
  bool has[2] = {false, false};
  uint64_t counts[2] = {0, 0};
  for (const ProtoField& a : annotations) {
    ProtoDecoder d(a.bytes, a.bytes_offset);
    ProtoField f;
    int which = -1;
    bool has_value = false;
    uint64_t value = 0;
    while (d.Next(&f)) {
      if (f.number == kAnnotationName) {
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "DebugAnnotation.name", kWireLengthDelimited));
        which = f.bytes == kEndSpans ? 0 : f.bytes == kEndBytes ? 1 : -1;
      } else if (f.number == kAnnotationInt) {
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "DebugAnnotation.int_value", kWireVarint));
        has_value = true;
        value = f.value;
      }
    }
    if (d.error() != nullptr) return DecodeError(d, "DebugAnnotation");
    if (which < 0 || !has_value || has[which]) {
      return Error(a.offset, Cat("the \"", kEndEventName, "\" event has one \"",
                                 kEndSpans, "\" and one \"", kEndBytes,
                                 "\" int annotation, and no other"));
    }
    has[which] = true;
    counts[which] = value;
  }
  if (!has[0] || !has[1]) {
    return Error(field.offset,
                 Cat("the \"", kEndEventName, "\" event needs its \"",
                     kEndSpans, "\" and \"", kEndBytes, "\" annotations"));
  }
  ended_ = true;
  return CheckEnd(counts[0], counts[1], field.offset);
}

// The counts the end packet states against what precedes it.
absl::Status PerfettoReader::CheckEnd(size_t spans, size_t bytes,
                                      size_t offset) {
  if (spans == spans_.size() && bytes == packet_offset_) {
    return absl::OkStatus();
  }
  return Incomplete(Cat(source_, ": byte ", offset, ": packet ", packet_,
                        ": incomplete: the \"", kEndEventName,
                        "\" packet states ", spans, " spans and ", bytes,
                        " bytes before it, but ", spans_.size(), " spans and ",
                        packet_offset_, " bytes precede it"));
}

absl::Status PerfettoReader::ReadMetadataEvent(const ProtoField& field,
                                               const ProtoField& annotation) {
  if (have_metadata_) {
    return Error(field.offset, "a second spanprof metadata event");
  }
  return ReadMetadataAnnotation(annotation);
}

absl::Status PerfettoReader::ReadMetadataAnnotation(const ProtoField& field) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  bool named = false;
  ProtoField json;
  while (d.Next(&f)) {
    if (f.number == kAnnotationName) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "DebugAnnotation.name", kWireLengthDelimited));
      named = f.bytes == kMetadataAnnotation;
    } else if (f.number == kAnnotationString) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "DebugAnnotation.string_value", kWireLengthDelimited));
      json = f;
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "DebugAnnotation");
  if (!named || !Present(json)) {
    return Error(field.offset, Cat("expected the \"", kMetadataAnnotation,
                                   "\" annotation with a string value"));
  }
  // The JSON reader, not ParseTrace(): no format sniffing (and so no nested
  // protobuf trace) inside.
  absl::StatusOr<ParsedTrace> parsed = ParseTraceDocument(
      json.bytes, Cat(source_, ": byte ", json.bytes_offset, ": packet ",
                      packet_, ": ", kMetadataAnnotation));
  if (!parsed.ok()) return parsed.status();
  if (!parsed->capture.spans.empty()) {
    return Error(json.bytes_offset, "the metadata trace has spans");
  }
  capture_ = std::move(parsed->capture);
  have_metadata_ = true;
  for (const Site& site : capture_.sites) {
    site_categories_.push_back(SiteCategory(site));
  }
  return absl::OkStatus();
}

absl::Status PerfettoReader::ReadThreadPacket(const Packet& p) {
  Sequence& s = sequences_[p.sequence];
  if ((p.flags & kSeqIncrementalStateCleared) != 0) {
    s.cleared = true;
    s.has_clock = s.has_default_clock = s.has_track = false;
    s.names.clear();
    s.categories.clear();
    s.annotations.clear();
  }
  if (!s.cleared) {
    return Error(packet_offset_,
                 Cat("sequence ", p.sequence,
                     ": a packet before SEQ_INCREMENTAL_STATE_CLEARED"));
  }
  if (Present(p.track)) {
    return Error(p.track.offset, "TrackDescriptor outside sequence 1");
  }
  if (Present(p.snapshot))
    SPANPROF_RETURN_IF_ERROR(ReadSnapshot(p.snapshot, s));
  if (Present(p.defaults))
    SPANPROF_RETURN_IF_ERROR(ReadDefaults(p.defaults, s));
  if (Present(p.interned))
    SPANPROF_RETURN_IF_ERROR(ReadInterned(p.interned, s));
  if (Present(p.event)) return ReadEvent(p, s);
  return absl::OkStatus();
}

// Clock 64 (incremental) starts at the snapshot's value, which must equal
// REALTIME's when the snapshot has both.
absl::Status PerfettoReader::ReadSnapshot(const ProtoField& field,
                                          Sequence& s) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  bool has_realtime = false;
  uint64_t realtime = 0;
  while (d.Next(&f)) {
    if (f.number != kSnapshotClocks) continue;
    SPANPROF_RETURN_IF_ERROR(
        Expect(f, "ClockSnapshot.clocks", kWireLengthDelimited));
    ProtoDecoder c(f.bytes, f.bytes_offset);
    ProtoField cf;
    uint64_t id = 0;
    uint64_t ts = 0;
    while (c.Next(&cf)) {
      if (cf.number != kClockId && cf.number != kClockTimestamp) continue;
      SPANPROF_RETURN_IF_ERROR(Expect(cf, "ClockSnapshot.Clock", kWireVarint));
      (cf.number == kClockId ? id : ts) = cf.value;
    }
    if (c.error() != nullptr) return DecodeError(c, "ClockSnapshot.Clock");
    if (id == kBuiltinClockRealtime) {
      has_realtime = true;
      realtime = ts;
    } else if (id == kIncrementalClockId) {
      s.has_clock = true;
      s.clock = ts;
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "ClockSnapshot");
  if (s.has_clock && has_realtime && realtime != s.clock) {
    return Error(field.offset,
                 Cat("clock 64 starts at ", s.clock, ", REALTIME at ", realtime,
                     " (spanprof writes them equal)"));
  }
  return absl::OkStatus();
}

absl::Status PerfettoReader::ReadDefaults(const ProtoField& field,
                                          Sequence& s) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  while (d.Next(&f)) {
    if (f.number == kDefaultsTimestampClockId) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "TracePacketDefaults.timestamp_clock_id", kWireVarint));
      s.has_default_clock = true;
      s.default_clock = f.value;
    } else if (f.number == kDefaultsTrackEventDefaults) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "TracePacketDefaults.track_event", kWireLengthDelimited));
      ProtoDecoder e(f.bytes, f.bytes_offset);
      ProtoField ef;
      while (e.Next(&ef)) {
        if (ef.number != kEventDefaultsTrackUuid) continue;
        SPANPROF_RETURN_IF_ERROR(
            Expect(ef, "TrackEventDefaults.track_uuid", kWireVarint));
        s.has_track = true;
        s.track = ef.value;
      }
      if (e.error() != nullptr) return DecodeError(e, "TrackEventDefaults");
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "TracePacketDefaults");
  return absl::OkStatus();
}

absl::Status PerfettoReader::ReadInterned(const ProtoField& field,
                                          Sequence& s) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  while (d.Next(&f)) {
    absl::flat_hash_map<uint64_t, std::string>* table = nullptr;
    if (f.number == kInternedEventCategories) table = &s.categories;
    if (f.number == kInternedEventNames) table = &s.names;
    if (f.number == kInternedAnnotationNames) table = &s.annotations;
    if (table == nullptr) continue;
    SPANPROF_RETURN_IF_ERROR(
        Expect(f, "InternedData entry", kWireLengthDelimited));
    SPANPROF_RETURN_IF_ERROR(ReadInternedEntry(f, *table));
  }
  if (d.error() != nullptr) return DecodeError(d, "InternedData");
  return absl::OkStatus();
}

absl::Status PerfettoReader::ReadInternedEntry(
    const ProtoField& field, absl::flat_hash_map<uint64_t, std::string>& m) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  uint64_t iid = 0;
  std::string_view name;
  while (d.Next(&f)) {
    if (f.number == kInternedIid) {
      SPANPROF_RETURN_IF_ERROR(Expect(f, "interned iid", kWireVarint));
      iid = f.value;
    } else if (f.number == kInternedName) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "interned name", kWireLengthDelimited));
      name = f.bytes;
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "interned entry");
  if (iid == 0) return Error(field.offset, "interned entry without an iid");
  // Names reach every output (the summary's counter keys among them), all
  // of which are UTF-8.
  if (!simdjson::validate_utf8(name.data(), name.size())) {
    return Error(field.offset,
                 Cat("interned name of iid ", iid, " is not UTF-8"));
  }
  m[iid] = std::string(name);
  return absl::OkStatus();
}

// The packet's time in ns since the anchor: on clock 64 (the sequence's
// default) a delta from the sequence's previous time, on REALTIME (1)
// absolute.
absl::StatusOr<int64_t> PerfettoReader::EventTime(const Packet& p,
                                                  Sequence& s) {
  if (!p.has_timestamp) {
    return Error(p.event.offset, "a track event without timestamp");
  }
  const uint64_t clock = p.has_clock_id        ? p.clock_id
                         : s.has_default_clock ? s.default_clock
                                               : kBuiltinClockRealtime;
  uint64_t absolute = p.timestamp;
  if (clock == kIncrementalClockId) {
    if (!s.has_clock) {
      return Error(p.event.offset,
                   "clock 64 used before a ClockSnapshot defined it");
    }
    s.clock += p.timestamp;
    absolute = s.clock;
  } else if (clock != kBuiltinClockRealtime) {
    return Error(packet_offset_, Cat("timestamp on clock ", clock,
                                     " (spanprof writes clocks 64 and 1)"));
  }
  return static_cast<int64_t>(
      absolute - static_cast<uint64_t>(capture_.wall_clock_anchor_ns));
}

absl::Status PerfettoReader::ReadEvent(const Packet& p, Sequence& s) {
  SPANPROF_ASSIGN_OR_RETURN(const int64_t ns, EventTime(p, s));
  s.last_ns = std::max(s.last_ns, ns);
  ProtoDecoder d(p.event.bytes, p.event.bytes_offset);
  ProtoField f;
  uint64_t type = 0;
  uint64_t name_iid = 0;
  // Members, reused: most events have none of them.
  std::vector<ProtoField>& categories = categories_;
  std::vector<ProtoField>& annotations = annotations_;
  std::vector<ProtoField>& flows = flows_;  // flow_ids, terminating_flow_ids
  categories.clear();
  annotations.clear();
  flows.clear();
  while (d.Next(&f)) {
    switch (f.number) {
      case kEventType:
        SPANPROF_RETURN_IF_ERROR(Expect(f, "TrackEvent.type", kWireVarint));
        type = f.value;
        break;
      case kEventNameIid:
        SPANPROF_RETURN_IF_ERROR(Expect(f, "TrackEvent.name_iid", kWireVarint));
        name_iid = f.value;
        break;
      case kEventCategoryIids:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TrackEvent.category_iids", kWireVarint));
        categories.push_back(f);
        break;
      case kEventDebugAnnotations:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TrackEvent.debug_annotations", kWireLengthDelimited));
        annotations.push_back(f);
        break;
      case kEventFlowIds:
      case kEventTerminatingFlowIds:
        SPANPROF_RETURN_IF_ERROR(Expect(f, "TrackEvent flow id", kWireFixed64));
        flows.push_back(f);
        break;
      case kEventTrackUuid:
        SPANPROF_RETURN_IF_ERROR(
            Expect(f, "TrackEvent.track_uuid", kWireVarint));
        if (!s.has_track || f.value != s.track) {
          return Error(f.offset, Cat("TrackEvent.track_uuid ", f.value,
                                     " is not the sequence's thread track"));
        }
        break;
      default:
        break;  // unknown: skipped
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "TrackEvent");
  if (type == kTypeSliceEnd) return EndSlice(p.event, s, ns);
  if (type != kTypeSliceBegin) {
    return Error(p.event.offset,
                 Cat("TrackEvent.type ", type,
                     " (spanprof writes slice begins and ends only)"));
  }
  return BeginSlice(p.event, s, ns, name_iid, categories, annotations, flows);
}

// The sequence's thread, from its default track's descriptor.
absl::Status PerfettoReader::ResolveThread(const ProtoField& event,
                                           Sequence& s) {
  if (!have_metadata_) {
    return Error(event.offset, "a slice before the spanprof metadata event");
  }
  if (!s.has_track) {
    return Error(event.offset,
                 "a slice on a sequence without a default "
                 "track (TrackEventDefaults.track_uuid)");
  }
  auto it = tracks_.find(s.track);
  if (it == tracks_.end() || !it->second.is_thread) {
    return Error(event.offset, Cat("track uuid ", s.track,
                                   " has no thread TrackDescriptor before it"));
  }
  const uint64_t index = s.track - ProcessTrackUuid(capture_.pid) - 1;
  if (index >= capture_.threads.size()) {
    return Error(event.offset,
                 Cat("track uuid ", s.track, ": thread index ", index,
                     " out of range (", capture_.threads.size(), " threads)"));
  }
  const Track& track = it->second;
  const ThreadInfo& thread = capture_.threads[index];
  // A merged capture's thread is under its own process's pid.
  const int64_t pid = ThreadPid(capture_, static_cast<uint32_t>(index));
  if (track.tid != thread.os_tid || track.pid != static_cast<uint64_t>(pid)) {
    return Error(event.offset,
                 Cat("track uuid ", s.track, ": pid ", track.pid, " tid ",
                     track.tid, " != metadata's ", pid, " and ", thread.os_tid,
                     " (threads[", index, "])"));
  }
  s.thread = static_cast<uint32_t>(index);
  return absl::OkStatus();
}

// The slice's name is its site's, its category the site's tags.
absl::Status PerfettoReader::CheckSiteStrings(
    const ProtoField& event, const Sequence& s, uint64_t name_iid,
    const std::vector<ProtoField>& categories) {
  auto name = s.names.find(name_iid);
  if (name == s.names.end()) {
    return Error(event.offset,
                 Cat("TrackEvent.name_iid ", name_iid, " was never interned"));
  }
  const uint64_t site = name_iid - 1;
  if (name_iid == 0 || site >= capture_.sites.size()) {
    return Error(event.offset, Cat("site index ", site, " out of range (",
                                   capture_.sites.size(), " sites)"));
  }
  if (name->second != capture_.sites[site].name) {
    return Error(event.offset, Cat("name iid ", name_iid,
                                   " is not metadata.sites[", site, "].name"));
  }
  const std::string& want = site_categories_[site];
  if (categories.size() > 1 || categories.empty() != want.empty()) {
    return Error(event.offset, Cat("expected ", want.empty() ? 0 : 1,
                                   " category (the site's tags)"));
  }
  if (categories.empty()) return absl::OkStatus();
  auto category = s.categories.find(categories[0].value);
  if (category == s.categories.end()) {
    return Error(categories[0].offset,
                 Cat("TrackEvent.category_iids ", categories[0].value,
                     " was never interned"));
  }
  if (category->second != want) {
    return Error(categories[0].offset,
                 Cat("category does not match metadata.sites[", site, "]"));
  }
  return absl::OkStatus();
}

absl::Status PerfettoReader::BeginSlice(
    const ProtoField& event, Sequence& s, int64_t ns, uint64_t name_iid,
    const std::vector<ProtoField>& categories,
    const std::vector<ProtoField>& annotations,
    const std::vector<ProtoField>& flows) {
  if (s.thread == kNone) SPANPROF_RETURN_IF_ERROR(ResolveThread(event, s));
  SPANPROF_RETURN_IF_ERROR(CheckSiteStrings(event, s, name_iid, categories));
  if (spans_.size() >= UINT32_MAX - 1) {
    return Error(event.offset, "too many spans");
  }
  Span span;
  span.site = static_cast<uint32_t>(name_iid - 1);
  span.thread = s.thread;
  span.start_ns = ns;
  span.first_arg = static_cast<uint32_t>(args_.size());
  BeginAnnotations own;
  for (const ProtoField& a : annotations) {
    SPANPROF_RETURN_IF_ERROR(ReadAnnotation(a, s, span, own));
  }
  if (own.has_alloc_count != capture_.alloc_measured ||
      own.has_alloc_bytes != capture_.alloc_measured) {
    return Error(event.offset,
                 capture_.alloc_measured
                     ? "alloc_count and alloc_bytes are required when "
                       "metadata.alloc_measured is true"
                     : "alloc_count and alloc_bytes must be left out when "
                       "metadata.alloc_measured is false");
  }
  if (args_.size() - span.first_arg > kMaxSpanArgs) {
    return Error(event.offset,
                 Cat("more than ", kMaxSpanArgs, " arguments on one span"));
  }
  span.arg_count = static_cast<uint16_t>(args_.size() - span.first_arg);
  if (span.arg_count == 0) span.first_arg = 0;  // as the JSON reader has it
  span.id = own.has_span_id ? own.span_id : last_id_ + 1;
  last_id_ = span.id;
  if (span.id == 0) return Error(event.offset, "span ids start at 1");
  if (own.has_start) span.start_ns = own.start_ns;
  span.depth = own.depth;
  const auto index = static_cast<uint32_t>(spans_.size());
  spans_.push_back(span);
  if (capture_.alloc_measured) allocs_.push_back(own.allocs);
  parent_.push_back(kNone);
  depth_known_.push_back(own.has_depth ? 1 : 0);
  if (own.has_end) end_overrides_.emplace_back(index, own.end_ns);
  SPANPROF_RETURN_IF_ERROR(LinkParent(event, s, own, flows, index));
  s.stack.push_back({index, packet_offset_, packet_});
  return absl::OkStatus();
}

// The parent: the parent_id annotation, else the start of the flow this
// slice ends, else the open slice below it. Flow starts are recorded.
absl::Status PerfettoReader::LinkParent(const ProtoField& event,
                                        const Sequence& s,
                                        const BeginAnnotations& own,
                                        const std::vector<ProtoField>& flows,
                                        uint32_t index) {
  const ProtoField* terminating = nullptr;
  for (const ProtoField& f : flows) {
    if (f.number == kEventTerminatingFlowIds) {
      if (terminating != nullptr) {
        return Error(f.offset, "a slice ends more than one flow");
      }
      terminating = &f;
    } else if (!flow_starts_.try_emplace(f.value, index).second) {
      return Error(f.offset, Cat("flow ", f.value, " starts twice"));
    }
  }
  Span& span = spans_[index];
  if (own.has_parent_id) {
    span.parent_id = own.parent_id;
    if (own.parent_id != 0) {
      links_.push_back({index, false, own.parent_id, event.offset, packet_});
    }
  } else if (terminating != nullptr) {
    links_.push_back(
        {index, true, terminating->value, terminating->offset, packet_});
  } else if (!s.stack.empty()) {
    parent_[index] = s.stack.back().span;
    span.parent_id = spans_[parent_[index]].id;
  }
  return absl::OkStatus();
}

absl::Status PerfettoReader::ReadAnnotation(const ProtoField& field,
                                            const Sequence& s, Span& span,
                                            BeginAnnotations& own) {
  ProtoDecoder d(field.bytes, field.bytes_offset);
  ProtoField f;
  AnnotationValue a;
  a.offset = field.offset;
  while (d.Next(&f)) {
    if (f.number == kAnnotationNameIid) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "DebugAnnotation.name_iid", kWireVarint));
      a.has_name = true;
      a.name_iid = f.value;
    } else if (f.number == kAnnotationBool || f.number == kAnnotationInt) {
      SPANPROF_RETURN_IF_ERROR(Expect(f, "DebugAnnotation value", kWireVarint));
      a.field = f.number;
      a.value = f.value;
    } else if (f.number == kAnnotationDouble) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "DebugAnnotation.double_value", kWireFixed64));
      a.field = f.number;
      a.value = f.value;
    } else if (f.number == kAnnotationString) {
      SPANPROF_RETURN_IF_ERROR(
          Expect(f, "DebugAnnotation.string_value", kWireLengthDelimited));
      a.field = f.number;
      a.text = f.bytes;
    } else if (f.number >= 3 && f.number <= 10) {
      return Error(f.offset, Cat("DebugAnnotation field ", f.number,
                                 " (spanprof writes name_iid and bool, int, "
                                 "double or string values)"));
    }
  }
  if (d.error() != nullptr) return DecodeError(d, "DebugAnnotation");
  auto name = s.annotations.find(a.name_iid);
  if (!a.has_name || name == s.annotations.end()) {
    return Error(field.offset, Cat("DebugAnnotation.name_iid ", a.name_iid,
                                   " was never interned"));
  }
  if (a.field == 0) {
    return Error(field.offset,
                 Cat("annotation \"", name->second, "\" has no value"));
  }
  return ApplyAnnotation(a, name->second, span, own);
}

absl::Status PerfettoReader::ApplyAnnotation(const AnnotationValue& a,
                                             std::string_view name, Span& span,
                                             BeginAnnotations& own) {
  const bool is_arg = name.substr(0, kArgPrefix.size()) == kArgPrefix;
  const bool is_counter =
      name.substr(0, kCounterPrefix.size()) == kCounterPrefix;
  const bool is_truncated =
      name.substr(0, kTruncatedArgPrefix.size()) == kTruncatedArgPrefix;
  if (!is_arg && !is_counter && !is_truncated) {
    return ApplyOwnAnnotation(a, name, span, own);
  }
  SpanArg arg;
  arg.is_counter = is_counter;
  arg.key = std::string(name.substr(is_arg       ? kArgPrefix.size()
                                    : is_counter ? kCounterPrefix.size()
                                                 : kTruncatedArgPrefix.size()));
  if (is_counter && arg.key.empty()) {
    return Error(a.offset, "empty counter name");
  }
  if (a.field == kAnnotationString && !is_counter) {
    if (a.text.size() > kMaxArgTextBytes) {
      return Error(a.offset, Cat("annotation \"", name, "\": a string ",
                                 "argument has at most ", kMaxArgTextBytes,
                                 " bytes, got ", a.text.size()));
    }
    if (!simdjson::validate_utf8(a.text.data(), a.text.size())) {
      return Error(a.offset,
                   Cat("annotation \"", name, "\": text is not UTF-8"));
    }
    arg.is_string = true;
    arg.truncated = is_truncated;
    arg.text = std::string(a.text);
    args_.push_back(std::move(arg));
    return absl::OkStatus();
  }
  if (is_truncated) {
    return Error(a.offset,
                 Cat("annotation \"", name, "\": expected a string value"));
  }
  if (a.field == kAnnotationInt) {
    arg.int_value = static_cast<int64_t>(a.value);
  } else if (a.field == kAnnotationDouble && is_arg) {
    arg.is_double = true;
    std::memcpy(&arg.double_value, &a.value, sizeof arg.double_value);
  } else {
    return Error(a.offset,
                 Cat("annotation \"", name, "\": expected ",
                     is_arg ? "an int, double or string" : "an int", " value"));
  }
  args_.push_back(std::move(arg));
  return absl::OkStatus();
}

// spanprof's own annotation names: flags (bool), the rest int.
absl::Status PerfettoReader::ApplyOwnAnnotation(const AnnotationValue& a,
                                                std::string_view name,
                                                Span& span,
                                                BeginAnnotations& own) {
  for (const FlagName& flag : kFlagNames) {
    if (name != flag.name) continue;
    if (a.field != kAnnotationBool || a.value != 1) {
      return Error(a.offset, Cat("flag \"", name, "\": expected true"));
    }
    if ((span.flags & flag.bit) != 0) {
      return Error(a.offset, Cat("duplicate flag \"", name, "\""));
    }
    span.flags |= flag.bit;
    return absl::OkStatus();
  }
  const std::pair<std::string_view, bool*> names[] = {
      {kAnnotationHeartbeats, nullptr},
      {kAnnotationAllocCount, &own.has_alloc_count},
      {kAnnotationAllocBytes, &own.has_alloc_bytes},
      {kAnnotationSpanId, &own.has_span_id},
      {kAnnotationParentId, &own.has_parent_id},
      {kAnnotationDepth, &own.has_depth},
      {kAnnotationStartNs, &own.has_start},
      {kAnnotationEndNs, &own.has_end}};
  for (uint32_t i = 0; i < std::size(names); ++i) {
    if (name != names[i].first) continue;
    if (a.field != kAnnotationInt) {
      return Error(a.offset, Cat("annotation \"", name, "\": expected int"));
    }
    if ((own.seen & (1u << i)) != 0) {
      return Error(a.offset, Cat("duplicate annotation \"", name, "\""));
    }
    own.seen |= 1u << i;
    if (names[i].second != nullptr) *names[i].second = true;
    const uint64_t v = a.value;
    const auto s = static_cast<int64_t>(v);
    switch (i) {
      case 0:
        if (v > UINT32_MAX) {
          return Error(a.offset, Cat("annotation \"", name,
                                     "\": more than 2^32-1 heartbeats"));
        }
        span.heartbeats = static_cast<uint32_t>(v);
        break;
      case 1:
        own.allocs.count = s;
        break;
      case 2:
        own.allocs.bytes = s;
        break;
      case 3:
        own.span_id = v;
        break;
      case 4:
        own.parent_id = v;
        break;
      case 5:
        own.depth = static_cast<uint32_t>(v);
        break;
      case 6:
        own.start_ns = s;
        break;
      default:
        own.end_ns = s;
        break;
    }
    if (i == 5 && v > UINT32_MAX) {
      return Error(a.offset, Cat("depth ", v, " beyond uint32"));
    }
    return absl::OkStatus();
  }
  return Error(a.offset, Cat("unknown debug annotation \"", name,
                             "\" (not args.*, counters.* or spanprof's)"));
}

absl::Status PerfettoReader::EndSlice(const ProtoField& event, Sequence& s,
                                      int64_t ns) {
  if (s.stack.empty()) {
    return Error(event.offset, "a slice end without a begin");
  }
  spans_[s.stack.back().span].end_ns = ns;
  s.stack.pop_back();
  return absl::OkStatus();
}

absl::Status PerfettoReader::Finish() {
  if (!have_metadata_) {
    return Error(bytes_.size(),
                 Cat("no \"", kMetadataEventName,
                     "\" event: not a trace spanprof wrote (spanprof reads "
                     "the Perfetto traces it writes)"));
  }
  // The first open slice in file order.
  const Sequence::Open* open = nullptr;
  for (const auto& [id, s] : sequences_) {
    if (!s.stack.empty() &&
        (open == nullptr || s.stack[0].offset < open->offset)) {
      open = s.stack.data();
    }
  }
  if (open != nullptr && incomplete_) {
    CloseOpenSlices();
  } else if (open != nullptr) {
    in_packet_ = true;
    packet_ = open->packet;
    return Error(open->offset, "a slice begin without an end");
  }
  for (const auto& [index, ns] : end_overrides_) spans_[index].end_ns = ns;
  SPANPROF_RETURN_IF_ERROR(ResolveLinks());
  return ResolveDepths();
}

// A trace read with allow_truncated_: the slices the cut left open end at
// the last time their sequence shows, as unfinished spans.
void PerfettoReader::CloseOpenSlices() {
  for (auto& [id, s] : sequences_) {
    for (const Sequence::Open& open : s.stack) {
      Span& span = spans_[open.span];
      span.end_ns = std::max(span.start_ns, s.last_ns);
      span.flags |= kSpanUnfinished;
    }
    s.stack.clear();
  }
}

// Parents found by a flow or by id, now that every span is read.
absl::Status PerfettoReader::ResolveLinks() {
  absl::flat_hash_map<uint64_t, uint32_t> by_id;
  for (const Link& link : links_) {
    if (link.by_flow || !by_id.empty()) continue;
    by_id.reserve(spans_.size());
    for (uint32_t i = 0; i < spans_.size(); ++i) {
      by_id.try_emplace(spans_[i].id, i);
    }
  }
  for (const Link& link : links_) {
    Span& span = spans_[link.span];
    if (!link.by_flow) {
      auto it = by_id.find(link.key);
      if (it != by_id.end()) parent_[link.span] = it->second;
      continue;
    }
    auto it = flow_starts_.find(link.key);
    if (it == flow_starts_.end() && incomplete_) {
      // Its start was cut off: a root, as a lost parent makes one.
      span.parent_id = 0;
      span.flags |= kSpanRerooted;
      continue;
    }
    if (it == flow_starts_.end()) {
      in_packet_ = true;
      packet_ = link.packet;
      return Error(link.offset,
                   Cat("flow ", link.key, " ends here but no slice starts it"));
    }
    parent_[link.span] = it->second;
    span.parent_id = spans_[it->second].id;
  }
  return absl::OkStatus();
}

// Depths not written are the parent's + 1 (0 without a parent). A chain of
// parents is walked once; a cycle (only in a hand-made file: a written
// capture breaks every cycle with a depth annotation) is an error.
absl::Status PerfettoReader::ResolveDepths() {
  std::vector<uint32_t> chain;
  for (uint32_t i = 0; i < spans_.size(); ++i) {
    chain.clear();
    for (uint32_t j = i; j != kNone && depth_known_[j] != 1; j = parent_[j]) {
      if (depth_known_[j] == 2) {
        in_packet_ = false;
        return Error(0, Cat("span ", spans_[j].id,
                            ": its parents form a cycle and no depth is "
                            "written"));
      }
      depth_known_[j] = 2;
      chain.push_back(j);
    }
    for (size_t k = chain.size(); k-- > 0;) {
      const uint32_t j = chain[k];
      const uint32_t p = parent_[j];
      spans_[j].depth = p == kNone ? 0 : spans_[p].depth + 1;
      depth_known_[j] = 1;
    }
  }
  return absl::OkStatus();
}

// The capture's order: (thread, start_ns, depth), ties by id, then file
// order, as the JSON reader sorts.
Capture PerfettoReader::Assemble() {
  Capture c = std::move(capture_);
  MoveSpansInCaptureOrder(spans_, allocs_, args_, c);
  return c;
}

}  // namespace

absl::StatusOr<Capture> ParsePerfettoTrace(std::string_view bytes,
                                           std::string_view source,
                                           bool allow_truncated) {
  return PerfettoReader(bytes, source, allow_truncated).Read();
}

}  // namespace spanprof::analysis::internal::perfetto
