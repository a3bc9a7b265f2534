// A comparison as GitHub workflow commands and JUnit XML: which rows become
// commands and failures, the runner's escapes, well-formed XML whatever the
// labels hold.
#include "spanprof/analysis/compare_ci.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/compare.h"
#include "tests/testing/xml_check.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::ParseXml;
using ::spanprof::testing::XmlElement;
using ::testing::HasSubstr;
using ::testing::Not;

ComparisonRow MakeRow(std::string label, RowStatus status, int64_t base,
                      int64_t candidate) {
  ComparisonRow row;
  row.key.name = label;
  row.label = std::move(label);
  row.status = status;
  row.base = base;
  row.candidate = candidate;
  row.delta = candidate - base;
  row.change_bps = ChangeBps(base, candidate);
  return row;
}

Comparison Sample() {
  Comparison c;
  c.policy.metric = CompareMetric::kP95Ns;
  c.rows.push_back(MakeRow("parse: 50%, <a&b>", RowStatus::kRegressed,
                           1'000'000, 1'500'000));
  c.rows.push_back(MakeRow("io", RowStatus::kWithin, 2'000, 2'010));
  c.rows.push_back(MakeRow("fresh", RowStatus::kNew, 0, 10));
  c.rows.back().base.reset();
  c.counts.regressed = 1;
  c.counts.within = 1;
  c.counts.new_keys = 1;
  c.passed = false;
  return c;
}

TEST(CompareCiTest, GithubCommandsForFailingRowsWithTheRunnersEscapes) {
  const std::string out = ComparisonToGithub(Sample());
  EXPECT_THAT(out, HasSubstr("::error title=spanprof compare%3A regressed "
                             "parse%3A 50%25%2C <a&b>::parse: 50%25, <a&b>: "
                             "regressed, p95_ns 1.00 ms -> 1.50 ms "
                             "(+50.00%25)\n"));
  EXPECT_THAT(out, Not(HasSubstr("io:")));
  EXPECT_THAT(out, Not(HasSubstr("fresh")));  // new passes by default
  EXPECT_THAT(out, HasSubstr("\nspanprof compare: FAIL"));
  Comparison strict = Sample();
  strict.policy.fail_on_new = true;
  EXPECT_THAT(ComparisonToGithub(strict),
              HasSubstr("::error title=spanprof compare%3A new fresh::"));
  Comparison unknown = Sample();
  unknown.rows[1].status = RowStatus::kUnknown;
  unknown.rows[1].reason = "line one\nline two";
  EXPECT_THAT(ComparisonToGithub(unknown),
              HasSubstr("::warning title=spanprof compare%3A unknown io::io: "
                        "unknown, p95_ns 2.00 us -> 2.01 us (+0.50%25); line "
                        "one%0Aline two\n"));
}

TEST(CompareCiTest, JunitIsWellFormedWithOneCasePerRow) {
  const std::string xml = ComparisonToJunit(Sample());
  absl::StatusOr<XmlElement> root = ParseXml(xml);
  ASSERT_TRUE(root.ok()) << root.status() << "\n" << xml;
  const std::vector<const XmlElement*> suites = root->FindAll("testsuite");
  ASSERT_EQ(suites.size(), 1u);
  EXPECT_EQ(suites[0]->Attribute("tests"), "3");
  EXPECT_EQ(suites[0]->Attribute("failures"), "1");
  const std::vector<const XmlElement*> cases = root->FindAll("testcase");
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0]->Attribute("name"), "parse: 50%, <a&b>");
  const std::vector<const XmlElement*> failures = cases[0]->FindAll("failure");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]->Attribute("type"), "regressed");
  EXPECT_TRUE(cases[1]->FindAll("failure").empty());
  EXPECT_TRUE(cases[2]->FindAll("failure").empty());
}

}  // namespace
}  // namespace spanprof::analysis
