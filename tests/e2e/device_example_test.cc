// The real device_example: spans with device hooks cover the completion of
// the work they launched, a failing synchronize is recorded on its span, a
// failed prepare is counted.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;

class DeviceExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto result =
        RunProcess({SPANPROF_TEST_BIN_DIR "/device_example"},
                   {{"SPANPROF", "1"},
                    {"SPANPROF_OUT", dir_.File("t.json")},
                    {"SPANPROF_SUMMARY_OUT", dir_.File("s.json")},
                    {"SPANPROF_QUIET", "1"}},
                   dir_.path().string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    absl::StatusOr<Capture> c = analysis::ReadTrace(dir_.File("t.json"));
    ASSERT_TRUE(c.ok()) << c.status();
    capture_ = *std::move(c);
  }
  std::string Name(const Span& s) const { return capture_.sites[s.site].name; }
  const SpanArg* Arg(const Span& s, const std::string& key) const {
    for (uint32_t a = s.first_arg; a < s.first_arg + s.arg_count; ++a) {
      if (capture_.args[a].key == key) return &capture_.args[a];
    }
    return nullptr;
  }

  TempDir dir_;
  Capture capture_;
};

TEST_F(DeviceExampleTest, HookedSpansCoverTheWorkTheyLaunched) {
  std::map<uint64_t, const Span*> by_id;
  for (const Span& s : capture_.spans) by_id[s.id] = &s;
  int covered = 0;
  int launch_only = 0;
  for (const Span& s : capture_.spans) {
    if (Name(s) != "device.execute") continue;
    ASSERT_NE(s.parent_id, 0u);
    const Span& parent = *by_id.at(s.parent_id);
    EXPECT_NE(parent.thread, s.thread);  // launched onto the device thread
    const SpanArg* kernel = Arg(s, "kernel");
    ASSERT_NE(kernel, nullptr);
    ASSERT_TRUE(kernel->is_string);
    if (Name(parent) == "kernel.matmul") {
      EXPECT_EQ(kernel->text, "matmul");
      // The hooked span ends after the device finished the work.
      EXPECT_GE(parent.end_ns, s.end_ns);
      ++covered;
      const SpanArg* peak = Arg(parent, "device_peak_bytes");
      ASSERT_NE(peak, nullptr);  // enrich's argument, on the span
      EXPECT_GE(peak->int_value, 256 << 20);
      EXPECT_EQ(parent.flags, 0u);
    } else if (Name(parent) == "kernel.launch_only") {
      EXPECT_EQ(kernel->text, "relu");
      // A plain span around a launch ends before the work does.
      EXPECT_LT(parent.end_ns, s.end_ns);
      ++launch_only;
    }
  }
  EXPECT_EQ(covered, 4);
  EXPECT_EQ(launch_only, 4);
}

TEST_F(DeviceExampleTest, HookFailuresAreRecordedNotLost) {
  const Span* faulty = nullptr;
  for (const Span& s : capture_.spans) {
    if (Name(s) == "kernel.faulty") faulty = &s;
    EXPECT_NE(Name(s), "kernel.too_big");  // its prepare refused it
  }
  ASSERT_NE(faulty, nullptr);
  EXPECT_TRUE(faulty->flags & kSpanHookFailed);
  const SpanArg* error = Arg(*faulty, "hook_error");
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->text, "complete: illegal address");
  EXPECT_EQ(capture_.failed_prepares, 1u);
  // The summary counts both, and `spanprof report` says so.
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir_.File("s.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->failed_prepares, 1u);
  for (const analysis::Row& row : summary->rows) {
    EXPECT_EQ(row.hook_failures, row.key.name == "kernel.faulty" ? 1u : 0u)
        << row.label;
  }
  const auto report = RunProcess(
      {SPANPROF_TEST_BIN_DIR "/spanprof", "report", dir_.File("t.json")});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("1 span was not recorded: a prepare hook failed"),
            std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("1 span's complete or enrich hook threw (first: "
                            "kernel.faulty [phase=compute, device=sim]"),
            std::string::npos)
      << report.out;
}

// `--group-by-arg` splits rows by a string argument (SPANPROF_ARG_STR) of
// spanprof's own traces too: one device.execute row per kernel.
TEST_F(DeviceExampleTest, RowsSplitByAStringArgument) {
  const auto summarized = RunProcess(
      {SPANPROF_TEST_BIN_DIR "/spanprof", "summarize", dir_.File("t.json"),
       "-o", dir_.File("by-kernel.json"), "--group-by-arg", "kernel"});
  ASSERT_EQ(summarized.exit_code, 0) << summarized.err;
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir_.File("by-kernel.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  std::map<std::string, uint64_t> calls;
  for (const analysis::Row& row : summary->rows)
    calls[row.key.name] = row.calls;
  EXPECT_EQ(calls["device.execute [kernel=matmul]"], 4u);
  EXPECT_EQ(calls["device.execute [kernel=relu]"], 4u);
  EXPECT_EQ(calls.count("device.execute"), 0u);
  const auto missing =
      RunProcess({SPANPROF_TEST_BIN_DIR "/spanprof", "report",
                  dir_.File("t.json"), "--group-by-arg", "nope"});
  EXPECT_EQ(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("no span has a string argument \"nope\""),
            std::string::npos)
      << missing.err;
}

}  // namespace
}  // namespace spanprof
