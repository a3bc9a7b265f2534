// What the public headers bring into a user's file. spanprof.h comes first,
// so that nothing included before it can hide what it pulls in.
#include "spanprof/spanprof.h"

// The TSC is read with the compiler's builtin: no x86 intrinsics header.
#if defined(_X86INTRIN_H_INCLUDED) || defined(__X86INTRIN_H)
#error "spanprof/spanprof.h must not include <x86intrin.h>"
#endif
// Benchmark hooks are not on the user-facing include path.
#if defined(SPANPROF_RUNTIME_SRC_RECORDER_RING_MEMORY_H_)
#error "spanprof/spanprof.h must not include recorder/ring_memory.h"
#endif

#include <cstdint>
#include <type_traits>

#include "gtest/gtest.h"
#include "spanprof/tags.h"

namespace spanprof {
namespace {

TEST(PublicHeadersTest, TagsAreAPlainAggregateWithEmptyDefaults) {
  static_assert(std::is_aggregate_v<Tags>);
  const Tags tags{.phase = "parse"};
  EXPECT_STREQ(tags.phase, "parse");
  EXPECT_STREQ(tags.module, "");
  EXPECT_STREQ(tags.activity, "");
  EXPECT_STREQ(tags.backend, "");
  EXPECT_STREQ(tags.dtype, "");
  EXPECT_STREQ(tags.device, "");
  // The key fields added later come after `activity`, so designated
  // initializers written before them keep compiling.
  const Tags keyed{.activity = "load", .backend = "cuda", .device = "gpu0"};
  EXPECT_STREQ(keyed.backend, "cuda");
  EXPECT_STREQ(keyed.dtype, "");
}

#if defined(__x86_64__) || defined(__i386__)
TEST(PublicHeadersTest, TheTscReadAdvances) {
  const uint64_t first = internal::ReadTsc();
  const uint64_t second = internal::ReadTsc();
  EXPECT_GT(first, 0u);
  EXPECT_GE(second, first);
}
#endif

}  // namespace
}  // namespace spanprof
