// End to end: `spanprof run` runs a real program (tests/cli/run_probe.cc, or
// an example) N times. One valid summary per run with sortable names, the
// environment each run gets, the logs, a failing run stopping everything,
// bad flags, and what happens to a directory that already holds files.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
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

class RunCliTest : public ProbeRunTest {};

TEST_F(RunCliTest, WritesOneValidSummaryPerRun) {
  const ProcessResult result = RunProbe(3);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* name : {"run-001", "run-002", "run-003"}) {
    const auto summary =
        analysis::ReadSummary(Out(std::string(name) + ".summary.json"));
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_TRUE(summary->complete);
    ASSERT_EQ(summary->rows.size(), 2u);
    EXPECT_EQ(summary->recorded_heartbeats, 3u);
    EXPECT_THAT(ReadText(Out(std::string("logs/") + name + ".stdout")),
                HasSubstr("probe stdout probe"));
    EXPECT_THAT(ReadText(Out(std::string("logs/") + name + ".stderr")),
                HasSubstr("probe stderr probe"));
  }
  EXPECT_FALSE(std::filesystem::exists(Out("run-004.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("traces")));
  EXPECT_THAT(result.err, HasSubstr("run 1/3: "));
  EXPECT_THAT(result.err, HasSubstr("run 3/3: "));
  EXPECT_THAT(result.out, HasSubstr("run: 3 runs of "));
  EXPECT_THAT(result.out, HasSubstr("wall time median"));
}

TEST_F(RunCliTest, EachRunGetsItsOwnPathsOverridingInheritedOnes) {
  const std::string elsewhere = dir_.File("elsewhere.json");
  const ProcessResult result = Spanprof(
      {"run", "--runs", "2", "--out", Out(), "--", kProbe, "--log", Log()},
      {{"SPANPROF", "0"}, {"SPANPROF_SUMMARY_OUT", elsewhere}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = ReadLines(Log());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("SPANPROF=1 SPANPROF_SUMMARY_OUT=" +
                                  Out("run-001.summary.json")));
  EXPECT_THAT(lines[1],
              HasSubstr("SPANPROF_SUMMARY_OUT=" + Out("run-002.summary.json")));
  // Without --trace or --keep-traces no trace is written.
  EXPECT_THAT(lines[0], HasSubstr(" SPANPROF_OUT=off"));
  EXPECT_FALSE(std::filesystem::exists(elsewhere));
}

TEST_F(RunCliTest, OtherSpanprofVariablesPassThroughAndDropsAreNoted) {
  // A cap of 1 span keeps the root and drops probe.work: each summary is
  // valid but incomplete, and the progress line says so.
  const ProcessResult result = Spanprof(
      {"run", "--runs=2", "--out=" + Out(), "--", kProbe, "--log", Log()},
      {{"SPANPROF_MAX_EVENTS", "1"}, {"SPANPROF_QUIET", "1"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto summary = analysis::ReadSummary(Out("run-002.summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_FALSE(summary->complete);
  EXPECT_EQ(summary->dropped_events, 1u);
  EXPECT_THAT(result.err, HasSubstr("run 2/2: "));
  EXPECT_THAT(result.err, HasSubstr("(summary incomplete: 1 dropped, 0 "
                                    "unfinished events; compare needs "
                                    "--allow-incomplete)"));
  EXPECT_THAT(ReadText(Out("logs/run-001.stdout")),
              Not(HasSubstr("spanprof:")));  // SPANPROF_QUIET reached it
}

TEST_F(RunCliTest, TraceKeepsEachRunsTrace) {
  const ProcessResult result = RunProbe(2, {"--trace"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* name :
       {"traces/run-001.trace.json", "traces/run-002.trace.json"}) {
    const auto capture = analysis::ReadTrace(Out(name));
    ASSERT_TRUE(capture.ok()) << capture.status();
    EXPECT_EQ(capture->spans.size(), 2u);
  }
}

TEST_F(RunCliTest, AFailingRunStopsEverythingAndIsNamed) {
  const ProcessResult result = RunProbe(4, {}, {"--fail-at", "2"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("spanprof run: run 2/4 failed: "));
  EXPECT_THAT(result.err, HasSubstr(std::string(kProbe) + " --log "));
  EXPECT_THAT(result.err, HasSubstr("exited with status 3"));
  EXPECT_THAT(result.err, HasSubstr("probe: failing on purpose at call 2"));
  EXPECT_THAT(result.err, HasSubstr(Out("logs/run-002.stderr")));
  EXPECT_EQ(ReadLines(Log()).size(), 2u);  // runs 3 and 4 never started
  EXPECT_TRUE(std::filesystem::exists(Out("run-001.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("run-002.summary.json")));
}

TEST_F(RunCliTest, AKilledRunNamesTheSignal) {
  const ProcessResult result = RunProbe(3, {}, {"--abort-at", "1"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("run 1/3 failed"));
  EXPECT_THAT(result.err, HasSubstr("was killed by signal 6 (SIGABRT"));
  EXPECT_EQ(ReadLines(Log()).size(), 1u);
}

TEST_F(RunCliTest, CtrlCStopsTheSeriesWithStatus130) {
  // Ctrl-C as a terminal sends it (to spanprof and the program): spanprof
  // stops, keeps run 1, removes what run 2 wrote and exits as SIGINT would.
  const ProcessResult result =
      RunProbe(3, {"--trace"}, {"--interrupt-at", "2"});
  EXPECT_EQ(result.exit_code, 130) << result.err;
  EXPECT_THAT(result.err, HasSubstr("spanprof run: stopped by SIGINT"));
  EXPECT_THAT(result.err, HasSubstr("run: 1 completed run kept in " + Out()));
  EXPECT_EQ(ReadLines(Log()).size(), 2u);
  EXPECT_TRUE(analysis::ReadSummary(Out("run-001.summary.json")).ok());
  EXPECT_TRUE(analysis::ReadTrace(Out("traces/run-001.trace.json")).ok());
  EXPECT_FALSE(std::filesystem::exists(Out("run-002.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("traces/run-002.trace.json")));
  EXPECT_TRUE(std::filesystem::exists(Out("logs/run-002.stderr")));
}

// The pids the probe wrote with --stop-parent-at: itself, its parent
// (spanprof) and the grandchild it started.
struct ProbePids {
  pid_t probe = 0;
  pid_t parent = 0;
  pid_t grandchild = 0;
};

ProbePids ReadPids(const std::string& path) {
  std::istringstream in(ReadText(path));
  ProbePids pids;
  in >> pids.probe >> pids.parent >> pids.grandchild;
  return pids;
}

// The directory of the stream path a probe call logged
// (SPANPROF_STREAM=...).
std::string StreamDirOf(const std::string& log_line) {
  const std::string key = "SPANPROF_STREAM=";
  const size_t begin = log_line.find(key) + key.size();
  const std::string path =
      log_line.substr(begin, log_line.find(' ', begin) - begin);
  return std::filesystem::path(path).parent_path().string();
}

TEST_F(RunCliTest, SigtermKillsTheRunsProcessGroupAndKeepsCompletedRuns) {
  const std::string pids_file = dir_.File("pids");
  const ProcessResult result =
      RunProbe(4, {}, {"--stop-parent-at", "3", "--pids", pids_file});
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_THAT(result.err, HasSubstr("spanprof run: stopped by SIGTERM; the "
                                    "running program's process group was "
                                    "killed; run: 2 completed runs kept in " +
                                    Out()));
  const ProbePids pids = ReadPids(pids_file);
  ASSERT_GT(pids.probe, 0);
  ASSERT_GT(pids.grandchild, 0);
  EXPECT_NE(pids.parent, getpid());  // the signal went to spanprof
  EXPECT_TRUE(testing::ProcessEnded(pids.probe));  // killed and reaped
  EXPECT_TRUE(testing::WaitForProcessEnd(pids.grandchild))
      << "the run's grandchild " << pids.grandchild << " outlived spanprof";
  const std::vector<std::string> lines = ReadLines(Log());
  ASSERT_EQ(lines.size(), 3u);
  const std::string scratch = StreamDirOf(lines[2]);
  EXPECT_THAT(scratch, HasSubstr("spanprof-run-"));
  EXPECT_FALSE(std::filesystem::exists(scratch)) << scratch;
  for (const char* name : {"run-001.summary.json", "run-002.summary.json"}) {
    const auto summary = analysis::ReadSummary(Out(name));
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_TRUE(summary->complete);
  }
  EXPECT_FALSE(std::filesystem::exists(Out("run-003.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("logs/run-004.stdout")));
}

TEST_F(RunCliTest, ARunThatWritesNoSummaryFails) {
  const ProcessResult result = RunProbe(2, {}, {"--no-session"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("run 1/2 failed"));
  EXPECT_THAT(result.err, HasSubstr("wrote no summary (expected " +
                                    Out("run-001.summary.json")));
}

TEST_F(RunCliTest, AProgramThatCannotStartIsAUsageError) {
  const ProcessResult result = Spanprof({"run", "--runs", "2", "--out", Out(),
                                         "--", dir_.File("no-such-program")});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err,
              HasSubstr("cannot run " + dir_.File("no-such-program")));
}

TEST_F(RunCliTest, BadCommandLinesExit2NamingTheProblem) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--runs", "0", "--out", Out(), "--", kProbe}, "--runs"},
      {{"--runs", "x", "--out", Out(), "--", kProbe}, "--runs"},
      {{"--runs", "-3", "--out", Out(), "--", kProbe}, "--runs"},
      {{"--runs", "100001", "--out", Out(), "--", kProbe}, "--runs"},
      {{"--out", Out(), "--", kProbe}, "missing --runs N"},
      {{"--runs", "2", "--", kProbe}, "missing --out DIR"},
      {{"--runs", "2", "--out", "", "--", kProbe}, "--out"},
      {{"--runs", "2", "--out", Out()}, "missing -- PROGRAM"},
      {{"--runs", "2", "--out", Out(), "--"}, "missing -- PROGRAM"},
      {{"--runs", "2", "--out", Out(), kProbe}, "unexpected argument"},
      {{"--runs", "2", "--out", Out(), "--bogus", "--", kProbe},
       "unknown flag --bogus"},
      {{"--runs", "2", "--runs", "3", "--out", Out(), "--", kProbe},
       "--runs given more than once"},
      {{"--runs", "2", "--out"}, "--out needs a value"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> full = {"run"};
    full.insert(full.end(), args.begin(), args.end());
    const ProcessResult result = Spanprof(full);
    EXPECT_EQ(result.exit_code, 2) << message;
    EXPECT_THAT(result.err, HasSubstr(message));
    EXPECT_THAT(result.err, HasSubstr("usage: spanprof run --runs N"));
  }
  EXPECT_FALSE(std::filesystem::exists(Log()));
}

TEST_F(RunCliTest, HelpAfterTheSeparatorBelongsToTheProgram) {
  const ProcessResult help = Spanprof({"run", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("DIR/run-001.summary.json"));
  const ProcessResult result = RunProbe(1, {}, {"--help"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(ReadLines(Log()).size(), 1u);
}

TEST_F(RunCliTest, EarlierRunsAreRefusedUnlessForced) {
  ASSERT_EQ(RunProbe(3).exit_code, 0);
  const std::string first = ReadText(Out("run-001.summary.json"));

  const ProcessResult refused = RunProbe(2);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("already holds the files of earlier "
                                     "runs (run-001.summary.json"));
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  EXPECT_EQ(ReadText(Out("run-001.summary.json")), first);
  EXPECT_EQ(ReadLines(Log()).size(), 3u);

  // --force replaces the series: no stale run-003 is left to be pooled.
  const ProcessResult forced = RunProbe(2, {"--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(std::filesystem::exists(Out("run-002.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("run-003.summary.json")));
  EXPECT_FALSE(std::filesystem::exists(Out("logs/run-003.stdout")));
}

TEST_F(RunCliTest, OtherJsonFilesAreRefusedEvenWhenForced) {
  std::filesystem::create_directories(Out());
  testing::WriteText(Out("mine.json"), "{}");
  testing::WriteText(Out("notes.txt"), "kept");
  for (const bool force : {false, true}) {
    const ProcessResult result = force ? RunProbe(2, {"--force"}) : RunProbe(2);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr(Out("mine.json")));
  }
  EXPECT_EQ(ReadText(Out("mine.json")), "{}");
  EXPECT_FALSE(std::filesystem::exists(Log()));
}

TEST_F(RunCliTest, OtherFilesInTheDirectoryAreLeftAlone) {
  std::filesystem::create_directories(Out());
  testing::WriteText(Out("notes.txt"), "kept");
  const ProcessResult result = RunProbe(1);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(ReadText(Out("notes.txt")), "kept");
}

TEST_F(RunCliTest, RunsARealExample) {
  const std::string example = SPANPROF_TEST_BIN_DIR "/nested_example";
  if (!std::filesystem::exists(example)) {
    SPANPROF_SKIP_UNLESS_CI("nested_example is not built");
  }
  const ProcessResult result =
      Spanprof({"run", "-n", "2", "-o", Out(), "--trace", "--", example});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* name : {"run-001", "run-002"}) {
    const auto summary =
        analysis::ReadSummary(Out(std::string(name) + ".summary.json"));
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->event_count, 7u);
    EXPECT_TRUE(
        analysis::ReadTrace(Out(std::string("traces/") + name + ".trace.json"))
            .ok());
    // The session's table went to the run's stderr log (spanprof prints on
    // standard error), and the program's own stdout log holds none of it.
    EXPECT_THAT(ReadText(Out(std::string("logs/") + name + ".stderr")),
                HasSubstr("spanprof: 7 events"));
    EXPECT_THAT(ReadText(Out(std::string("logs/") + name + ".stdout")),
                Not(HasSubstr("spanprof: 7 events")));
  }
  EXPECT_THAT(result.err, HasSubstr("run 2/2: "));
}

}  // namespace
}  // namespace spanprof
