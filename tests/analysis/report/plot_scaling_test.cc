// `PlotScaling()`: well-formed, deterministic SVG with a dot per bucket
// median and p95, a per-unit dot per bucket, the fitted line and the
// verdict in each group's heading.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/plot.h"
#include "spanprof/analysis/scaling.h"
#include "tests/analysis/scaling/sized_captures.h"
#include "tests/testing/xml_check.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::ParseXml;
using ::spanprof::testing::TokenizeCapture;
using ::spanprof::testing::XmlElement;
using ::testing::HasSubstr;

ScalingReport QuadraticReport() {
  static const Capture capture =
      TokenizeCapture([](double s) { return 0.002 * s * s; }, 3);
  const NamedCapture captures[] = {{"/some/dir/slow.json", &capture}};
  absl::StatusOr<ScalingReport> report = AnalyzeScaling(captures, {});
  EXPECT_TRUE(report.ok()) << report.status();
  return *report;
}

TEST(PlotScalingTest, DrawsEveryBucketTheFitAndTheVerdict) {
  const ScalingReport report = QuadraticReport();
  ASSERT_EQ(report.groups.size(), 1u);
  const std::string svg = PlotScaling(report);
  absl::StatusOr<XmlElement> root = ParseXml(svg);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->name, "svg");
  const size_t buckets = report.groups[0].buckets.size();
  // Median and p95 on the left, the per-unit cost on the right.
  EXPECT_EQ(root->FindAll("circle").size(), 3 * buckets);
  // The fitted line and the per-unit polyline.
  EXPECT_EQ(root->FindAll("polyline").size(), 2u);
  EXPECT_THAT(svg, HasSubstr("superlinear, exponent 2.0"));
  // Only the base name of the trace appears.
  EXPECT_THAT(svg, HasSubstr("slow.json"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("/some/dir")));
}

TEST(PlotScalingTest, IsDeterministic) {
  EXPECT_EQ(PlotScaling(QuadraticReport()), PlotScaling(QuadraticReport()));
}

TEST(PlotScalingTest, AReportWithoutGroupsSaysSo) {
  const std::string svg = PlotScaling(ScalingReport{});
  ASSERT_TRUE(ParseXml(svg).ok());
  EXPECT_THAT(svg, HasSubstr("no group has a numeric size argument"));
}

}  // namespace
}  // namespace spanprof::analysis
