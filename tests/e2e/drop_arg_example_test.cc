// A dropped argument, named: the real nested_example with --drop-arg sets an
// argument one line before its span opens, on a thread where nothing else
// is open (as ninja's log loading once did, which showed only
// "dropped_args: 1"). The session's table, the summary's `drops`, the trace,
// `spanprof report` and `spanprof validate` all name its site, key and
// reason; a cap that drops spans names the arguments they took with them.
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::ProcessResult;
using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kDropLine =
    "  dropped 1 argument: bytes before log.load [activity=load] "
    "(no open span)\n";

ProcessResult Spanprof(std::vector<std::string> args) {
  args.insert(args.begin(), SPANPROF_TEST_BIN_DIR "/spanprof");
  return RunProcess(args);
}

ProcessResult RunNested(const TempDir& dir,
                        const std::vector<std::string>& flags,
                        std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv = {SPANPROF_TEST_BIN_DIR "/nested_example"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  env["SPANPROF"] = "1";
  return RunProcess(argv, env, dir.path().string());
}

TEST(DropArgExampleTest, TheDroppedArgumentIsNamedEverywhere) {
  TempDir dir;
  const ProcessResult run = RunNested(dir, {"--drop-arg"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The session's table: the warning, then the drop by name, site, reason.
  EXPECT_THAT(run.err, HasSubstr("warning: 1 span arguments or counter "
                                 "counts dropped"));
  EXPECT_THAT(run.err, HasSubstr(kDropLine));

  const std::string summary_path = dir.File("build/spanprof-summary.json");
  const std::string trace_path = dir.File("build/spanprof-trace.json");
  const auto summary = analysis::ReadSummary(summary_path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->dropped_args, 1u);
  EXPECT_FALSE(summary->complete);
  EXPECT_EQ(summary->event_count, 8u);  // log.load is kept
  EXPECT_EQ(summary->drops,
            (std::vector<analysis::Drop>{
                {analysis::RowKey{.name = "log.load", .activity = "load"},
                 "bytes", "arg", "no_open_span", 1}}));

  // The trace carries them: a summary made from it is the session's.
  const auto trace = analysis::ReadTrace(trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(analysis::Summarize(*trace).drops, summary->drops);

  // `spanprof report` lists every drop, from the summary and the trace.
  for (const std::string& input : {summary_path, trace_path}) {
    const ProcessResult report = Spanprof({"report", input});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_THAT(report.out, HasSubstr(kDropLine)) << input;
  }
  const ProcessResult valid = Spanprof({"validate", summary_path});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

TEST(DropArgExampleTest, WithoutTheFlagNothingIsDropped) {
  TempDir dir;
  const ProcessResult run = RunNested(dir, {});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, Not(HasSubstr("dropped")));
  const auto summary =
      analysis::ReadSummary(dir.File("build/spanprof-summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->dropped_args, 0u);
  EXPECT_TRUE(summary->drops.empty());
  EXPECT_TRUE(summary->complete);
}

// SPANPROF_MAX_EVENTS=2 keeps the root and the first input.load: the two
// later input.load spans are dropped by the cap with their `step`
// arguments, which are named after them.
TEST(DropArgExampleTest, TheCapNamesTheArgumentsOfDroppedSpans) {
  TempDir dir;
  const ProcessResult run = RunNested(dir, {}, {{"SPANPROF_MAX_EVENTS", "2"}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err,
              HasSubstr("  dropped 2 arguments: step on input.load "
                        "[phase=input, activity=load] (its span was dropped "
                        "by the cap)\n"));
  const auto summary =
      analysis::ReadSummary(dir.File("build/spanprof-summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->event_count, 2u);
  EXPECT_EQ(summary->dropped_args, 2u);
  EXPECT_EQ(summary->drops,
            (std::vector<analysis::Drop>{{analysis::RowKey{.name = "input.load",
                                                           .phase = "input",
                                                           .activity = "load"},
                                          "step", "arg", "cap", 2}}));
}

// A summary whose drops do not add up to dropped_args is invalid.
TEST(DropArgExampleTest, ValidateRefusesDropsThatDoNotAddUp) {
  TempDir dir;
  const ProcessResult run = RunNested(dir, {"--drop-arg"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string path = dir.File("build/spanprof-summary.json");
  std::string text = testing::ReadText(path);
  const size_t at = text.find("\"dropped_args\": 1,");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 18, "\"dropped_args\": 2,");
  const std::string broken = dir.File("broken.json");
  testing::WriteText(broken, text);
  const ProcessResult valid = Spanprof({"validate", broken});
  EXPECT_EQ(valid.exit_code, 1) << valid.out << valid.err;
  EXPECT_THAT(valid.out + valid.err,
              HasSubstr("$.drops: the counts add up to 1, but dropped_args "
                        "is 2"));
}

}  // namespace
}  // namespace spanprof
