// The Perfetto writer writes a slice begin on three paths: the general one
// (the slice's strings are new on its sequence, so its packet interns them;
// or it has flows or string arguments), the small one (a few annotations,
// every string interned) and the plain one (no arguments or flags). Each
// writes the same TrackEvent for the same slice, and each reads back.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/src/perfetto/perfetto_format.h"
#include "analysis/src/perfetto/perfetto_reader.h"
#include "analysis/src/perfetto/proto_decoder.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/capture_builder.h"

namespace spanprof::analysis {
namespace {

namespace pf = internal::perfetto;
using internal::kWireLengthDelimited;
using internal::kWireVarint;
using internal::ProtoDecoder;
using internal::ProtoField;

// One slice begin as written: its TrackEvent's bytes, and whether its packet
// interned strings (which only the general path does).
struct WrittenBegin {
  std::string track_event;
  bool interns = false;
};

// The slice begins of `trace`, in the order written.
std::vector<WrittenBegin> SliceBegins(std::string_view trace) {
  std::vector<WrittenBegin> begins;
  ProtoDecoder packets(trace, 0);
  ProtoField packet;
  while (packets.Next(&packet)) {
    if (packet.number != pf::kTracePacket) continue;
    WrittenBegin begin;
    bool is_begin = false;
    ProtoDecoder fields(packet.bytes, packet.bytes_offset);
    ProtoField field;
    while (fields.Next(&field)) {
      if (field.number == pf::kPacketInternedData) begin.interns = true;
      if (field.number != pf::kPacketTrackEvent ||
          field.type != kWireLengthDelimited) {
        continue;
      }
      begin.track_event = std::string(field.bytes);
      ProtoDecoder event(field.bytes, field.bytes_offset);
      ProtoField event_field;
      while (event.Next(&event_field)) {
        if (event_field.number == pf::kEventType &&
            event_field.type == kWireVarint &&
            event_field.value == pf::kTypeSliceBegin) {
          is_begin = true;
        }
      }
    }
    EXPECT_EQ(fields.error(), nullptr);
    if (is_begin) begins.push_back(begin);
  }
  EXPECT_EQ(packets.error(), nullptr);
  return begins;
}

// Pairs of root spans, each pair the same slice (name, category, heartbeats,
// arguments, flags): the first of a pair uses strings new on the sequence,
// so it takes the general path; the second takes the plain path (pair 1) or
// the small path (pairs 2 and 3).
Capture PairsOfEqualSlices() {
  testing::CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t site = b.AddSite({.name = "kernel",
                                   .phase = "compute",
                                   .backend = "cuda",
                                   .dtype = "f16"});
  for (uint64_t id = 1; id <= 6; ++id) {
    const auto start = static_cast<int64_t>(id * 100);
    Span& span = b.Add(id, 0, site, main, start, start + 50);
    if (id <= 2) span.heartbeats = 7;
    if (id >= 5) span.flags = kSpanException;
  }
  b.Args(3, {testing::IntArg("rows", 4096)});
  b.Args(4, {testing::IntArg("rows", 4096)});
  b.Args(5, {testing::DoubleArg("ratio", 0.25)});
  b.Args(6, {testing::DoubleArg("ratio", 0.25)});
  return b.Build();
}

TEST(SliceBeginTest, EveryPathWritesTheSameTrackEvent) {
  const std::string trace = CaptureToPerfetto(PairsOfEqualSlices());
  const std::vector<WrittenBegin> begins = SliceBegins(trace);
  ASSERT_EQ(begins.size(), 6u);
  for (size_t pair = 0; pair < 3; ++pair) {
    SCOPED_TRACE(::testing::Message() << "pair " << pair + 1);
    const WrittenBegin& general = begins[2 * pair];
    const WrittenBegin& fast = begins[2 * pair + 1];
    // The pair really took two paths: only the first interned its strings.
    EXPECT_TRUE(general.interns);
    EXPECT_FALSE(fast.interns);
    EXPECT_EQ(fast.track_event, general.track_event);
  }
}

TEST(SliceBeginTest, EveryPathReadsBack) {
  const Capture capture = PairsOfEqualSlices();
  const absl::StatusOr<Capture> back =
      pf::ParsePerfettoTrace(CaptureToPerfetto(capture), "pairs.pftrace");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spans, capture.spans);
  EXPECT_EQ(back->args, capture.args);
  EXPECT_EQ(back->sites, capture.sites);
}

}  // namespace
}  // namespace spanprof::analysis
