// The Perfetto protobuf trace reads back into the capture the JSON trace of
// the same capture reads back into (and so the same summary, byte for byte);
// every malformed input is an error naming the file and a byte offset, never
// a crash.
#include "analysis/src/perfetto/perfetto_reader.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/src/perfetto/perfetto_format.h"
#include "analysis/src/perfetto/proto_decoder.h"
#include "analysis/src/perfetto/proto_encoder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/perfetto/decoded_trace.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

namespace pf = internal::perfetto;
using internal::ProtoEncoder;
using spanprof::testing::CaptureBuilder;
using spanprof::testing::HandOffCapture;
using spanprof::testing::LastPacketOffset;
using spanprof::testing::RichCapture;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// What a capture reads back as from each format.
void ExpectSameAsJson(const Capture& capture) {
  const absl::StatusOr<Capture> json = ParseTrace(TraceToJson(capture), "j");
  ASSERT_TRUE(json.ok()) << json.status();
  const std::string bytes = CaptureToPerfetto(capture);
  ASSERT_TRUE(LooksLikePerfettoTrace(bytes));
  const absl::StatusOr<Capture> pf = ParseTrace(bytes, "t.pftrace");
  ASSERT_TRUE(pf.ok()) << pf.status();
  EXPECT_EQ(*pf, *json);
  EXPECT_EQ(SummaryToJson(Summarize(*pf)), SummaryToJson(Summarize(*json)));
}

TEST(PerfettoReaderTest, RoundTripsLikeTheJsonTrace) {
  ExpectSameAsJson(HandOffCapture({.heartbeats_arg = true}));
  ExpectSameAsJson(RichCapture());
  ExpectSameAsJson(RichCapture(
      {.alloc = true, .drops = true, .unfinished = true, .counters = true}));
  ExpectSameAsJson(RichCapture({.broken = true}));
  ExpectSameAsJson(RichCapture({.counters = true, .strings = true}));
  ExpectSameAsJson(RichCapture({.drops = true, .keys = true}));
  ExpectSameAsJson(CaptureBuilder().Build());
}

// String arguments, hook failures and failed prepares survive both formats
// exactly (the JSON trace and the protobuf one).
TEST(PerfettoReaderTest, KeepsStringArgumentsAndHookFailures) {
  const Capture capture = RichCapture({.counters = true, .strings = true});
  const absl::StatusOr<Capture> pf =
      ParseTrace(CaptureToPerfetto(capture), "t.pftrace");
  ASSERT_TRUE(pf.ok()) << pf.status();
  EXPECT_EQ(*pf, capture);
  const absl::StatusOr<Capture> json = ParseTrace(TraceToJson(capture), "j");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, capture);
}

TEST(PerfettoReaderTest, RoundTripsRandomCaptures) {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 20; ++i) {
    ExpectSameAsJson(spanprof::testing::RandomCapture(rng, 30));
  }
}

// The capture's metadata and every per-span field, in the capture itself.
TEST(PerfettoReaderTest, ReadsBackTheExactCapture) {
  Capture capture = RichCapture(
      {.alloc = true, .drops = true, .unfinished = true, .counters = true});
  capture.finished_normally = false;
  capture.clock = "tsc";
  capture.overflow_policy = "ring";
  capture.spans[1].flags = kSpanRerooted | kSpanException;
  const absl::StatusOr<Capture> back =
      ParseTrace(CaptureToPerfetto(capture), "t.pftrace");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, capture);
}

// Ids out of slice order, a parent that is not the open slice below, a
// depth that is not the parent's + 1, a dangling parent, times before the
// epoch and a reversed (unsorted) capture: the annotations that carry what
// the reader cannot derive.
TEST(PerfettoReaderTest, CarriesWhatItCannotDerive) {
  Capture capture = HandOffCapture({.heartbeats_arg = true});
  capture.spans[0].id = 100;  // span 1: 2..7's parents follow
  for (Span& s : capture.spans) {
    if (s.parent_id == 1) s.parent_id = 100;
  }
  capture.spans[3].parent_id = 999;  // dangling (a lost parent)
  capture.spans[4].depth = 7;
  ExpectSameAsJson(capture);
  capture.wall_clock_anchor_ns = 0;
  capture.spans[2].start_ns = -50;  // before the epoch: clamped ts
  ExpectSameAsJson(capture);
  std::reverse(capture.spans.begin(), capture.spans.end());
  ExpectSameAsJson(capture);
}

TEST(PerfettoReaderTest, ReadTraceReadsGzip) {
  spanprof::testing::TempDir dir;
  const Capture capture = HandOffCapture({.heartbeats_arg = true});
  const std::string path = dir.File("t.pftrace.gz");
  ASSERT_TRUE(WriteTrace(capture, path).ok());
  const absl::StatusOr<Capture> back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spans.size(), capture.spans.size());
}

// --- errors ------------------------------------------------------------

// A small valid trace, two spans.
std::string WholeSmallTrace() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t site = b.Site("step", "p");
  b.Add(1, 0, site, main, 0, 100);
  b.Add(2, 1, site, main, 10, 20).heartbeats = 3;
  return CaptureToPerfetto(b.Build());
}

// The same without its end packet, to append hand-made packets to (and
// then, for a trace that must read to its end, AppendEndPacket()).
std::string SmallTrace() {
  std::string trace = WholeSmallTrace();
  trace.resize(LastPacketOffset(trace));
  return trace;
}

// Appends one packet written by `body` to `*trace`.
template <typename Body>
void AppendPacket(std::string* trace, Body body) {
  std::string packet;
  ProtoEncoder e(&packet);
  body(e);
  ProtoEncoder(trace).Bytes(pf::kTracePacket, packet);
}

// Appends an event packet on thread sequence 2 (of SmallTrace's thread).
template <typename Event>
void AppendEvent(std::string* trace, Event event) {
  AppendPacket(trace, [&](ProtoEncoder& e) {
    e.Varint(pf::kPacketTimestamp, 1);
    e.Varint(pf::kPacketSequenceId, 2);
    const size_t mark = e.BeginNested(pf::kPacketTrackEvent);
    event(e);
    e.EndNested(mark);
  });
}

// Appends the end packet stating `spans` slices and the bytes before it.
void AppendEndPacket(std::string* trace, uint64_t spans) {
  const uint64_t bytes = trace->size();
  AppendPacket(trace, [&](ProtoEncoder& e) {
    e.Varint(pf::kPacketTimestamp, 1);
    e.Varint(pf::kPacketSequenceId, pf::kDescriptorSequenceId);
    const size_t event = e.BeginNested(pf::kPacketTrackEvent);
    e.Varint(pf::kEventType, pf::kTypeInstant);
    e.Bytes(pf::kEventName, pf::kEndEventName);
    for (const auto& [name, value] :
         {std::pair{pf::kEndSpans, spans}, std::pair{pf::kEndBytes, bytes}}) {
      const size_t a = e.BeginNested(pf::kEventDebugAnnotations);
      e.Bytes(pf::kAnnotationName, name);
      e.Varint(pf::kAnnotationInt, value);
      e.EndNested(a);
    }
    e.EndNested(event);
  });
}

// The error message of reading `bytes` ("" when it reads).
std::string Read(const std::string& bytes) {
  const absl::Status s = pf::ParsePerfettoTrace(bytes, "t.pftrace").status();
  return std::string(s.message().data(), s.message().size());
}

size_t PacketCount(const std::string& bytes) {
  internal::ProtoDecoder d(bytes, 0);
  internal::ProtoField f;
  size_t n = 0;
  while (d.Next(&f)) ++n;
  return n;
}

TEST(PerfettoReaderErrorTest, NamesTheFileTheByteAndThePacket) {
  std::string trace = SmallTrace();
  const size_t at = trace.size();
  const size_t packet = PacketCount(trace);
  AppendEvent(&trace, [](ProtoEncoder& e) {
    e.Varint(pf::kEventType, pf::kTypeSliceBegin);
    e.Varint(pf::kEventNameIid, 9);
  });
  // The packet's key and length, its timestamp and sequence id (2 bytes
  // each), then the track event.
  EXPECT_EQ(Read(trace), "t.pftrace: byte " + std::to_string(at + 2 + 4) +
                             ": packet " + std::to_string(packet) +
                             ": TrackEvent.name_iid 9 was never interned");
}

TEST(PerfettoReaderErrorTest, EndWithoutBegin) {
  std::string trace = SmallTrace();
  AppendEvent(&trace, [](ProtoEncoder& e) {
    e.Varint(pf::kEventType, pf::kTypeSliceEnd);
  });
  EXPECT_THAT(Read(trace), HasSubstr("a slice end without a begin"));
}

TEST(PerfettoReaderErrorTest, BeginWithoutEnd) {
  std::string trace = SmallTrace();
  AppendEvent(&trace, [](ProtoEncoder& e) {
    e.Varint(pf::kEventType, pf::kTypeSliceBegin);
    e.Varint(pf::kEventNameIid, 1);
    e.Varint(pf::kEventCategoryIids, 1);
  });
  AppendEndPacket(&trace, 3);
  EXPECT_THAT(Read(trace), HasSubstr("a slice begin without an end"));
}

TEST(PerfettoReaderErrorTest, WrongWireTypeOnAKnownField) {
  std::string trace = SmallTrace();
  AppendPacket(&trace,
               [](ProtoEncoder& e) { e.Bytes(pf::kPacketTimestamp, "x"); });
  EXPECT_THAT(Read(trace),
              HasSubstr("TracePacket.timestamp: wire type length-delimited, "
                        "expected varint"));
}

TEST(PerfettoReaderErrorTest, SequenceWithoutDescriptor) {
  std::string trace = SmallTrace();
  AppendPacket(&trace, [](ProtoEncoder& e) {
    e.Varint(pf::kPacketSequenceId, 40);
    e.Varint(pf::kPacketSequenceFlags, pf::kSeqIncrementalStateCleared);
    const size_t defaults = e.BeginNested(pf::kPacketTracePacketDefaults);
    const size_t event = e.BeginNested(pf::kDefaultsTrackEventDefaults);
    e.Varint(pf::kEventDefaultsTrackUuid, 12345);
    e.EndNested(event);
    e.EndNested(defaults);
    const size_t interned = e.BeginNested(pf::kPacketInternedData);
    const size_t name = e.BeginNested(pf::kInternedEventNames);
    e.Varint(pf::kInternedIid, 1);
    e.Bytes(pf::kInternedName, "step");
    e.EndNested(name);
    e.EndNested(interned);
  });
  AppendPacket(&trace, [](ProtoEncoder& e) {
    e.Varint(pf::kPacketTimestamp, 1);
    e.Varint(pf::kPacketSequenceId, 40);
    e.Varint(pf::kPacketTimestampClockId, 1);
    const size_t event = e.BeginNested(pf::kPacketTrackEvent);
    e.Varint(pf::kEventType, pf::kTypeSliceBegin);
    e.Varint(pf::kEventNameIid, 1);
    e.EndNested(event);
  });
  EXPECT_THAT(Read(trace),
              HasSubstr("track uuid 12345 has no thread TrackDescriptor"));
}

TEST(PerfettoReaderErrorTest, PacketBeforeTheSequenceIsCleared) {
  std::string trace = SmallTrace();
  AppendPacket(&trace,
               [](ProtoEncoder& e) { e.Varint(pf::kPacketSequenceId, 9); });
  EXPECT_THAT(Read(trace), HasSubstr("sequence 9: a packet before "
                                     "SEQ_INCREMENTAL_STATE_CLEARED"));
}

TEST(PerfettoReaderErrorTest, FlowThatNothingStarts) {
  std::string trace = SmallTrace();
  AppendEvent(&trace, [](ProtoEncoder& e) {
    e.Varint(pf::kEventType, pf::kTypeSliceBegin);
    e.Varint(pf::kEventNameIid, 1);
    e.Varint(pf::kEventCategoryIids, 1);
    e.Fixed64(pf::kEventTerminatingFlowIds, 77);
  });
  AppendEvent(&trace, [](ProtoEncoder& e) {
    e.Varint(pf::kEventType, pf::kTypeSliceEnd);
  });
  AppendEndPacket(&trace, 3);
  EXPECT_THAT(Read(trace),
              HasSubstr("flow 77 ends here but no slice starts it"));
}

// Appends a slice begin on SmallTrace's thread with one int debug
// annotation, its name interned as `iid`.
void AppendBeginWithAnnotation(std::string* trace, uint64_t iid,
                               std::string_view name, uint64_t value) {
  AppendPacket(trace, [&](ProtoEncoder& e) {
    e.Varint(pf::kPacketTimestamp, 1);
    e.Varint(pf::kPacketSequenceId, 2);
    const size_t interned = e.BeginNested(pf::kPacketInternedData);
    const size_t names = e.BeginNested(pf::kInternedAnnotationNames);
    e.Varint(pf::kInternedIid, iid);
    e.Bytes(pf::kInternedName, name);
    e.EndNested(names);
    e.EndNested(interned);
    const size_t event = e.BeginNested(pf::kPacketTrackEvent);
    e.Varint(pf::kEventType, pf::kTypeSliceBegin);
    e.Varint(pf::kEventNameIid, 1);
    e.Varint(pf::kEventCategoryIids, 1);
    const size_t a = e.BeginNested(pf::kEventDebugAnnotations);
    e.Varint(pf::kAnnotationNameIid, iid);
    e.Varint(pf::kAnnotationInt, value);
    e.EndNested(a);
    e.EndNested(event);
  });
}

TEST(PerfettoReaderErrorTest, UnknownAnnotationName) {
  std::string trace = SmallTrace();
  AppendBeginWithAnnotation(&trace, 50, "size", 3);
  EXPECT_THAT(Read(trace), HasSubstr("unknown debug annotation \"size\""));
}

// Span::heartbeats is 32 bits: a larger count is an error, not a wrap.
TEST(PerfettoReaderErrorTest, HeartbeatsPast32Bits) {
  std::string trace = SmallTrace();
  AppendBeginWithAnnotation(&trace, 51, "heartbeats", uint64_t{1} << 32);
  EXPECT_THAT(Read(trace),
              HasSubstr("\"heartbeats\": more than 2^32-1 heartbeats"));
}

TEST(PerfettoReaderErrorTest, NotATraceSpanprofWrote) {
  std::string trace;
  AppendPacket(&trace,
               [](ProtoEncoder& e) { e.Varint(pf::kPacketSequenceId, 1); });
  EXPECT_THAT(Read(trace), HasSubstr("not a trace spanprof wrote"));
  EXPECT_THAT(Read(""), HasSubstr("not a trace spanprof wrote"));
}

TEST(PerfettoReaderErrorTest, HostileLengthIsAnErrorNotAnAllocation) {
  // A packet claiming 2^62 bytes.
  std::string trace = SmallTrace();
  trace.push_back('\x0a');
  internal::AppendVarint(&trace, uint64_t{1} << 62);
  EXPECT_THAT(Read(trace),
              HasSubstr("length beyond the end of the enclosing message"));
}

TEST(PerfettoReaderErrorTest, UnknownFieldsAreSkipped) {
  std::string trace = SmallTrace();
  const absl::StatusOr<Capture> want =
      pf::ParsePerfettoTrace(WholeSmallTrace(), "t.pftrace");
  ASSERT_TRUE(want.ok()) << want.status();
  ProtoEncoder e(&trace);
  e.Varint(99, 5);        // in Trace
  e.Bytes(1000, "junk");  // in Trace
  AppendPacket(&trace, [](ProtoEncoder& p) {
    p.Varint(pf::kPacketSequenceId, 2);
    p.Fixed64(77, 1);  // in TracePacket
  });
  AppendEndPacket(&trace, 2);
  const absl::StatusOr<Capture> got =
      pf::ParsePerfettoTrace(trace, "t.pftrace");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, *want);
}

// Every byte flipped: errors well-formed, or a capture that summarizes.
TEST(PerfettoReaderErrorTest, CorruptionAtEveryByte) {
  const std::string trace = WholeSmallTrace();
  for (size_t i = 0; i < trace.size(); ++i) {
    for (const char mask : {'\x01', '\x80', '\xff'}) {
      std::string bad = trace;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      const absl::StatusOr<Capture> c =
          pf::ParsePerfettoTrace(bad, "t.pftrace");
      if (c.ok()) {
        Summarize(*c);
        continue;
      }
      const absl::string_view message = c.status().message();
      EXPECT_THAT(std::string(message.data(), message.size()),
                  ::testing::MatchesRegex("t\\.pftrace: (truncated at )?byte "
                                          "[0-9]+.*"))
          << i;
    }
  }
}

// --- completeness --------------------------------------------------------

// Cut at every byte, at a packet boundary or inside a packet, a real trace
// never reads as a smaller complete one: "truncated at byte N", where N is
// where the file ends. With allow_truncated, every cut past the metadata
// reads, and says that it is not complete.
void ExpectEveryCutIsTruncated(const std::string& trace) {
  ASSERT_TRUE(pf::ParsePerfettoTrace(trace, "t.pftrace").ok());
  size_t first_read = trace.size();  // the shortest cut that reads anyway
  for (size_t n = 0; n < trace.size(); ++n) {
    const std::string cut = trace.substr(0, n);
    const std::string message = Read(cut);
    EXPECT_THAT(message,
                StartsWith("t.pftrace: truncated at byte " + std::to_string(n)))
        << n;
    const absl::StatusOr<Capture> partial =
        pf::ParsePerfettoTrace(cut, "t.pftrace", /*allow_truncated=*/true);
    // Once the metadata packet is whole, every longer cut reads.
    if (partial.ok()) first_read = std::min(first_read, n);
    EXPECT_EQ(partial.ok(), n >= first_read) << n << " " << partial.status();
    if (!partial.ok()) continue;
    ASSERT_FALSE(partial->import_issues.empty()) << n;
    EXPECT_THAT(partial->import_issues[0],
                StartsWith("t.pftrace: truncated at byte " + std::to_string(n)))
        << n;
    EXPECT_FALSE(Summarize(*partial).complete) << n;
  }
  EXPECT_LT(first_read, trace.size());
}

TEST(PerfettoCompletenessTest, EveryCutOfARealTraceIsTruncated) {
  ExpectEveryCutIsTruncated(WholeSmallTrace());
  ExpectEveryCutIsTruncated(
      CaptureToPerfetto(HandOffCapture({.heartbeats_arg = true})));
  ExpectEveryCutIsTruncated(CaptureToPerfetto(RichCapture(
      {.alloc = true, .drops = true, .unfinished = true, .counters = true})));
}

// The cut the old reader took for a whole trace: every packet but the end
// one (here, one span of two).
TEST(PerfettoCompletenessTest, CutAtAPacketBoundaryIsNotAShorterTrace) {
  const std::string whole = WholeSmallTrace();
  std::string cut = whole.substr(0, LastPacketOffset(whole));
  EXPECT_EQ(Read(cut),
            "t.pftrace: truncated at byte " + std::to_string(cut.size()) +
                ": no \"spanprof end\" packet after packet " +
                std::to_string(PacketCount(cut)) +
                " (spanprof writes it last, stating the spans and bytes "
                "before it) (--allow-truncated reads what is there)");
  // A cut between the two slice ends: span 1 is left open.
  internal::ProtoDecoder d(whole, 0);
  internal::ProtoField f;
  std::vector<size_t> offsets;
  while (d.Next(&f)) offsets.push_back(f.offset);
  cut = whole.substr(0, offsets[offsets.size() - 2]);
  ASSERT_FALSE(Read(cut).empty());
  const absl::StatusOr<Capture> partial =
      pf::ParsePerfettoTrace(cut, "t.pftrace", /*allow_truncated=*/true);
  ASSERT_TRUE(partial.ok()) << partial.status();
  ASSERT_EQ(partial->spans.size(), 2u);
  EXPECT_EQ(partial->spans[0].flags & kSpanUnfinished, kSpanUnfinished);
  EXPECT_EQ(partial->spans[0].end_ns, 20);  // the last time read
  EXPECT_EQ(partial->spans[1].flags & kSpanUnfinished, 0);
  EXPECT_EQ(partial->spans[1].end_ns, 20);
  const Summary summary = Summarize(*partial);
  EXPECT_FALSE(summary.complete);
  EXPECT_EQ(summary.unfinished_events, 1u);
}

TEST(PerfettoCompletenessTest, EndPacketCountsMustAgree) {
  std::string trace = SmallTrace();
  AppendEndPacket(&trace, 3);  // 2 spans were written
  EXPECT_THAT(Read(trace), HasSubstr("incomplete: the \"spanprof end\" packet "
                                     "states 3 spans and "));
  const absl::StatusOr<Capture> anyway =
      pf::ParsePerfettoTrace(trace, "t.pftrace", /*allow_truncated=*/true);
  ASSERT_TRUE(anyway.ok()) << anyway.status();
  EXPECT_FALSE(Summarize(*anyway).complete);
  // Bytes: a packet lost in the middle (here, one more before the end).
  trace = SmallTrace();
  std::string shorter = trace;
  AppendEndPacket(&trace, 2);
  AppendPacket(&shorter, [](ProtoEncoder& e) {
    e.Varint(pf::kPacketSequenceId, 2);
    e.Fixed64(77, 1);
  });
  const std::string end = trace.substr(SmallTrace().size());
  shorter += end;  // states fewer bytes than precede it
  EXPECT_THAT(Read(shorter), HasSubstr("bytes before it, but 2 spans and "));
  EXPECT_EQ(Read(trace), "");
}

TEST(PerfettoCompletenessTest, NothingAfterTheEndPacket) {
  std::string trace = WholeSmallTrace();
  AppendEndPacket(&trace, 2);
  EXPECT_THAT(Read(trace), HasSubstr("a packet after the \"spanprof end\" "
                                     "packet (it is the last)"));
}

// The writer's end packet is its last, and states what precedes it.
TEST(PerfettoCompletenessTest, WriterEndsWithTheCounts) {
  const Capture capture = HandOffCapture({.heartbeats_arg = true});
  const std::string trace = CaptureToPerfetto(capture);
  std::string expected = trace.substr(0, LastPacketOffset(trace));
  AppendEndPacket(&expected, capture.spans.size());
  // The writer's end packet has the process track and the window's end as
  // timestamp; compare the counts through the reader instead of the bytes.
  EXPECT_EQ(Read(trace), "");
  EXPECT_EQ(Read(expected), "");
  std::string wrong = trace.substr(0, LastPacketOffset(trace));
  AppendEndPacket(&wrong, capture.spans.size() + 1);
  EXPECT_NE(Read(wrong), "");
}

}  // namespace
}  // namespace spanprof::analysis
