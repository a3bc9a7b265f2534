// Where the session's table goes (Config::report, SPANPROF_REPORT) and the
// lines about a trace's size: the forecast at session start and the hint
// at session end for a JSON trace too large for the Perfetto UI.
#include "runtime/session/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/spanprof.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"SPANPROF", "SPANPROF_REPORT", "SPANPROF_QUIET"}) {
      unsetenv(name);
    }
  }
  Config MakeConfig() const {
    Config config;
    config.trace_path = dir_.File("t.json");
    config.summary_path = dir_.File("s.json");
    config.stream_path = "off";
    config.signals = false;
    return config;
  }
  TempDir dir_;
};

// What one session wrote on standard output and standard error.
struct Printed {
  std::string out;
  std::string err;
};

Printed RunSession(const Config& config) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Profile(config, "report.root", [] { SPANPROF_SCOPE("report.work"); });
  Printed printed;
  printed.err = ::testing::internal::GetCapturedStderr();
  printed.out = ::testing::internal::GetCapturedStdout();
  return printed;
}

TEST_F(ReportTest, TheTableGoesToStandardErrorByDefault) {
  const Config config = MakeConfig();
  EXPECT_EQ(config.report, "stderr");
  const Printed printed = RunSession(config);
  EXPECT_EQ(printed.out, "");
  EXPECT_THAT(printed.err, HasSubstr("report.work"));
  EXPECT_THAT(printed.err, HasSubstr("Trace: " + dir_.File("t.json")));
}

TEST_F(ReportTest, StdoutAndDashPrintTheTableOnStandardOutput) {
  for (const char* report : {"stdout", "-"}) {
    SCOPED_TRACE(report);
    Config config = MakeConfig();
    config.report = report;
    const Printed printed = RunSession(config);
    EXPECT_THAT(printed.out, HasSubstr("report.work"));
    EXPECT_THAT(printed.out, HasSubstr("Trace: " + dir_.File("t.json")));
    EXPECT_THAT(printed.err, Not(HasSubstr("report.work")));
    // The forecast line stays on stderr.
    EXPECT_THAT(printed.err, HasSubstr("spanprof: recording up to"));
  }
}

TEST_F(ReportTest, OffAndQuietPrintNothing) {
  Config off = MakeConfig();
  off.report = "off";
  Config quiet = MakeConfig();
  quiet.quiet = true;
  quiet.report = "stdout";  // quiet wins
  for (const Config& config : {off, quiet}) {
    const Printed printed = RunSession(config);
    EXPECT_EQ(printed.out, "");
    EXPECT_EQ(printed.err, "");
    EXPECT_TRUE(fs::exists(dir_.File("t.json")));
  }
}

TEST_F(ReportTest, APathGetsTheTableWithItsFieldsExpanded) {
  Config config = MakeConfig();
  config.report = dir_.File("reports/table-%p.txt");
  const Printed printed = RunSession(config);
  EXPECT_EQ(printed.out, "");
  EXPECT_THAT(printed.err, Not(HasSubstr("report.work")));
  const std::string path =
      dir_.File("reports/table-" + std::to_string(getpid()) + ".txt");
  const std::string table = ReadText(path);
  EXPECT_THAT(table, HasSubstr("report.work"));
  EXPECT_THAT(table, HasSubstr("Summary: " + dir_.File("s.json")));
}

TEST_F(ReportTest, ASymbolicLinkIsWrittenThroughAndStays) {
  const std::string target = dir_.File("target.txt");
  const std::string link = dir_.File("link.txt");
  fs::create_symlink(target, link);
  Config config = MakeConfig();
  config.report = link;
  RunSession(config);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_THAT(ReadText(target), HasSubstr("report.work"));
}

TEST_F(ReportTest, AFifoIsWrittenInPlace) {
  const std::string fifo = dir_.File("table.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ::spanprof::testing::OpenFifo reader(fifo);
  ASSERT_TRUE(reader.ok());
  Config config = MakeConfig();
  config.report = fifo;
  RunSession(config);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_THAT(reader.Take(), HasSubstr("report.work"));
}

TEST_F(ReportTest, BadValuesAreRefusedBeforeTheBody) {
  for (const std::string report :
       {"", "stdrr", "STDERR", "1", "table", "t-%x.txt"}) {
    SCOPED_TRACE(report);
    Config config = MakeConfig();
    config.report = report;
    bool ran = false;
    try {
      Profile(config, "report.root", [&] { ran = true; });
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("SPANPROF_REPORT (Config::report) '" +
                                      report + "'"));
    }
    EXPECT_FALSE(ran);
  }
}

TEST_F(ReportTest, ADirectoryOrAnotherOutputIsRefused) {
  fs::create_directories(dir_.File("adir"));
  Config config = MakeConfig();
  config.report = dir_.File("adir");
  EXPECT_THROW(Profile(config, "report.root", [] {}), Error);
  config.report = dir_.File("t.json");
  try {
    Profile(config, "report.root", [] {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("name the same file"));
  }
}

TEST_F(ReportTest, TheEnvironmentVariableIsReadStrictly) {
  setenv("SPANPROF_REPORT", "stdout", 1);
  absl::StatusOr<Config> config = ConfigFromEnvironment();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->report, "stdout");
  setenv("SPANPROF_REPORT", "out/table.txt", 1);
  config = ConfigFromEnvironment();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->report, "out/table.txt");
  for (const char* bad : {"", "stdrr", "no"}) {
    setenv("SPANPROF_REPORT", bad, 1);
    config = ConfigFromEnvironment();
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_THAT(config.status().message(),
                HasSubstr(std::string("SPANPROF_REPORT='") + bad + "'"));
  }
  unsetenv("SPANPROF_REPORT");
}

TEST(TraceSizeForecastTest, StatesTheSizeOfAFullTraceInItsFormat) {
  using internal::TraceSizeForecast;
  const std::string json = TraceSizeForecast("build/t.json", 1'000'000);
  EXPECT_THAT(json, HasSubstr("1000000 spans"));
  EXPECT_THAT(json, HasSubstr("205 MiB of JSON"));  // 215 bytes a span
  EXPECT_THAT(json, HasSubstr("SPANPROF_OUT=x.pftrace: about 25 MiB"));
  EXPECT_THAT(TraceSizeForecast("t.json.gz", 1'000'000),
              HasSubstr("of JSON before gzip"));
  const std::string pftrace = TraceSizeForecast("t.pftrace", 4'000'000);
  EXPECT_THAT(pftrace, HasSubstr("99 MiB"));  // 26 bytes a span
  EXPECT_THAT(pftrace, Not(HasSubstr("JSON")));
  EXPECT_EQ(TraceSizeForecast("off", 1'000'000), "");
}

TEST(LargeTraceHintTest, OnlyAJsonTraceAboveTheThresholdGetsTheHint) {
  using internal::LargeTraceHint;
  const std::string hint = LargeTraceHint("big.json", 2048, 1024);
  EXPECT_THAT(hint, HasSubstr("big.json"));
  EXPECT_THAT(hint, HasSubstr("SPANPROF_OUT=x.pftrace"));
  EXPECT_THAT(hint, HasSubstr("Perfetto UI"));
  EXPECT_EQ(LargeTraceHint("small.json", 1024, 1024), "");
  EXPECT_EQ(LargeTraceHint("big.pftrace", 2048, 1024), "");
  EXPECT_EQ(internal::kLargeJsonTraceBytes, uint64_t{256} << 20);
}

// The real threshold on a real file: a sparse file just over 256 MiB
// takes no disk space.
TEST(LargeTraceHintTest, PrintsForARealFileOverTheDocumentedSize) {
  TempDir dir;
  const std::string big = dir.File("big.json");
  const std::string small = dir.File("small.json");
  for (const auto& [path, size] :
       {std::pair{big, internal::kLargeJsonTraceBytes + 1},
        std::pair{small, internal::kLargeJsonTraceBytes}}) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    close(fd);
  }
  ::testing::internal::CaptureStderr();
  internal::PrintLargeTraceHint(small);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ::testing::internal::CaptureStderr();
  internal::PrintLargeTraceHint(big);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("spanprof: the trace " + big + " is 256 MiB"));
  EXPECT_THAT(err, HasSubstr("SPANPROF_OUT=x.pftrace"));
}

}  // namespace
}  // namespace spanprof
