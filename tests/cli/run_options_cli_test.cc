// End to end: `spanprof run` / `spanprof ab` with --warmup, --prepare and
// --keep-traces, and the closing verdict line of `ab`, with the real CLI and
// the run_probe program (which logs every call it gets).
#include <cstdlib>
#include <filesystem>
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

using ::spanprof::testing::CountOccurrences;
using ::spanprof::testing::ProbeRunTest;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::Spanprof;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

class RunOptionsTest : public ProbeRunTest {
 protected:
  // `spanprof ab` of run_probe with `base_work` and `cand_work` rounds.
  ProcessResult Ab(int runs, long base_work, long cand_work) {
    return Spanprof({"ab", "--runs", std::to_string(runs), "--out", Out(), "--",
                     kProbe, "--work", std::to_string(base_work), "--", kProbe,
                     "--work", std::to_string(cand_work)});
  }
};

TEST_F(RunOptionsTest, WithoutKeepTracesNoTraceIsWritten) {
  const ProcessResult r = RunProbe(2, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountOccurrences(ReadText(Log()), " SPANPROF_OUT=off\n"), 2u);
  EXPECT_FALSE(std::filesystem::exists(Out("traces")));
}

TEST_F(RunOptionsTest, KeepTracesKeepsAPerfettoTracePerRun) {
  const ProcessResult r = RunProbe(2, {"--keep-traces"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"run-001", "run-002"}) {
    const std::string trace =
        Out(std::string("traces/") + name + ".trace.pftrace");
    const ProcessResult valid = Spanprof({"validate", trace});
    EXPECT_EQ(valid.exit_code, 0) << trace << ": " << valid.out << valid.err;
  }
  const ProcessResult both =
      RunProbe(1, {"--keep-traces", "--trace", "--force"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("exclude each other"));
}

TEST_F(RunOptionsTest, WarmupRunsFirstAndIsNotCounted) {
  const ProcessResult r = RunProbe(1, {"--warmup", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string log = ReadText(Log());
  EXPECT_EQ(CountOccurrences(log, "probe SPANPROF=1 "), 3u) << log;
  // The last call is the counted run, writing into DIR.
  EXPECT_THAT(log, ContainsRegex("SPANPROF_SUMMARY_OUT=[^\n]*"
                                 "warmup.summary.json[^\n]*\n[^\n]*"
                                 "SPANPROF_SUMMARY_OUT=" +
                                 Out("run-001.summary.json")));
  EXPECT_THAT(r.err, HasSubstr("run warm-up 1/2: "));
  EXPECT_THAT(r.err, HasSubstr("run warm-up 2/2: "));
  EXPECT_THAT(r.err, HasSubstr("(not counted)"));
  EXPECT_THAT(r.err, HasSubstr("run 1/1: "));
  EXPECT_THAT(r.out, HasSubstr("run: 1 runs of "));
  EXPECT_TRUE(std::filesystem::exists(Out("run-001.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("run-002.summary.json")));
  EXPECT_TRUE(std::filesystem::exists(Out("logs/warmup-002.stdout")));
  const ProcessResult bad = RunProbe(1, {"--warmup", "-1", "--force"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--warmup: expected a non-negative integer"));
}

TEST_F(RunOptionsTest, PrepareRunsBeforeEveryRun) {
  const std::string prepare = "echo prepared >> '" + Log() + "'";
  const ProcessResult r = RunProbe(2, {"--warmup", "1", "--prepare", prepare});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string log = ReadText(Log());
  // prepare, warm-up, prepare, run 1, prepare, run 2.
  EXPECT_THAT(log, ContainsRegex("^prepared\nprobe [^\n]*\nprepared\nprobe "
                                 "[^\n]*\nprepared\nprobe [^\n]*\n$"))
      << log;
}

TEST_F(RunOptionsTest, AFailingPrepareStopsEverythingAndIsNamed) {
  const ProcessResult r =
      RunProbe(2, {"--prepare", "echo cannot reset >&2; exit 7"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("spanprof run: --prepare before run 1/2 "
                               "failed: /bin/sh -c "));
  EXPECT_THAT(r.err, HasSubstr("exited with status 7"));
  EXPECT_THAT(r.err, HasSubstr("  | cannot reset"));
  EXPECT_FALSE(std::filesystem::exists(Log()));  // the program never ran
}

TEST_F(RunOptionsTest, AbNamesTheRatioOfAClearlySlowerCandidate) {
  // The candidate does a large amount of busy work the baseline does not:
  // its root span is many times longer in every run.
  const ProcessResult r = Ab(6, 0, 30'000'000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("\ncand is [0-9]+\\.[0-9][0-9]\xC3\x97 "
                                   "\\[[0-9.]+, [0-9.]+\\] the time of base "
                                   "\\(root span, median over 6 runs\\)\n$"))
      << r.out;
  const size_t at = r.out.rfind("cand is ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::atof(r.out.c_str() + at + 8), 2.0) << r.out;
}

TEST_F(RunOptionsTest, AbWithTooFewRunsDetectsNoDifference) {
  // Two runs a side cannot exclude "no change" at 95%: the line says so.
  const ProcessResult r = Ab(2, 0, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("\nno difference detected \\(root span: "
                                   "cand is [0-9.]+\xC3\x97 [^\n]*median "
                                   "over 2 runs\\)\n$"))
      << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("\ncand is ")));
}

}  // namespace
}  // namespace spanprof
