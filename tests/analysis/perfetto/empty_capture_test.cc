// A capture with no spans (an empty foreign trace, `[]`) round-trips
// through the Perfetto format like any other.
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"

namespace spanprof::analysis {
namespace {

TEST(PerfettoEmptyCaptureTest, AnEmptyForeignTraceRoundTrips) {
  absl::StatusOr<Capture> capture = ParseTrace("[]", "empty.json");
  ASSERT_TRUE(capture.ok()) << capture.status();
  const std::string written = CaptureToPerfetto(*capture);
  absl::StatusOr<Capture> again = ParseTrace(written, "empty.pftrace");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(TraceToJson(*again), TraceToJson(*capture));
}

}  // namespace
}  // namespace spanprof::analysis
