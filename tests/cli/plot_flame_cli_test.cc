// `spanprof plot flame` end to end: the real binary on real trace files and
// directories of runs, the figure checked as XML and against the library.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/plot_flame.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/captures.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"
#include "tests/testing/xml_check.h"

namespace spanprof {
namespace {

using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadParseCapture;
using ::spanprof::testing::ReadSvg;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteText;
using ::testing::HasSubstr;

// main runs app.run, which reads on main and parses on a pool thread.
Capture Sample(int64_t parse_ns, int64_t pid) {
  Capture capture = ReadParseCapture(parse_ns);
  capture.process_name = "flame-cli";
  capture.pid = pid;
  return capture;
}

class PlotFlameCliTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.File(name); }

  std::string WriteSample(const std::string& name, int64_t parse_ns,
                          int64_t pid = 1) {
    const std::string path = Path(name);
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    EXPECT_TRUE(analysis::WriteTrace(Sample(parse_ns, pid), path).ok());
    return path;
  }

  TempDir dir_;
};

TEST_F(PlotFlameCliTest, WritesTheLibrarysFlameGraph) {
  const std::string trace = WriteSample("t.json", 3'000'000);
  const std::string out = Path("figs/flame.svg");
  const ProcessResult r = Spanprof({"plot", "flame", trace, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = ReadSvg(out);
  absl::StatusOr<Capture> capture = analysis::ReadTrace(trace);
  ASSERT_TRUE(capture.ok()) << capture.status();
  EXPECT_EQ(
      svg, analysis::PlotFlame(analysis::BuildFlameGraph({&*capture}, {}), {}));
  // The cross-thread parse sits under app.run in main's tree.
  EXPECT_THAT(svg, HasSubstr("<title>main;app.run;file.parse \xE2\x80\x94"));
  EXPECT_THAT(svg, HasSubstr("<g class=\"frame\">"));

  const std::string icicle = Path("icicle.svg");
  ASSERT_EQ(Spanprof({"plot", "flame", trace, "--icicle", "--merge-threads",
                      "-o", icicle})
                .exit_code,
            0);
  EXPECT_THAT(ReadSvg(icicle), HasSubstr("Icicle graph"));
  EXPECT_THAT(ReadText(icicle), HasSubstr("<title>app.run;file.parse "));
}

TEST_F(PlotFlameCliTest, DiffsTwoTracesAndTwoDirectoriesOfRuns) {
  const std::string base = WriteSample("base.json", 3'000'000);
  const std::string cand = WriteSample("cand.json", 6'000'000);
  const std::string out = Path("diff.svg");
  ProcessResult r = Spanprof(
      {"plot", "flame", "--diff", base, cand, "--merge-threads", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string svg = ReadSvg(out);
  EXPECT_THAT(svg, HasSubstr("1 baseline run, 1 candidate run"));
  // file.parse: +3 ms of self time, the only change: full red.
  EXPECT_THAT(svg, HasSubstr("(+3.00 ms)</title><rect"));
  EXPECT_THAT(svg, HasSubstr("fill=\"#ff2d2d\""));

  // Directories: three runs a side, traces among summaries and logs.
  const int64_t jitter[] = {0, 20'000, -15'000};
  for (int i = 0; i < 3; ++i) {
    WriteSample("runs/base/run-" + std::to_string(i) + ".trace.json",
                3'000'000 + jitter[i], i + 1);
    // As `spanprof run --trace` lays them out: in DIR/traces/.
    WriteSample("runs/cand/traces/run-" + std::to_string(i) + ".trace.json",
                6'000'000 + jitter[i], i + 1);
  }
  ASSERT_TRUE(analysis::WriteSummary(analysis::Summarize(Sample(1, 1)),
                                     Path("runs/base/run-0.summary.json"))
                  .ok());
  WriteText(Path("runs/base/stdout.log"), "hello");
  r = Spanprof({"plot", "flame", "--diff", Path("runs/base"), Path("runs/cand"),
                "--merge-threads", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("run-0.summary.json: not a trace, skipped"));
  EXPECT_THAT(r.err, HasSubstr("stdout.log: not a trace, skipped"));
  svg = ReadSvg(out);
  EXPECT_THAT(svg, HasSubstr("3 baseline runs, 3 candidate runs"));
  EXPECT_THAT(svg, HasSubstr("; regressed</title>"));
}

TEST_F(PlotFlameCliTest, BadArgumentsExitTwoNamingThem) {
  const std::string trace = WriteSample("t.json", 3'000'000);
  ProcessResult r = Spanprof({"plot", "flame", "--diff", trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("BASE and CAND"));
  r = Spanprof({"plot", "flame"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing argument TRACE"));
  r = Spanprof({"plot", "flame", Path("absent.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("absent.json"));
  std::filesystem::create_directories(Path("empty"));
  r = Spanprof({"plot", "flame", "--diff", Path("empty"), trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no trace in the directory"));
  r = Spanprof({"plot", "flame", trace, "-o", trace});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace spanprof
