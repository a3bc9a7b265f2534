// A session end's capture holds its arguments packed (PackedArgs): what is
// appended decodes to the same arguments, whatever their kinds, values and
// keys; a corrupt offset or count yields no more than what lies there. The
// collector packs a span's arguments once no more can come, while the
// thread is parsed: also those an enrich hook adds after the span ended.
#include "spanprof/internal/packed_args.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "collector/assemble.h"
#include "gtest/gtest.h"
#include "recorder/recorder_internal.h"
#include "spanprof/capture.h"
#include "spanprof/internal/compact_spans.h"
#include "spanprof/spanprof.h"
#include "tests/runtime/collector/collect_for_outputs.h"

namespace spanprof::internal {
namespace {

SpanArg Int(const char* key, int64_t value, bool counter = false) {
  SpanArg arg{.key = key, .int_value = value};
  arg.is_counter = counter;
  return arg;
}

SpanArg Double(const char* key, double value) {
  SpanArg arg{.key = key, .double_value = value};
  arg.is_double = true;
  return arg;
}

SpanArg Text(const char* key, std::string text, bool truncated = false) {
  SpanArg arg{.key = key};
  arg.text = std::move(text);
  arg.is_string = true;
  arg.truncated = truncated;
  return arg;
}

TEST(PackedArgsTest, EveryKindAndValueDecodesAsAppended) {
  const std::vector<SpanArg> first = {
      Int("zero", 0),
      Int("small", 5),
      Int("negative", -1),
      Int("max", std::numeric_limits<int64_t>::max()),
      Int("min", std::numeric_limits<int64_t>::min()),
      Int("count", 12345, /*counter=*/true),
  };
  const std::vector<SpanArg> second = {
      Double("ratio", 0.25),
      Double("inf", std::numeric_limits<double>::infinity()),
      Double("tiny", -std::numeric_limits<double>::denorm_min()),
      Text("label", "item-7"),
      Text("cut", std::string(200, 'x'), /*truncated=*/true),
      Text("empty", ""),
  };
  PackedArgs packed;
  const uint32_t a = packed.Append(first);
  const uint32_t b = packed.Append(second);
  EXPECT_EQ(a, 0u);
  EXPECT_GT(b, a);
  std::vector<SpanArg> out;
  packed.Decode(a, first.size(), out);
  EXPECT_EQ(out, first);
  packed.Decode(b, second.size(), out);
  EXPECT_EQ(out, second);
  EXPECT_TRUE(packed.any_counter());
  // Small integers take a few bytes each: the reason for the store.
  EXPECT_LT(packed.size_bytes(), first.size() * 12 + second.size() * 10);
}

TEST(PackedArgsTest, ANaNStaysANaN) {
  PackedArgs packed;
  const std::vector<SpanArg> args = {
      Double("nan", std::numeric_limits<double>::quiet_NaN())};
  packed.Append(args);
  std::vector<SpanArg> out;
  packed.Decode(0, 1, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].is_double);
  EXPECT_TRUE(std::isnan(out[0].double_value));
}

// Past the seven keys a tag holds, keys are varints: hundreds of distinct
// keys (a program naming them at run time) decode to their own names.
TEST(PackedArgsTest, ManyKeysKeepTheirNames) {
  PackedArgs packed;
  std::vector<uint32_t> offsets;
  std::vector<SpanArg> all;
  for (int k = 0; k < 300; ++k) {
    const std::string key = "key." + std::to_string(k);
    all.push_back(Int(key.c_str(), k * 1000 - 7));
    offsets.push_back(packed.Append({&all.back(), 1}));
  }
  EXPECT_EQ(packed.keys().size(), 300u);
  std::vector<SpanArg> out;
  for (size_t k = 0; k < all.size(); ++k) {
    packed.Decode(offsets[k], 1, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], all[k]) << k;
  }
  EXPECT_FALSE(packed.any_counter());
}

TEST(PackedArgsTest, AnOffsetOrCountPastTheEndReadsOnlyWhatIsThere) {
  PackedArgs packed;
  const std::vector<SpanArg> args = {Int("a", 1), Int("b", 300)};
  packed.Append(args);
  std::vector<SpanArg> out = {Int("stale", 9)};
  packed.Decode(0, 10, out);
  EXPECT_EQ(out, args);
  packed.Decode(static_cast<uint32_t>(packed.size_bytes()), 3, out);
  EXPECT_TRUE(out.empty());
  packed.Decode(UINT32_MAX, 1, out);
  EXPECT_TRUE(out.empty());
}

// Each span has an argument from its body and one from its enrich hook,
// which the collector meets after the span's end, and a ring chunk's end
// (8,192 records, 4,096 spans) falls between the two: the collector, which
// attaches the finished spans' arguments at chunk ends, must keep the last
// ended span's until the enrich records are read, or its body's argument is
// lost (the span's offset is set twice).
TEST(PackedArgsTest, ASpanEnrichedAcrossAChunkEndKeepsAllItsArguments) {
  ASSERT_TRUE(StartRecording({}).ok());
  constexpr int64_t kSpans = 40'000;
  for (int64_t i = 0; i < kSpans; ++i) {
    spanprof::Run("step",
                  Hooks{}.WithEnrich([i] { SPANPROF_ARG("enriched", -i); }),
                  [i] { SPANPROF_ARG("body", i); });
  }
  const Capture capture = EndAndCollectForOutputs();
  ASSERT_NE(capture.packed_args, nullptr);
  ASSERT_NE(capture.compact_spans, nullptr);
  const CompactSpans& spans = *capture.compact_spans;
  ASSERT_EQ(spans.size(), static_cast<size_t>(kSpans));
  std::vector<SpanArg> args;
  int64_t whole = 0;
  for (size_t k = 0; k < spans.size(); ++k) {
    const Span span = spans[k];
    capture.packed_args->Decode(span.first_arg, span.arg_count, args);
    const auto i = static_cast<int64_t>(k);
    whole += args.size() == 2 && args[0] == Int("body", i) &&
             args[1] == Int("enriched", -i);
  }
  EXPECT_EQ(whole, kSpans);
}

}  // namespace
}  // namespace spanprof::internal
