// `spanprof export otlp`, run as the real binary.
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/otlp.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::WriteText;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Capture SmallCapture(int64_t pid) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(static_cast<uint64_t>(pid), "main");
  const uint32_t worker = b.Thread(static_cast<uint64_t>(pid) + 1, "worker");
  b.Add(1, 0, b.Site("app.run"), main, 0, 10'000);
  b.Add(2, 1, b.Site("app.load", "input"), main, 100, 2'000);
  b.Add(3, 1, b.Site("pool.task"), worker, 200, 9'000);
  b.capture().pid = pid;
  b.capture().host = "host-a";
  b.capture().wall_clock_anchor_ns = 1'750'000'000'000'000'000 + pid;
  return b.Build();
}

// The `spans` arrays of an export, parsed strictly by simdjson.
size_t CountSpans(const std::string& json, size_t* resources = nullptr) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  EXPECT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  size_t spans = 0;
  size_t count = 0;
  for (simdjson::dom::object rs : root["resourceSpans"].get_array()) {
    ++count;
    for (simdjson::dom::object ss : rs["scopeSpans"].get_array()) {
      spans += ss["spans"].get_array().size();
    }
  }
  if (resources != nullptr) *resources = count;
  return spans;
}

class ExportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(analysis::WriteTrace(SmallCapture(100), Path("a.json")).ok());
    ASSERT_TRUE(
        analysis::WriteTrace(SmallCapture(200), Path("b.pftrace")).ok());
  }
  std::string Path(const std::string& name) const { return dir_.File(name); }

  TempDir dir_;
};

TEST_F(ExportCliTest, WritesTheRequestToTheOutputFile) {
  const std::string out = Path("out/otlp.json");
  const ProcessResult r =
      Spanprof({"export", "otlp", Path("a.json"), "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 spans of 1 capture"));
  EXPECT_THAT(r.out, HasSubstr(out));
  const std::string json = ReadText(out);
  EXPECT_EQ(CountSpans(json), 3u);
  // The times are the anchor plus session time, as decimal strings.
  EXPECT_THAT(json, HasSubstr("\"startTimeUnixNano\":\"1750000000000000200\""));
  EXPECT_THAT(json,
              HasSubstr("\"process.pid\",\"value\":{\"intValue\":\"100\""));
}

TEST_F(ExportCliTest, WritesToStdoutWithoutOutputFlag) {
  const ProcessResult r = Spanprof({"export", "otlp", Path("a.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountSpans(r.out), 3u);
}

// A trace of an older spanprof has no trace id: one is derived, with a note;
// a Perfetto trace is read like a JSON one.
TEST_F(ExportCliTest, SeveralTracesOfBothFormatsAreOneResourceEach) {
  const std::string out = Path("both.json");
  const ProcessResult r = Spanprof(
      {"export", "otlp", Path("a.json"), Path("b.pftrace"), "--output", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t resources = 0;
  EXPECT_EQ(CountSpans(ReadText(out), &resources), 6u);
  EXPECT_EQ(resources, 2u);
  EXPECT_THAT(r.err, HasSubstr("note: " + Path("a.json") + ": no trace id"));
  EXPECT_THAT(r.err, HasSubstr("2 different traces"));
  const std::string derived = analysis::DerivedTraceId(SmallCapture(100));
  EXPECT_THAT(ReadText(out), HasSubstr("\"traceId\":\"" + derived + "\""));
}

TEST_F(ExportCliTest, AForeignTraceWithoutAnchorIsRefusedAndNothingWritten) {
  WriteText(Path("foreign.json"),
            R"({"traceEvents":[{"name":"x","ph":"X","ts":1,"dur":2,)"
            R"("pid":1,"tid":1}]})");
  const std::string out = Path("never.json");
  const ProcessResult r = Spanprof(
      {"export", "otlp", Path("a.json"), Path("foreign.json"), "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("spanprof export: " + Path("foreign.json")));
  EXPECT_THAT(r.err, HasSubstr("wall-clock anchor"));
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(ExportCliTest, AnUnreadableTraceIsExitTwoAndKeepsTheOldOutput) {
  const std::string out = Path("old.json");
  WriteText(out, "old");
  const ProcessResult r =
      Spanprof({"export", "otlp", Path("missing.json"), "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.json"));
  EXPECT_EQ(ReadText(out), "old");
}

TEST_F(ExportCliTest, TheSameTraceTwiceIsRefused) {
  const ProcessResult r =
      Spanprof({"export", "otlp", Path("a.json"), Path("a.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the same capture"));
  EXPECT_THAT(r.out, IsEmpty());
}

// A merged trace is several processes: one resource each.
TEST_F(ExportCliTest, AMergedTraceIsOneResourcePerProcess) {
  ASSERT_TRUE(analysis::WriteTrace(SmallCapture(300), Path("c.json")).ok());
  const std::string merged = Path("merged.json");
  const ProcessResult m =
      Spanprof({"merge", Path("a.json"), Path("c.json"), "-o", merged});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const ProcessResult r = Spanprof({"export", "otlp", merged});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t resources = 0;
  EXPECT_EQ(CountSpans(r.out, &resources), 6u);
  EXPECT_EQ(resources, 2u);
  EXPECT_THAT(r.out,
              HasSubstr("\"process.pid\",\"value\":{\"intValue\":\"100\""));
  EXPECT_THAT(r.out,
              HasSubstr("\"process.pid\",\"value\":{\"intValue\":\"300\""));
}

// Spans that end before they start, or are their own parent, are refused
// (exit 1, each named) unless --allow-invalid, which warns and exports.
TEST_F(ExportCliTest, InvalidSpansAreRefusedUnlessAllowed) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  b.Add(1, 0, b.Site("app.run"), main, 0, 10'000);
  b.Add(2, 1, b.Site("backwards"), main, 5'000, 4'000);
  b.Add(3, 3, b.Site("selfish"), main, 6'000, 7'000);
  b.capture().pid = 100;
  b.capture().wall_clock_anchor_ns = 1'750'000'000'000'000'000;
  ASSERT_TRUE(analysis::WriteTrace(b.Build(), Path("bad.json")).ok());
  const std::string out = Path("refused.json");
  const ProcessResult refused =
      Spanprof({"export", "otlp", Path("bad.json"), "-o", out});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("2 invalid spans"));
  EXPECT_THAT(refused.err, HasSubstr(Path("bad.json") +
                                     ": span 2 'backwards' ends before it "
                                     "starts"));
  EXPECT_THAT(refused.err, HasSubstr("span 3 'selfish' is its own parent"));
  EXPECT_THAT(refused.err, HasSubstr("--allow-invalid"));
  EXPECT_FALSE(fs::exists(out));

  const ProcessResult allowed = Spanprof(
      {"export", "otlp", Path("bad.json"), "--allow-invalid", "-o", out});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_THAT(allowed.err, HasSubstr("warning: exporting 2 invalid spans"));
  EXPECT_EQ(CountSpans(ReadText(out)), 3u);
}

TEST_F(ExportCliTest, UsageErrors) {
  ProcessResult r = Spanprof({"export"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing FORMAT"));
  r = Spanprof({"export", "zipkin", Path("a.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown format \"zipkin\""));
  EXPECT_THAT(r.err, HasSubstr("usage: spanprof export otlp TRACE..."));
  r = Spanprof({"export", "otlp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing argument TRACE"));
  r = Spanprof({"export", "otlp", Path("a.json"), "-o", ""});
  EXPECT_EQ(r.exit_code, 2);
  r = Spanprof({"export", "otlp", Path("a.json"), "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  r = Spanprof({"export", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("ExportTraceServiceRequest"));
  r = Spanprof({"--help"});
  EXPECT_THAT(r.out, HasSubstr("export"));
}

}  // namespace
}  // namespace spanprof
