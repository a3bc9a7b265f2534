// A span's arguments as every writer and analysis takes them: its range of
// Capture::args, clipped where a hand-made or corrupt capture's range runs
// past the end, never read beyond it.
#include "analysis/src/model/span_args.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::analysis::internal {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::IntArg;

Capture ThreeSpans() {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t s = b.Site("a");
  b.Add(1, 0, s, main, 0, 100);
  b.Add(2, 1, s, main, 10, 50);
  b.Add(3, 1, s, main, 60, 90);
  b.Args(1, {IntArg("size", 7)});
  b.Args(2, {IntArg("items", 2), IntArg("depth", 3)});
  return b.Build();
}

TEST(SpanArgsTest, ASpanReadsItsOwnRange) {
  const Capture capture = ThreeSpans();
  ASSERT_EQ(capture.args.size(), 3u);
  const auto root = ArgsOf(capture, capture.spans[0]);
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(root[0].key, "size");
  EXPECT_EQ(root[0].int_value, 7);
  const auto second = ArgsOf(capture, capture.spans[1]);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].key, "items");
  EXPECT_EQ(second[1].key, "depth");
  EXPECT_EQ(second.data(), capture.args.data() + capture.spans[1].first_arg);
  EXPECT_TRUE(ArgsOf(capture, capture.spans[2]).empty());
}

TEST(SpanArgsTest, ARangePastTheEndIsClipped) {
  Capture capture = ThreeSpans();
  Span& second = capture.spans[1];
  second.arg_count = 5;  // two exist
  const auto clipped = ArgsOf(capture, second);
  ASSERT_EQ(clipped.size(), 2u);
  EXPECT_EQ(clipped[1].key, "depth");
  second.first_arg = 3;  // at the end
  EXPECT_TRUE(ArgsOf(capture, second).empty());
  second.first_arg = UINT32_MAX;
  second.arg_count = UINT16_MAX;
  EXPECT_TRUE(ArgsOf(capture, second).empty());
}

TEST(SpanArgsTest, TheTraceWriterWritesTheClippedRange) {
  Capture capture = ThreeSpans();
  capture.spans[1].arg_count = 5;
  const std::string json = TraceToJson(capture);
  EXPECT_NE(json.find("\"items\":2,\"depth\":3}"), std::string::npos) << json;
  capture.spans[1].first_arg = UINT32_MAX;
  const std::string without = TraceToJson(capture);
  EXPECT_EQ(without.find("\"items\""), std::string::npos) << without;
  EXPECT_NE(without.find("\"size\":7"), std::string::npos) << without;
}

}  // namespace
}  // namespace spanprof::analysis::internal
