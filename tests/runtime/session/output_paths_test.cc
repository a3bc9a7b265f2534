// A session's outputs: `off` writes none, the trace and the summary may not
// be one file, a directory that cannot be written is refused before the
// body runs, names that are not UTF-8 are repaired so that the outputs
// validate, and `%n` cannot leave its directory.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/analysis/validate.h"
#include "spanprof/spanprof.h"
#include "spanprof/spanprof_c.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kVariables[] = {
    "SPANPROF",       "SPANPROF_OUT",          "SPANPROF_SUMMARY_OUT",
    "SPANPROF_QUIET", "SPANPROF_PROCESS_NAME", "SPANPROF_TRACEPARENT"};

class OutputPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) unsetenv(name);
    setenv("SPANPROF", "1", 1);
    setenv("SPANPROF_QUIET", "1", 1);
  }
  void TearDown() override {
    for (const char* name : kVariables) unsetenv(name);
  }

  // Runs a session from the environment; true when the body ran.
  static bool RunFromEnvironment() {
    bool ran = false;
    ProfileFromEnvironment("test.root", [&] {
      SPANPROF_SCOPE("work");
      ran = true;
    });
    return ran;
  }

  // The message of the spanprof::Error (not an OutputError) that a session
  // from the environment throws, and whether its body ran.
  static std::string StartError(bool* ran) {
    *ran = false;
    try {
      ProfileFromEnvironment("test.root", [&] { *ran = true; });
    } catch (const OutputError& e) {
      ADD_FAILURE() << "an output error, after the body: " << e.what();
      return e.what();
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected spanprof::Error";
    return "";
  }

  TempDir dir_;
};

TEST_F(OutputPathsTest, OffWritesNoTrace) {
  setenv("SPANPROF_OUT", "off", 1);
  setenv("SPANPROF_SUMMARY_OUT", dir_.File("s.json").c_str(), 1);
  fs::current_path(dir_.path());
  EXPECT_TRUE(RunFromEnvironment());
  EXPECT_TRUE(analysis::ReadSummary(dir_.File("s.json")).ok());
  EXPECT_FALSE(fs::exists(dir_.path() / "off"));
  EXPECT_FALSE(fs::exists(dir_.path() / "build"));
}

TEST_F(OutputPathsTest, OffWritesNoSummaryAndTheTableNamesOnlyTheTrace) {
  Config config;
  config.trace_path = dir_.File("t.json");
  config.summary_path = "off";
  fs::current_path(dir_.path());
  ::testing::internal::CaptureStderr();
  Profile(config, "test.root", [] { SPANPROF_SCOPE("work"); });
  const std::string table = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(analysis::ReadTrace(dir_.File("t.json")).ok());
  EXPECT_FALSE(fs::exists(dir_.path() / "off"));
  EXPECT_THAT(table, HasSubstr("Trace: " + dir_.File("t.json")));
  EXPECT_THAT(table, Not(HasSubstr("Summary:")));
}

TEST_F(OutputPathsTest, TheTableDoesNotNameAnOutputThatFailed) {
  Config config;
  config.trace_path = dir_.File("t.json");
  config.summary_path = dir_.File("s.json");
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(Profile(config, "test.root",
                       [&] { fs::create_directories(config.summary_path); }),
               OutputError);
  const std::string table = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(table, HasSubstr("Trace: " + dir_.File("t.json")));
  EXPECT_THAT(table, Not(HasSubstr("Summary:")));
}

TEST_F(OutputPathsTest, TheSameFileForTraceAndSummaryIsRefused) {
  setenv("SPANPROF_OUT", dir_.File("x.json").c_str(), 1);
  setenv("SPANPROF_SUMMARY_OUT", dir_.File("sub/../x.json").c_str(), 1);
  bool ran = true;
  const std::string message = StartError(&ran);
  EXPECT_FALSE(ran);
  EXPECT_THAT(message, HasSubstr("SPANPROF_OUT"));
  EXPECT_THAT(message, HasSubstr("SPANPROF_SUMMARY_OUT"));
  EXPECT_THAT(message, HasSubstr("name the same file"));
  EXPECT_FALSE(fs::exists(dir_.File("x.json")));

  // Through a link, too.
  fs::create_symlink("x.json", dir_.path() / "link.json");
  setenv("SPANPROF_SUMMARY_OUT", dir_.File("link.json").c_str(), 1);
  EXPECT_THAT(StartError(&ran), HasSubstr("name the same file"));
  EXPECT_FALSE(ran);
}

TEST_F(OutputPathsTest, AnUnwritableDirectoryIsRefusedBeforeTheBody) {
  testing::WriteText(dir_.File("file"), "a file where a directory must be");
  setenv("SPANPROF_OUT", dir_.File("file/trace.json").c_str(), 1);
  setenv("SPANPROF_SUMMARY_OUT", dir_.File("s.json").c_str(), 1);
  bool ran = true;
  const std::string message = StartError(&ran);
  EXPECT_FALSE(ran);
  EXPECT_THAT(message, HasSubstr("SPANPROF_OUT (Config::trace_path)"));
  EXPECT_THAT(message, HasSubstr(dir_.File("file")));
  EXPECT_FALSE(fs::exists(dir_.File("s.json")));
  EXPECT_FALSE(IsRecording());

  // A directory at the output path itself.
  fs::create_directories(dir_.path() / "d.json");
  setenv("SPANPROF_OUT", dir_.File("t.json").c_str(), 1);
  setenv("SPANPROF_SUMMARY_OUT", dir_.File("d.json").c_str(), 1);
  EXPECT_THAT(StartError(&ran), HasSubstr("SPANPROF_SUMMARY_OUT"));
  EXPECT_FALSE(ran);
}

TEST_F(OutputPathsTest, ADirectoryAboveTheStampFieldIsChecked) {
  testing::WriteText(dir_.File("file"), "x");
  setenv("SPANPROF_OUT", dir_.File("file/%t/trace.json").c_str(), 1);
  setenv("SPANPROF_SUMMARY_OUT", dir_.File("s.json").c_str(), 1);
  bool ran = true;
  EXPECT_THAT(StartError(&ran), HasSubstr(dir_.File("file")));
  EXPECT_FALSE(ran);

  setenv("SPANPROF_OUT", dir_.File("ok/%t/trace.json").c_str(), 1);
  EXPECT_TRUE(RunFromEnvironment());
  size_t traces = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir_.File("ok"))) {
    traces += entry.path().filename() == "trace.json" ? 1 : 0;
  }
  EXPECT_EQ(traces, 1u);
}

TEST_F(OutputPathsTest, ACharacterDeviceIsWrittenInPlace) {
  const std::string null = dir_.File("null");
  if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    SPANPROF_SKIP_UNLESS_CI(
        "mknod is not permitted here: " << std::strerror(errno));
  }
  // Both outputs on one character device are allowed: it keeps nothing.
  setenv("SPANPROF_OUT", null.c_str(), 1);
  setenv("SPANPROF_SUMMARY_OUT", null.c_str(), 1);
  EXPECT_TRUE(RunFromEnvironment());
  EXPECT_TRUE(fs::is_character_file(null));
}

TEST_F(OutputPathsTest, NamesThatAreNotUtf8AreRepaired) {
  setenv("SPANPROF_PROCESS_NAME", "\xff\xfe", 1);
  setenv("SPANPROF_OUT", dir_.File("t.json").c_str(), 1);
  setenv("SPANPROF_SUMMARY_OUT", dir_.File("s.json").c_str(), 1);
  ProfileFromEnvironment("test.root", [] {
    SetThreadName("thread\xc3");
    SPANPROF_SCOPE(
        "bad\xff"
        "name");
    spanprof_site* site =
        spanprof_site_get("c\xe2\x82", "ph\xff", nullptr, nullptr);
    spanprof_end(spanprof_begin(site));
  });
  for (const char* name : {"t.json", "s.json"}) {
    const absl::StatusOr<std::string> text =
        analysis::ReadFile(dir_.File(name));
    ASSERT_TRUE(text.ok());
    const analysis::ValidationReport report =
        analysis::ValidateArtifact(*text, name);
    EXPECT_TRUE(report.problems.empty())
        << name << ": " << ::testing::PrintToString(report.problems);
  }
  const absl::StatusOr<Capture> capture =
      analysis::ReadTrace(dir_.File("t.json"));
  ASSERT_TRUE(capture.ok()) << capture.status();
  EXPECT_EQ(capture->process_name, "\xEF\xBF\xBD\xEF\xBF\xBD");
  bool bad_name = false;
  bool c_name = false;
  for (const Site& site : capture->sites) {
    bad_name |= site.name == "bad\xEF\xBF\xBDname";
    c_name |= site.name == "c\xEF\xBF\xBD\xEF\xBF\xBD" &&
              site.phase == "ph\xEF\xBF\xBD";
  }
  EXPECT_TRUE(bad_name);
  EXPECT_TRUE(c_name);
  EXPECT_TRUE(analysis::ReadSummary(dir_.File("s.json")).ok());
}

TEST_F(OutputPathsTest, TheProcessNameCannotLeaveItsDirectory) {
  setenv("SPANPROF_PROCESS_NAME", "..", 1);
  setenv("SPANPROF_OUT", dir_.File("out/%n/trace.json").c_str(), 1);
  setenv("SPANPROF_SUMMARY_OUT", dir_.File("out/%n-summary.json").c_str(), 1);
  EXPECT_TRUE(RunFromEnvironment());
  EXPECT_TRUE(fs::exists(dir_.File("out/__/trace.json")));
  EXPECT_TRUE(fs::exists(dir_.File("out/__-summary.json")));
  EXPECT_FALSE(fs::exists(dir_.File("trace.json")));

  setenv("SPANPROF_PROCESS_NAME", "a/../../b", 1);
  EXPECT_TRUE(RunFromEnvironment());
  EXPECT_TRUE(fs::exists(dir_.File("out/a_.._.._b/trace.json")));
}

}  // namespace
}  // namespace spanprof
