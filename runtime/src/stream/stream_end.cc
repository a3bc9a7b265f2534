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
#include "spanprof/internal/compact_spans.h"
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

// Storage for what a streaming session end writes, reserved from what the
// stream writer wrote and faulted in on a thread of its own while the caller
// reads the stream back, parses it and attaches the arguments, so that they
// write into memory the kernel has mapped already (first touch was about a
// tenth of a streaming session end, and a third of one with arguments, on
// the one core that parses):
//   - the capture's spans (56 bytes a span, or 40 where they go compact
//     as the parse goes: the capture a session end writes its outputs from,
//     ParsedSpans);
//   - unless the capture's arguments are packed as each thread is parsed
//     (a store that grows as they come): the collector's pending arguments
//     (16 bytes an argument), just ahead of the parse, which meanwhile
//     gives back the side records it read (where they lie in the stream's
//     mapping: they are not copied), and the capture's arguments (32 bytes
//     an argument), just ahead of the attachment, which meanwhile gives
//     back the pending arguments it read.
// "Just ahead" (EndProgress) keeps the end's peak where it was: the memory
// faulted in early is at most a sixteenth of each paced store. A flight
// recorder's stream holds fewer records than it was written: nothing is
// reserved there, nor for a small session.
class CaptureStorage {
 public:
  // `pack_args`: the capture's arguments are packed (Capture::packed_args)
  // as each thread is parsed, a store that grows as they come: nothing is
  // reserved for them, nor for the few pending at a time.
  CaptureStorage(const StreamWriter& writer, const SessionState& session,
                 bool pack_args) {
    constexpr uint64_t kMinSpans = uint64_t{1} << 16;
    if (session.options.overflow == OverflowPolicy::kRing) return;
    // A span is a begin and an end, two records each with the allocation
    // counters; spans still open at the stop have no end.
    const uint64_t spans =
        writer.SpanRecordsWritten() / (session.count_allocs ? 4 : 2) + 1024;
    if (spans < kMinSpans) return;
    uint64_t side = 0;
    const std::vector<uint64_t> side_by_slot = writer.SideRecordsWritten();
    for (const uint64_t n : side_by_slot) side += n;
    try {
      char* span_bytes = nullptr;
      if (pack_args) {
        compact_ = std::make_shared<CompactSpans>();
        compact_->Reserve(spans);
        span_bytes = static_cast<char*>(const_cast<void*>(compact_->data()));
        span_region_ = {span_bytes,
                        compact_->capacity() * CompactSpans::kBytesPerSpan};
        span_size_ = CompactSpans::kBytesPerSpan;
      } else {
        spans_.reserve(spans);
        span_bytes = reinterpret_cast<char*>(spans_.data());
        span_region_ = RegionOf(spans_);
      }
      // The kernel populates in the background only where it can
      // (MADV_POPULATE_WRITE, Linux 5.14): then the end may write into the
      // storage while it is being faulted in. Elsewhere a byte is written
      // per page, which must end before the storage is used (Take()): the
      // spans only, as before the stream.
      background_ = CanPopulate(span_bytes);
      if (background_ && !pack_args) {
        args_.reserve(side);
        span_args_.reserve(side);
      }
      // Where the storage lies, noted before the helper starts: the scan
      // and Take() move the vectors away meanwhile (their buffers stay).
      arg_region_ = RegionOf(args_);
      span_arg_region_ = RegionOf(span_args_);
      prefault_ = std::thread([this] { FaultIn(); });
    } catch (const std::exception&) {
      // No memory or no thread: the capture reserves its own.
    }
  }
  CaptureStorage(const CaptureStorage&) = delete;
  CaptureStorage& operator=(const CaptureStorage&) = delete;
  ~CaptureStorage() {
    progress_.Stop();
    if (prefault_.joinable()) prefault_.join();
  }

  // The reserved storage, moved into the capture's inputs (the buffers do
  // not move, so the kernel may still be populating them), with the
  // progress that paces the helper.
  void Take(CaptureInputs& in) {
    if (!background_ && prefault_.joinable()) prefault_.join();
    in.spans = std::move(spans_);
    in.compact_spans = std::move(compact_);
    in.args = std::move(args_);
    in.span_args = std::move(span_args_);
    in.progress = prefault_.joinable() ? &progress_ : nullptr;
  }

 private:
  // Whether MADV_POPULATE_WRITE works here (tried on the page of `at`).
  static bool CanPopulate(char* at) {
#ifdef MADV_POPULATE_WRITE
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    // Pointer arithmetic from `at`, not a cast from the integer.
    char* const first = at - reinterpret_cast<uintptr_t>(at) % page;
    return madvise(first, page, MADV_POPULATE_WRITE) == 0;
#else
    (void)at;
    return false;
#endif
  }

  // In steps of 2 MiB: a call holds the process's memory map lock, which
  // the caller's own mmap and munmap calls wait for meanwhile.
  static constexpr size_t kStep = size_t{2} << 20;

  struct Region {
    char* bytes = nullptr;
    size_t size = 0;
  };
  template <typename T>
  static Region RegionOf(std::vector<T>& v) {
    return {reinterpret_cast<char*>(v.data()), v.capacity() * sizeof(T)};
  }

  // The spans, with the pending arguments kept just ahead of the parse;
  // then the capture's arguments, just ahead of their attachment.
  void FaultIn() {
    const Region spans = span_region_;
    const Region args = arg_region_;
    // The pending arguments the parse has written, estimated from its spans.
    const auto parsed = [&] {
      const auto share =
          static_cast<double>(progress_.spans.load(std::memory_order_relaxed)) /
          static_cast<double>(std::max<size_t>(spans.size / span_size_, 1));
      return static_cast<uint64_t>(share * static_cast<double>(args.size));
    };
    size_t args_done = 0;
    if (!background_) {
      // The caller waits for all of it (Take()).
      for (size_t done = 0; done < spans.size; done += kStep) {
        Populate(spans.bytes + done, std::min(kStep, spans.size - done));
      }
      return;
    }
    // The spans just ahead of the parse too: faulted in whole before it,
    // they sat beside every side record's copy at the end's peak.
    size_t spans_done = 0;
    const auto parsed_spans = [&] {
      return progress_.spans.load(std::memory_order_relaxed) * span_size_;
    };
    // The attachment's first progress ends the parse: the estimate may
    // exceed the spans parsed.
    PaceUntil(
        [&] {
          const size_t next_spans = PaceAhead(spans, spans_done, parsed_spans);
          const size_t next_args = PaceAhead(args, args_done, parsed);
          const bool moved = next_spans != spans_done || next_args != args_done;
          spans_done = next_spans;
          args_done = next_args;
          return moved;
        },
        [&] {
          return spans_done >= spans.size ||
                 progress_.args.load(std::memory_order_relaxed) > 0;
        });
    // The pending arguments as the parse goes on, then the capture's
    // arguments as they are attached.
    Paced(args, args_done, parsed);
    Paced(span_arg_region_, 0, [&] {
      return progress_.args.load(std::memory_order_relaxed) * sizeof(SpanArg);
    });
  }

  // Faults in `region` from `done` up to a sixteenth of it past what
  // `written()` says its writer has reached; returns how far.
  template <typename Written>
  size_t PaceAhead(const Region& region, size_t done,
                   const Written& written) const {
    const size_t window = std::max(region.size / 16, size_t{256} << 10);
    const size_t upto = std::min<uint64_t>(
        region.size, static_cast<uint64_t>(written()) + window);
    if (region.bytes == nullptr || upto <= done) return done;
    Populate(region.bytes + done, upto - done);
    return upto;
  }

  // Runs `step()` (true: it faulted something in) until `finished()`,
  // waiting for the writers' progress after a step that found nothing to
  // do; returns early when the end is over (Stop()).
  template <typename Step, typename Finished>
  void PaceUntil(const Step& step, const Finished& finished) {
    while (!finished()) {
      const uint32_t seen = progress_.changes.load(std::memory_order_acquire);
      if (progress_.stopped.load(std::memory_order_relaxed)) return;
      if (!step()) progress_.changes.wait(seen, std::memory_order_acquire);
    }
  }

  // PaceAhead() until all of `region` is faulted in (PaceUntil()).
  template <typename Written>
  void Paced(const Region& region, size_t done, const Written& written) {
    if (region.bytes == nullptr) return;
    PaceUntil(
        [&] {
          const size_t next = PaceAhead(region, done, written);
          const bool moved = next != done;
          done = next;
          return moved;
        },
        [&] { return done >= region.size; });
  }

  // Faults in the pages of `[bytes, bytes + size)` that begin in it. The
  // storage is raw (nothing is built in it yet), so where the kernel cannot
  // populate it a byte a page is written.
  void Populate(char* bytes, size_t size) const {
    static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    if (bytes == nullptr || size == 0) return;
    // Pointer arithmetic from `bytes`, not a cast from the integer.
    const uintptr_t begin = reinterpret_cast<uintptr_t>(bytes);
    const size_t skip = (page - begin % page) % page;
    if (skip >= size) return;
#ifdef MADV_POPULATE_WRITE
    if (background_) {
      // The last page may go on past the region: populating it changes
      // nothing in it.
      const size_t span = (size - skip + page - 1) / page * page;
      madvise(bytes + skip, span, MADV_POPULATE_WRITE);
      return;
    }
#endif
    for (size_t at = skip; at < size; at += page) {
      static_cast<volatile char*>(bytes)[at] = 0;
    }
  }

  std::vector<Span> spans_;
  std::shared_ptr<CompactSpans> compact_;
  size_t span_size_ = sizeof(Span);  // bytes a span in span_region_
  std::vector<PendingArg> args_;
  std::vector<SpanArg> span_args_;
  Region span_region_;
  Region arg_region_;
  Region span_arg_region_;
  bool background_ = false;
  EndProgress progress_;
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
    // ring reused), then the ring's, each with its index stored.
    // (The stream's, read where they lie in its mapping, are copied first.)
    const uint64_t first_live = l.side.empty() ? UINT64_MAX : l.SideIndex(0);
    std::vector<SideRecord>& side = snap.side.Owned();
    snap.StoreSideIndex();
    size_t keep = 0;
    while (keep < side.size() && snap.side_index[keep] < first_live) {
      ++keep;
    }
    side.resize(keep);
    snap.side_index.resize(keep);
    snap.has_context_push = -1;  // the ring's are not counted
    for (size_t k = 0; k < l.side.size(); ++k) {
      const SideRecord record = l.side[k];
      if (record.position > records) break;
      side.push_back(record);
      snap.side_index.push_back(l.SideIndex(k));
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
CaptureInputs ReadBack(const MappedFile& file, const std::string& path) {
  if (!file.ok()) {
    std::fprintf(stderr, "spanprof: cannot read back the stream %s: %s\n",
                 path.c_str(), file.error().c_str());
    return {};
  }
  absl::StatusOr<StreamContents> read =
      ReadStream(file.bytes(), path, /*own_session=*/true);
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
                             const std::string& end_reason, bool give_back,
                             bool pack_args) {
  bool written = writer.DrainStopped(rings, stop);
  if (written) {
    writer.WriteEnd(end_reason);
    written = !writer.failed();
  }
  if (!written && !AnyRecycled(rings)) {
    // Nothing was reused: the rings hold the whole capture.
    return CollectEndedSession(session, rings, stop, pack_args);
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
  CaptureStorage storage(writer, session, pack_args);
  const MappedFile file(writer.path());
  CaptureInputs in = ReadBack(file, writer.path());
  storage.Take(in);
  if (!written) {
    const uint64_t lost = JoinRings(rings, in);
    std::fprintf(stderr,
                 "spanprof: writing the stream %s failed; the capture joins "
                 "what it holds to what the rings kept (%llu records lost "
                 "between them)\n",
                 writer.path().c_str(), static_cast<unsigned long long>(lost));
  }
  AddSessionTables(session, stop, in);
  in.pack_args = pack_args;
  return AssembleCapture(FactsOf(session), in);
}

Capture StopRecordingThroughStream(StreamWriter& writer,
                                   const std::string& end_reason,
                                   bool pack_args) {
  SessionState& session = Session();
  std::vector<ThreadRing*> rings;
  ClockPair stop{};
  if (!EndActiveSession(session, &rings, &stop)) return Capture{};
  return CollectThroughStream(writer, session, rings, stop, end_reason,
                              /*give_back=*/true, pack_args);
}

}  // namespace spanprof::internal
