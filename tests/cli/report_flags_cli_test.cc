// `spanprof report --wide / --sort / --top / --filter` through the real
// binary, on a summary written by the library's writer.
#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/captures.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class ReportFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    summary_ = analysis::Summarize(testing::RichCapture());
    ASSERT_GE(summary_.rows.size(), 3u);
    ASSERT_TRUE(analysis::WriteSummary(summary_, path_).ok());
  }
  ProcessResult Report(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"report", path_});
    return Spanprof(flags);
  }
  // The start of a row's line as the table prints it (labels up to 39
  // characters are never cut).
  static std::string LineOf(const analysis::Row& row) {
    return "\n" + row.label.substr(0, 39);
  }

  TempDir dir_;
  std::string path_ = dir_.File("summary.json");
  analysis::Summary summary_;
};

TEST_F(ReportFlagsTest, TopKeepsTheFirstRowsAndSaysHowManyAreLeftOut) {
  const ProcessResult r = Report({"--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(LineOf(summary_.rows[0])));
  EXPECT_THAT(r.out, Not(HasSubstr(LineOf(summary_.rows[1]))));
  EXPECT_THAT(r.out, HasSubstr("(" + std::to_string(summary_.rows.size() - 1) +
                               " more rows not shown: --top 1)"));
}

TEST_F(ReportFlagsTest, SortOrdersByTheNamedColumn) {
  const auto most_calls = std::max_element(
      summary_.rows.begin(), summary_.rows.end(),
      [](const auto& a, const auto& b) { return a.calls < b.calls; });
  ASSERT_GT(most_calls->calls, 1u);
  ASSERT_NE(most_calls, summary_.rows.begin());  // not the default order
  const ProcessResult r = Report({"--sort", "calls", "--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(LineOf(*most_calls)));
  EXPECT_THAT(r.out, Not(HasSubstr(LineOf(summary_.rows[0]))));

  const ProcessResult by_name = Report({"--sort", "name"});
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  std::vector<std::string> labels;
  for (const auto& row : summary_.rows) labels.push_back(row.label);
  std::sort(labels.begin(), labels.end());
  EXPECT_LT(by_name.out.find("\n" + labels[0].substr(0, 10)),
            by_name.out.find("\n" + labels[1].substr(0, 10)));
}

TEST_F(ReportFlagsTest, FilterKeepsMatchingLabels) {
  const ProcessResult r = Report({"--filter", "^io\\.|forward"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nio.read [phase=input, activity=load]"));
  EXPECT_THAT(r.out, HasSubstr("\nmodel.forward"));
  EXPECT_THAT(r.out, Not(HasSubstr("\napp.run")));
  EXPECT_THAT(r.out,
              HasSubstr("more rows not shown: --filter ^io\\.|forward)"));
}

TEST_F(ReportFlagsTest, WideKeepsLongLabelsWhole) {
  const std::string label = "model.forward [phase=forward, module=encoder]";
  ASSERT_GT(label.size(), 40u);
  const ProcessResult cut = Report({});
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_THAT(cut.out, Not(HasSubstr(label)));
  const ProcessResult wide = Report({"--wide"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_THAT(wide.out, HasSubstr("\n" + label + "  "));
}

TEST_F(ReportFlagsTest, BadValuesAreUsageErrorsNamingTheFlag) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--sort", "speed"}, "--sort: unknown column \"speed\""},
           {{"--filter", "(unclosed"}, "--filter: \"(unclosed\" is not a"},
           {{"--top", "0"}, "--top: expected at least 1 row"},
           {{"--top", "ten"}, "--top: expected a non-negative integer"},
           {{"--wide=yes"}, "flag --wide takes no value"},
       }) {
    const ProcessResult r = Report(c.flags);
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_THAT(r.out, IsEmpty()) << c.message;
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
  // Checked before the file is read.
  const ProcessResult missing =
      Spanprof({"report", dir_.File("nope.json"), "--sort", "speed"});
  EXPECT_THAT(missing.err, HasSubstr("--sort: unknown column"));
}

}  // namespace
}  // namespace spanprof
