// End to end, the real `spanprof` binary on summaries with named counters and
// tail shapes: compare --metric counter:NAME, the report's heavy-tail mark,
// and version 1 summaries still read.
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::CounterArg;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;

// run > 40 x item (half 1 us, half 1 ms: a heavy tail), each item counting
// `bytes_per_item` bytes; run counts one alloc.
Capture Counted(int64_t bytes_per_item) {
  CaptureBuilder b;
  const uint32_t t = b.Thread(1, "main");
  const uint32_t run = b.Site("run");
  const uint32_t item = b.Site("item.parse", "parse");
  b.Add(1, 0, run, t, 0, 100'000'000);
  b.Args(1, {CounterArg("allocs", 1)});
  int64_t at = 10;
  for (uint64_t id = 2; id < 42; ++id) {
    const int64_t d = id % 2 == 0 ? 1'000 : 1'000'000;
    b.Add(id, 1, item, t, at, at + d);
    b.Args(id, {CounterArg("bytes", bytes_per_item)});
    at += d + 10;
  }
  return b.Build();
}

std::string V1Summary() {
  return std::string(SPANPROF_TEST_SOURCE_DIR) +
         "/tests/analysis/summary/testdata/v1-baseline-summary.json";
}

class SummaryV2CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(analysis::WriteSummary(analysis::Summarize(Counted(100)),
                                       Path("base.json"))
                    .ok());
    ASSERT_TRUE(analysis::WriteSummary(analysis::Summarize(Counted(150)),
                                       Path("cand.json"))
                    .ok());
    Capture dropped = Counted(100);
    dropped.dropped_args = 2;
    ASSERT_TRUE(analysis::WriteSummary(analysis::Summarize(dropped),
                                       Path("dropped.json"))
                    .ok());
  }

  std::string Path(const std::string& name) const { return dir_.File(name); }

  TempDir dir_;
};

TEST_F(SummaryV2CliTest, CompareOnACounterFindsTheRegression) {
  ProcessResult r =
      Spanprof({"compare", Path("base.json"), Path("cand.json"), "--metric",
                "counter:bytes", "--json", Path("cmp.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("metric counter:bytes"));
  // item.parse: 40 x 100 -> 40 x 150; run: the same, inclusive.
  EXPECT_THAT(r.out, HasSubstr("4000"));
  EXPECT_THAT(r.out, HasSubstr("6000"));
  EXPECT_THAT(r.out, HasSubstr("+2000"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(Path("cmp.json")).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["metric"]), "counter:bytes");
  EXPECT_EQ(int64_t(doc["counts"]["regressed"]), 2);

  // The same runs on another counter, unchanged: pass.
  r = Spanprof({"compare", Path("base.json"), Path("cand.json"), "--metric",
                "counter:allocs"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Within the tolerance: pass.
  r = Spanprof({"compare", Path("base.json"), Path("cand.json"), "--metric",
                "counter:bytes", "--absolute-tolerance", "2000"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(SummaryV2CliTest, CompareOnAnUnknownCounterIsAUsageError) {
  ProcessResult r = Spanprof({"compare", Path("base.json"), Path("cand.json"),
                              "--metric", "counter:byte"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--metric counter:byte"));
  EXPECT_THAT(r.err, HasSubstr("\"byte\""));
  EXPECT_THAT(r.err, HasSubstr("their counters: allocs, bytes"));

  r = Spanprof({"compare", Path("base.json"), Path("cand.json"), "--metric",
                "counter:"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--metric"));
  EXPECT_THAT(r.err, HasSubstr("counter:NAME"));

  // A version 1 summary has no counters.
  r = Spanprof(
      {"compare", V1Summary(), V1Summary(), "--metric", "counter:bytes"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("they have no counters"));
}

TEST_F(SummaryV2CliTest, DroppedArgsMakeASummaryIncomplete) {
  ProcessResult r =
      Spanprof({"compare", Path("dropped.json"), Path("cand.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("2 dropped args or counts"));
  r = Spanprof({"compare", Path("dropped.json"), Path("cand.json"),
                "--allow-incomplete"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Spanprof({"report", Path("dropped.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("warning: 2 span arguments or counter counts "
                               "dropped"));
}

TEST_F(SummaryV2CliTest, ValidateAcceptsVersion2AndNamesABrokenCounter) {
  ProcessResult r = Spanprof({"validate", Path("base.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  absl::StatusOr<std::string> text = analysis::ReadFile(Path("base.json"));
  ASSERT_TRUE(text.ok());
  const std::string from = "\"total\": 4000,\n          \"self\": 4000";
  const size_t at = text->find(from);
  ASSERT_NE(at, std::string::npos) << *text;
  std::string broken = *text;
  broken.replace(at, from.size(), "\"total\": 4000,\n          \"self\": 4001");
  testing::WriteText(Path("broken.json"), broken);
  r = Spanprof({"validate", Path("broken.json")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out + r.err, HasSubstr("self (4001) > total (4000)"));
}

TEST_F(SummaryV2CliTest, ReportMarksTheHeavyTailAndShowsCounters) {
  ProcessResult r = Spanprof({"report", Path("base.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("%     bytes    allocs  Tail\n"));
  EXPECT_THAT(r.out, HasSubstr(" heavy\n"));
  EXPECT_THAT(r.out, HasSubstr("heavy tail: 1 row (first: item.parse "
                               "[phase=parse], p99 = 1000.0x median)"));
  EXPECT_THAT(r.out, HasSubstr("spanprof scaling TRACE"));
}

TEST_F(SummaryV2CliTest, Version1SummariesStillWork) {
  ProcessResult r = Spanprof({"validate", V1Summary()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Spanprof({"report", V1Summary()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("heavy")));
  // Against a version 2 summary that has the counter: its keys are new.
  r = Spanprof({"compare", V1Summary(), Path("base.json"), "--metric",
                "counter:bytes", "--fail-on-new"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("new"));
}

}  // namespace
}  // namespace spanprof
