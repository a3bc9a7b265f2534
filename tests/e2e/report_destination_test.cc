// Where the session table goes, with the real nested_example: standard
// error by default, so that the program's standard output stays its own
// (`SPANPROF=1 nested_example > out.txt`); SPANPROF_REPORT=stdout, off or
// a file path; SPANPROF_QUIET=1 still means off; a bad value stops the
// program before its work, naming the variable.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ReadText;
using ::spanprof::testing::RunProcess;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char kTableHeader[] = "spanprof: 7 events, 1 thread";
constexpr const char kTraceLine[] = "Trace: build/spanprof-trace.json";
constexpr const char kForecast[] = "spanprof: recording up to";

::spanprof::testing::ProcessResult RunNested(
    const TempDir& dir, const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> all = {{"SPANPROF", "1"},
                                            {"SPANPROF_REPORT", "\x01unset"},
                                            {"SPANPROF_QUIET", "\x01unset"}};
  for (const auto& [key, value] : env) all[key] = value;
  return RunProcess({SPANPROF_TEST_BIN_DIR "/nested_example"}, all,
                    dir.path().string());
}

TEST(ReportDestinationTest, StandardOutputStaysTheProgramsOwn) {
  TempDir dir;
  const auto result = RunNested(dir, {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "");  // what `> out.txt` would hold
  EXPECT_THAT(result.err, HasSubstr(kForecast));
  EXPECT_THAT(result.err, HasSubstr(kTableHeader));
  EXPECT_THAT(result.err, HasSubstr("model.forward"));
  EXPECT_THAT(result.err, HasSubstr(kTraceLine));
}

TEST(ReportDestinationTest, StdoutPutsTheTableBackOnStandardOutput) {
  TempDir dir;
  const auto result = RunNested(dir, {{"SPANPROF_REPORT", "stdout"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr(kTableHeader));
  EXPECT_THAT(result.out, HasSubstr(kTraceLine));
  EXPECT_THAT(result.err, Not(HasSubstr(kTableHeader)));
  EXPECT_THAT(result.err, HasSubstr(kForecast));
}

TEST(ReportDestinationTest, OffAndQuietPrintNothingButWriteTheFiles) {
  for (const auto& env : std::vector<std::map<std::string, std::string>>{
           {{"SPANPROF_REPORT", "off"}}, {{"SPANPROF_QUIET", "1"}}}) {
    SCOPED_TRACE(env.begin()->first);
    TempDir dir;
    const auto result = RunNested(dir, env);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "");
    EXPECT_THAT(ReadText(dir.File("build/spanprof-summary.json")),
                HasSubstr("model.forward"));
  }
}

TEST(ReportDestinationTest, APathGetsTheTable) {
  TempDir dir;
  const auto result = RunNested(dir, {{"SPANPROF_REPORT", "out/table.txt"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, Not(HasSubstr(kTableHeader)));
  const std::string table = ReadText(dir.File("out/table.txt"));
  EXPECT_THAT(table, HasSubstr(kTableHeader));
  EXPECT_THAT(table, HasSubstr(kTraceLine));
}

TEST(ReportDestinationTest, ABadValueStopsTheProgramNamingTheVariable) {
  TempDir dir;
  const auto result = RunNested(dir, {{"SPANPROF_REPORT", "stdrr"}});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("SPANPROF_REPORT='stdrr'"));
  EXPECT_THAT(result.err, HasSubstr("./stdrr"));
  EXPECT_EQ(result.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir.File("build")));
}

}  // namespace
}  // namespace spanprof
