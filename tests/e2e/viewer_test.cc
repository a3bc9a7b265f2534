// The real-viewer check: a trace written by the real nested_example loads in
// speedscope (the npm package) in headless Chromium, and its spans appear.
//
// Needs `chromium` (or $SPANPROF_CHROMIUM), `node`, and speedscope installed
// by `scripts/install-viewer` into $SPANPROF_VIEWER_DIR or
// <source>/build/viewer; skipped, saying which is missing, otherwise. The
// screenshot of the loaded trace goes to <build>/viewer/speedscope-nested.png.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::RunProcess;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;

// The first executable called `name` on $PATH.
std::optional<std::string> FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

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
  if (const char* env = std::getenv("SPANPROF_VIEWER_DIR"); env && *env) {
    return fs::path(env) / "node_modules" / "speedscope";
  }
  return fs::path(SPANPROF_TEST_SOURCE_DIR) / "build" / "viewer" /
         "node_modules" / "speedscope";
}

TEST(ViewerTest, NestedExampleTraceShowsItsSpansInSpeedscope) {
  const std::optional<std::string> chromium = FindChromium();
  const std::optional<std::string> node = FindInPath("node");
  const fs::path speedscope = SpeedscopeDir();
  std::string missing;
  if (!chromium) missing += " chromium (or $SPANPROF_CHROMIUM)";
  if (!node) missing += " node";
  if (!fs::exists(speedscope / "dist" / "release" / "index.html")) {
    missing += " speedscope (looked in " + speedscope.string() + ")";
  }
  if (!missing.empty()) {
    GTEST_SKIP() << "real-viewer check skipped: not installed:" << missing
                 << ". Run scripts/install-viewer to install them.";
  }
  const std::string example = SPANPROF_TEST_BIN_DIR "/nested_example";
  if (!fs::exists(example)) {
    GTEST_SKIP() << "real-viewer check skipped: " << example
                 << " is not built (SPANPROF_BUILD_EXAMPLES=OFF?)";
  }

  TempDir dir;
  const std::string trace = dir.File("spanprof-trace.json");
  const ProcessResult run = RunProcess(
      {example}, {{"SPANPROF", "1"},
                  {"SPANPROF_OUT", trace},
                  {"SPANPROF_SUMMARY_OUT", dir.File("spanprof-summary.json")},
                  {"SPANPROF_QUIET", "1"}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(fs::exists(trace));

  const fs::path shots =
      fs::path(SPANPROF_TEST_BIN_DIR).parent_path() / "viewer";
  fs::create_directories(shots);
  const fs::path screenshot = shots / "speedscope-nested.png";
  fs::remove(screenshot);
  const ProcessResult check = RunProcess(
      {*node, SPANPROF_TEST_SOURCE_DIR "/tests/e2e/viewer/check_speedscope.mjs",
       "--speedscope", speedscope.string(), "--chromium", *chromium, "--trace",
       trace, "--screenshot", screenshot.string(), "--expect",
       "example.nested-spans", "--expect", "input.load", "--expect",
       "model.forward"},
      {{"HOME", dir.path().string()}});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  for (const char* name :
       {"example.nested-spans", "input.load", "model.forward"}) {
    EXPECT_THAT(check.out, HasSubstr(std::string("found ") + name));
  }
  // A real PNG of the flame chart, for a person to look at.
  ASSERT_TRUE(fs::exists(screenshot)) << check.out << check.err;
  const std::string png = ReadText(screenshot.string());
  EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n");
  EXPECT_GT(png.size(), 10'000u);
  std::cout << "speedscope screenshot: " << screenshot.string() << "\n";
}

}  // namespace
}  // namespace spanprof
