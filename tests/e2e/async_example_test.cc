// The real async_example binary, run with SPANPROF=1 into a temp dir: the
// worker's spans are cross-thread children of `worker.complete`, the trace
// draws a flow arrow for each link, and the analysis never subtracts the
// worker's time from the waiting span.
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/lookup.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::FindRow;
using spanprof::testing::ReadText;
using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;

class AsyncExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto result = RunProcess({SPANPROF_TEST_BIN_DIR "/async_example"},
                                   {{"SPANPROF", "1"},
                                    {"SPANPROF_OUT", trace_path()},
                                    {"SPANPROF_SUMMARY_OUT", summary_path()},
                                    {"SPANPROF_QUIET", "1"}},
                                   dir_.path().string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
  }
  std::string trace_path() const { return dir_.File("out/trace.json"); }
  std::string summary_path() const { return dir_.File("out/summary.json"); }

  TempDir dir_;
};

TEST_F(AsyncExampleTest, WorkerSpansAreCrossThreadChildren) {
  const auto trace = analysis::ReadTrace(trace_path());
  ASSERT_TRUE(trace.ok()) << trace.status();
  const Capture& c = *trace;
  std::map<uint64_t, const Span*> by_id;
  for (const Span& s : c.spans) by_id[s.id] = &s;
  auto name = [&](const Span& s) { return c.sites[s.site].name; };
  int completes = 0;
  int computes = 0;
  int chunks = 0;
  for (const Span& s : c.spans) {
    EXPECT_EQ(s.flags, 0u) << name(s);
    if (name(s) == "worker.complete") {
      ++completes;
    } else if (name(s) == "worker.compute") {
      ++computes;
      ASSERT_NE(s.parent_id, 0u);
      const Span& parent = *by_id.at(s.parent_id);
      EXPECT_EQ(name(parent), "worker.complete");
      EXPECT_NE(parent.thread, s.thread);  // a cross-thread child
      EXPECT_EQ(s.depth, parent.depth + 1);
      // The waiting span covers the completion of the work it handed over.
      EXPECT_LE(parent.start_ns, s.start_ns);
      EXPECT_GE(parent.end_ns, s.end_ns);
    } else if (name(s) == "worker.chunk") {
      ++chunks;
      const Span& parent = *by_id.at(s.parent_id);
      EXPECT_EQ(name(parent), "worker.compute");
      EXPECT_EQ(parent.thread, s.thread);
    }
  }
  EXPECT_EQ(completes, 3);
  EXPECT_EQ(computes, 3);
  EXPECT_EQ(chunks, 9);
  EXPECT_EQ(c.threads.size(), 4u);  // main + one std::async thread each
}

TEST_F(AsyncExampleTest, TheTraceDrawsAFlowArrowPerLink) {
  // docs/formats.md, "Flows": the parent carries bind_id = its span id and
  // flow_out; each cross-thread child carries bind_id = its parent id and
  // flow_in; ids are unique per flow.
  const std::string text = ReadText(trace_path());
  const std::regex complete_re(
      R"re("name":"worker\.complete".*"tid":(\d+),.*"bind_id":(\d+),"flow_out":true,"args":\{"span_id":(\d+),)re");
  const std::regex compute_re(
      R"re("name":"worker\.compute".*"tid":(\d+),.*"bind_id":(\d+),"flow_in":true,"args":\{"span_id":(\d+),"parent_id":(\d+),)re");
  std::map<std::string, std::string> flow_out_tid;  // bind_id -> tid
  std::map<std::string, std::string> flow_in_tid;
  std::istringstream lines(text);
  std::string line;
  int complete_lines = 0;
  int compute_lines = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("{\"ph\":\"X\"", 0) != 0) continue;  // X events only
    std::smatch m;
    if (line.find("\"name\":\"worker.complete\"") != std::string::npos) {
      ++complete_lines;
      ASSERT_TRUE(std::regex_search(line, m, complete_re)) << line;
      EXPECT_EQ(m[2], m[3]) << "flow_out bind_id is the parent's span id";
      EXPECT_EQ(flow_out_tid.count(m[2]), 0u) << "bind_id reused: " << line;
      flow_out_tid[m[2]] = m[1];
    } else if (line.find("\"name\":\"worker.compute\"") != std::string::npos) {
      ++compute_lines;
      ASSERT_TRUE(std::regex_search(line, m, compute_re)) << line;
      EXPECT_EQ(m[2], m[4]) << "flow_in bind_id is the parent's span id";
      flow_in_tid[m[2]] = m[1];
    }
  }
  EXPECT_EQ(complete_lines, 3);
  EXPECT_EQ(compute_lines, 3);
  ASSERT_EQ(flow_in_tid.size(), 3u);
  for (const auto& [bind_id, tid] : flow_in_tid) {
    ASSERT_EQ(flow_out_tid.count(bind_id), 1u) << bind_id;
    EXPECT_NE(flow_out_tid[bind_id], tid) << "the arrow crosses threads";
  }
  // Nothing else in the trace starts or ends a flow.
  size_t flows_out = 0;
  size_t flows_in = 0;
  for (size_t p = 0; (p = text.find("\"flow_out\":true", p)) != text.npos;
       ++p) {
    ++flows_out;
  }
  for (size_t p = 0; (p = text.find("\"flow_in\":true", p)) != text.npos; ++p) {
    ++flows_in;
  }
  EXPECT_EQ(flows_out, 3u);
  EXPECT_EQ(flows_in, 3u);
}

TEST_F(AsyncExampleTest, CrossThreadChildrenAreNotSubtracted) {
  const auto summary = analysis::ReadSummary(summary_path());
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->complete);
  EXPECT_EQ(summary->thread_count, 4u);
  const analysis::Row* complete = FindRow(*summary, "worker.complete");
  const analysis::Row* compute = FindRow(*summary, "worker.compute");
  const analysis::Row* chunk = FindRow(*summary, "worker.chunk");
  ASSERT_TRUE(complete && compute && chunk);
  EXPECT_EQ(complete->calls, 3u);
  EXPECT_EQ(compute->calls, 3u);
  EXPECT_EQ(chunk->calls, 9u);
  EXPECT_EQ(compute->threads, 3u);
  // worker.complete only waits: its children run on other threads, so all of
  // its time is its own thread's (self == total).
  EXPECT_EQ(complete->self_ns, complete->total_ns);
  EXPECT_GE(complete->total_ns, 9 * 2'000'000);
  // worker.compute's same-thread children are subtracted as usual.
  EXPECT_LT(compute->self_ns, compute->total_ns);
}

}  // namespace
}  // namespace spanprof
