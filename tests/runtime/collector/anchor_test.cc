// Every capture carries what puts it on a timeline with other processes
// (for merging captures): the wall clock at its time 0 with the uncertainty of
// that pairing, its host and its pid; the trace and the summary keep them.
#include <unistd.h>

#include <ctime>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"

namespace spanprof {
namespace {

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

TEST(AnchorTest, ACaptureIsAnchoredToTheWallClockItsHostAndPid) {
  const int64_t before = RealtimeNs();
  ASSERT_TRUE(StartRecording({}).ok());
  const int64_t after = RealtimeNs();
  { SPANPROF_SCOPE("anchored"); }
  const Capture c = StopRecording();
  // The anchor is a CLOCK_REALTIME reading taken inside StartRecording,
  // moved back by at most its uncertainty.
  EXPECT_GE(c.wall_clock_uncertainty_ns, 0);
  EXPECT_GE(c.wall_clock_anchor_ns + c.wall_clock_uncertainty_ns, before);
  EXPECT_LE(c.wall_clock_anchor_ns, after);
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(c.host, host);
  EXPECT_EQ(c.pid, getpid());

  const absl::StatusOr<Capture> back =
      analysis::ParseTrace(analysis::TraceToJson(c), "t.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->host, c.host);
  EXPECT_EQ(back->wall_clock_uncertainty_ns, c.wall_clock_uncertainty_ns);
  const absl::StatusOr<Capture> proto =
      analysis::ParseTrace(analysis::CaptureToPerfetto(c), "t.pftrace");
  ASSERT_TRUE(proto.ok()) << proto.status();
  EXPECT_EQ(proto->host, c.host);
  EXPECT_EQ(proto->wall_clock_uncertainty_ns, c.wall_clock_uncertainty_ns);

  const analysis::Summary summary = analysis::Summarize(c);
  EXPECT_EQ(summary.host, c.host);
  EXPECT_EQ(summary.pid, c.pid);
  EXPECT_EQ(summary.wall_clock_anchor_ns, c.wall_clock_anchor_ns);
  EXPECT_EQ(summary.wall_clock_uncertainty_ns, c.wall_clock_uncertainty_ns);
  const absl::StatusOr<analysis::Summary> read =
      analysis::ParseSummary(analysis::SummaryToJson(summary), "s.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, summary);
}

// A trace written before the anchors existed still reads (no host, no
// uncertainty).
TEST(AnchorTest, OlderTracesReadWithoutThem) {
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE("old"); }
  const Capture c = StopRecording();
  std::string json = analysis::TraceToJson(c);
  for (const std::string key :
       {"\"wall_clock_uncertainty_ns\":", "\"host\":"}) {
    const size_t at = json.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    const size_t comma = json.find(',', at);
    json.erase(at, comma - at + 1);
  }
  const absl::StatusOr<Capture> back = analysis::ParseTrace(json, "old.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->host, "");
  EXPECT_EQ(back->wall_clock_uncertainty_ns, 0);
  EXPECT_EQ(back->wall_clock_anchor_ns, c.wall_clock_anchor_ns);
}

}  // namespace
}  // namespace spanprof
