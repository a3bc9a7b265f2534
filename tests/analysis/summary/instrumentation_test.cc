// A summary row's instrumentation share: its own spans times the
// session's measured cost of one span, against its time; written and checked
// in version 3, derived when reading versions 1 and 2, and marked by the
// table when it reaches 5%.
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/lookup.h"
#include "tests/testing/test_support.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::RowNamed;

// A root of 1 ms around 100 short "item" spans of 500 ns each, and a
// "batch" span of 200 us, recorded at 25 ns a span.
Capture HotLoopCapture() {
  testing::CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t root = b.Site("root");
  const uint32_t item = b.Site("parse.item");
  const uint32_t batch = b.Site("parse.batch");
  b.Add(1, 0, root, main, 0, 1'000'000);
  for (int i = 0; i < 100; ++i) {
    const int64_t start = 1000 + i * 1000;
    b.Add(2 + i, 1, item, main, start, start + 500);
  }
  b.Add(200, 1, batch, main, 200'000, 400'000);
  Capture capture = b.Build();
  capture.overhead_ns_per_span = 25;
  return capture;
}

TEST(InstrumentationTest, ShareIsCallsTimesOverheadOverTotal) {
  EXPECT_EQ(InstrumentationPermille(100, 25, 50'000), 50);
  EXPECT_EQ(InstrumentationPermille(1, 25, 1'000'000), 0);  // 0.025: floor
  EXPECT_EQ(InstrumentationPermille(10, 25, 100), 1000);    // capped
  EXPECT_EQ(InstrumentationPermille(10, 0, 100), 0);        // not measured
  EXPECT_EQ(InstrumentationPermille(10, 25, 0), 0);         // no time

  const Summary summary = Summarize(HotLoopCapture());
  EXPECT_EQ(RowNamed(summary, "parse.item").instrumentation_permille, 50);
  EXPECT_EQ(RowNamed(summary, "parse.batch").instrumentation_permille, 0);
  EXPECT_EQ(RowNamed(summary, "root").instrumentation_permille, 0);
}

TEST(InstrumentationTest, WrittenReadBackAndChecked) {
  const Summary summary = Summarize(HotLoopCapture());
  const std::string json = SummaryToJson(summary);
  EXPECT_NE(json.find("\"instrumentation_permille\": 50"), std::string::npos);
  const absl::StatusOr<Summary> back = ParseSummary(json, "s.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);

  std::string wrong = json;
  const size_t at = wrong.find("\"instrumentation_permille\": 50");
  wrong.replace(at, 30, "\"instrumentation_permille\": 51");
  const absl::StatusOr<Summary> bad = ParseSummary(wrong, "s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("instrumentation_permille (51)"),
            std::string::npos)
      << bad.status();
  EXPECT_NE(bad.status().message().find("$.rows["), std::string::npos)
      << bad.status();
}

TEST(InstrumentationTest, OlderVersionsDeriveIt) {
  const std::string path = std::string(SPANPROF_TEST_SOURCE_DIR) +
                           "/tests/data/aa-indexer/run-001.summary.json";
  const absl::StatusOr<Summary> v2 = ReadSummary(path);
  ASSERT_TRUE(v2.ok()) << v2.status();
  ASSERT_EQ(v2->schema_version, 2);
  ASSERT_GT(v2->overhead_ns_per_span, 0);
  bool some = false;
  for (const Row& row : v2->rows) {
    EXPECT_EQ(row.instrumentation_permille,
              InstrumentationPermille(row.calls, v2->overhead_ns_per_span,
                                      row.total_ns))
        << row.label;
    some |= row.instrumentation_permille > 0;
  }
  EXPECT_TRUE(some);
}

TEST(InstrumentationTest, TheTableMarksRowsAtFivePercent) {
  const std::string table = FormatTable(Summarize(HotLoopCapture()), {});
  EXPECT_NE(table.find("instrumentation: 1 row spends >= 5% of its time "
                       "recording its own spans (25 ns a span): parse.item "
                       "5.0%; use coarser spans"),
            std::string::npos)
      << table;

  Capture cheap = HotLoopCapture();
  cheap.overhead_ns_per_span = 24;  // 100 * 24 / 50,000 = 4.8%
  const std::string quiet = FormatTable(Summarize(cheap), {});
  EXPECT_EQ(quiet.find("instrumentation:"), std::string::npos) << quiet;
}

}  // namespace
}  // namespace spanprof::analysis
