// The end of a streaming session (stream_end.h).
#include "stream/stream_end.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "collector/assemble.h"
#include "collector/ring_snapshot.h"
#include "recorder/ring_memory.h"
#include "stream/stream_reader.h"

namespace spanprof::internal {
namespace {

// A file's bytes, mapped read-only: reading the stream back costs no copy
// of the file, and its pages leave with the mapping.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      error_ = std::strerror(errno);  // NOLINT(concurrency-mt-unsafe)
      return;
    }
    struct stat info {};
    if (::fstat(fd_, &info) != 0 || info.st_size <= 0) {
      error_ = "empty or unreadable";
      return;
    }
    size_ = static_cast<size_t>(info.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      error_ = std::strerror(errno);  // NOLINT(concurrency-mt-unsafe)
      size_ = 0;
      return;
    }
    ::madvise(p, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const char*>(p);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool ok() const { return data_ != nullptr; }
  std::string_view bytes() const { return {data_, size_}; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  const char* data_ = nullptr;
  size_t size_ = 0;
  std::string error_;
};

bool AnyRecycled(const std::vector<ThreadRing*>& rings) {
  return std::ranges::any_of(rings, [](ThreadRing* r) {
    std::lock_guard<std::mutex> lock(r->mu);
    return r->recycled_chunks > 0 || r->side.first() > 0;
  });
}

// The stream holds everything: the rings' record chunks go back (to the
// block cache) and their side records' pages to the kernel, before the
// capture is built beside them. The record before the newest side record
// stays: an empty context scope may still withdraw it. A flight recorder's
// side buffer wraps (its owner may write anywhere in it): it stays whole.
void GiveBack(const std::vector<ThreadRing*>& rings) {
  for (ThreadRing* r : rings) {
    {
      std::lock_guard<std::mutex> lock(r->mu);
      const uint64_t n = r->side_published.load(std::memory_order_relaxed);
      if (!r->ring_mode && n > 0) r->side.Discard(n - 1);
    }
    RingSnapshot snap;
    snap.ring = r;
    HandBack(snap);
  }
}

// Storage for the capture's spans, reserved from the records the stream
// holds and faulted in on a thread of its own while the caller reads the
// stream back, so that the parse writes 56 bytes a span into memory the
// kernel has mapped already (first touch was about a tenth of a streaming
// session end, on the one core the end used then). A flight recorder's
// stream holds fewer records than it was written: none is reserved there,
// nor for a small session.
class SpanStorage {
 public:
  SpanStorage(const StreamWriter& writer, const SessionState& session) {
    constexpr uint64_t kMinSpans = uint64_t{1} << 16;
    if (session.options.overflow == OverflowPolicy::kRing) return;
    // A span is a begin and an end, two records each with the allocation
    // counters; spans still open at the stop have no end.
    const uint64_t spans =
        writer.SpanRecordsWritten() / (session.count_allocs ? 4 : 2) + 1024;
    if (spans < kMinSpans) return;
    try {
      spans_.reserve(spans);
      prefault_ = std::thread([this] { FaultIn(); });
    } catch (const std::exception&) {
      // No memory or no thread: the capture reserves its own.
    }
  }
  SpanStorage(const SpanStorage&) = delete;
  SpanStorage& operator=(const SpanStorage&) = delete;
  ~SpanStorage() {
    if (prefault_.joinable()) prefault_.join();
  }

  std::vector<Span> Take() {
    if (prefault_.joinable()) prefault_.join();
    return std::move(spans_);
  }

 private:
  void FaultIn() {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    auto* const bytes = reinterpret_cast<char*>(spans_.data());
    const size_t size = spans_.capacity() * sizeof(Span);
#ifdef MADV_POPULATE_WRITE
    // Linux 5.14: the kernel maps every page in one call.
    const auto begin = reinterpret_cast<uintptr_t>(bytes);
    const uintptr_t first = (begin + page - 1) / page * page;
    const uintptr_t last = (begin + size) / page * page;
    // In steps of 2 MiB: the call holds the process's memory map lock, which
    // the caller's own mmap and munmap calls wait for meanwhile.
    constexpr uintptr_t kStep = uintptr_t{2} << 20;
    uintptr_t done = first;
    while (done < last) {
      const uintptr_t n = std::min(kStep, last - done);
      if (madvise(bytes + (done - begin), n, MADV_POPULATE_WRITE) != 0) break;
      done += n;
    }
    if (done >= last) return;
#endif
    // The storage is raw (no span is built in it yet): a byte a page.
    for (size_t at = 0; at < size; at += page) {
      static_cast<volatile char*>(bytes)[at] = 0;
    }
  }

  std::vector<Span> spans_;
  std::thread prefault_;
};

// The stream's snapshot of thread `slot` (added when the stream has none).
RingSnapshot& SnapshotOfSlot(CaptureInputs& in, uint32_t slot) {
  for (RingSnapshot& snap : in.snaps) {
    if (snap.slot == slot) return snap;
  }
  RingSnapshot& added = in.snaps.emplace_back();
  added.slot = slot;
  return added;
}

// Appends to a stream snapshot the records its ring still holds past what the
// stream has. Returns the records lost in between (reused before the stream
// could take them), with everything after them.
uint64_t JoinRecords(const RingSnapshot& live, RingSnapshot& snap) {
  uint64_t n = 0;
  for (const Chunk& chunk : snap.chunks) n += chunk.used;
  uint64_t lost = 0;
  for (const Chunk& chunk : live.chunks) {
    const uint64_t end = chunk.base_position + chunk.used;
    if (end <= n) continue;
    if (lost > 0 || chunk.base_position > n) {
      lost += chunk.used;  // after a gap nothing can be placed
      continue;
    }
    const uint64_t count = end - n;
    OwnedRecords& piece = snap.owned.emplace_back(count);
    if (piece.data() == nullptr) throw std::bad_alloc();
    std::memcpy(piece.data(), chunk.records + (n - chunk.base_position),
                count * sizeof(Record));
    snap.chunks.push_back(Chunk{piece.data(), count, count, n});
    snap.begins = UINT64_MAX;  // counted again, with the ring's records
    n = end;
  }
  return lost;
}

// Writing the stream failed after some rings reused drained chunks: joins
// what the rings still hold (records past the stream's, the side records
// from the oldest one the ring still holds, and the drops) to what the
// stream has. Returns the records that neither holds.
uint64_t JoinRings(const std::vector<ThreadRing*>& rings, CaptureInputs& in) {
  std::vector<uint64_t> drops;
  std::vector<RingSnapshot> live = SnapshotRings(rings, &drops);
  in.drops_by_site = std::move(drops);
  uint64_t lost = 0;
  for (RingSnapshot& l : live) {
    RingSnapshot& snap = SnapshotOfSlot(in, l.slot);
    lost += JoinRecords(l, snap);
    uint64_t records = 0;
    for (const Chunk& chunk : snap.chunks) records += chunk.used;
    // The stream's side records up to the ring's oldest (whose memory the
    // ring reused), then the ring's.
    const uint64_t first_live =
        l.side_index.empty() ? UINT64_MAX : l.side_index.front();
    size_t keep = 0;
    while (keep < snap.side.size() && keep < snap.side_index.size() &&
           snap.side_index[keep] < first_live) {
      ++keep;
    }
    snap.side.resize(keep);
    snap.side_index.resize(keep);
    for (size_t k = 0; k < l.side.size(); ++k) {
      if (l.side[k].position > records) break;
      snap.side.push_back(l.side[k]);
      snap.side_index.push_back(l.side_index[k]);
    }
    snap.drops_by_site = std::move(l.drops_by_site);
    snap.dropped_args = l.dropped_args;
    snap.os_tid = l.os_tid;
    snap.name = std::move(l.name);
    HandBack(l);
  }
  return lost;
}

// What the stream file holds, as the collector takes it; empty inputs (and
// a line on stderr) when it cannot be read. The inputs' records lie in
// `file`'s mapping: the caller keeps it until they are parsed.
CaptureInputs ReadBack(const MappedFile& file, const std::string& path,
                       const std::vector<uint64_t>& side_records) {
  if (!file.ok()) {
    std::fprintf(stderr, "spanprof: cannot read back the stream %s: %s\n",
                 path.c_str(), file.error().c_str());
    return {};
  }
  absl::StatusOr<StreamContents> read =
      ReadStream(file.bytes(), path, /*own_session=*/true, &side_records);
  if (!read.ok()) {
    std::fprintf(stderr, "spanprof: cannot read back the stream: %s\n",
                 std::string(read.status().message()).c_str());
    return {};
  }
  return std::move(read->inputs);
}

}  // namespace

Capture CollectThroughStream(StreamWriter& writer, const SessionState& session,
                             const std::vector<ThreadRing*>& rings,
                             const ClockPair& stop,
                             const std::string& end_reason, bool give_back) {
  bool written = writer.DrainStopped(rings, stop);
  if (written) {
    writer.WriteEnd(end_reason);
    written = !writer.failed();
  }
  if (!written && !AnyRecycled(rings)) {
    // Nothing was reused: the rings hold the whole capture.
    return CollectEndedSession(session, rings, stop);
  }
  // The stream holds everything: the rings' memory goes back first.
  if (written && give_back) {
    GiveBack(rings);
    // A streaming ring reuses its drained chunks, so the next session keeps
    // warm with the prefaulter's few blocks; the rest of what the rings took
    // (all of it when the session ended before the drain caught up) would
    // sit beside the capture at the end's peak.
    TrimCachedBlocks(ReadyBlocks());
  }
  SpanStorage storage(writer, session);
  const MappedFile file(writer.path());
  CaptureInputs in = ReadBack(file, writer.path(), writer.SideRecordsWritten());
  in.spans = storage.Take();
  if (!written) {
    const uint64_t lost = JoinRings(rings, in);
    std::fprintf(stderr,
                 "spanprof: writing the stream %s failed; the capture joins "
                 "what it holds to what the rings kept (%llu records lost "
                 "between them)\n",
                 writer.path().c_str(), static_cast<unsigned long long>(lost));
  }
  AddSessionTables(session, stop, in);
  return AssembleCapture(FactsOf(session), in);
}

Capture StopRecordingThroughStream(StreamWriter& writer,
                                   const std::string& end_reason) {
  SessionState& session = Session();
  std::vector<ThreadRing*> rings;
  ClockPair stop{};
  if (!EndActiveSession(session, &rings, &stop)) return Capture{};
  return CollectThroughStream(writer, session, rings, stop, end_reason,
                              /*give_back=*/true);
}

}  // namespace spanprof::internal
