// A real session writes a Perfetto protobuf trace when SPANPROF_OUT ends in
// `.pftrace`: the async example's trace decodes with protoc, has its threads
// and one flow per cross-thread link (counted in the same example's JSON
// trace); the CLI commands that read traces refuse it with exit 2 and a
// message naming the file.
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

int CrossThreadLinks(const Capture& c) {
  int links = 0;
  for (const Span& child : c.spans) {
    for (const Span& parent : c.spans) {
      if (parent.id == child.parent_id && parent.thread != child.thread) {
        ++links;
      }
    }
  }
  return links;
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
  const int links = CrossThreadLinks(*json);
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

TEST(PerfettoTraceTest, TraceCommandsRefuseItWithExit2) {
  TempDir dir;
  const std::string trace = dir.File("out/trace.pftrace");
  RunAsyncExample(dir, trace);
  for (const char* command : {"summarize", "report", "validate", "folded"}) {
    const auto r =
        RunProcess({SPANPROF_TEST_BIN_DIR "/spanprof", command, trace});
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(trace), std::string::npos) << command << ": " << r.err;
    EXPECT_NE(r.err.find("Perfetto protobuf trace"), std::string::npos)
        << command << ": " << r.err;
  }
}

}  // namespace
}  // namespace spanprof
