// End to end: `spanprof compare` on directories of repeated runs, with the
// real binary on real summary files.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/summary_runs.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteRichRuns;
using ::testing::HasSubstr;

class CompareRunsCliTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.File(name); }

  TempDir dir_;
};

TEST_F(CompareRunsCliTest, TenRunsASideFindTheSlowerPhase) {
  WriteRichRuns(Path("base"), 10, 4000);
  WriteRichRuns(Path("cand"), 10, 4800);  // +20%
  testing::WriteText(Path("base/stdout.log"), "not a summary");
  const ProcessResult r =
      Spanprof({"compare", Path("base"), Path("cand"), "--metric", "max_ns",
                "--json", Path("cmp.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Repeated runs: 10 baseline, 10 candidate"));
  EXPECT_THAT(r.out, HasSubstr("regressed   model.forward"));
  EXPECT_THAT(r.err, HasSubstr("stdout.log: not a spanprof summary, skipped"));
  const std::string json = testing::ReadText(Path("cmp.json"));
  EXPECT_THAT(json, HasSubstr("\"schema_version\": 2"));
  EXPECT_THAT(json, HasSubstr("\"verdict\":\"regressed\""));
}

// A trace in a directory of runs is skipped with a note, even when one of its
// spans is named like the summary's schema.
TEST_F(CompareRunsCliTest, ATraceThatNamesTheSummarySchemaIsSkipped) {
  WriteRichRuns(Path("base"), 3, 4000);
  WriteRichRuns(Path("cand"), 3, 4000);
  testing::WriteText(Path("cand/trace.json"),
                     R"([{"name": "spanprof.summary", "ph": "X", "ts": 0, )"
                     R"("dur": 1, "pid": 1, "tid": 1}])");
  const ProcessResult r =
      Spanprof({"compare", Path("base"), Path("cand"), "--metric", "max_ns"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Repeated runs: 3 baseline, 3 candidate"));
  EXPECT_THAT(r.err, HasSubstr("trace.json: not a spanprof summary, skipped"));
}

TEST_F(CompareRunsCliTest, TwoRunsASideCannotDecideAndSayHowManyWould) {
  WriteRichRuns(Path("base"), 2, 4000);
  WriteRichRuns(Path("cand"), 2, 4800);
  const ProcessResult r =
      Spanprof({"compare", Path("base"), Path("cand"), "--metric", "max_ns"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("unknown     model.forward"));
  EXPECT_THAT(r.out, HasSubstr("nothing can be decided"));
  const ProcessResult strict =
      Spanprof({"compare", Path("base"), Path("cand"), "--metric", "max_ns",
                "--fail-on-unknown"});
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  EXPECT_THAT(strict.out, HasSubstr("(--fail-on-unknown)"));
}

TEST_F(CompareRunsCliTest, AFileAgainstADirectoryIsOneRunAgainstMany) {
  WriteRichRuns(Path("cand"), 4, 4000);
  const ProcessResult r =
      Spanprof({"compare", Path("cand/run-0.summary.json"), Path("cand")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Repeated runs: 1 baseline, 4 candidate"));
}

TEST_F(CompareRunsCliTest, BadDirectoriesAndFlagsExitTwoNamingThem) {
  std::filesystem::create_directories(Path("empty"));
  WriteRichRuns(Path("base"), 3, 4000);
  ProcessResult r = Spanprof({"compare", Path("base"), Path("empty")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("empty: no spanprof summary"));
  testing::WriteText(Path("base/run-9.json"),
                     "{\"schema\": \"spanprof.summary\"}");
  r = Spanprof({"compare", Path("base"), Path("base")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("run-9.json"));
  r = Spanprof({"compare", Path("base"), Path("base"), "--confidence", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--confidence"));
}

}  // namespace
}  // namespace spanprof
