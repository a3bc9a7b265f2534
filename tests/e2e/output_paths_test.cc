// Output path templates with real processes: two runs of one
// program with one `SPANPROF_OUT` template write two captures, each named by
// its own pid.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

// Two processes of one program with one template: two captures, each named
// by its own pid (the one in its trace's metadata).
TEST(PathTemplateEndToEndTest, TwoProcessesWriteTwoCaptures) {
  testing::TempDir dir;
  for (int run = 0; run < 2; ++run) {
    const auto result = testing::RunProcess(
        {SPANPROF_TEST_BIN_DIR "/nested_example"},
        {{"SPANPROF", "1"},
         {"SPANPROF_QUIET", "1"},
         {"SPANPROF_OUT", dir.File("out/%n-%p.trace.json")},
         {"SPANPROF_SUMMARY_OUT", dir.File("out/%n-%p.summary.json")}});
    ASSERT_EQ(result.exit_code, 0) << result.err;
  }
  std::vector<std::filesystem::path> traces;
  for (const auto& entry :
       std::filesystem::directory_iterator(dir.File("out"))) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 11 && name.ends_with(".trace.json")) {
      traces.push_back(entry.path());
    }
  }
  ASSERT_EQ(traces.size(), 2u);
  for (const auto& path : traces) {
    const absl::StatusOr<Capture> capture = analysis::ReadTrace(path.string());
    ASSERT_TRUE(capture.ok()) << capture.status();
    EXPECT_EQ(path.filename().string(),
              "nested_example-" + std::to_string(capture->pid) + ".trace.json");
    EXPECT_TRUE(std::filesystem::exists(dir.File("out/nested_example-" +
                                                 std::to_string(capture->pid) +
                                                 ".summary.json")));
  }
}

}  // namespace
}  // namespace spanprof
