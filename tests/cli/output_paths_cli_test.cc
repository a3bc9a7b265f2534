// End to end: where the real `spanprof` binary writes its outputs. `-` is
// standard output for every output flag; an output that is one of the
// command's inputs (or another of its outputs) is refused with exit 2 before
// any work; a FIFO or character device at the output path is written in
// place; extensions choose the format in any case; a byte order mark does
// not stop the readers.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/captures.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

// A trace of one process (`pid`), written to `dir`/`name`.
std::string WriteTraceOf(const TempDir& dir, const std::string& name,
                         int64_t pid) {
  Capture capture = testing::RichCapture();
  capture.pid = pid;
  capture.process_name = "p" + std::to_string(pid);
  capture.host = "h";
  capture.wall_clock_anchor_ns += pid * 1000;
  capture.span_id_seed = static_cast<uint64_t>(pid);
  const std::string path = dir.File(name);
  EXPECT_TRUE(analysis::WriteTrace(capture, path).ok());
  return path;
}

std::string WriteSummaryOf(const TempDir& dir, const std::string& name) {
  const std::string path = dir.File(name);
  EXPECT_TRUE(
      analysis::WriteSummary(analysis::Summarize(testing::RichCapture()), path)
          .ok());
  return path;
}

TEST(OutputPathsCliTest, DashIsStandardOutput) {
  TempDir dir;
  const std::string trace = WriteTraceOf(dir, "t.json", 1);
  ProcessResult r = Spanprof({"summarize", trace, "-o", "-"}, {}, dir.File(""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(analysis::ParseSummary(r.out, "stdout").ok()) << r.out;
  EXPECT_FALSE(fs::exists(dir.path() / "-"));

  const std::string other = WriteTraceOf(dir, "u.json", 2);
  r = Spanprof(
      {"merge", trace, other, "-o", "-", "--summary", dir.File("s.json")}, {},
      dir.File(""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<Capture> merged = analysis::ParseTrace(r.out, "stdout");
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_THAT(r.err, HasSubstr("Merged 2 captures"));  // not on stdout
  EXPECT_FALSE(fs::exists(dir.path() / "-"));

  r = Spanprof({"export", "otlp", trace, "-o", "-"}, {}, dir.File(""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"resourceSpans\""));
  EXPECT_THAT(r.out, Not(HasSubstr("OTLP/JSON:")));
  EXPECT_FALSE(fs::exists(dir.path() / "-"));
}

TEST(OutputPathsCliTest, CompareJsonDashPutsTheTableOnStderr) {
  TempDir dir;
  const std::string base = WriteSummaryOf(dir, "base.json");
  const std::string cand = WriteSummaryOf(dir, "cand.json");
  const ProcessResult r =
      Spanprof({"compare", base, cand, "--json", "-"}, {}, dir.File(""));
  ASSERT_LE(r.exit_code, 1) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.front(), '{') << r.out;
  EXPECT_THAT(r.err, HasSubstr("app.run"));  // the table
  EXPECT_FALSE(fs::exists(dir.path() / "-"));
}

TEST(OutputPathsCliTest, AnOutputThatIsAnInputIsRefused) {
  TempDir dir;
  const std::string trace = WriteTraceOf(dir, "t.json", 1);
  const std::string other = WriteTraceOf(dir, "u.json", 2);
  const std::string base = WriteSummaryOf(dir, "base.json");
  const std::string cand = WriteSummaryOf(dir, "cand.json");
  const std::string trace_before = ReadText(trace);
  const std::string base_before = ReadText(base);
  fs::create_symlink("t.json", dir.path() / "link.json");

  const std::vector<std::vector<std::string>> refused = {
      {"summarize", trace, "-o", trace},
      {"summarize", trace, "-o", dir.File("link.json")},
      {"summarize", trace, "-o", dir.File("sub/../t.json")},
      {"folded", trace, "-o", trace},
      {"merge", trace, other, "-o", trace},
      {"merge", trace, other, "-o", dir.File("m.json"), "--summary", trace},
      {"export", "otlp", trace, "-o", trace},
      {"compare", base, cand, "--json", base},
      {"plot", "timeline", trace, "-o", trace},
      {"scaling", trace, "--json", trace},
  };
  for (const std::vector<std::string>& args : refused) {
    const ProcessResult r = Spanprof(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args.back() << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("refusing to overwrite an input")) << args[0];
    EXPECT_THAT(r.err, HasSubstr(args.back())) << args[0];
  }
  EXPECT_EQ(ReadText(trace), trace_before);
  EXPECT_EQ(ReadText(base), base_before);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.json"));
  EXPECT_FALSE(fs::exists(dir.path() / "m.json"));
}

TEST(OutputPathsCliTest, TwoOutputsOnOneFileAreRefused) {
  TempDir dir;
  const std::string trace = WriteTraceOf(dir, "t.json", 1);
  const std::string other = WriteTraceOf(dir, "u.json", 2);
  const std::string out = dir.File("out.json");
  const ProcessResult r =
      Spanprof({"merge", trace, other, "-o", out, "--summary", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("name the same file"));
  EXPECT_FALSE(fs::exists(out));
}

TEST(OutputPathsCliTest, AFifoIsWrittenInPlace) {
  TempDir dir;
  const std::string trace = WriteTraceOf(dir, "t.json", 1);
  const std::string fifo = dir.File("summary.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  testing::OpenFifo reader(fifo);
  ASSERT_TRUE(reader.ok());
  const ProcessResult r = Spanprof({"summarize", trace, "-o", fifo});
  const std::string received = reader.Take();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(analysis::ParseSummary(received, fifo).ok()) << received;
  EXPECT_TRUE(fs::is_fifo(fifo)) << "the FIFO was replaced";
}

TEST(OutputPathsCliTest, ACharacterDeviceStaysADevice) {
  TempDir dir;
  const std::string trace = WriteTraceOf(dir, "t.json", 1);
  const std::string null = dir.File("null");
  if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    SPANPROF_SKIP_UNLESS_CI(
        "mknod is not permitted here: " << std::strerror(errno));
  }
  for (const char* command : {"summarize", "folded"}) {
    const ProcessResult r = Spanprof({command, trace, "-o", null});
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    struct stat info {};
    ASSERT_EQ(::lstat(null.c_str(), &info), 0);
    EXPECT_TRUE(S_ISCHR(info.st_mode)) << command << " replaced the device";
  }
  const ProcessResult r =
      Spanprof({"merge", trace, WriteTraceOf(dir, "u.json", 2), "-o", null});
  EXPECT_EQ(r.exit_code, 2);  // not a trace extension
  EXPECT_TRUE(fs::is_character_file(null));
}

TEST(OutputPathsCliTest, ExtensionsInCapitalsChooseTheFormat) {
  TempDir dir;
  const std::string trace = WriteTraceOf(dir, "t.json", 1);
  const std::string other = WriteTraceOf(dir, "u.json", 2);
  const std::string out = dir.File("MERGED.PFTRACE");
  const ProcessResult r = Spanprof({"merge", trace, other, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(analysis::LooksLikePerfettoTrace(ReadText(out)));
}

TEST(OutputPathsCliTest, AByteOrderMarkIsSkipped) {
  TempDir dir;
  const std::string summary = dir.File("bom.json");
  testing::WriteText(
      summary, "\xEF\xBB\xBF" + analysis::SummaryToJson(analysis::Summarize(
                                    testing::RichCapture())));
  const std::string trace = dir.File("bom-trace.json");
  testing::WriteText(
      trace, "\xEF\xBB\xBF" + analysis::TraceToJson(testing::RichCapture()));
  for (const std::string& path : {summary, trace}) {
    const ProcessResult r = Spanprof({"validate", path});
    EXPECT_EQ(r.exit_code, 0) << path << ": " << r.out << r.err;
  }
}

}  // namespace
}  // namespace spanprof
