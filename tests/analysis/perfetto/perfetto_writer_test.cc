// The Perfetto protobuf trace, decoded by protoc against
// perfetto_subset.proto: tracks with names, balanced slices with the
// capture's times, interning, sequence flags, and one flow per cross-thread
// link (a span that is both child and parent takes part in two).
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/perfetto/decoded_trace.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/captures.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

using spanprof::testing::CaptureBuilder;
using spanprof::testing::DecodedSlice;
using spanprof::testing::DecodedTrace;
using spanprof::testing::HandOffCapture;

constexpr int64_t kAnchor = 1'700'000'000'000'000'000;

class PerfettoWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!spanprof::testing::HaveProtoc()) {
      SPANPROF_SKIP_UNLESS_CI(
          "protoc not found (Debian package protobuf-compiler)");
    }
  }

  DecodedTrace Decode(const Capture& capture) {
    const std::unique_ptr<spanprof::testing::TextMessage> root =
        spanprof::testing::DecodeTrace(CaptureToPerfetto(capture));
    if (root == nullptr) return {};
    return spanprof::testing::AnalyzeTrace(*root);
  }
};

const DecodedSlice* Find(const DecodedTrace& t, const std::string& name,
                         uint64_t begin_ts) {
  for (const DecodedSlice& s : t.slices) {
    if (s.name == name && s.begin_ts == begin_ts) return &s;
  }
  return nullptr;
}

TEST_F(PerfettoWriterTest, DecodesWithTracksAndBalancedSlices) {
  const Capture capture = HandOffCapture();
  const DecodedTrace t = Decode(capture);
  EXPECT_TRUE(t.problems.empty()) << ::testing::PrintToString(t.problems);
  // Clock snapshot + process + metadata + 3 threads, then per thread one
  // sequence start and a begin and an end per span, then the end packet.
  EXPECT_EQ(t.packets, 3u + 3u + 3u + 2u * capture.spans.size() + 1u);
  EXPECT_EQ(t.end_packet, t.packets);
  const std::string trace = CaptureToPerfetto(capture);
  const std::map<std::string, uint64_t> counts = {
      {"spanprof.bytes", spanprof::testing::LastPacketOffset(trace)},
      {"spanprof.spans", capture.spans.size()}};
  EXPECT_EQ(t.end_counts, counts);
  EXPECT_EQ(t.process_name, "test");
  EXPECT_EQ(t.pid, 4242);
  EXPECT_EQ(t.primary_clock, 1u);  // BUILTIN_CLOCK_REALTIME
  EXPECT_EQ(t.thread_names.at(100), "main");
  EXPECT_EQ(t.thread_names.at(101), "worker");
  EXPECT_EQ(t.thread_names.at(102), "thread-102");
  // Every span is one slice with its own times, on its thread's sequence.
  using Key = std::tuple<std::string, uint64_t, uint64_t, uint32_t>;
  std::vector<Key> want;
  std::vector<Key> got;
  for (const Span& s : capture.spans) {
    want.emplace_back(capture.sites[s.site].name, kAnchor + s.start_ns,
                      kAnchor + s.end_ns, s.thread + 2);
  }
  for (const DecodedSlice& s : t.slices) {
    got.emplace_back(s.name, s.begin_ts, s.end_ts, s.sequence);
  }
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

TEST_F(PerfettoWriterTest, KeyFieldsJoinTheCategoryAfterTheOtherTags) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  b.Add(1, 0,
        b.AddSite(Site{.name = "kernel",
                       .phase = "train",
                       .backend = "cuda",
                       .dtype = "f16",
                       .device = "gpu0"}),
        main, 0, 100);
  b.Add(2, 0, b.AddSite(Site{.name = "copy", .device = "gpu1"}), main, 200,
        300);
  const DecodedTrace t = Decode(b.Build());
  const DecodedSlice* kernel = Find(t, "kernel", kAnchor);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->category, "phase=train,backend=cuda,dtype=f16,device=gpu0");
  const DecodedSlice* copy = Find(t, "copy", kAnchor + 200);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->category, "device=gpu1");
}

TEST_F(PerfettoWriterTest, TagsAreCategoriesAndArgumentsAreAnnotations) {
  const DecodedTrace t = Decode(HandOffCapture());
  const DecodedSlice* parse = Find(t, "file.parse", kAnchor + 10);
  ASSERT_NE(parse, nullptr);
  EXPECT_EQ(parse->category, "phase=parse");
  EXPECT_EQ(parse->annotations.at("args.size"), "4096");
  EXPECT_EQ(parse->annotations.at("counters.bytes"), "7");
  EXPECT_EQ(parse->annotations.at("heartbeats"), "5");
  const DecodedSlice* hand = Find(t, "hand.off", kAnchor + 20);
  ASSERT_NE(hand, nullptr);
  EXPECT_EQ(hand->category, "module=pool,activity=queue");
  const DecodedSlice* late = Find(t, "leaf", kAnchor + 300);
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->annotations.at("args.ratio"), "0.5");
  EXPECT_EQ(late->annotations.at("unfinished"), "true");
  const DecodedSlice* root = Find(t, "app.run", kAnchor);
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->category, "");
  EXPECT_TRUE(root->annotations.empty());
}

TEST_F(PerfettoWriterTest, EveryCrossThreadLinkIsAFlow) {
  const DecodedTrace t = Decode(HandOffCapture());
  EXPECT_EQ(spanprof::testing::CountMatchedFlows(t), 3);
  const DecodedSlice* root = Find(t, "app.run", kAnchor);
  const DecodedSlice* hand = Find(t, "hand.off", kAnchor + 20);
  const DecodedSlice* chained = Find(t, "leaf", kAnchor + 30);
  ASSERT_TRUE(root && hand && chained);
  EXPECT_EQ(root->flow_ids, (std::vector<uint64_t>{3, 6}));
  EXPECT_TRUE(root->terminating_flow_ids.empty());
  // Both child and parent: it ends one flow and starts another.
  EXPECT_EQ(hand->terminating_flow_ids, (std::vector<uint64_t>{3}));
  EXPECT_EQ(hand->flow_ids, (std::vector<uint64_t>{4}));
  EXPECT_EQ(chained->terminating_flow_ids, (std::vector<uint64_t>{4}));
  // The same-thread child is no flow.
  const DecodedSlice* same = Find(t, "leaf", kAnchor + 40);
  ASSERT_NE(same, nullptr);
  EXPECT_TRUE(same->flow_ids.empty() && same->terminating_flow_ids.empty());
}

TEST_F(PerfettoWriterTest, UnsortedCapturesAndBackwardTimesStillDecode) {
  Capture capture = HandOffCapture();
  std::reverse(capture.spans.begin(), capture.spans.end());
  // A corrupt span that ends before it starts: its end goes back in time.
  capture.spans[0].end_ns = capture.spans[0].start_ns - 5;
  const DecodedTrace t = Decode(capture);
  EXPECT_TRUE(t.problems.empty()) << ::testing::PrintToString(t.problems);
  EXPECT_EQ(t.slices.size(), capture.spans.size());
  EXPECT_EQ(spanprof::testing::CountMatchedFlows(t), 3);
}

// A corrupt capture (say, read from a hand-edited trace): a span whose
// thread index is out of range gets a track of its own (tid 0), one whose
// site is out of range the invalid-site name.
TEST_F(PerfettoWriterTest, OutOfRangeIndexesStillDecode) {
  Capture capture = HandOffCapture();
  capture.spans.back().thread = 99;
  capture.spans.front().site = 77;
  const DecodedTrace t = Decode(capture);
  EXPECT_TRUE(t.problems.empty()) << ::testing::PrintToString(t.problems);
  EXPECT_EQ(t.slices.size(), capture.spans.size());
  EXPECT_EQ(t.thread_names.count(0), 1u);
  bool invalid_site = false;
  for (const DecodedSlice& s : t.slices) {
    invalid_site = invalid_site || s.name == "(invalid site)";
  }
  EXPECT_TRUE(invalid_site);
}

TEST_F(PerfettoWriterTest, EmptyCaptureHasOnlyDescriptors) {
  CaptureBuilder b;
  const DecodedTrace t = Decode(b.Build());
  EXPECT_TRUE(t.problems.empty());
  EXPECT_EQ(t.packets, 4u);  // clock, process, metadata, end
  EXPECT_EQ(t.end_packet, 4u);
  EXPECT_EQ(t.end_counts.at("spanprof.spans"), 0u);
  EXPECT_TRUE(t.slices.empty());
}

TEST(PerfettoTracePathTest, ChoosesTheFormatByExtension) {
  EXPECT_TRUE(IsPerfettoTracePath("out/trace.pftrace"));
  EXPECT_TRUE(IsPerfettoTracePath("trace.perfetto-trace"));
  EXPECT_TRUE(IsPerfettoTracePath("trace.pftrace.gz"));
  EXPECT_FALSE(IsPerfettoTracePath("trace.json"));
  EXPECT_FALSE(IsPerfettoTracePath("trace.json.gz"));
  EXPECT_FALSE(IsPerfettoTracePath("pftrace"));
}

TEST(PerfettoTracePathTest, WriteTraceWritesProtobufThatReadsBack) {
  spanprof::testing::TempDir dir;
  const Capture capture = HandOffCapture();
  const std::string path = dir.File("out/trace.pftrace");
  ASSERT_TRUE(WriteTrace(capture, path).ok());
  const std::string bytes = spanprof::testing::ReadText(path);
  EXPECT_EQ(bytes, CaptureToPerfetto(capture));
  EXPECT_TRUE(LooksLikePerfettoTrace(bytes));
  EXPECT_FALSE(LooksLikePerfettoTrace(TraceToJson(capture)));
  EXPECT_FALSE(LooksLikePerfettoTrace("\n{\"traceEvents\":[]}"));
  const absl::StatusOr<Capture> back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spans.size(), capture.spans.size());
}

// In memory the writer first assumes a collector's capture and starts over
// when it is not one (here: unsorted, with arguments and cross-thread
// links); the file written in chunks, which never starts over, must be the
// same bytes.
TEST(PerfettoTracePathTest, StartingOverWritesTheSameBytesAsAFile) {
  spanprof::testing::TempDir dir;
  Capture capture = HandOffCapture();
  std::reverse(capture.spans.begin(), capture.spans.end());
  const std::string path = dir.File("unsorted.pftrace");
  ASSERT_TRUE(WriteTrace(capture, path).ok());
  EXPECT_EQ(spanprof::testing::ReadText(path), CaptureToPerfetto(capture));
}

// The size target: spans without arguments cost a few bytes each.
TEST(PerfettoTraceSizeTest, PlainSpansAreSmall) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t site = b.Site("step");
  for (uint64_t i = 0; i < 1000; ++i) {
    b.Add(i + 1, 0, site, main, static_cast<int64_t>(i) * 100,
          static_cast<int64_t>(i) * 100 + 50);
  }
  const Capture capture = b.Build();
  const std::string bytes = CaptureToPerfetto(capture);
  const std::string json = TraceToJson(capture);
  // Begin 12 bytes, end 10 (an untagged site has no category;
  // docs/formats.md breaks them down), after the descriptors, the metadata
  // (about 1 KB here, with its end_reason) and the end packet that states
  // the counts (about 60 bytes).
  EXPECT_LE(bytes.size(), 1600u + 22u * capture.spans.size());
  EXPECT_LT(bytes.size() * 6, json.size());
}

}  // namespace
}  // namespace spanprof::analysis
