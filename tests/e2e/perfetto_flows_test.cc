// Every cross-thread link of a real session is a flow in the Perfetto
// protobuf trace, including a span that is both a cross-thread child and a
// cross-thread parent (one JSON X event carries only one `bind_id`, so the
// JSON trace draws only one of its two arrows). The client hands work to 4
// worker threads, and each worker hands on to `std::async`: 8 links, and
// protoc's decoding of the trace must show 8 matched flows.
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "spanprof/context.h"
#include "spanprof/recording.h"
#include "spanprof/span.h"
#include "tests/analysis/perfetto/decoded_trace.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

constexpr int kWorkers = 4;

// Runs the client: 4 hand-offs, each worker handing on once more.
Capture RecordHandOffs() {
  EXPECT_TRUE(StartRecording(RecordingOptions{.max_events = 1000}).ok());
  {
    SPANPROF_SCOPE("client.request");
    std::vector<std::thread> workers;
    for (int i = 0; i < kWorkers; ++i) {
      workers.emplace_back(Bind([] {
        SPANPROF_SCOPE("worker.handle");
        std::future<void> next = std::async(
            std::launch::async, Bind([] { SPANPROF_SCOPE("async.finish"); }));
        next.get();
      }));
    }
    for (std::thread& t : workers) t.join();
  }
  return StopRecording();
}

TEST(PerfettoFlowsTest, EveryCrossThreadLinkOfARealSessionIsAFlow) {
  if (!spanprof::testing::HaveProtoc()) {
    SPANPROF_SKIP_UNLESS_CI(
        "protoc not found (Debian package protobuf-compiler)");
  }
  const Capture capture = RecordHandOffs();
  ASSERT_EQ(capture.spans.size(), 1u + 2u * kWorkers);
  ASSERT_EQ(spanprof::testing::CrossThreadLinks(capture), 2 * kWorkers);

  const std::string bytes = analysis::CaptureToPerfetto(capture);
  const std::unique_ptr<spanprof::testing::TextMessage> root =
      spanprof::testing::DecodeTrace(bytes);
  ASSERT_NE(root, nullptr);
  const spanprof::testing::DecodedTrace t =
      spanprof::testing::AnalyzeTrace(*root);
  EXPECT_TRUE(t.problems.empty()) << ::testing::PrintToString(t.problems);
  EXPECT_EQ(t.slices.size(), capture.spans.size());
  EXPECT_EQ(spanprof::testing::CountMatchedFlows(t), 2 * kWorkers);
}

}  // namespace
}  // namespace spanprof
