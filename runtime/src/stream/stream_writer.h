// The stream writer: copies what the recording threads have published into
// the session's stream file (stream_format.h) while the session runs, so that
// a program that dies keeps what was drained (`spanprof recover`).
//
// Recording threads are never slowed or blocked by it: it finds what each
// ring published under the ring's mutex (which the owner takes only to
// switch chunks), copies those records without it (the records before the
// owner's release-stored cursor are never written again, and a chunk is
// reused only once the stream holds it: `ThreadRing::drained`, which only
// this writer moves, after a successful write).
//
// Example:
//
//   SPANPROF_ASSIGN_OR_RETURN(auto writer, StreamWriter::Open(path, facts,
//                                                             outputs));
//   writer->Drain();  // every few milliseconds, on one helper thread
//   writer->Close(/*remove=*/true);
#ifndef SPANPROF_RUNTIME_SRC_STREAM_STREAM_WRITER_H_
#define SPANPROF_RUNTIME_SRC_STREAM_STREAM_WRITER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/assemble.h"
#include "stream/stream_format.h"

namespace spanprof::internal {

// Where the session writes its outputs: recorded in the stream, so that
// recovery writes where the program would have.
struct StreamOutputs {
  std::string trace_path;
  std::string summary_path;
};

// A flight recorder's (ring mode's) stream file grows to about this many
// bytes, then starts afresh, the full one kept as `<path>.old`: on disk at
// most about twice this, however long the session runs, and always the
// newest `max_events` spans between the two files.
uint64_t StreamGenerationBytes(uint64_t max_events);

// Closes `fd` on a detached thread of its own (here when none can be
// started): the last close of a large file that is already unlinked (a
// removed stream, a replaced trace) frees its pages and blocks, tens of ms
// that the program need not wait for. At exit, the kernel closes it.
void CloseOnItsOwnThread(int fd) noexcept;

// Removes a stream's files: `path` and, when `rotated` (a flight
// recorder's), `<path>.old`.
void RemoveStreamFiles(const std::string& path, bool rotated) noexcept;

class StreamWriter {
 public:
  // Creates (or truncates) the regular file `path` and writes the file
  // header and the session chunk. Errors name the path.
  static absl::StatusOr<std::unique_ptr<StreamWriter>> Open(
      const std::string& path, const SessionFacts& facts,
      const StreamOutputs& outputs);
  ~StreamWriter();
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  // Appends what was published since the last call: new sites and counter
  // names, new threads and names, each thread's records and side records,
  // drops, and a clock pair. Session `epoch` only: after it ends, nothing.
  // Not thread-safe: one thread drains. Returns false once writing failed
  // (the stream then stops growing; the session goes on). `last`: no drain
  // follows (a crash, a kept flight recorder's end), so the side records
  // made after the last record go too (a drain leaves them for the next:
  // an empty context scope may still withdraw its push).
  bool Drain(uint32_t epoch, bool last = false);
  // The last drain of a session that has ended: everything `rings` (the
  // ended session's, taken from it) published, and the stop clock pair.
  // Returns false when writing failed.
  bool DrainStopped(const std::vector<ThreadRing*>& rings,
                    const ClockPair& stop);
  // Whether the last Drain() copied enough records to suggest the rings are
  // ahead of it: the helper thread then drains again without waiting, so
  // that the rings can reuse their chunks instead of growing.
  bool BehindAfterLastDrain() const;
  // Whether every write so far succeeded.
  bool failed() const { return failed_; }
  // Makes a `Drain()` running on another thread stop at its next chunk
  // (the stream is about to be removed: a backlog need not be written).
  void Abandon() { abandon_.store(true, std::memory_order_relaxed); }
  // Appends the end chunk (`reason`: "crash:SIGSEGV", ...).
  void WriteEnd(std::string_view reason);
  // Closes the file; with `remove`, deletes it.
  void Close(bool remove);

  const std::string& path() const { return path_; }
  // Records (main and side) written so far.
  uint64_t records_written() const { return records_written_; }
  // Span records (not side records) written so far, all threads.
  uint64_t SpanRecordsWritten() const {
    uint64_t written = 0;
    for (const ThreadProgress& t : threads_) written += t.position;
    return written;
  }
  // The memory the writer's buffers hold (their capacity): a chunk or two
  // while recording, none once the end is written (WriteEnd()).
  size_t BufferedBytes() const {
    return out_.capacity() + payload_.capacity() +
           pieces_.capacity() * sizeof(Piece) +
           wrapped_.capacity() * sizeof(SideRecord) +
           staging_.capacity() * sizeof(Record);
  }
  // Side records written so far, by thread slot.
  std::vector<uint64_t> SideRecordsWritten() const {
    std::vector<uint64_t> written;
    written.reserve(threads_.size());
    for (const ThreadProgress& t : threads_) written.push_back(t.side);
    return written;
  }

 private:
  struct ThreadProgress {
    uint64_t position = 0;  // next main-stream position to copy
    uint64_t side = 0;      // next side index to copy
    uint64_t seq = 0;       // chunks written for this thread
    std::string name;       // last name written
    bool described = false;
    uint64_t dropped_args = 0;
    uint64_t dropped_spans = 0;
    // A flight recorder's side records its owner overwrote before a drain
    // copied them (DrainWrappedSide): counted with the thread's dropped
    // arguments, so that spans recovered without them say so.
    uint64_t side_lost = 0;
    // Whether the current file holds the thread's context scopes that
    // began before its first side record (WriteScopes).
    bool scopes_written = false;
  };

  // A run of published records of one chunk.
  struct Piece {
    const Record* first;
    uint64_t position;
    uint64_t count;
  };

  StreamWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void Chunk(uint32_t kind, uint32_t slot, uint64_t seq);
  void DrainSites();
  void DrainCounters();
  void DrainRing(ThreadRing& ring, ThreadProgress& progress);
  void DrainRings(const std::vector<ThreadRing*>& rings);
  void FindRecords(const ThreadRing& ring, const ThreadProgress& progress);
  void CopyRecords(ThreadRing& ring, ThreadProgress& progress);
  void PublishDrained(const std::vector<ThreadRing*>& rings);
  void WriteClock(const ClockPair& now);
  void Rotate();
  bool Streamable(const SideRecord& side, uint64_t records_end) const;
  void DrainSide(const ThreadRing& ring, ThreadProgress& progress,
                 uint64_t records_end);
  void DrainWrappedSide(const ThreadRing& ring, ThreadProgress& progress,
                        uint64_t records_from, uint64_t records_end);
  bool WriteSide(uint32_t slot, ThreadProgress& progress, uint64_t first,
                 const SideRecord* records, uint64_t count);
  void DescribeThread(const ThreadRing& ring, ThreadProgress& progress);
  void WriteScopes(const ThreadRing& ring, ThreadProgress& progress,
                   uint64_t from);
  void DrainDrops(const ThreadRing& ring, ThreadProgress& progress);
  bool Flush();

  std::string path_;
  int fd_ = -1;
  bool failed_ = false;
  std::atomic<bool> abandon_{false};
  uint64_t seq_ = 0;            // session-wide chunks
  uint32_t sites_written_ = 1;  // id 0 is unused
  uint32_t counters_written_ = 0;
  uint64_t records_written_ = 0;
  uint64_t records_at_last_drain_ = 0;
  std::string session_payload_;    // the session chunk, for a new file
  uint64_t generation_bytes_ = 0;  // ring mode: rotate past it (0: never)
  uint64_t bytes_in_file_ = 0;
  uint64_t rotations_ = 0;
  std::vector<ThreadProgress> threads_;
  std::vector<Piece> pieces_;        // FindRecords() for one ring
  std::vector<SideRecord> wrapped_;  // DrainWrappedSide()'s batch
  std::vector<Record> staging_;      // CopyRecords()'s, in ring mode
  bool last_drain_ = false;          // Drain(last) or DrainStopped()
  StreamEncoder payload_;
  std::string out_;  // chunks not yet written
};

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_STREAM_STREAM_WRITER_H_
