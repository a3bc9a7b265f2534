// Taking the rings of a stopped session and giving them back.
#include "collector/ring_snapshot.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace spanprof::internal {
namespace {

// The main stream: every chunk, the current one with its published length.
void SnapshotChunks(const ThreadRing& r, RingSnapshot* snap) {
  snap->chunks = r.chunks;
  if (!snap->chunks.empty() && snap->chunks.back().records != nullptr) {
    snap->chunks.back().used = static_cast<uint64_t>(
        r.cursor.load(std::memory_order_acquire) - r.chunk_begin);
  } else if (!snap->chunks.empty()) {
    snap->chunks.pop_back();  // the placeholder of a thread that never wrote
  }
  snap->truncated =
      !snap->chunks.empty() && snap->chunks.front().base_position != 0;
}

// A wrapped side buffer (ring mode), oldest first. The very oldest slot is
// skipped because a straggler may be overwriting it right now.
void SnapshotWrappedSide(const ThreadRing& r, uint64_t side_count,
                         RingSnapshot* snap) {
  const uint64_t cap = r.side_capacity;
  snap->side_base = side_count - cap + 1;
  snap->side_truncated = true;
  // Scopes whose push was overwritten come back first, in push order: those
  // still alive, and those that ended with their pop still here.
  std::vector<std::pair<uint64_t, SideRecord>> restored;
  for (const ThreadRing::LiveScope& scope : r.live_scopes) {
    if (scope.index >= snap->side_base) break;
    restored.emplace_back(scope.index, scope.push);
  }
  for (size_t k = r.ended_scopes_head; k < r.ended_scopes.size(); ++k) {
    const ThreadRing::EndedScope& scope = r.ended_scopes[k];
    if (scope.index < snap->side_base && scope.pop_index >= snap->side_base &&
        scope.pop_index < side_count) {
      restored.emplace_back(scope.index, scope.push);
    }
  }
  std::sort(restored.begin(), restored.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SideRecord>& side = snap->side.Owned();
  for (const auto& [index, push] : restored) {
    side.push_back(push);
    snap->side_index.push_back(index);
  }
  snap->side_index_rest = snap->side_base;
  for (uint64_t k = snap->side_base; k < side_count; ++k) {
    side.push_back(r.side[k % cap]);
  }
}

// The side stream: arguments and context pushes/pops.
void SnapshotSide(const ThreadRing& r, RingSnapshot* snap) {
  const uint64_t side_count = r.side_published.load(std::memory_order_acquire);
  if (r.side_wrapped) {
    SnapshotWrappedSide(r, side_count, snap);
    return;
  }
  // A streaming ring holds its side records from first() on (the stream
  // holds the older ones; JoinRings puts the two together).
  const uint64_t first = std::min(r.side.first(), side_count);
  std::vector<SideRecord>& side = snap->side.Owned();
  side.resize(side_count - first);
  r.side.CopyOut(first, side_count, side.data());
  snap->side_index_rest = first;
}

void AddDrops(const std::vector<uint64_t>& drops,
              std::vector<uint64_t>* drops_by_site) {
  if (drops_by_site->size() < drops.size()) {
    drops_by_site->resize(drops.size(), 0);
  }
  for (size_t s = 0; s < drops.size(); ++s) (*drops_by_site)[s] += drops[s];
}

}  // namespace

std::vector<SideRecord>& SideRecords::Owned() {
  if (!pieces_.empty()) {
    owned_.reserve(size());
    for (const Piece& piece : pieces_) {
      const size_t old = owned_.size();
      owned_.resize(old + piece.count);
      std::memcpy(owned_.data() + old, piece.bytes,
                  piece.count * sizeof(SideRecord));
    }
    pieces_.clear();
    mapped_ = 0;
    cursor_ = 0;
  }
  return owned_;
}

void SideRecords::Prepend(const std::vector<SideRecord>& records) {
  owned_.insert(owned_.begin(), records.begin(), records.end());
}

void SideRecords::AddMapped(const char* bytes, size_t count) {
  if (count == 0) return;
  pieces_.push_back(Piece{bytes, mapped_, count});
  mapped_ += count;
}

void SideRecords::Truncate(size_t count) {
  if (count >= size()) return;
  if (count <= owned_.size()) {
    owned_.resize(count);
    pieces_.clear();
    mapped_ = 0;
    cursor_ = 0;
    return;
  }
  const size_t keep = count - owned_.size();
  while (!pieces_.empty() && pieces_.back().first >= keep) pieces_.pop_back();
  if (!pieces_.empty()) {
    pieces_.back().count = keep - pieces_.back().first;
  }
  mapped_ = keep;
  cursor_ = 0;
}

void SideRecords::ReleaseRead(size_t done, MappingRelease& mapping) const {
  ReleaseReadPrefix(owned_, std::min(done, owned_.size()), &owned_released_);
  if (done <= owned_.size()) return;
  const size_t mapped_done = done - owned_.size();
  while (pieces_released_ < pieces_.size()) {
    const Piece& piece = pieces_[pieces_released_];
    // The pieces are consecutive, and the ones before this one were read
    // whole: `mapped_done` is at or past its first record.
    const size_t read = std::min(mapped_done - piece.first, piece.count);
    if (read < piece.count) {
      // A piece is one stream chunk (up to 1 MiB): once a batch of it was
      // read, that part goes at once. Not through `mapping`, which would
      // join it to a later range across the part not read yet.
      ReleaseReadPrefix(piece.bytes, read * sizeof(SideRecord),
                        &piece_released_, mapping.batch());
      return;
    }
    const size_t size = piece.count * sizeof(SideRecord);
    mapping.Add(piece.bytes + piece_released_, size - piece_released_);
    ++pieces_released_;
    piece_released_ = 0;
  }
}

void SideRecords::Clear() {
  std::vector<SideRecord>().swap(owned_);
  std::vector<Piece>().swap(pieces_);
  mapped_ = 0;
  cursor_ = 0;
  owned_released_ = 0;
  pieces_released_ = 0;
  piece_released_ = 0;
}

void SideRecords::Seek(size_t k) const {
  // The next piece when reading on in order, else the one whose range
  // holds `k`.
  if (cursor_ + 1 < pieces_.size() &&
      k - pieces_[cursor_ + 1].first < pieces_[cursor_ + 1].count) {
    ++cursor_;
    return;
  }
  const auto after = std::upper_bound(
      pieces_.begin(), pieces_.end(), k,
      [](size_t index, const Piece& piece) { return index < piece.first; });
  cursor_ = static_cast<size_t>(after - pieces_.begin()) - 1;
}

OwnedRecords::OwnedRecords(uint64_t count) {
  if (count == 0) return;
  // Populated at once: faulting the pages in one call costs a fraction of
  // one fault per page as the copy first touches them.
  void* p = mmap(nullptr, count * sizeof(Record), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) return;
  data_ = static_cast<Record*>(p);
  count_ = count;
}

OwnedRecords OwnedRecords::InMapping(const char* bytes, uint64_t count) {
  OwnedRecords view;
  // Only pointed at, never written through: the mapping is read-only.
  view.data_ = reinterpret_cast<Record*>(const_cast<char*>(bytes));
  view.count_ = count;
  view.mapped_ = true;
  return view;
}

void GiveBackWholePages(const void* data, size_t bytes) noexcept {
  if (data == nullptr) return;
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + bytes) / page * page;
  if (last <= first) return;
  // Pointer arithmetic from `data`, not a cast from the integer.
  char* const at = const_cast<char*>(static_cast<const char*>(data));
  madvise(at + (first - begin), last - first, MADV_DONTNEED);
}

void ReleaseReadPrefix(const void* data, size_t done_bytes, size_t* released,
                       size_t step) {
  if (data == nullptr || done_bytes < *released + step) return;
  // Up to the last page boundary, so that the next call starts on one (a
  // step under a page may not reach past the boundary it started at).
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t boundary = (begin + done_bytes) / page * page;
  if (boundary <= begin + *released) return;
  const size_t end = boundary - begin;
  GiveBackWholePages(static_cast<const char*>(data) + *released,
                     end - *released);
  *released = end;
}

void MappingRelease::Add(const char* bytes, size_t size) noexcept {
  constexpr size_t kGap = size_t{1} << 20;
  // A piece behind the range, or far past it, starts a range of its own.
  if (lo_ != nullptr &&
      (bytes < hi_ || static_cast<size_t>(bytes - hi_) > kGap)) {
    Flush();
  }
  if (lo_ == nullptr) lo_ = bytes;
  hi_ = bytes + size;
  if (static_cast<size_t>(hi_ - lo_) >= batch_) Flush();
}

void MappingRelease::Flush() noexcept {
  if (lo_ != nullptr) GiveBackWholePages(lo_, static_cast<size_t>(hi_ - lo_));
  lo_ = nullptr;
  hi_ = nullptr;
}

void OwnedRecords::ReleaseInto(MappingRelease& mapping) noexcept {
  if (data_ == nullptr || !mapped_) {
    Release();
    return;
  }
  mapping.Add(reinterpret_cast<const char*>(data_), count_ * sizeof(Record));
  data_ = nullptr;
  count_ = 0;
}

void OwnedRecords::Release() noexcept {
  if (data_ != nullptr && mapped_) {
    // The pages wholly inside the records go (the file stays in the page
    // cache); a page shared with the next chunk stays until the mapping
    // goes.
    GiveBackWholePages(data_, count_ * sizeof(Record));
  } else if (data_ != nullptr) {
    munmap(data_, count_ * sizeof(Record));
  }
  data_ = nullptr;
  count_ = 0;
}

std::vector<RingSnapshot> SnapshotRings(const std::vector<ThreadRing*>& rings,
                                        std::vector<uint64_t>* drops_by_site) {
  std::vector<RingSnapshot> snaps(rings.size());
  for (size_t i = 0; i < rings.size(); ++i) {
    ThreadRing* r = rings[i];
    RingSnapshot& snap = snaps[i];
    std::lock_guard<std::mutex> lock(r->mu);
    snap.ring = r;
    snap.slot = r->slot;
    SnapshotChunks(*r, &snap);
    SnapshotSide(*r, &snap);
    snap.drops_by_site = r->drops_by_site;
    snap.dropped_args = r->dropped_args.load(std::memory_order_relaxed);
    snap.os_tid = r->os_tid;
    snap.name = r->name;
    AddDrops(snap.drops_by_site, drops_by_site);
  }
  return snaps;
}

void HandBack(const RingSnapshot& snap) {
  ThreadRing* r = snap.ring;
  bool destroy = false;
  {
    std::lock_guard<std::mutex> lock(r->mu);
    r->in_session = false;
    if (r->owner_exited) {
      destroy = true;
    } else if (r->chunks.size() > 1) {
      for (size_t c = 0; c + 1 < r->chunks.size(); ++c) {
        FreeChunk(r->chunks[c]);
      }
      r->chunks.erase(r->chunks.begin(), r->chunks.end() - 1);
    }
  }
  if (destroy) {
    for (Chunk& chunk : r->chunks) FreeChunk(chunk);
    delete r;
  }
}

bool NeedPositions(const std::vector<RingSnapshot>& snaps) {
  for (const RingSnapshot& snap : snaps) {
    if (snap.side_truncated || snap.has_context_push == 1) return true;
    if (snap.has_context_push == 0) continue;
    for (size_t k = 0; k < snap.side.size(); ++k) {
      if (snap.side[k].kind == kSideContextPush) return true;
    }
  }
  return false;
}

uint64_t RingBytes(const std::vector<RingSnapshot>& snaps) {
  uint64_t bytes = 0;
  for (const RingSnapshot& snap : snaps) {
    for (const Chunk& chunk : snap.chunks) {
      bytes += chunk.capacity * sizeof(Record);
    }
  }
  return bytes;
}

uint64_t CountBegins(const std::vector<RingSnapshot>& snaps) {
  uint64_t begins = 0;
  for (const RingSnapshot& snap : snaps) {
    if (snap.begins != UINT64_MAX) {
      begins += snap.begins;
      continue;
    }
    for (const Chunk& chunk : snap.chunks) {
      for (uint64_t i = 0; i < chunk.used; ++i) {
        begins +=
            (LoadRecord(chunk.records, i).word >> kKindShift) == kBeginRecord;
      }
    }
  }
  return begins;
}

}  // namespace spanprof::internal
