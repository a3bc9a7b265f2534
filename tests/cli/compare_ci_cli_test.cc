// End to end: `spanprof compare --format github` and `--junit OUT.xml`, the
// real binary on real summaries; the JUnit file is parsed as XML and its
// counts checked against the human table of the same comparison.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/summary_runs.h"
#include "tests/testing/test_support.h"
#include "tests/testing/xml_check.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ParseXml;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteRichRuns;
using ::spanprof::testing::XmlElement;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The lines of `text` that start with `prefix`.
std::vector<std::string> LinesStartingWith(const std::string& text,
                                           const std::string& prefix) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) lines.push_back(line);
  }
  return lines;
}

class CompareCiCliTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.File(name); }

  TempDir dir_;
};

TEST_F(CompareCiCliTest, JunitHasOneCasePerRowAndFailsTheRegressedOnes) {
  WriteRichRuns(Path("base"), 10, 4000);
  WriteRichRuns(Path("cand"), 10, 4800);  // +20%
  const ProcessResult table =
      Spanprof({"compare", Path("base"), Path("cand"), "--metric", "max_ns"});
  ASSERT_EQ(table.exit_code, 1) << table.out << table.err;
  const size_t regressed = LinesStartingWith(table.out, "regressed ").size();
  ASSERT_GE(regressed, 1u);
  const size_t rows = regressed +
                      LinesStartingWith(table.out, "improved ").size() +
                      LinesStartingWith(table.out, "same ").size() +
                      LinesStartingWith(table.out, "unknown ").size();

  const std::string junit = Path("reports/junit.xml");
  const ProcessResult r =
      Spanprof({"compare", Path("base"), Path("cand"), "--metric", "max_ns",
                "--format", "github", "--junit", junit});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  absl::StatusOr<XmlElement> root = ParseXml(testing::ReadText(junit));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->name, "testsuites");
  const std::vector<const XmlElement*> suites = root->FindAll("testsuite");
  ASSERT_EQ(suites.size(), 1u);
  const std::vector<const XmlElement*> cases = root->FindAll("testcase");
  const std::vector<const XmlElement*> failures = root->FindAll("failure");
  EXPECT_EQ(cases.size(), rows);
  EXPECT_EQ(failures.size(), regressed);
  EXPECT_EQ(suites[0]->Attribute("tests"), std::to_string(rows));
  EXPECT_EQ(suites[0]->Attribute("failures"), std::to_string(regressed));
  bool forward_failed = false;
  for (const XmlElement* c : cases) {
    if (c->Attribute("name").rfind("model.forward", 0) == 0) {
      forward_failed = !c->FindAll("failure").empty();
      EXPECT_EQ(c->Attribute("classname"), "spanprof.compare.max_ns");
    }
  }
  EXPECT_TRUE(forward_failed);

  // GitHub: one ::error per regressed row, the verdict last.
  const std::vector<std::string> errors = LinesStartingWith(r.out, "::error ");
  EXPECT_EQ(errors.size(), regressed);
  EXPECT_THAT(r.out, HasSubstr("::error title=spanprof compare%3A regressed "
                               "model.forward"));
  EXPECT_EQ(std::count_if(errors.begin(), errors.end(),
                          [](const std::string& line) {
                            return line.find("::model.forward") !=
                                   std::string::npos;
                          }),
            1);
  EXPECT_THAT(r.out, HasSubstr("spanprof compare: FAIL"));
  EXPECT_THAT(r.out, Not(HasSubstr("Repeated runs:")));  // not the table
}

TEST_F(CompareCiCliTest, UnknownRowsAreWarnings) {
  WriteRichRuns(Path("base"), 2, 4000);
  WriteRichRuns(Path("cand"), 2, 4800);
  const ProcessResult table =
      Spanprof({"compare", Path("base"), Path("cand"), "--metric", "max_ns"});
  ASSERT_EQ(table.exit_code, 0) << table.out << table.err;
  const size_t unknown = LinesStartingWith(table.out, "unknown ").size();
  ASSERT_GE(unknown, 1u);
  const ProcessResult r = Spanprof({"compare", Path("base"), Path("cand"),
                                    "--metric", "max_ns", "--format=github"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> warnings =
      LinesStartingWith(r.out, "::warning ");
  EXPECT_EQ(warnings.size(), unknown);
  EXPECT_THAT(warnings.front(), HasSubstr("nothing can be decided"));
  EXPECT_TRUE(LinesStartingWith(r.out, "::error ").empty());
  EXPECT_THAT(r.out, HasSubstr("spanprof compare: PASS"));
}

TEST_F(CompareCiCliTest, BadFormatAndJunitPathsExitTwo) {
  WriteRichRuns(Path("base"), 1, 4000);
  const std::string one = Path("base/run-0.summary.json");
  ProcessResult r = Spanprof({"compare", one, one, "--format", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--format"));
  r = Spanprof({"compare", one, one, "--junit", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--junit"));
  r = Spanprof({"compare", one, one, "--junit", one});
  EXPECT_EQ(r.exit_code, 2);
  // A passing comparison: every case passes, and the table is the default.
  r = Spanprof(
      {"compare", one, one, "--junit", Path("ok.xml"), "--format", "table"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("spanprof compare: metric"));
  absl::StatusOr<XmlElement> root = ParseXml(testing::ReadText(Path("ok.xml")));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_TRUE(root->FindAll("failure").empty());
  EXPECT_FALSE(root->FindAll("testcase").empty());
}

}  // namespace
}  // namespace spanprof
