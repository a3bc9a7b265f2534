// The real multiprocess_example: a coordinator process starts three workers
// with its spans' traceparents; four captures, one trace id, and each
// worker's session a child of the coordinator span that started it.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;

class MultiprocessExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto result =
        RunProcess({SPANPROF_TEST_BIN_DIR "/multiprocess_example"},
                   {{"SPANPROF", "1"},
                    {"SPANPROF_OUT", dir_.File("out/trace-%p.json")},
                    {"SPANPROF_SUMMARY_OUT", dir_.File("out/summary-%p.json")},
                    {"SPANPROF_QUIET", "1"}},
                   dir_.path().string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    for (const auto& entry :
         std::filesystem::directory_iterator(dir_.File("out"))) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("trace-", 0) == 0) traces_.push_back(entry.path());
    }
  }

  TempDir dir_;
  std::vector<std::filesystem::path> traces_;
};

TEST_F(MultiprocessExampleTest, WorkersAreChildrenOfTheSpansThatStartedThem) {
  ASSERT_EQ(traces_.size(), 4u);
  std::vector<Capture> captures;
  for (const auto& path : traces_) {
    absl::StatusOr<Capture> c = analysis::ReadTrace(path.string());
    ASSERT_TRUE(c.ok()) << c.status();
    // The file name carries the writer's pid (%p).
    EXPECT_EQ(path.filename().string(),
              "trace-" + std::to_string(c->pid) + ".json");
    captures.push_back(*std::move(c));
  }
  const Capture* coordinator = nullptr;
  for (const Capture& c : captures) {
    if (c.process_name == "coordinator") coordinator = &c;
  }
  ASSERT_NE(coordinator, nullptr);
  EXPECT_EQ(coordinator->remote_parent_span_id, 0u);
  // The ids each coordinator.spawn span carries.
  std::set<uint64_t> spawn_ids;
  for (const Span& s : coordinator->spans) {
    if (coordinator->sites[s.site].name == "coordinator.spawn") {
      spawn_ids.insert(ExternalSpanId(*coordinator, s));
    }
  }
  ASSERT_EQ(spawn_ids.size(), 3u);
  std::set<uint64_t> parents;
  std::set<std::string> names;
  for (const Capture& c : captures) {
    EXPECT_EQ(c.trace_id, coordinator->trace_id) << c.process_name;
    EXPECT_NE(c.wall_clock_anchor_ns, 0);
    if (&c == coordinator) continue;
    names.insert(c.process_name);
    parents.insert(c.remote_parent_span_id);
    EXPECT_NE(c.pid, coordinator->pid);
    // A worker starts after the coordinator, on the wall clock.
    EXPECT_GT(c.wall_clock_anchor_ns, coordinator->wall_clock_anchor_ns);
  }
  EXPECT_EQ(parents, spawn_ids);
  EXPECT_EQ(names, (std::set<std::string>{"worker-1", "worker-2", "worker-3"}));
}

// `spanprof merge` of the four captures: one timeline, four processes, and
// the three workers' roots children of the coordinator's spawn spans.
TEST_F(MultiprocessExampleTest, MergeDrawsTheCrossProcessLinks) {
  std::vector<std::string> argv = {SPANPROF_TEST_BIN_DIR "/spanprof", "merge"};
  for (const auto& path : traces_) argv.push_back(path.string());
  const std::string merged = dir_.File("merged.pftrace");
  argv.insert(argv.end(), {"-o", merged});
  const auto result = RunProcess(argv);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Merged 4 captures"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("3 cross-process links"), std::string::npos)
      << result.out;
  absl::StatusOr<Capture> c = analysis::ReadTrace(merged);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->processes.size(), 4u);
  std::map<uint64_t, const Span*> by_id;
  for (const Span& s : c->spans) by_id[s.id] = &s;
  int links = 0;
  for (const Span& s : c->spans) {
    if (c->sites[s.site].name != "worker.run") continue;
    ASSERT_NE(s.parent_id, 0u);
    const Span& parent = *by_id.at(s.parent_id);
    EXPECT_EQ(c->sites[parent.site].name, "coordinator.spawn");
    EXPECT_NE(ThreadPid(*c, parent.thread), ThreadPid(*c, s.thread));
    // On the merged timeline the worker starts inside the span that
    // started it (the anchors agree on one host).
    EXPECT_GE(s.start_ns + 1000, parent.start_ns);
    ++links;
  }
  EXPECT_EQ(links, 3);
}

}  // namespace
}  // namespace spanprof
