// ring_memory.h — ring memory accounting, for benchmarks and tests only
// (private to the runtime: not installed).
//
// bench/ divides a session's ring memory by its retained spans and measures
// first-touch cost with them; tests check the memory bound. Both include it
// by its path in the tree ("runtime/src/recorder/ring_memory.h").
//
//   const uint64_t before = spanprof::internal::RingBytesAllocated();
//   ...  // a recording session
//   const uint64_t used = spanprof::internal::RingBytesAllocated() - before;
#ifndef SPANPROF_RUNTIME_SRC_RECORDER_RING_MEMORY_H_
#define SPANPROF_RUNTIME_SRC_RECORDER_RING_MEMORY_H_

#include <cstdint>

namespace spanprof::internal {

// Bytes of span-record memory handed to rings since the process started
// (chunk accounting; side records are not included: benchmarks divide a
// session's share by its retained spans).
// Thread-safe; not for the hot path.
uint64_t RingBytesAllocated() noexcept;

// Unmaps the process-wide cache of freed ring blocks (benchmarks measuring
// first-touch cost; see docs/performance.md). Thread-safe; not for the hot
// path.
void ReleaseCachedChunks() noexcept;

// Unmaps cached ring blocks beyond the newest `keep`. A streaming session's
// end calls it: its rings reuse drained chunks, so the next session needs
// few blocks warm, and the rest would only add to the end's peak beside the
// capture. Thread-safe; not for the hot path.
void TrimCachedBlocks(uint64_t keep) noexcept;

// Blocks the prefaulter keeps mapped ahead of the rings during a session.
uint64_t ReadyBlocks() noexcept;

// Ring blocks in the process-wide cache, faulted in and ready for a ring
// (freed by earlier sessions or mapped ahead by the prefaulter thread).
// Tests wait on it. Thread-safe; not for the hot path.
uint64_t CachedBlocks() noexcept;

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_RECORDER_RING_MEMORY_H_
