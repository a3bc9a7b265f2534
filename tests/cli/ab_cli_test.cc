// End to end: `spanprof ab` interleaves a baseline and a candidate program
// (base 1, cand 1, base 2, ...), each side a series in DIR/base and
// DIR/cand; a failing side stops everything; both directories are checked
// before anything runs.
#include <sys/types.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProbeRunTest;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadLines;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::Spanprof;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class AbCliTest : public ProbeRunTest {
 protected:
  AbCliTest() : ProbeRunTest("ab") {}

  // `spanprof ab --runs N --out DIR -- run_probe --role base ... -- run_probe
  // --role cand ...`, both logging to one file.
  ProcessResult Ab(int runs, const std::vector<std::string>& base_extra = {},
                   const std::vector<std::string>& cand_extra = {}) {
    std::vector<std::string> args = {"ab",    "--runs", std::to_string(runs),
                                     "--out", Out(),    "--",
                                     kProbe,  "--role", "base",
                                     "--log", Log()};
    args.insert(args.end(), base_extra.begin(), base_extra.end());
    args.insert(args.end(), {"--", kProbe, "--role", "cand", "--log", Log()});
    args.insert(args.end(), cand_extra.begin(), cand_extra.end());
    return Spanprof(args);
  }
};

TEST_F(AbCliTest, InterleavesTheSidesAndWritesOneSeriesEach) {
  const ProcessResult result = Ab(3);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = ReadLines(Log());
  ASSERT_EQ(lines.size(), 6u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string side = i % 2 == 0 ? "base" : "cand";
    const std::string run = "run-00" + std::to_string(i / 2 + 1);
    EXPECT_THAT(lines[i], StartsWith(side + " SPANPROF=1 "));
    EXPECT_THAT(lines[i], HasSubstr("SPANPROF_SUMMARY_OUT=" +
                                    Out(side + "/" + run + ".summary.json")));
    const auto summary =
        analysis::ReadSummary(Out(side + "/" + run + ".summary.json"));
    EXPECT_TRUE(summary.ok()) << summary.status();
  }
  // Progress lines name the side, in the order the runs happened.
  const size_t base1 = result.err.find("base 1/3: ");
  const size_t cand1 = result.err.find("cand 1/3: ");
  const size_t base2 = result.err.find("base 2/3: ");
  const size_t cand3 = result.err.find("cand 3/3: ");
  ASSERT_NE(cand3, std::string::npos) << result.err;
  EXPECT_LT(base1, cand1);
  EXPECT_LT(cand1, base2);
  EXPECT_LT(base2, cand3);
  EXPECT_THAT(result.out, HasSubstr("base: 3 runs of "));
  EXPECT_THAT(result.out, HasSubstr("cand: 3 runs of "));
  EXPECT_THAT(result.out, HasSubstr("next: spanprof compare " + Out("base") +
                                    " " + Out("cand")));
}

TEST_F(AbCliTest, TheCandidateMayContainFurtherSeparators) {
  const ProcessResult result = Ab(1, {}, {"--", "extra"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(ReadLines(Log()).size(), 2u);
}

TEST_F(AbCliTest, AFailingCandidateStopsEverythingAndIsNamed) {
  // Calls: base 1, cand 1, base 2, cand 2 (the 4th) fails.
  const ProcessResult result = Ab(3, {}, {"--fail-at", "4"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("spanprof ab: cand 2/3 failed: "));
  EXPECT_THAT(result.err, HasSubstr("--role cand"));
  EXPECT_THAT(result.err, HasSubstr("exited with status 3"));
  EXPECT_THAT(result.err, HasSubstr("probe: failing on purpose at call 4"));
  EXPECT_THAT(result.err, HasSubstr(Out("cand/logs/run-002.stderr")));
  EXPECT_EQ(ReadLines(Log()).size(), 4u);
  EXPECT_TRUE(std::filesystem::exists(Out("base/run-002.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("base/run-003.summary.json")));
}

TEST_F(AbCliTest, SigintStopsBothSidesKeepingTheirCompletedRuns) {
  // Calls: base 1, cand 1, base 2 (the 3rd) starts a grandchild, sends
  // SIGINT to spanprof and blocks until killed.
  const std::string pids_file = dir_.File("pids");
  const ProcessResult result = Ab(
      3, {"--stop-parent-at", "3", "--stop-signal", "INT", "--pids", pids_file},
      {});
  EXPECT_EQ(result.exit_code, 130) << result.err;
  EXPECT_THAT(result.err, HasSubstr("spanprof ab: stopped by SIGINT"));
  EXPECT_THAT(result.err,
              HasSubstr("base: 1 completed run kept in " + Out("base") +
                        "; cand: 1 completed run "
                        "kept in " +
                        Out("cand")));
  std::istringstream pids(ReadText(pids_file));
  pid_t probe = 0;
  pid_t parent = 0;
  pid_t grandchild = 0;
  pids >> probe >> parent >> grandchild;
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(testing::ProcessEnded(probe));
  EXPECT_TRUE(testing::WaitForProcessEnd(grandchild));
  EXPECT_EQ(ReadLines(Log()).size(), 3u);
  EXPECT_TRUE(analysis::ReadSummary(Out("base/run-001.summary.json")).ok());
  EXPECT_TRUE(analysis::ReadSummary(Out("cand/run-001.summary.json")).ok());
  EXPECT_FALSE(std::filesystem::exists(Out("base/run-002.summary.json")));
  EXPECT_THAT(result.out, Not(HasSubstr("next:")));
}

TEST_F(AbCliTest, BothDirectoriesAreCheckedBeforeAnythingRuns) {
  std::filesystem::create_directories(Out("cand"));
  testing::WriteText(Out("cand/old-summary.json"), "{}");
  const ProcessResult result = Ab(2);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr(Out("cand/old-summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Log()));
  EXPECT_FALSE(std::filesystem::exists(Out("base")));
}

TEST_F(AbCliTest, EarlierRunsAreRefusedUnlessForced) {
  ASSERT_EQ(Ab(2).exit_code, 0);
  EXPECT_EQ(Ab(1).exit_code, 2);
  const ProcessResult forced = testing::RunProcess(
      {SPANPROF_TEST_BIN_DIR "/spanprof", "ab", "--force", "--runs", "1",
       "--out", Out(), "--", kProbe, "--", kProbe});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_FALSE(std::filesystem::exists(Out("base/run-002.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("cand/run-002.summary.json")));
  EXPECT_TRUE(std::filesystem::exists(Out("cand/run-001.summary.json")));
}

TEST_F(AbCliTest, BadCommandLinesExit2) {
  const std::string bin = SPANPROF_TEST_BIN_DIR "/spanprof";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--runs", "2", "--out", Out(), "--", kProbe}, "missing the candidate"},
      {{"--runs", "2", "--out", Out(), "--", kProbe, "--"},
       "missing the candidate"},
      {{"--runs", "2", "--out", Out(), "--", "--", kProbe},
       "missing -- BASE_PROGRAM"},
      {{"--runs", "2", "--out", Out()}, "missing -- BASE_PROGRAM"},
      {{"--out", Out(), "--", kProbe, "--", kProbe}, "missing --runs N"},
      {{"--runs", "2", "--", kProbe, "--", kProbe}, "missing --out DIR"},
      {{"--runs", "two", "--out", Out(), "--", kProbe, "--", kProbe}, "--runs"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> full = {bin, "ab"};
    full.insert(full.end(), args.begin(), args.end());
    const ProcessResult result = testing::RunProcess(full);
    EXPECT_EQ(result.exit_code, 2) << message;
    EXPECT_THAT(result.err, HasSubstr(message));
    EXPECT_THAT(result.err, HasSubstr("usage: spanprof ab --runs N"));
  }
  EXPECT_FALSE(std::filesystem::exists(Out()));
}

}  // namespace
}  // namespace spanprof
