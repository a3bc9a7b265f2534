// The real-viewer check: a trace written by the real nested_example loads in
// speedscope (the npm package) in headless Chromium, and its spans appear.
//
// Needs `chromium` (or $SPANPROF_CHROMIUM), `node`, and speedscope installed
// by `scripts/install-viewer` into $SPANPROF_VIEWER_DIR or
// <source>/build/viewer; skipped, saying which is missing, otherwise (and
// failed under CI=true). The
// screenshot of the loaded trace goes to <build>/viewer/speedscope-nested.png.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::FindInPath;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::RunProcess;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::ToolInstallDir;
using ::testing::HasSubstr;

std::optional<std::string> FindChromium() {
  if (const char* env = std::getenv("SPANPROF_CHROMIUM"); env && *env) {
    return std::string(env);
  }
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    if (std::optional<std::string> found = FindInPath(name)) return found;
  }
  return std::nullopt;
}

fs::path SpeedscopeDir() {
  return ToolInstallDir("SPANPROF_VIEWER_DIR", "viewer") / "node_modules" /
         "speedscope";
}

// Finds the tools (skipping the test when one is missing) and records a
// real trace with nested_example.
class ViewerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    node_ = FindInPath("node");
    speedscope_ = SpeedscopeDir();
    std::string missing;
    if (!chromium_) missing += " chromium (or $SPANPROF_CHROMIUM)";
    if (!node_) missing += " node";
    if (!fs::exists(speedscope_ / "dist" / "release" / "index.html")) {
      missing += " speedscope (looked in " + speedscope_.string() + ")";
    }
    if (!missing.empty()) {
      SPANPROF_SKIP_UNLESS_CI(
          "real-viewer check skipped: not installed:"
          << missing << ". Run scripts/install-viewer to install them.");
    }
    const std::string example = SPANPROF_TEST_BIN_DIR "/nested_example";
    if (!fs::exists(example)) {
      SPANPROF_SKIP_UNLESS_CI(
          "real-viewer check skipped: "
          << example << " is not built (SPANPROF_BUILD_EXAMPLES=OFF?)");
    }
    trace_ = dir_.File("spanprof-trace.json");
    const ProcessResult run = RunProcess(
        {example},
        {{"SPANPROF", "1"},
         {"SPANPROF_OUT", trace_},
         {"SPANPROF_SUMMARY_OUT", dir_.File("spanprof-summary.json")},
         {"SPANPROF_QUIET", "1"}});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    ASSERT_TRUE(fs::exists(trace_));
  }

  // Opens `file` in speedscope; `args` are the checks. Returns the script's
  // result; the screenshot goes to <build>/viewer/`screenshot`.
  ProcessResult Check(const std::string& file, const std::string& screenshot,
                      const std::vector<std::string>& args) {
    const fs::path shots =
        fs::path(SPANPROF_TEST_BIN_DIR).parent_path() / "viewer";
    fs::create_directories(shots);
    screenshot_ = shots / screenshot;
    fs::remove(screenshot_);
    std::vector<std::string> argv = {*node_,
                                     SPANPROF_TEST_SOURCE_DIR
                                     "/tests/e2e/viewer/check_speedscope.mjs",
                                     "--speedscope",
                                     speedscope_.string(),
                                     "--chromium",
                                     *chromium_,
                                     "--trace",
                                     file,
                                     "--screenshot",
                                     screenshot_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {{"HOME", dir_.path().string()}});
  }

  // The screenshot is a real PNG of the flame chart, for a person to look at.
  void ExpectScreenshot() {
    ASSERT_TRUE(fs::exists(screenshot_));
    const std::string png = ReadText(screenshot_.string());
    EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n");
    EXPECT_GT(png.size(), 10'000u);
    std::cout << "speedscope screenshot: " << screenshot_.string() << "\n";
  }

  TempDir dir_;
  std::optional<std::string> chromium_;
  std::optional<std::string> node_;
  fs::path speedscope_;
  std::string trace_;
  fs::path screenshot_;
};

TEST_F(ViewerTest, NestedExampleTraceShowsItsSpansInSpeedscope) {
  const ProcessResult check =
      Check(trace_, "speedscope-nested.png",
            {"--expect", "example.nested-spans", "--expect", "input.load",
             "--expect", "model.forward"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  for (const char* name :
       {"example.nested-spans", "input.load", "model.forward"}) {
    EXPECT_THAT(check.out, HasSubstr(std::string("found ") + name));
  }
  ExpectScreenshot();
}

// speedscope names a Chrome trace event's frame by its name *and* its args,
// so the trace's spans (each with its own span_id) stay separate frames.
// `spanprof folded` is the input for its aggregate views: each name is one
// frame there.
TEST_F(ViewerTest, FoldedStacksAggregateEachNameInSpeedscope) {
  const std::string folded = dir_.File("spanprof.folded");
  const ProcessResult fold = RunProcess(
      {SPANPROF_TEST_BIN_DIR "/spanprof", "folded", trace_, "-o", folded});
  ASSERT_EQ(fold.exit_code, 0) << fold.err;
  const ProcessResult check =
      Check(folded, "speedscope-nested-folded.png",
            {"--expect-once", "example.nested-spans", "--expect-once",
             "input.load", "--expect-once", "model.forward"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_THAT(check.out, HasSubstr("found once model.forward"));
  ExpectScreenshot();
}

}  // namespace
}  // namespace spanprof
