// Taking the rings of a stopped session: a consistent copy of each thread's
// record chunks and side records, and handing each ring back (freed, or
// trimmed to the chunk its live owner may still write into) once it is parsed.
#ifndef SPANPROF_RUNTIME_SRC_COLLECTOR_RING_SNAPSHOT_H_
#define SPANPROF_RUNTIME_SRC_COLLECTOR_RING_SNAPSHOT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "recorder/recorder_internal.h"

namespace spanprof::internal {

// Gives the kernel back the pages wholly inside `[data, data + bytes)`
// (MADV_DONTNEED): they read as zeros if touched again.
void GiveBackWholePages(const void* data, size_t bytes) noexcept;

// Gives the kernel back the whole pages of `data` before byte `done_bytes`,
// which its one reader has read for the last time, once `step` bytes (a MiB
// unless said) of them have gathered; `*released` (bytes from `data`) says
// how far it went. A session
// end reads its inputs once, in order (the stream file as it is checked, the
// side records as they are parsed, the pending arguments as they are
// attached), so the capture it builds takes those pages' place instead of
// adding to the end's peak.
inline constexpr size_t kReleaseStep = size_t{1} << 20;
void ReleaseReadPrefix(const void* data, size_t done_bytes, size_t* released,
                       size_t step = kReleaseStep);
// The same over a vector that keeps its size and is not read there again
// before it is freed. Only for trivially copyable elements.
template <typename T>
void ReleaseReadPrefix(const std::vector<T>& v, size_t done, size_t* released) {
  static_assert(std::is_trivially_copyable_v<T>);
  ReleaseReadPrefix(v.data(), done * sizeof(T), released);
}

// Gives back the pages of a read-only file mapping (a stream read back at
// its session's end) that its reader is done with, `batch` bytes at a time
// rather than a call per piece read: each call interrupts the other core to
// flush its TLB while the end's helper thread runs there (a sixth of the
// parse's time in system calls at 10 M spans). Pages of the mapping are
// never written, so giving back one that is read again later (a gap of up
// to a MiB between pieces: another thread's records) only costs a fault
// that the page cache serves. Gives back the rest when destroyed.
class MappingRelease {
 public:
  explicit MappingRelease(size_t batch) : batch_(batch) {}
  ~MappingRelease() { Flush(); }
  MappingRelease(const MappingRelease&) = delete;
  MappingRelease& operator=(const MappingRelease&) = delete;

  // `[bytes, bytes + size)` was read for the last time.
  void Add(const char* bytes, size_t size) noexcept;
  // Gives back what was added so far.
  void Flush() noexcept;
  // How much it gathers before giving it back.
  size_t batch() const { return batch_; }

 private:
  size_t batch_;
  const char* lo_ = nullptr;
  const char* hi_ = nullptr;
};

// Storage reserved ahead for `need` elements (empty: none), taken as
// `into`'s when it holds them and is no larger than `most`, which bounds
// what an estimate far off may cost, and `into` holds nothing yet; freed
// otherwise.
template <typename T>
void TakeReserved(std::vector<T>& reserved, size_t need, size_t most,
                  std::vector<T>& into) {
  if (into.empty() && reserved.capacity() >= need &&
      reserved.capacity() <= most) {
    reserved.clear();
    into.swap(reserved);
  }
  std::vector<T>().swap(reserved);
}

// Records read back from a stream, in memory of their own (mapped, not from
// malloc): freeing them gives the pages back to the kernel at once, so the
// capture that the parser builds meanwhile reuses them instead of adding to
// the peak. Move-only.
class OwnedRecords {
 public:
  OwnedRecords() = default;
  // Room for `count` records (none when out of memory: data() is null).
  explicit OwnedRecords(uint64_t count);
  // The `count` records at `bytes` in a read-only file mapping that outlives
  // this object (a stream read back at its session's end), read where they
  // lie, not copied: Release() gives the mapping's pages back instead of
  // freeing. `bytes` need not be aligned for Record: readers of a chunk's
  // records load each one with LoadRecord().
  static OwnedRecords InMapping(const char* bytes, uint64_t count);
  ~OwnedRecords() { Release(); }
  OwnedRecords(OwnedRecords&& other) noexcept
      : data_(other.data_), count_(other.count_), mapped_(other.mapped_) {
    other.data_ = nullptr;
    other.count_ = 0;
  }
  OwnedRecords& operator=(OwnedRecords&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = other.data_;
      count_ = other.count_;
      mapped_ = other.mapped_;
      other.data_ = nullptr;
      other.count_ = 0;
    }
    return *this;
  }
  OwnedRecords(const OwnedRecords&) = delete;
  OwnedRecords& operator=(const OwnedRecords&) = delete;

  Record* data() const { return data_; }
  uint64_t size() const { return count_; }
  void Release() noexcept;
  // Done with the records: a view of a mapping (InMapping) goes to
  // `mapping`, to be given back with its neighbours; memory of its own is
  // freed at once.
  void ReleaseInto(MappingRelease& mapping) noexcept;

 private:
  Record* data_ = nullptr;
  uint64_t count_ = 0;
  bool mapped_ = false;  // InMapping(): a view, not memory of its own
};

// Record `i` of `records`, which may lie unaligned in a mapped stream file
// (OwnedRecords::InMapping): a copy, loaded byte-wise (one unaligned load on
// x86).
inline Record LoadRecord(const Record* records, uint64_t i) {
  Record r;
  std::memcpy(&r, reinterpret_cast<const char*>(records) + i * sizeof(Record),
              sizeof(Record));
  return r;
}

// A thread's side records, oldest first. Those in memory of their own
// (Owned(): a ring's copy, a flight recorder's restored scope pushes, a
// stream read by `spanprof recover`) come first, then those read where they
// lie in a mapped stream file (a session's own stream read back at its
// end, a piece per side chunk, AddMapped()): no copy of 32 bytes an
// argument beside the spans being parsed. Read by index and by value: a
// piece need not be aligned for SideRecord.
class SideRecords {
 public:
  size_t size() const { return owned_.size() + mapped_; }
  bool empty() const { return size() == 0; }
  // Record `k` (< size()).
  SideRecord operator[](size_t k) const {
    if (k < owned_.size()) return owned_[k];
    const Piece& piece = PieceOf(k - owned_.size());
    SideRecord record;
    std::memcpy(
        &record,
        piece.bytes + (k - owned_.size() - piece.first) * sizeof(SideRecord),
        sizeof(SideRecord));
    return record;
  }
  // The records in memory of their own; mapped ones are copied there first
  // (the end that joins a failed stream to its rings edits them).
  std::vector<SideRecord>& Owned();
  // Puts `records` before all others, in memory of their own.
  void Prepend(const std::vector<SideRecord>& records);
  // Appends the `count` records at `bytes` in a read-only mapping that
  // outlives this object.
  void AddMapped(const char* bytes, size_t count);
  // Keeps the first `count`.
  void Truncate(size_t count);
  // The records before `done` were read for the last time: the whole pages
  // of the owned ones go back to the kernel (ReleaseReadPrefix), and the
  // mapped pieces wholly before it go to `mapping`; of a piece read in
  // part, each `mapping.batch()` read goes back at once (ReleaseReadPrefix).
  void ReleaseRead(size_t done, MappingRelease& mapping) const;
  // Frees them all.
  void Clear();

 private:
  struct Piece {
    const char* bytes;
    size_t first;  // its first record's index among the mapped ones
    size_t count;
  };
  // The piece holding mapped record `k`.
  const Piece& PieceOf(size_t k) const {
    if (k - pieces_[cursor_].first >= pieces_[cursor_].count) Seek(k);
    return pieces_[cursor_];
  }
  void Seek(size_t k) const;

  std::vector<SideRecord> owned_;
  std::vector<Piece> pieces_;
  size_t mapped_ = 0;
  // Reading goes in order: the piece last read, and how far the reads were
  // given back.
  mutable size_t cursor_ = 0;
  mutable size_t owned_released_ = 0;
  mutable size_t pieces_released_ = 0;
  // Bytes of pieces_[pieces_released_] already given back (read in part).
  mutable size_t piece_released_ = 0;
};

// One thread's consistent snapshot, taken under its mutex after stop.
struct RingSnapshot {
  // The ring it was taken from; nullptr for a thread read back from a
  // stream file (nothing to hand back).
  ThreadRing* ring = nullptr;
  uint32_t slot = 0;          // the thread's index in its session's ring list
  std::vector<Chunk> chunks;  // with `used` filled in
  // The records `chunks` point into when no ring holds them (a stream read
  // back), one vector per chunk: the parser frees each once it is parsed, so
  // that the records shrink while the capture grows.
  mutable std::vector<OwnedRecords> owned;
  // Side records oldest first, and the index of each in the thread's side
  // stream (ring mode overwrites the oldest, so indices need not start at 0):
  // `side_index` holds the indices of the first ones (the pushes of scopes
  // restored at their own indices), the rest follow on from
  // `side_index_rest`, one apart (SideIndex()), with no index stored for
  // them: 8 bytes a side record less at a session end's peak.
  SideRecords side;
  std::vector<uint64_t> side_index;
  uint64_t side_index_rest = 0;
  uint64_t side_base = 0;       // index of the oldest side record still held
  bool side_truncated = false;  // older side records were overwritten
  // Whether a context scope's push is among the side records: 1 or 0 when
  // the stream reader counted them as it checked them; -1: NeedPositions()
  // reads them.
  int8_t has_context_push = -1;
  std::vector<uint64_t> drops_by_site;
  uint64_t dropped_args = 0;  // side records refused (ThreadRing's count)
  uint64_t os_tid = 0;
  std::string name;
  bool truncated = false;  // the stream lost a prefix (ring mode)
  // The index of side record `k` in the thread's side stream.
  uint64_t SideIndex(size_t k) const {
    return k < side_index.size() ? side_index[k]
                                 : side_index_rest + (k - side_index.size());
  }
  // Stores every side record's index in `side_index` (to edit the two
  // vectors together).
  void StoreSideIndex() {
    const size_t stored = side_index.size();
    side_index.reserve(side.size());
    for (size_t k = stored; k < side.size(); ++k) {
      side_index.push_back(side_index_rest + (k - stored));
    }
  }

  // The begin records in `chunks` when the stream reader counted them;
  // UINT64_MAX: CountBegins() reads the records.
  uint64_t begins = UINT64_MAX;
};

// Snapshots every ring of a stopped session, in order. After its lock is held
// and released once, a thread can no longer switch chunks, so closed chunks
// and the published prefix of the current chunk are stable. Adds each ring's
// drops to `drops_by_site` (by interned site id).
std::vector<RingSnapshot> SnapshotRings(const std::vector<ThreadRing*>& rings,
                                        std::vector<uint64_t>* drops_by_site);

// Gives a parsed ring back: an exited thread's ring is freed; a live thread
// keeps only the chunk it may still be writing into (a straggler's records
// there are never read).
void HandBack(const RingSnapshot& snap);

// Whether raw stream positions are needed: only to resolve contexts and to
// discard the spans older than a wrapped side buffer.
bool NeedPositions(const std::vector<RingSnapshot>& snaps);

// The span-record memory of all snapshots' chunks, in bytes.
uint64_t RingBytes(const std::vector<RingSnapshot>& snaps);

// The number of begin records in all snapshots (the capture's span count
// before trimming).
uint64_t CountBegins(const std::vector<RingSnapshot>& snaps);

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_COLLECTOR_RING_SNAPSHOT_H_
