// The figures in docs/ are the real ones: `scripts/regenerate-figures`
// redraws docs/figures/*.svg from the checked-in captures in docs/captures/
// with the real `spanprof plot`, and the result must equal the checked-in
// files byte for byte.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::RunProcess;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;

const fs::path kSource = SPANPROF_TEST_SOURCE_DIR;

std::set<std::string> SvgFiles(const fs::path& dir) {
  std::set<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".svg") {
      out.insert(entry.path().filename().string());
    }
  }
  return out;
}

// "line N: expected ... got ..." for the first differing line.
std::string FirstDifference(const std::string& expected,
                            const std::string& actual) {
  size_t line = 1;
  size_t start = 0;
  const size_t n = std::min(expected.size(), actual.size());
  for (size_t i = 0; i < n; ++i) {
    if (expected[i] != actual[i]) {
      const size_t end_e = expected.find('\n', i);
      const size_t end_a = actual.find('\n', i);
      return "line " + std::to_string(line) + ":\n  checked in: " +
             expected.substr(start, end_e - start).substr(0, 300) +
             "\n  regenerated: " +
             actual.substr(start, end_a - start).substr(0, 300);
    }
    if (expected[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return "one is a prefix of the other (" + std::to_string(expected.size()) +
         " vs " + std::to_string(actual.size()) + " bytes)";
}

TEST(FiguresTest, CheckedInFiguresAreRegeneratedByteForByte) {
  if (!fs::is_directory(kSource / "docs" / "captures")) {
    SPANPROF_SKIP_UNLESS_CI(
        "docs/captures/ is not there: no captures to regenerate "
        "docs/figures/ from");
  }
  TempDir out;
  const ProcessResult r = RunProcess(
      {"/bin/bash", (kSource / "scripts" / "regenerate-figures").string(),
       SPANPROF_TEST_BIN_DIR "/spanprof", out.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  const std::set<std::string> checked_in =
      SvgFiles(kSource / "docs" / "figures");
  const std::set<std::string> regenerated = SvgFiles(out.path());
  ASSERT_FALSE(regenerated.empty());
  EXPECT_EQ(checked_in, regenerated) << "docs/figures/ must hold exactly the "
                                        "figures scripts/regenerate-figures "
                                        "draws";
  for (const std::string& name : regenerated) {
    const std::string expected =
        ReadText((kSource / "docs" / "figures" / name).string());
    const std::string actual = ReadText(out.File(name));
    EXPECT_TRUE(expected == actual)
        << "docs/figures/" << name
        << " differs from what `spanprof plot` draws "
        << "from docs/captures/ now; " << FirstDifference(expected, actual)
        << "\nIf the change is intended, run scripts/regenerate-figures and "
           "commit docs/figures/.";
  }
}

TEST(FiguresTest, TheGuideShowsEveryFigure) {
  const fs::path guide = kSource / "docs" / "guide.md";
  if (!fs::exists(guide)) {
    SPANPROF_SKIP_UNLESS_CI("docs/guide.md is not there");
  }
  const std::string text = ReadText(guide.string());
  const std::set<std::string> figures = SvgFiles(kSource / "docs" / "figures");
  EXPECT_FALSE(figures.empty());
  for (const std::string& name : figures) {
    EXPECT_THAT(text, HasSubstr("figures/" + name)) << "docs/guide.md";
  }
}

}  // namespace
}  // namespace spanprof
