// Real programs end through exit(): the real nested_example binary, leaving
// through exit() inside a span (with and without FinishSession() first),
// gives a complete capture that the gate accepts without flags.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::ProcessResult;
using spanprof::testing::RunProcess;
using spanprof::testing::Spanprof;
using spanprof::testing::TempDir;

// Runs nested_example with `flag`, its outputs under `dir`/`name`.
ProcessResult RunExample(const TempDir& dir, const std::string& name,
                         const std::string& flag) {
  return RunProcess(
      {SPANPROF_TEST_BIN_DIR "/nested_example", flag},
      {{"SPANPROF", "1"},
       {"SPANPROF_OUT", dir.File(name + "/trace.json")},
       {"SPANPROF_SUMMARY_OUT", dir.File(name + "/summary.json")}},
      dir.path().string());
}

// The spans of `trace` named `name`.
std::vector<const Span*> SpansNamed(const Capture& trace,
                                    const std::string& name) {
  std::vector<const Span*> found;
  for (const Span& span : trace.spans) {
    if (trace.sites[span.site].name == name) found.push_back(&span);
  }
  return found;
}

// What every exit path leaves: 6 spans (the root, 3 loads, 3 forward passes,
// the last one open when the program ended the session), the root and the
// last forward pass flagged open_at_exit and nothing unfinished.
void ExpectClosedAtExit(const TempDir& dir, const std::string& name,
                        const std::string& end_reason) {
  const auto summary = analysis::ReadSummary(dir.File(name + "/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->complete);
  EXPECT_EQ(summary->end_reason, end_reason);
  EXPECT_EQ(summary->event_count, 7u);
  EXPECT_EQ(summary->unfinished_events, 0u);
  EXPECT_EQ(summary->open_at_exit_events, 2u);

  const auto trace = analysis::ReadTrace(dir.File(name + "/trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->finished_normally);
  EXPECT_EQ(trace->end_reason, end_reason);
  const std::vector<const Span*> root =
      SpansNamed(*trace, "example.nested-spans");
  const std::vector<const Span*> forward = SpansNamed(*trace, "model.forward");
  ASSERT_EQ(root.size(), 1u);
  ASSERT_EQ(forward.size(), 3u);
  EXPECT_EQ(root[0]->flags, kSpanOpenAtExit);
  int open = 0;
  for (const Span* span : forward) {
    if (span->flags == kSpanOpenAtExit) {
      ++open;
      // Closed at the exit: the root's end, after its 4 ms sleep.
      EXPECT_EQ(span->end_ns, root[0]->end_ns);
      EXPECT_GE(span->end_ns - span->start_ns, 4'000'000);
    } else {
      EXPECT_EQ(span->flags, 0u);
    }
  }
  EXPECT_EQ(open, 1);
  for (const Span* load : SpansNamed(*trace, "input.load")) {
    EXPECT_EQ(load->flags, 0u);
  }
}

TEST(ExitPathsTest, ExitInsideASpanIsANormalEndThatTheGateAccepts) {
  TempDir dir;
  for (const std::string name : {"a", "b"}) {
    const ProcessResult run = RunExample(dir, name, "--exit-inside-span");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    // One quiet line, no warning.
    EXPECT_NE(run.err.find("note: 2 spans were open when the program ended "
                           "the session"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(run.err.find("warning"), std::string::npos) << run.err;
    ExpectClosedAtExit(dir, name, "exit");
  }
  // The gate needs no flag for it: a run against itself passes with the
  // defaults, and two runs pass with tolerances wide enough for a 2-core
  // machine's sleeps (tolerances are not about completeness).
  const ProcessResult self = Spanprof(
      {"compare", dir.File("a/summary.json"), dir.File("a/summary.json")});
  EXPECT_EQ(self.exit_code, 0) << self.out << self.err;
  const ProcessResult compare = Spanprof(
      {"compare", dir.File("a/summary.json"), dir.File("b/summary.json"),
       "--relative-tolerance", "100%", "--absolute-tolerance", "1s"});
  EXPECT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_EQ(compare.err.find("incomplete"), std::string::npos) << compare.err;
  // The trace states the flag, and validates.
  EXPECT_NE(
      testing::ReadText(dir.File("a/trace.json")).find("\"open_at_exit\""),
      std::string::npos);
  const ProcessResult valid = Spanprof({"validate", dir.File("a/trace.json")});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

TEST(ExitPathsTest, FinishSessionWritesTheOutputsOnceBeforeExit) {
  TempDir dir;
  const ProcessResult run = RunExample(dir, "f", "--finish-session");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The table once: FinishSession wrote the outputs, exit() found nothing
  // left to end.
  const std::string table = "spanprof: 7 events, 1 thread";
  const size_t first = run.err.find(table);
  ASSERT_NE(first, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(table, first + 1), std::string::npos) << run.err;
  ExpectClosedAtExit(dir, "f", "finished");
}

// Spans that are really lost still fail the gate: a session cut short by a
// cap keeps `--allow-incomplete` meaningful next to an exit end.
TEST(ExitPathsTest, AnExitEndWithDropsIsStillIncomplete) {
  TempDir dir;
  const ProcessResult run = RunProcess(
      {SPANPROF_TEST_BIN_DIR "/nested_example", "--exit-inside-span"},
      {{"SPANPROF", "1"},
       {"SPANPROF_MAX_EVENTS", "3"},
       {"SPANPROF_OUT", dir.File("trace.json")},
       {"SPANPROF_SUMMARY_OUT", dir.File("summary.json")}},
      dir.path().string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto summary = analysis::ReadSummary(dir.File("summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->end_reason, "exit");
  EXPECT_GT(summary->dropped_events, 0u);
  EXPECT_FALSE(summary->complete);
  const ProcessResult compare =
      Spanprof({"compare", dir.File("summary.json"), dir.File("summary.json")});
  EXPECT_EQ(compare.exit_code, 2) << compare.out << compare.err;
  EXPECT_NE(compare.err.find("dropped events"), std::string::npos)
      << compare.err;
}

}  // namespace
}  // namespace spanprof
