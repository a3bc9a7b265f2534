// A real session writes a Perfetto protobuf trace when SPANPROF_OUT ends in
// `.pftrace`: the async example's trace decodes with protoc, has its threads
// and one flow per cross-thread link (counted in the same example's JSON
// trace); every CLI command that reads a trace reads it, with the same
// output as from the JSON trace of the same capture.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/perfetto/decoded_trace.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::ReadText;
using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;

void RunAsyncExample(const TempDir& dir, const std::string& trace) {
  const auto result = RunProcess({SPANPROF_TEST_BIN_DIR "/async_example"},
                                 {{"SPANPROF", "1"},
                                  {"SPANPROF_OUT", trace},
                                  {"SPANPROF_SUMMARY_OUT", dir.File("s.json")},
                                  {"SPANPROF_QUIET", "1"}},
                                 dir.path().string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
}

TEST(PerfettoTraceTest, SessionWritesADecodableProtobufTrace) {
  if (!spanprof::testing::HaveProtoc()) {
    SPANPROF_SKIP_UNLESS_CI(
        "protoc not found (Debian package protobuf-compiler)");
  }
  TempDir dir;
  RunAsyncExample(dir, dir.File("out/trace.json"));
  const absl::StatusOr<Capture> json =
      analysis::ReadTrace(dir.File("out/trace.json"));
  ASSERT_TRUE(json.ok()) << json.status();
  const int links = spanprof::testing::CrossThreadLinks(*json);
  ASSERT_GT(links, 0);

  RunAsyncExample(dir, dir.File("out/trace.pftrace"));
  const std::string bytes = ReadText(dir.File("out/trace.pftrace"));
  ASSERT_TRUE(analysis::LooksLikePerfettoTrace(bytes));
  const std::unique_ptr<spanprof::testing::TextMessage> root =
      spanprof::testing::DecodeTrace(bytes);
  ASSERT_NE(root, nullptr);
  const spanprof::testing::DecodedTrace t =
      spanprof::testing::AnalyzeTrace(*root);
  EXPECT_TRUE(t.problems.empty()) << ::testing::PrintToString(t.problems);
  EXPECT_EQ(t.slices.size(), json->spans.size());
  EXPECT_EQ(t.thread_names.size(), json->threads.size());
  EXPECT_EQ(spanprof::testing::CountMatchedFlows(t), links);
}

// The example's JSON trace, converted by the library (so both files hold
// one capture): every command prints the same from either file.
TEST(PerfettoTraceTest, TraceCommandsReadItLikeTheJson) {
  TempDir dir;
  const std::string json = dir.File("out/trace.json");
  RunAsyncExample(dir, json);
  const absl::StatusOr<Capture> capture = analysis::ReadTrace(json);
  ASSERT_TRUE(capture.ok()) << capture.status();
  const std::string trace = dir.File("out/trace.pftrace");
  ASSERT_TRUE(analysis::WriteTrace(*capture, trace).ok());
  const std::string spanprof = SPANPROF_TEST_BIN_DIR "/spanprof";
  for (const char* command : {"summarize", "report", "folded"}) {
    const auto from_json = RunProcess({spanprof, command, json});
    const auto from_pf = RunProcess({spanprof, command, trace});
    ASSERT_EQ(from_json.exit_code, 0) << command << ": " << from_json.err;
    EXPECT_EQ(from_pf.exit_code, 0) << command << ": " << from_pf.err;
    EXPECT_FALSE(from_pf.out.empty()) << command;
    // `report` names its input.
    std::string out = from_pf.out;
    if (const size_t at = out.find(trace); at != std::string::npos) {
      out.replace(at, trace.size(), json);
    }
    EXPECT_EQ(out, from_json.out) << command;
  }
  auto r = RunProcess({spanprof, "validate", trace});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("valid spanprof trace (" +
                       std::to_string(capture->spans.size()) + " spans)"),
            std::string::npos)
      << r.out;
  // Cut short, inside a packet or at a packet boundary (without the end
  // packet): invalid (exit 1, as for a truncated JSON trace), the message
  // naming the file and where it ends.
  const std::string bytes = ReadText(trace);
  const std::string cut = dir.File("out/cut.pftrace");
  for (const size_t size :
       {bytes.size() - 3, spanprof::testing::LastPacketOffset(bytes)}) {
    spanprof::testing::WriteText(cut, bytes.substr(0, size));
    const std::string truncated =
        cut + ": truncated at byte " + std::to_string(size);
    r = RunProcess({spanprof, "validate", cut});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find(truncated), std::string::npos) << r.out;
    r = RunProcess({spanprof, "summarize", cut});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(truncated), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace spanprof
