// The prefaulter: a helper thread keeps ring blocks faulted in
// ahead of the rings, so the page faults of a long first session do not
// happen on the recording thread. The thread's own minor-fault count
// (getrusage RUSAGE_THREAD) shows where they happened.
#include <sys/mman.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "gtest/gtest.h"
#include "runtime/src/recorder/ring_memory.h"
#include "spanprof/spanprof.h"

namespace spanprof {
namespace {

constexpr uint64_t kBlockBytes = uint64_t{128} * 1024;  // ring_memory.cc
constexpr uint64_t kPagesPerBlock = kBlockBytes / 4096;
constexpr uint64_t kSpansPerBlock = 4096;  // a full-size chunk fills a block
constexpr uint64_t kReadyBlocks = 16;      // what the prefaulter keeps ahead

int64_t ThreadMinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Waits until the prefaulter has mapped `blocks` blocks. The deadline only
// guards against a hang; no timing is asserted.
bool WaitForReadyBlocks(uint64_t blocks) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (internal::CachedBlocks() < blocks) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// The measurement can see faults: populating one block on this thread
// counts about one fault per page.
TEST(PrefaultTest, PopulatingABlockCountsItsPagesOnTheThread) {
  const int64_t before = ThreadMinorFaults();
  void* p = mmap(nullptr, kBlockBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  const int64_t faults = ThreadMinorFaults() - before;
  munmap(p, kBlockBytes);
  EXPECT_GE(faults, static_cast<int64_t>(kPagesPerBlock) / 2);
}

TEST(PrefaultTest, ARecordingThreadTakesBlocksFaultedInAhead) {
#ifdef SPANPROF_TEST_SANITIZED
  GTEST_SKIP() << "ASan's shadow memory faults in on the recording thread";
#endif
  internal::ReleaseCachedChunks();
  ASSERT_TRUE(StartRecording(RecordingOptions{.max_events = 1'000'000}).ok());
  ASSERT_TRUE(WaitForReadyBlocks(kReadyBlocks))
      << "the prefaulter never mapped " << kReadyBlocks << " blocks";
  // A new thread starts with an empty ring: its first chunks are small
  // (malloc), then it takes full-size blocks from the cache. Recording
  // 14 blocks' worth would fault 14 * 32 pages in on this thread without
  // the prefaulter.
  constexpr uint64_t kBlocks = kReadyBlocks - 2;
  int64_t faults = -1;
  std::thread recorder([&] {
    const int64_t before = ThreadMinorFaults();
    for (uint64_t i = 0; i < kBlocks * kSpansPerBlock; ++i) {
      SPANPROF_SCOPE("prefault.span");
    }
    faults = ThreadMinorFaults() - before;
  });
  recorder.join();
  const Capture capture = StopRecording();
  EXPECT_EQ(capture.spans.size(), kBlocks * kSpansPerBlock);
  EXPECT_EQ(capture.dropped_events, 0u);
  // The small first chunks (64 KiB in all) may fault on the thread.
  EXPECT_LT(faults, static_cast<int64_t>(kBlocks * kPagesPerBlock / 4))
      << "faults on the recording thread: " << faults;
  RecordProperty("recording_thread_faults", static_cast<int>(faults));
}

}  // namespace
}  // namespace spanprof
