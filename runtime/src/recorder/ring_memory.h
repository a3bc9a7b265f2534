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

// Ring blocks in the process-wide cache, faulted in and ready for a ring
// (freed by earlier sessions or mapped ahead by the prefaulter thread).
// Tests wait on it. Thread-safe; not for the hot path.
uint64_t CachedBlocks() noexcept;

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_RECORDER_RING_MEMORY_H_
