// The README's five-minute program (its first C++ code block, built by
// tests/docs as bin/readme_quickstart) runs as the README says: with
// SPANPROF=1 its own output stays on standard output, spanprof's table goes
// to standard error with a row for every span the program names, and the
// trace and summary read back; without SPANPROF it just runs. The span
// names are read from the README itself, so the test follows the program.
#include <regex>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ReadText;
using ::spanprof::testing::RunProcess;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

// The first ```cpp block of README.md.
std::string QuickstartSource() {
  const std::string readme = ReadText(SPANPROF_TEST_SOURCE_DIR "/README.md");
  const size_t fence = readme.find("\n```cpp\n");
  if (fence == std::string::npos) return "";
  const size_t start = fence + 8;
  return readme.substr(start, readme.find("\n```", start) - start);
}

// The root and span names the program gives.
std::set<std::string> SpanNames(const std::string& source) {
  static const std::regex kName(
      R"re((?:SPANPROF_SCOPE|ProfileFromEnvironment)\("([^"]+)")re");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), kName);
       it != std::sregex_iterator(); ++it) {
    names.insert((*it)[1].str());
  }
  return names;
}

TEST(ReadmeQuickstartTest, RunsAsTheReadmeSays) {
  const std::set<std::string> names = SpanNames(QuickstartSource());
  ASSERT_GE(names.size(), 2u) << "no span names in README.md's first block";
  TempDir dir;
  const auto plain =
      RunProcess({SPANPROF_TEST_BIN_DIR "/readme_quickstart"},
                 {{"SPANPROF", "\x01unset"}}, dir.path().string());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err, "");
  EXPECT_FALSE(std::filesystem::exists(dir.File("build")));

  const auto profiled =
      RunProcess({SPANPROF_TEST_BIN_DIR "/readme_quickstart"},
                 {{"SPANPROF", "1"}, {"SPANPROF_REPORT", "\x01unset"}},
                 dir.path().string());
  ASSERT_EQ(profiled.exit_code, 0) << profiled.err;
  // The program's own output, unchanged and alone on standard output.
  EXPECT_EQ(profiled.out, plain.out);
  EXPECT_FALSE(profiled.out.empty());
  EXPECT_THAT(profiled.err, HasSubstr("spanprof: recording up to"));
  EXPECT_THAT(profiled.err, HasSubstr("Trace: build/spanprof-trace.json"));
  EXPECT_THAT(profiled.err, HasSubstr("Summary: build/spanprof-summary.json"));

  const auto summary =
      analysis::ReadSummary(dir.File("build/spanprof-summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->complete);
  std::set<std::string> rows;
  for (const analysis::Row& row : summary->rows) rows.insert(row.key.name);
  for (const std::string& name : names) {
    EXPECT_TRUE(rows.contains(name)) << name;
    EXPECT_THAT(profiled.err, HasSubstr(name));
  }
  EXPECT_TRUE(analysis::ReadTrace(dir.File("build/spanprof-trace.json")).ok());
}

// The README's "Compare two runs" step: a second run compared with the
// first by the CLI (pass or regression by timing; never a usage error).
TEST(ReadmeQuickstartTest, TwoRunsCompare) {
  TempDir dir;
  const std::map<std::string, std::string> env = {
      {"SPANPROF", "1"}, {"SPANPROF_SUMMARY_OUT", "build/before.json"}};
  ASSERT_EQ(RunProcess({SPANPROF_TEST_BIN_DIR "/readme_quickstart"}, env,
                       dir.path().string())
                .exit_code,
            0);
  ASSERT_EQ(RunProcess({SPANPROF_TEST_BIN_DIR "/readme_quickstart"},
                       {{"SPANPROF", "1"}}, dir.path().string())
                .exit_code,
            0);
  const auto compared =
      RunProcess({SPANPROF_TEST_BIN_DIR "/spanprof", "compare",
                  "build/before.json", "build/spanprof-summary.json"},
                 {}, dir.path().string());
  EXPECT_THAT(compared.exit_code, ::testing::AnyOf(0, 1)) << compared.err;
  for (const std::string& name : SpanNames(QuickstartSource())) {
    EXPECT_THAT(compared.out, HasSubstr(name));
  }
}

}  // namespace
}  // namespace spanprof
