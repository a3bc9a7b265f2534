// The stream writer (stream_writer.h).
#include "stream/stream_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "recorder/recorder_internal.h"

namespace spanprof::internal {
namespace {

// Records per chunk: a payload stays under kMaxChunkPayload.
constexpr uint64_t kRecordsPerChunk = 65536;  // 1 MiB of records
constexpr uint64_t kSideRecordsPerChunk = 32768;
// What the writer gathers before it writes.
constexpr size_t kFlushBytes = size_t{1} << 20;
// A drain that copied this many records or more suggests the rings are ahead
// of the drain: the next one starts at once (BehindAfterLastDrain).
constexpr uint64_t kBacklogRecords = 8 * kMaxChunkSpans;

bool WriteAll(int fd, const std::string& bytes) {
  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

void EncodeFacts(const SessionFacts& facts, const StreamOutputs& outputs,
                 StreamEncoder& e) {
  e.U64(static_cast<uint64_t>(facts.pid));
  e.U64(facts.start_tsc);
  e.U64(facts.start_mono_ns);
  e.U64(static_cast<uint64_t>(facts.start_wall_ns));
  e.U64(static_cast<uint64_t>(facts.start_wall_uncertainty_ns));
  e.U64(facts.max_events);
  e.U32((facts.use_tsc ? 1u : 0u) |
        (facts.overflow == OverflowPolicy::kRing ? 2u : 0u) |
        (facts.count_allocs ? 4u : 0u));
  e.U64(facts.trace_high);
  e.U64(facts.trace_low);
  e.U64(facts.remote_parent_span_id);
  e.U64(facts.span_id_seed);
  e.String(facts.version);
  e.String(facts.process_name);
  e.String(facts.host);
  e.String(outputs.trace_path);
  e.String(outputs.summary_path);
}

}  // namespace

absl::StatusOr<std::unique_ptr<StreamWriter>> StreamWriter::Open(
    const std::string& path, const SessionFacts& facts,
    const StreamOutputs& outputs) {
  // O_NOFOLLOW: the stream replaces no link's target; a non-regular file at
  // the path is refused below rather than truncated.
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return absl::UnavailableError("cannot create the stream file " + path +
                                  ": " + std::strerror(errno));  // NOLINT
  }
  // An empty file is not truncated: on ext4 a truncation to 0 bytes marks
  // the file for a flush at its next close (for programs that rewrite a
  // file in place), which made the session end's close of the stream start
  // writing the whole stream to disk (15 ms of a 5 M-span end, and the disk
  // busy beside it).
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      (info.st_size > 0 && ::ftruncate(fd, 0) != 0)) {
    ::close(fd);
    return absl::FailedPreconditionError("the stream file " + path +
                                         " is not a regular file");
  }
  std::unique_ptr<StreamWriter> writer(new StreamWriter(path, fd));
  writer->out_ = StreamFileHeader();
  EncodeFacts(facts, outputs, writer->payload_);
  writer->session_payload_ = writer->payload_.bytes();
  writer->Chunk(kChunkSession, 0, writer->seq_++);
  if (facts.overflow == OverflowPolicy::kRing) {
    // A flight recorder's stream is bounded like its rings: two files of
    // about the rings' bytes each (StreamGenerationBytes).
    writer->generation_bytes_ = StreamGenerationBytes(facts.max_events);
  }
  if (!writer->Flush()) {
    return absl::UnavailableError("cannot write the stream file " + path);
  }
  return writer;
}

StreamWriter::~StreamWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void StreamWriter::Chunk(uint32_t kind, uint32_t slot, uint64_t seq) {
  AppendChunk(kind, slot, seq, payload_.bytes(), &out_);
  payload_.clear();
}

bool StreamWriter::Flush() {
  if (failed_ || fd_ < 0) return false;
  if (!out_.empty() && !WriteAll(fd_, out_)) failed_ = true;
  bytes_in_file_ += out_.size();
  out_.clear();
  return !failed_;
}

uint64_t StreamGenerationBytes(uint64_t max_events) {
  // A span's two records (32 bytes), a quarter more for side records and
  // chunk headers, and 1 MiB for the tables each file starts with.
  return max_events * 40 + (uint64_t{1} << 20);
}

// Starts the stream's next file: the current one becomes `<path>.old`
// (replacing the one before), and the new one starts with the session, the
// sites, counter names, threads and drops again, so that it reads on its
// own; the threads' records go on at their positions.
void StreamWriter::Rotate() {
  // `<path>` names a whole file at every moment (a kill may come between
  // any two steps): the full file is linked as `<path>.old` first, then the
  // new one replaces `<path>` in one rename.
  const std::string next_path = path_ + ".next";
  const std::string old_path = path_ + ".old";
  const std::string linked_path = path_ + ".old.next";
  const int fd =
      ::open(next_path.c_str(),
             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return;  // the file goes on growing: better than a gap
  // The new file holds its header and the session before it takes
  // `<path>`: a kill before the next drain's write leaves a file that reads
  // (with no records yet), not an empty one.
  std::string head = StreamFileHeader();
  AppendChunk(kChunkSession, 0, seq_, session_payload_, &head);
  ::unlink(linked_path.c_str());
  if (!WriteAll(fd, head) || ::link(path_.c_str(), linked_path.c_str()) != 0 ||
      ::rename(linked_path.c_str(), old_path.c_str()) != 0 ||
      ::rename(next_path.c_str(), path_.c_str()) != 0) {
    ::close(fd);
    ::unlink(next_path.c_str());
    ::unlink(linked_path.c_str());
    return;
  }
  ::close(fd_);
  fd_ = fd;
  seq_++;
  bytes_in_file_ = head.size();
  out_.clear();
  sites_written_ = 1;
  counters_written_ = 0;
  for (ThreadProgress& progress : threads_) {
    progress.described = false;
    progress.scopes_written = false;
    progress.dropped_args = UINT64_MAX;  // written again at the next drain
  }
  rotations_++;
}

void StreamWriter::DrainSites() {
  SiteTable& table = Sites();
  std::lock_guard<std::mutex> lock(table.mu);
  const auto count = static_cast<uint32_t>(table.sites.size());
  if (count <= sites_written_) return;
  payload_.U32(sites_written_);
  payload_.U32(count - sites_written_);
  for (uint32_t id = sites_written_; id < count; ++id) {
    const Site& site = table.sites[id];
    for (const std::string* field :
         {&site.name, &site.phase, &site.module, &site.activity, &site.backend,
          &site.dtype, &site.device}) {
      payload_.String(*field);
    }
  }
  sites_written_ = count;
  Chunk(kChunkSites, 0, seq_++);
}

void StreamWriter::DrainCounters() {
  const std::vector<std::string> names = SnapshotCounterNames();
  const auto count = static_cast<uint32_t>(names.size());
  if (count <= counters_written_) return;
  payload_.U32(counters_written_);
  payload_.U32(count - counters_written_);
  for (uint32_t i = counters_written_; i < count; ++i)
    payload_.String(names[i]);
  counters_written_ = count;
  Chunk(kChunkCounters, 0, seq_++);
}

void StreamWriter::DescribeThread(const ThreadRing& ring,
                                  ThreadProgress& progress) {
  const std::string name(ring.name, strnlen(ring.name, sizeof(ring.name)));
  if (progress.described && name == progress.name) return;
  payload_.U64(ring.os_tid);
  payload_.String(name);
  // Where the thread's records go on in this file: a flight recorder's
  // thread that records nothing more (a main thread waiting in join) had
  // its records in older files, and a context that names one of them names
  // a lost span, not none.
  payload_.U64(progress.position);
  Chunk(kChunkThread, ring.slot, progress.seq++);
  progress.name = name;
  progress.described = true;
}

// A flight recorder's context scopes that began before side record `from`
// and were still open there (pop index UINT64_MAX: open now), for a reader
// whose side records start at `from`: the file just started (the older
// files go, and with them the push of a scope open all along, such as a
// worker's whole life under Bind), or the drain skipped what came before
// (DrainWrappedSide). Without the push, the reader could not tell which
// spans ran under the scope, and set aside every span before its pop. The
// ring keeps these pushes for the in-memory capture as well (live_scopes,
// ended_scopes; SnapshotWrappedSide). Called with ring.mu held.
void StreamWriter::WriteScopes(const ThreadRing& ring, ThreadProgress& progress,
                               uint64_t from) {
  progress.scopes_written = true;
  if (!ring.ring_mode) return;
  // Counted first: the count leads the entries.
  const auto open_at = [&ring, from](const auto& add) {
    for (const ThreadRing::LiveScope& scope : ring.live_scopes) {
      if (scope.index < from) add(scope.index, UINT64_MAX, scope.push);
    }
    for (size_t k = ring.ended_scopes_head; k < ring.ended_scopes.size(); ++k) {
      const ThreadRing::EndedScope& scope = ring.ended_scopes[k];
      if (scope.index < from && scope.pop_index >= from) {
        add(scope.index, scope.pop_index, scope.push);
      }
    }
  };
  uint32_t count = 0;
  open_at([&count](uint64_t, uint64_t, const SideRecord&) { ++count; });
  if (count == 0) return;
  payload_.U64(from);
  payload_.U32(count);
  open_at([this](uint64_t index, uint64_t pop, const SideRecord& push) {
    payload_.U64(index);
    payload_.U64(pop);
    payload_.Raw(&push, sizeof(SideRecord));
  });
  Chunk(kChunkScopes, ring.slot, progress.seq++);
}

// The main stream's records from `progress.position` to the published
// cursor, as pieces of chunks (closed chunks keep their `used`; the current
// one ends at the cursor). Called with ring.mu held; the pieces stay valid
// after it is released: a chunk is reused only once `drained` passed it,
// which only this thread moves, and freed only after the session.
void StreamWriter::FindRecords(const ThreadRing& ring,
                               const ThreadProgress& progress) {
  pieces_.clear();
  const Record* cursor = ring.cursor.load(std::memory_order_acquire);
  uint64_t from_position = progress.position;
  for (size_t c = 0; c < ring.chunks.size(); ++c) {
    const internal::Chunk& chunk = ring.chunks[c];
    if (chunk.records == nullptr) continue;
    const bool current = c + 1 == ring.chunks.size();
    const uint64_t used =
        current ? static_cast<uint64_t>(cursor - ring.chunk_begin) : chunk.used;
    const uint64_t end = chunk.base_position + used;
    if (end <= from_position) continue;
    // A recycled chunk (ring mode) starts past what was copied: a gap, which
    // the reader counts.
    const uint64_t from = std::max(from_position, chunk.base_position);
    pieces_.push_back(
        Piece{chunk.records + (from - chunk.base_position), from, end - from});
    from_position = end;
  }
}

namespace {

// Whether `ring`'s chunks still hold the record at stream position
// `position` at `at` (a flight recorder recycles its oldest chunk for newer
// records). Called with the ring's lock held.
bool HoldsRecord(const ThreadRing& ring, const Record* at, uint64_t position) {
  const std::less<const Record*> before;
  for (const internal::Chunk& chunk : ring.chunks) {
    if (chunk.records == nullptr || before(at, chunk.records) ||
        !before(at, chunk.records + chunk.capacity)) {
      continue;
    }
    return chunk.base_position + static_cast<uint64_t>(at - chunk.records) ==
           position;
  }
  return false;
}

}  // namespace

// Copies the pieces FindRecords() found into chunks of the stream, without
// the ring's lock: the owner's chunk switches never wait for the copy. A
// flight recorder's (ring mode's) owner recycles its oldest chunk at a
// switch, under the lock, whether drained or not: there each chunk's worth
// is copied under the lock, if the ring still holds it (else it is a gap,
// which the reader counts), and written out after.
void StreamWriter::CopyRecords(ThreadRing& ring, ThreadProgress& progress) {
  for (const Piece& piece : pieces_) {
    uint64_t done = 0;
    while (done < piece.count && !abandon_.load(std::memory_order_relaxed)) {
      const uint64_t n = std::min(piece.count - done, kRecordsPerChunk);
      const Record* records = piece.first + done;
      if (ring.ring_mode) {
        std::lock_guard<std::mutex> lock(ring.mu);
        if (!HoldsRecord(ring, records, piece.position + done)) {
          done = piece.count;  // overwritten meanwhile
          break;
        }
        staging_.assign(records, records + n);
        records = staging_.data();
      }
      payload_.U64(piece.position + done);
      AppendChunk(kChunkRecords, ring.slot, progress.seq++, payload_.bytes(),
                  std::string_view(reinterpret_cast<const char*>(records),
                                   n * sizeof(Record)),
                  &out_);
      payload_.clear();
      records_written_ += n;
      done += n;
      // Written at once, so that the buffer stays one chunk in size (warm
      // in the cache, no fresh pages however large a backlog).
      if (out_.size() >= kFlushBytes && !Flush()) return;
    }
    progress.position = piece.position + done;
    if (done < piece.count) return;  // abandoned: the stream is being removed
  }
}

// Whether a drain writes `side` now. Those made after the records it found
// (at `records_end`) wait for the next drain, but in the last one: until a
// record follows it, an empty context scope's push may still be withdrawn
// (PopContext), and its slot written again. They belong to spans still
// open, so an ended span's arguments are never among them.
bool StreamWriter::Streamable(const SideRecord& side,
                              uint64_t records_end) const {
  return side.position < records_end ||
         (last_drain_ && side.position == records_end);
}

// Side records from `progress.side` to the published count, as far as their
// positions lie within the records up to `records_end` (those FindRecords()
// found, which CopyRecords() writes next; Streamable()): one written after
// the cursor was read waits for the next drain.
void StreamWriter::DrainSide(const ThreadRing& ring, ThreadProgress& progress,
                             uint64_t records_end) {
  const uint64_t published =
      ring.side_published.load(std::memory_order_acquire);
  const SideBuffer& side = ring.side;
  // By runs of a segment: a search per record (the buffer's const lookup)
  // was a tenth of the drain thread's time with an argument on every third
  // span.
  uint64_t end = progress.side;
  while (end < published) {
    uint64_t run = 0;
    const SideRecord* records = side.Run(end, &run);
    run = std::min(run, published - end);
    uint64_t k = 0;
    while (k < run && Streamable(records[k], records_end)) ++k;
    end += k;
    if (k < run) break;
  }
  while (progress.side < end) {
    const uint64_t n = std::min(end - progress.side, kSideRecordsPerChunk);
    payload_.U64(progress.side);
    for (uint64_t at = progress.side; at < progress.side + n;) {
      uint64_t run = 0;
      const SideRecord* records = side.Run(at, &run);
      run = std::min(run, progress.side + n - at);
      payload_.Raw(records, run * sizeof(SideRecord));
      at += run;
    }
    Chunk(kChunkSide, ring.slot, progress.seq++);
    records_written_ += n;
    progress.side += n;
    // As for records: the buffer stays about one chunk in size however many
    // arguments wait (a short session drains them all at its end).
    if (out_.size() >= kFlushBytes && !Flush()) return;
  }
}

// A flight recorder's side buffer once it wrapped (its side budget used
// up): slot `i % side_capacity` holds side record `i` for the newest
// indices, and the owner overwrites the oldest without waiting. Left
// uncopied, every argument after the wrap was missing from the stream, so a
// killed flight recorder recovered its newest spans bare. Copied a batch at
// a time (the drain's memory stays one chunk), field by field; then the
// records the owner may have begun to overwrite meanwhile are left out
// (StoreWrappedSide). Those overwritten before the drain reached them leave
// a gap, which the reader of a flight recorder's stream treats as it does
// the records' (the newest win); they count as dropped arguments when some
// of them may belong to spans the stream holds.
void StreamWriter::DrainWrappedSide(const ThreadRing& ring,
                                    ThreadProgress& progress,
                                    uint64_t records_from,
                                    uint64_t records_end) {
  const uint64_t capacity = ring.side_capacity;
  if (capacity == 0) return;
  // The oldest record intact while the count is `count`: the owner may be
  // writing record `count` over record `count - capacity` already.
  const auto oldest_intact = [capacity](uint64_t count) {
    return count >= capacity ? count - capacity + 1 : 0;
  };
  const uint64_t published =
      ring.side_published.load(std::memory_order_acquire);
  uint64_t at = std::max(progress.side, oldest_intact(published));
  const uint64_t overwritten = at - progress.side;
  const auto position_of = [&ring, capacity](uint64_t index) {
    return LoadWrappedSide(ring.side[index % capacity]).position;
  };
  // After a gap in the records (the ring overwrote them before this drain),
  // the side records made among the lost records lost their spans with
  // them: skipped, but for the last one (the reader sets aside the spans
  // that began before the first side record it has).
  if (records_from > progress.position) {
    while (at + 1 < published && position_of(at + 1) < records_from) ++at;
  }
  // The reader drops what came before a gap: the scopes open across it go
  // with their pushes.
  if (at > progress.side) {
    std::lock_guard<std::mutex> lock(ring.mu);
    WriteScopes(ring, progress, at);
  }
  // Side records overwritten before this drain count as lost when some of
  // them may belong to spans the stream holds: when the oldest one left
  // was made after the records the stream holds began.
  if (overwritten > 0 && (at >= published || position_of(at) > records_from)) {
    progress.side_lost += overwritten;
  }
  bool more = true;
  while (more && at < published) {
    const uint64_t batch_first = at;
    wrapped_.clear();
    while (at < published && wrapped_.size() < kSideRecordsPerChunk) {
      const uint64_t slot = at % capacity;
      uint64_t run = 0;
      const SideRecord* records = ring.side.Run(slot, &run);
      run = std::min({run, capacity - slot, published - at,
                      kSideRecordsPerChunk - wrapped_.size()});
      uint64_t k = 0;
      for (; k < run; ++k) {
        const SideRecord record = LoadWrappedSide(records[k]);
        if (!Streamable(record, records_end)) break;
        wrapped_.push_back(record);
      }
      at += k;
      if (k < run) {
        more = false;
        break;
      }
    }
    const uint64_t intact =
        oldest_intact(ring.side_published.load(std::memory_order_relaxed));
    const uint64_t torn = std::min<uint64_t>(
        intact > batch_first ? intact - batch_first : 0, wrapped_.size());
    progress.side = at;
    progress.side_lost += torn;
    if (torn < wrapped_.size() &&
        !WriteSide(ring.slot, progress, batch_first + torn,
                   wrapped_.data() + torn, wrapped_.size() - torn)) {
      return;
    }
  }
  progress.side = std::max(progress.side, at);
}

// One side-records chunk of `count` records from index `first`, flushed
// once the buffer passes kFlushBytes; false when that write failed.
bool StreamWriter::WriteSide(uint32_t slot, ThreadProgress& progress,
                             uint64_t first, const SideRecord* records,
                             uint64_t count) {
  payload_.U64(first);
  payload_.Raw(records, count * sizeof(SideRecord));
  Chunk(kChunkSide, slot, progress.seq++);
  records_written_ += count;
  return out_.size() < kFlushBytes || Flush();
}

void StreamWriter::DrainDrops(const ThreadRing& ring,
                              ThreadProgress& progress) {
  const uint64_t args =
      ring.dropped_args.load(std::memory_order_relaxed) + progress.side_lost;
  const uint64_t spans = std::accumulate(ring.drops_by_site.begin(),
                                         ring.drops_by_site.end(), uint64_t{0});
  if (args == progress.dropped_args && spans == progress.dropped_spans) return;
  payload_.U64(args);
  uint32_t sites = 0;
  for (const uint64_t n : ring.drops_by_site) sites += n != 0 ? 1 : 0;
  payload_.U32(sites);
  for (size_t s = 0; s < ring.drops_by_site.size(); ++s) {
    if (ring.drops_by_site[s] == 0) continue;
    payload_.U32(static_cast<uint32_t>(s));
    payload_.U64(ring.drops_by_site[s]);
  }
  Chunk(kChunkDrops, ring.slot, progress.seq++);
  progress.dropped_args = args;
  progress.dropped_spans = spans;
}

void StreamWriter::DrainRing(ThreadRing& ring, ThreadProgress& progress) {
  uint64_t records_from = 0;
  uint64_t records_end = 0;
  bool wrapped = false;
  {
    std::lock_guard<std::mutex> lock(ring.mu);
    DescribeThread(ring, progress);
    if (!progress.scopes_written) WriteScopes(ring, progress, progress.side);
    FindRecords(ring, progress);
    // The side records up to the records' end first, then the records. A
    // span's arguments are published before its end record, so a span
    // whose end is copied has its arguments written ahead of it, in the
    // same drain: a kill anywhere in the drain (its chunks go out in
    // several writes once the buffer passes kFlushBytes) leaves no ended
    // span without them. Side records whose records a kill cut off are
    // past the stream's last record: the reader counts them lost.
    records_end = pieces_.empty()
                      ? progress.position
                      : pieces_.back().position + pieces_.back().count;
    records_from =
        pieces_.empty() ? progress.position : pieces_.front().position;
    wrapped = ring.side_wrapped;
    if (!wrapped) DrainSide(ring, progress, records_end);
  }
  // A wrapped side buffer is copied without the lock (its owner never waits
  // for it, StoreWrappedSide): the owner's chunk switches, which take the
  // lock, need not wait for the copy either.
  if (wrapped) DrainWrappedSide(ring, progress, records_from, records_end);
  CopyRecords(ring, progress);
  std::lock_guard<std::mutex> lock(ring.mu);
  DrainDrops(ring, progress);
}

// Once the stream holds what was copied (the write succeeded), the rings
// may reuse it.
void StreamWriter::PublishDrained(const std::vector<ThreadRing*>& rings) {
  for (size_t i = 0; i < rings.size() && i < threads_.size(); ++i) {
    std::lock_guard<std::mutex> lock(rings[i]->mu);
    rings[i]->drained = threads_[i].position;
    rings[i]->side_drained = threads_[i].side;
  }
}

void StreamWriter::DrainRings(const std::vector<ThreadRing*>& rings) {
  if (threads_.size() < rings.size()) threads_.resize(rings.size());
  for (size_t i = 0; i < rings.size(); ++i) DrainRing(*rings[i], threads_[i]);
}

void StreamWriter::WriteClock(const ClockPair& now) {
  payload_.U64(now.tsc);
  payload_.U64(now.mono_ns);
  Chunk(kChunkClock, 0, seq_++);
}

bool StreamWriter::Drain(uint32_t epoch, bool last) {
  if (failed_) return false;
  last_drain_ = last;
  if (generation_bytes_ > 0 && bytes_in_file_ >= generation_bytes_) Rotate();
  records_at_last_drain_ = records_written_;
  DrainSites();
  DrainCounters();
  SessionState& session = Session();
  {
    std::lock_guard<std::mutex> lock(session.mu);
    if (!session.active || session.epoch != epoch) return Flush();
    DrainRings(session.rings);
  }
  WriteClock(ReadClockPair());
  if (!Flush()) {
    // The rings keep what the stream could not take from now on.
    MarkSessionStreaming(epoch, false);
    return false;
  }
  std::lock_guard<std::mutex> lock(session.mu);
  if (session.active && session.epoch == epoch) PublishDrained(session.rings);
  return true;
}

bool StreamWriter::BehindAfterLastDrain() const {
  return records_written_ - records_at_last_drain_ >= kBacklogRecords;
}

bool StreamWriter::DrainStopped(const std::vector<ThreadRing*>& rings,
                                const ClockPair& stop) {
  if (failed_) return false;
  last_drain_ = true;
  DrainSites();
  DrainCounters();
  DrainRings(rings);
  WriteClock(stop);
  return Flush();
}

void StreamWriter::WriteEnd(std::string_view reason) {
  payload_.String(reason);
  Chunk(kChunkEnd, 0, seq_++);
  Flush();
  // Nothing follows the end: the buffers' memory (up to 2 MiB each) goes
  // before the session end reads the stream back beside it.
  std::string().swap(out_);
  payload_.Release();
  std::vector<Piece>().swap(pieces_);
  std::vector<SideRecord>().swap(wrapped_);
  std::vector<Record>().swap(staging_);
}

void StreamWriter::Close(bool remove) {
  if (remove) {
    // The name goes now; the file's pages and blocks when its last
    // descriptor closes.
    RemoveStreamFiles(path_, rotations_ > 0);
  }
  if (rotations_ > 0) {
    // A rotation cut short (its file could not be written) leaves these.
    ::unlink((path_ + ".next").c_str());
    ::unlink((path_ + ".old.next").c_str());
  }
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (remove) {
    // Freeing a removed stream's page cache and disk blocks took 60 ms for
    // 5 M spans (160 MB), a tenth of the session end.
    CloseOnItsOwnThread(fd);
    return;
  }
  ::close(fd);
}

void RemoveStreamFiles(const std::string& path, bool rotated) noexcept {
  ::unlink(path.c_str());
  if (rotated) ::unlink((path + ".old").c_str());
}

void CloseOnItsOwnThread(int fd) noexcept {
  try {
    std::thread([fd] { ::close(fd); }).detach();
    return;
  } catch (const std::system_error&) {
    // No thread: closed here.
  }
  ::close(fd);
}

}  // namespace spanprof::internal
