// The `--group-by-arg` naming rule has one home (model/group_by_arg.h): the
// grouped trace (the transform both trace readers apply) and the table's
// rows show the same name, a cut value marked with "...", and spanprof's
// own traces and foreign Chrome traces name a whole value alike.
#include "analysis/src/model/group_by_arg.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/capture_builder.h"

namespace spanprof::analysis {
namespace {

using spanprof::testing::CaptureBuilder;
using spanprof::testing::StringArg;

// 64 bytes: what the runtime keeps of a longer `SPANPROF_ARG_STR` value.
const std::string kCutPath(kMaxArgTextBytes, 'p');

TEST(GroupedSiteNameTest, MarksOnlyATruncatedValue) {
  EXPECT_EQ(internal::GroupedSiteName("Source", "detail", "a.cc", false),
            "Source [detail=a.cc]");
  EXPECT_EQ(internal::GroupedSiteName("Source", "detail", "a.cc", true),
            "Source [detail=a.cc...]");
}

// Span 1 carries a cut value, span 2 a whole value of the same bytes, span 3
// a short whole value.
Capture ParsedFiles() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t parse = b.Site("file.parse", "parse");
  b.Add(1, 0, parse, main, 0, 100);
  b.Add(2, 0, parse, main, 200, 300);
  b.Add(3, 0, parse, main, 400, 500);
  b.Args(1, {StringArg("path", kCutPath, /*truncated=*/true)});
  b.Args(2, {StringArg("path", kCutPath)});
  b.Args(3, {StringArg("path", "a.cc")});
  return b.Build();
}

std::string NameOfSpan(const Capture& capture, uint64_t id) {
  return capture.sites[capture.spans[testing::IndexOf(capture, id)].site].name;
}

TEST(GroupByArgTest, TheTraceAndTheTableNameACutValueAlike) {
  const std::string cut = "file.parse [path=" + kCutPath + "...]";
  const std::string whole = "file.parse [path=" + kCutPath + "]";
  const Capture capture = ParsedFiles();
  for (const std::string& trace :
       {TraceToJson(capture), CaptureToPerfetto(capture)}) {
    const absl::StatusOr<Capture> grouped =
        ParseTrace(trace, "files", {.group_by_arg = "path"});
    ASSERT_TRUE(grouped.ok()) << grouped.status();
    // The trace transform: a cut value and a whole one are two sites.
    EXPECT_EQ(NameOfSpan(*grouped, 1), cut);
    EXPECT_EQ(NameOfSpan(*grouped, 2), whole);
    EXPECT_EQ(NameOfSpan(*grouped, 3), "file.parse [path=a.cc]");
    // The table's rows: the same names, tags after them.
    const Summary summary = Summarize(*grouped);
    std::vector<std::string> labels;
    for (const Row& row : summary.rows) labels.push_back(RowLabel(row.key));
    EXPECT_EQ(labels.size(), 3u);
    for (const std::string& name : {cut, whole}) {
      EXPECT_NE(
          std::find(labels.begin(), labels.end(), name + " [phase=parse]"),
          labels.end())
          << name;
    }
    EXPECT_NE(FormatTable(summary, {.wide = true}).find(cut + " [phase=parse]"),
              std::string::npos);
  }
}

TEST(GroupByArgTest, OwnAndForeignTracesNameAWholeValueAlike) {
  const std::string foreign =
      R"({"traceEvents":[{"name":"file.parse","ph":"X","ts":0,"dur":5,)"
      R"("pid":1,"tid":1,"args":{"path":"a.cc"}}]})";
  const absl::StatusOr<Capture> from_foreign =
      ParseTrace(foreign, "clang.json", {.group_by_arg = "path"});
  ASSERT_TRUE(from_foreign.ok()) << from_foreign.status();
  ASSERT_EQ(from_foreign->source, "chrome-trace");
  ASSERT_EQ(from_foreign->spans.size(), 1u);
  const absl::StatusOr<Capture> from_own = ParseTrace(
      TraceToJson(ParsedFiles()), "files.json", {.group_by_arg = "path"});
  ASSERT_TRUE(from_own.ok()) << from_own.status();
  EXPECT_EQ(NameOfSpan(*from_foreign, from_foreign->spans[0].id),
            NameOfSpan(*from_own, 3));
  EXPECT_EQ(NameOfSpan(*from_own, 3), "file.parse [path=a.cc]");
}

}  // namespace
}  // namespace spanprof::analysis
