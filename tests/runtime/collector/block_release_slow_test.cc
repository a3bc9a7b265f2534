// Where a session's ring blocks go when the collector has read them (labels
// slow + concurrency): a session whose rings fit the process-wide block
// cache (64 MiB) leaves them there for the next session, already faulted in;
// one whose rings outgrew it returns them to the kernel as it reads them, so
// they do not add to the session end's peak next to the capture (which must
// stay under 2x the ring memory used).
#include <cstdint>

#include "gtest/gtest.h"
#include "runtime/src/recorder/ring_memory.h"
#include "spanprof/spanprof.h"

namespace spanprof {
namespace {

constexpr uint64_t kBlockBytes = 128 * 1024;
constexpr uint64_t kCacheBytes = 64 * 1024 * 1024;
constexpr uint64_t kPrefaulterAhead = 16;  // blocks the helper keeps ready

// Records `spans` spans on this thread in one session and collects them.
// Returns the ring memory the session took, in bytes.
uint64_t RecordAndCollect(uint64_t spans) {
  internal::ReleaseCachedChunks();
  const uint64_t before = internal::RingBytesAllocated();
  EXPECT_TRUE(StartRecording({.max_events = spans + 1024}).ok());
  for (uint64_t i = 0; i < spans; ++i) {
    SPANPROF_SCOPE("release.span");
  }
  const uint64_t ring_bytes = internal::RingBytesAllocated() - before;
  const Capture capture = StopRecording();
  EXPECT_EQ(capture.spans.size(), spans);
  return ring_bytes;
}

TEST(BlockReleaseTest, RingsThatFitTheCacheStayCachedForTheNextSession) {
  const uint64_t ring_bytes = RecordAndCollect(1'000'000);  // ~32 MiB
  ASSERT_LT(ring_bytes, kCacheBytes);
  // The rings' blocks are cached again (all but the chunks still held by
  // the thread's ring and the small first chunks, which are not blocks);
  // released, the cache would hold at most the prefaulter's 2 MiB.
  EXPECT_GE(internal::CachedBlocks() * kBlockBytes, ring_bytes * 3 / 4)
      << "ring bytes " << ring_bytes;
}

TEST(BlockReleaseTest, RingsThatOutgrewTheCacheGoBackToTheKernel) {
  const uint64_t ring_bytes = RecordAndCollect(3'000'000);  // ~92 MiB
  ASSERT_GT(ring_bytes, kCacheBytes);
  // Nothing of the rings is cached: at most the blocks the prefaulter had
  // mapped ahead (before, the cache kept 512 of them, 64 MiB).
  EXPECT_LE(internal::CachedBlocks(), kPrefaulterAhead)
      << "ring bytes " << ring_bytes;
}

}  // namespace
}  // namespace spanprof
