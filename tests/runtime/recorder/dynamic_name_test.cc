// Run-time span names (SPANPROF_SCOPE_DYNAMIC, spanprof::RunDynamic): each
// distinct name is its own site, row and trace name like a literal; the name
// is copied, so a buffer freed or overwritten after the span does not change
// it; past the bound, new names go to the site's overflow name, counted.
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "recorder/recorder_internal.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::QuietConfig;

std::map<std::string, int> CountByName(const Capture& c) {
  std::map<std::string, int> counts;
  for (const Span& s : c.spans) ++counts[c.sites[s.site].name];
  return counts;
}

void BuildRule(std::string_view rule) {
  SPANPROF_SCOPE_DYNAMIC(rule, {.phase = "build"});
}

TEST(DynamicNameTest, EachNameIsItsOwnRowAndTraceName) {
  ASSERT_TRUE(StartRecording({}).ok());
  for (int i = 0; i < 3; ++i) {
    for (const char* rule : {"rule.cc", "rule.link"}) {
      BuildRule(std::string(rule));  // a temporary: dies after the span
    }
  }
  BuildRule("rule.link");
  const Capture capture = StopRecording();
  const std::map<std::string, int> counts = CountByName(capture);
  EXPECT_EQ(counts.at("rule.cc"), 3);
  EXPECT_EQ(counts.at("rule.link"), 4);

  const analysis::Summary summary = analysis::Summarize(capture);
  std::map<std::string, uint64_t> calls;
  for (const analysis::Row& row : summary.rows) {
    if (row.key.phase == "build") calls[row.key.name] += row.calls;
  }
  EXPECT_EQ(calls, (std::map<std::string, uint64_t>{{"rule.cc", 3},
                                                    {"rule.link", 4}}));

  const std::string json = analysis::TraceToJson(capture);
  EXPECT_NE(json.find("\"name\":\"rule.cc\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"rule.link\""), std::string::npos);
  absl::StatusOr<Capture> back = analysis::ParseTrace(json, "dynamic.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(analysis::SummaryToJson(analysis::Summarize(*back)),
            analysis::SummaryToJson(summary));
}

TEST(DynamicNameTest, NameSurvivesItsBufferFreedOrOverwritten) {
  ASSERT_TRUE(StartRecording({}).ok());
  char reused[32];
  std::strcpy(reused, "target.alpha");
  { SPANPROF_SCOPE_DYNAMIC(reused); }
  std::strcpy(reused, "target.beta");  // same address, new content
  { SPANPROF_SCOPE_DYNAMIC(reused); }
  std::memset(reused, 'x', sizeof(reused) - 1);
  {
    auto heap = std::make_unique<std::string>(40, 'g');
    heap->replace(0, 12, "target.gamma");
    heap->resize(12);
    { SPANPROF_SCOPE_DYNAMIC(*heap); }
    heap->assign(12, 'z');
  }  // freed
  const Capture capture = StopRecording();
  const std::map<std::string, int> counts = CountByName(capture);
  EXPECT_EQ(counts.at("target.alpha"), 1);
  EXPECT_EQ(counts.at("target.beta"), 1);
  EXPECT_EQ(counts.at("target.gamma"), 1);
  EXPECT_EQ(counts.count("zzzzzzzzzzzz"), 0u);
}

TEST(DynamicNameTest, EqualContentIsOneSiteAcrossCallSitesAndThreads) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) {
        BuildRule("shared." + std::to_string(i % 10));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const Capture capture = StopRecording();
  const std::map<std::string, int> counts = CountByName(capture);
  int sites = 0;
  for (const Site& site : capture.sites) {
    if (site.name.rfind("shared.", 0) == 0) ++sites;
  }
  EXPECT_EQ(sites, 10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(counts.at("shared." + std::to_string(i)), 80) << i;
  }
}

TEST(DynamicNameTest, RunDynamicNamesTheSpanAndReturnsTheResult) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::string name = "request.";
  name += "get";
  const int value = RunDynamic(name, {.phase = "serve"}, [] { return 42; });
  RunDynamic(std::string_view("request.put"), [] {});
  name.assign("garbage");
  const Capture capture = StopRecording();
  EXPECT_EQ(value, 42);
  const std::map<std::string, int> counts = CountByName(capture);
  EXPECT_EQ(counts.at("request.get"), 1);
  EXPECT_EQ(counts.at("request.put"), 1);
  EXPECT_EQ(counts.count("garbage"), 0u);
  for (const Span& s : capture.spans) {
    if (capture.sites[s.site].name == "request.get") {
      EXPECT_EQ(capture.sites[s.site].phase, "serve");
    }
  }
}

TEST(DynamicNameTest, PastTheBoundNewNamesGoToTheSiteOverflowName) {
  const internal::DynamicNameCounts before = internal::GetDynamicNameCounts();
  EXPECT_EQ(before.limit, internal::kMaxDynamicNames);
  internal::SetDynamicNameLimitForTesting(before.names + 2);
  ASSERT_TRUE(StartRecording({}).ok());
  const int line = __LINE__ + 3;
  for (int i : {0, 1, 2, 3, 4, 0, 1}) {
    const std::string name = "bounded." + std::to_string(i);
    SPANPROF_SCOPE_DYNAMIC(name);
  }
  const Capture capture = StopRecording();
  const internal::DynamicNameCounts after = internal::GetDynamicNameCounts();
  internal::SetDynamicNameLimitForTesting(internal::kMaxDynamicNames);

  const std::map<std::string, int> counts = CountByName(capture);
  EXPECT_EQ(counts.at("bounded.0"), 2);  // interned before the bound
  EXPECT_EQ(counts.at("bounded.1"), 2);
  EXPECT_EQ(counts.count("bounded.2"), 0u);
  const std::string overflow =
      "dynamic_name_test.cc:" + std::to_string(line) + " (overflow)";
  EXPECT_EQ(counts.at(overflow), 3);
  EXPECT_EQ(after.names, before.names + 2);
  EXPECT_EQ(after.overflowed, before.overflowed + 3);
}

// A whole session through Profile(): the written summary and trace files
// carry each run-time name as its own row and event name, also when the
// name's buffer was overwritten before the session ended.
TEST(DynamicNameTest, WrittenSummaryAndTraceCarryRunTimeNames) {
  testing::TempDir dir;
  Config config = QuietConfig(dir);
  std::string buffer;
  Profile(config, "dynamic.root", [&] {
    for (const char* rule : {"link", "cxx", "cxx"}) {
      buffer = std::string("rule.") + rule;
      SPANPROF_SCOPE_DYNAMIC(buffer, {.phase = "build"});
    }
    buffer.assign("overwritten");
  });
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  std::map<std::string, uint64_t> calls;
  for (const analysis::Row& row : summary->rows) {
    if (row.key.phase == "build") calls[row.key.name] += row.calls;
  }
  EXPECT_EQ(calls, (std::map<std::string, uint64_t>{{"rule.cxx", 2},
                                                    {"rule.link", 1}}));
  absl::StatusOr<Capture> trace =
      analysis::ReadTrace(dir.File("out/trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  const std::map<std::string, int> counts = CountByName(*trace);
  EXPECT_EQ(counts.at("rule.cxx"), 2);
  EXPECT_EQ(counts.at("rule.link"), 1);
  EXPECT_EQ(counts.count("overwritten"), 0u);
}

TEST(DynamicNameTest, AnEmptyOrNullNameIsUnnamedAndTheTraceReadsBack) {
  ASSERT_TRUE(StartRecording({}).ok());
  { SPANPROF_SCOPE_DYNAMIC(std::string_view()); }
  { SPANPROF_SCOPE_DYNAMIC(static_cast<const char*>(nullptr)); }
  const Capture capture = StopRecording();
  EXPECT_EQ(CountByName(capture).at("(unnamed)"), 2);
  absl::StatusOr<Capture> back =
      analysis::ParseTrace(analysis::TraceToJson(capture), "unnamed.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(CountByName(*back).at("(unnamed)"), 2);
}

TEST(DynamicNameTest, NoSessionRecordsNothingAndInternsNothing) {
  const internal::DynamicNameCounts before = internal::GetDynamicNameCounts();
  BuildRule("never.interned");
  EXPECT_EQ(internal::GetDynamicNameCounts().names, before.names);
}

}  // namespace
}  // namespace spanprof
