// A program linked with spanprof::spanprof loads no shared library that it
// would not load without spanprof: abseil and zlib are linked from their
// static archives and simdjson --as-needed
// (third_party/spanprof_dependency_targets.cmake). Checked on the real
// examples, with ldd and with the loader's own log of a real run.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::FindInPath;
using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;

// The libraries spanprof's analysis uses, by the names their shared objects
// carry.
constexpr std::string_view kForeignLibraries[] = {"libabsl_", "libsimdjson",
                                                  "libz.so"};

// The examples link spanprof::spanprof and nothing else of ours.
const std::vector<std::string> kPrograms = {
    SPANPROF_TEST_BIN_DIR "/nested_example",
    SPANPROF_TEST_BIN_DIR "/indexer_example"};

void ExpectNoForeignLibrary(const std::string& text,
                            const std::string& context) {
  for (const std::string_view library : kForeignLibraries) {
    EXPECT_EQ(text.find(library), std::string::npos)
        << context << " names " << library << ":\n"
        << text;
  }
}

class LinkingTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !SPANPROF_TEST_STATIC_DEPS
    GTEST_SKIP() << "built with SPANPROF_STATIC_DEPS=OFF (the shared build): "
                    "abseil, simdjson and zlib are linked shared by choice";
#endif
#ifdef SPANPROF_TEST_SANITIZED
    // Unoptimised (the sanitizer stage builds at -O0), the session end keeps
    // references into simdjson's inline code that an optimised build drops,
    // so --as-needed keeps the library. What users ship is optimised: the
    // Release stage runs this check.
    GTEST_SKIP() << "an unoptimised sanitizer build links simdjson";
#endif
  }
};

TEST_F(LinkingTest, LddListsNoAbseilSimdjsonOrZlib) {
  const auto ldd = FindInPath("ldd");
  if (!ldd) SPANPROF_SKIP_UNLESS_CI("ldd is not on PATH");
  for (const std::string& program : kPrograms) {
    const auto result = RunProcess({*ldd, program});
    ASSERT_EQ(result.exit_code, 0) << program << "\n" << result.err;
    // ldd did resolve the program's libraries.
    ASSERT_NE(result.out.find("libc.so"), std::string::npos) << result.out;
    ExpectNoForeignLibrary(result.out, "ldd " + program);
  }
}

// The loader's log (LD_DEBUG=files names every object it loads, dlopen
// included) of a real run, with profiling off and with a session that
// writes its trace and summary.
TEST_F(LinkingTest, ARunLoadsNoAbseilSimdjsonOrZlibWithOrWithoutSpanprof) {
  for (const char* enabled : {"\x01unset", "1"}) {
    TempDir dir;
    const auto result = RunProcess(
        {SPANPROF_TEST_BIN_DIR "/nested_example"},
        {{"SPANPROF", enabled}, {"SPANPROF_QUIET", "1"}, {"LD_DEBUG", "files"}},
        dir.path().string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    // The log is there: it names the C library the program loads.
    ASSERT_NE(result.err.find("file=libc.so"), std::string::npos) << result.err;
    ExpectNoForeignLibrary(result.err, std::string("SPANPROF=") +
                                           (enabled[0] == '1' ? "1" : "unset"));
    if (enabled[0] == '1') {
      EXPECT_TRUE(
          std::filesystem::exists(dir.File("build/spanprof-summary.json")));
    }
  }
}

}  // namespace
}  // namespace spanprof
