// The trace layout's one description: the fragments an X event's line is
// built from, which the writer renders and the fast reader matches.
#include "analysis/src/trace/trace_format.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/captures.h"

namespace spanprof::analysis::internal {
namespace {

TEST(TraceFormatTest, SiteFragments) {
  const SiteFragments plain = RenderSiteFragments(Site{.name = "a.b"});
  EXPECT_EQ(plain.head, R"({"ph":"X","name":"a.b","cat":"spanprof")");
  EXPECT_EQ(plain.tags, "");
  const SiteFragments tagged = RenderSiteFragments(
      Site{.name = "m\"x", .phase = "fwd", .activity = "load"});
  EXPECT_EQ(tagged.head, R"({"ph":"X","name":"m\"x","cat":"fwd")");
  EXPECT_EQ(tagged.tags, R"(,"phase":"fwd","activity":"load")");
}

TEST(TraceFormatTest, ThreadFragment) {
  EXPECT_EQ(RenderThreadFragment(42, 7), R"(,"pid":42,"tid":7)");
}

// The writer's output is made of the fragments: its head, and each X line
// starts with its site's head and thread fragment.
TEST(TraceFormatTest, WriterUsesTheFragments) {
  const Capture capture = testing::RichCapture();
  const std::string json = TraceToJson(capture);
  EXPECT_EQ(json.substr(0, kTraceHead.size()), kTraceHead);
  EXPECT_EQ(json.substr(kTraceHead.size(), kMetaEventHead.size()),
            kMetaEventHead);
  for (const Span& span : capture.spans) {
    const std::string line =
        RenderSiteFragments(capture.sites[span.site]).head +
        RenderThreadFragment(capture.pid, capture.threads[span.thread].os_tid) +
        std::string(kLineTs) + FormatMicros(span.start_ns);
    EXPECT_NE(json.find("\n" + line), std::string::npos) << line;
  }
}

TEST(TraceFormatTest, MicrosRoundTrip) {
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{999},
                     int64_t{1234567}, INT64_MAX, INT64_MIN}) {
    std::string text;
    AppendMicros(&text, ns);
    int64_t back = 0;
    EXPECT_TRUE(ParseMicros(text, &back)) << text;
    EXPECT_EQ(back, ns) << text;
  }
}

}  // namespace
}  // namespace spanprof::analysis::internal
