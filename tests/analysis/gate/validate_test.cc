// `ValidateArtifact()`: kind detection, the strict readers, and the rules of
// Perfetto's JSON importer.
#include "spanprof/analysis/validate.h"

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/captures.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::Replace;
using ::spanprof::testing::RichCapture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string AllProblems(const ValidationReport& report) {
  std::string out;
  for (const std::string& p : report.problems) out += p + "\n";
  return out;
}

TEST(ValidateTest, DetectsTheKind) {
  const std::string summary = SummaryToJson(Summarize(RichCapture()));
  const std::string trace = TraceToJson(RichCapture());
  EXPECT_EQ(DetectArtifactKind(summary, "s").value(), ArtifactKind::kSummary);
  EXPECT_EQ(DetectArtifactKind(trace, "t").value(), ArtifactKind::kTrace);
  absl::StatusOr<ArtifactKind> other = DetectArtifactKind("{\"a\":1}", "o");
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(std::string(other.status().message()),
              HasSubstr("o: $: neither a spanprof summary"));
  EXPECT_FALSE(DetectArtifactKind("not json", "x").ok());
  EXPECT_EQ(ArtifactKindName(ArtifactKind::kTrace), "trace");
}

TEST(ValidateTest, AcceptsWhatTheWritersWrite) {
  for (const testing::RichOptions& options :
       {testing::RichOptions{}, testing::RichOptions{.alloc = true},
        testing::RichOptions{.drops = true, .unfinished = true}}) {
    const Capture capture = RichCapture(options);
    ValidationReport report = ValidateArtifact(TraceToJson(capture), "t");
    EXPECT_THAT(report.problems, IsEmpty()) << AllProblems(report);
    EXPECT_EQ(report.kind, ArtifactKind::kTrace);
    EXPECT_EQ(report.items, capture.spans.size());
    report = ValidateArtifact(SummaryToJson(Summarize(capture)), "s");
    EXPECT_THAT(report.problems, IsEmpty()) << AllProblems(report);
    EXPECT_EQ(report.kind, ArtifactKind::kSummary);
  }
}

TEST(ValidateTest, ReportsAReaderErrorAsTheProblem) {
  const std::string json = SummaryToJson(Summarize(RichCapture()));
  const ValidationReport report = ValidateArtifact(
      Replace(json, "\"event_count\": 6", "\"event_count\": 7"), "s.json");
  EXPECT_EQ(report.kind, ArtifactKind::kSummary);
  EXPECT_THAT(report.problems,
              ElementsAre(HasSubstr("s.json: $.event_count: 7 != sum")));
  const ValidationReport garbage = ValidateArtifact("{", "g.json");
  EXPECT_FALSE(garbage.kind.has_value());
  EXPECT_THAT(garbage.problems, ElementsAre(HasSubstr("g.json: $: ")));
}

TEST(ValidateTest, FindsPartialOverlapOnAThread) {
  const ValidationReport report =
      ValidateArtifact(TraceToJson(RichCapture({.broken = true})), "t.json");
  const std::string all = AllProblems(report);
  EXPECT_THAT(all, HasSubstr("span 7 [5.500, 6.000) us partially overlaps "
                             "span 3 [5.000, 5.700) us on tid 100"));
  // The forest check says the same in its own words.
  EXPECT_THAT(all, HasSubstr("t.json: span 7: "));
}

TEST(ValidateTest, FindsNegativeTimesAndWidePids) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(uint64_t{1} << 33);
  const uint32_t s = b.Site("x");
  b.Add(1, 0, s, t, -5, 10);
  b.Add(2, 0, s, t, 20, 15);
  b.capture().pid = int64_t{1} << 32;
  const std::string all =
      AllProblems(ValidateArtifact(TraceToJson(b.Build()), "t.json"));
  EXPECT_THAT(all, HasSubstr(".ts: negative timestamp -0.005 us"));
  EXPECT_THAT(all, HasSubstr(".dur: negative duration -0.005 us"));
  EXPECT_THAT(all, HasSubstr(".pid: 4294967296 does not fit in 32 bits"));
  EXPECT_THAT(all, HasSubstr(".tid: 8589934592 does not fit in 32 bits"));
}

TEST(ValidateTest, ChecksFlowEnds) {
  const std::string json = TraceToJson(RichCapture());
  // The writer links span 4 (worker) to span 1 (main) with flow id 1.
  ASSERT_THAT(json, HasSubstr("\"bind_id\":1,\"flow_out\":true"));
  ASSERT_THAT(json, HasSubstr("\"bind_id\":1,\"flow_in\":true"));
  EXPECT_THAT(AllProblems(ValidateArtifact(
                  Replace(json, "\"bind_id\":1,\"flow_out\":true,", ""), "t")),
              HasSubstr(".bind_id: flow 1 has no flow_out end"));
  EXPECT_THAT(AllProblems(ValidateArtifact(
                  Replace(json, "\"bind_id\":1,\"flow_in\":true,", ""), "t")),
              HasSubstr(".bind_id: flow 1 has no flow_in end"));
  EXPECT_THAT(AllProblems(ValidateArtifact(
                  Replace(json, "\"bind_id\":1,\"flow_in\":true",
                          "\"bind_id\":1,\"flow_out\":true"),
                  "t")),
              HasSubstr("flow id 1 is not unique"));
  EXPECT_THAT(
      AllProblems(ValidateArtifact(
          Replace(json, "\"bind_id\":1,\"flow_in\":true", "\"flow_in\":true"),
          "t")),
      HasSubstr("flow_in/flow_out without a bind_id"));
}

TEST(ValidateTest, CapsTheNumberOfProblems) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1);
  const uint32_t s = b.Site("x");
  for (uint64_t i = 1; i <= 300; ++i) {
    const int64_t start = static_cast<int64_t>(i) * 10;
    b.Add(i, 0, s, t, start, start + 15);  // each overlaps the next
  }
  const ValidationReport report = ValidateArtifact(TraceToJson(b.Build()), "t");
  ASSERT_EQ(report.problems.size(), kMaxValidationProblems + 1);
  EXPECT_THAT(report.problems.back(), HasSubstr("more problems"));
}

}  // namespace
}  // namespace spanprof::analysis
