// A recorded capture with named counters (SPANPROF_COUNT) survives the trace:
// TraceToJson writes them as args.counters and metadata.dropped_args, and
// the strict reader rebuilds the exact capture, so also the same summary.
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"

namespace spanprof {
namespace {

TEST(CounterTraceTest, ARecordedCaptureWithCountersRoundTrips) {
  ASSERT_TRUE(StartRecording({}).ok());
  SPANPROF_COUNT("orphan", 7);  // no span open: a dropped argument
  {
    SPANPROF_SCOPE("file.tokenize", {.phase = "parse"});
    SPANPROF_ARG("tokens", 300);
    SPANPROF_ARG("ratio", 0.5);
    SPANPROF_COUNT("bytes_copied", 4096);
    SPANPROF_COUNT("tokens", 2);  // a counter named like an argument
    {
      SPANPROF_SCOPE("copy");
      SPANPROF_COUNT("bytes_copied", 100);
    }
    std::thread([] {
      SPANPROF_SCOPE("worker");
      SPANPROF_COUNT("probes");
    }).join();
  }
  const Capture capture = StopRecording();
  int counters = 0;
  for (const SpanArg& arg : capture.args) counters += arg.is_counter ? 1 : 0;
  ASSERT_EQ(counters, 4);
  EXPECT_GE(capture.dropped_args, 1u);

  const std::string json = analysis::TraceToJson(capture);
  EXPECT_NE(json.find("\"counters\":{\"bytes_copied\":4096,\"tokens\":2}"),
            std::string::npos);
  absl::StatusOr<Capture> back = analysis::ParseTrace(json, "counters.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, capture);
  EXPECT_EQ(analysis::SummaryToJson(analysis::Summarize(*back)),
            analysis::SummaryToJson(analysis::Summarize(capture)));
}

}  // namespace
}  // namespace spanprof
