// Reading a stream file back into a capture (spanprof/stream.h): scan the
// chunks, keep each thread's records and side records while they are
// contiguous, then assemble the capture as a session end would.
#include "stream/stream_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collector/assemble.h"
#include "collector/ring_snapshot.h"
#include "recorder/recorder_internal.h"
#include "spanprof/internal/end_reason.h"
#include "spanprof/stream.h"
#include "stream/stream_format.h"

namespace spanprof {
namespace {

using internal::CaptureInputs;
using internal::Record;
using internal::SessionFacts;
using internal::SideRecord;
using internal::StreamDecoder;

// One thread's streams as far as they are contiguous.
struct ThreadData {
  uint64_t os_tid = 0;
  std::string name;
  // Positions 0 .. record_count - 1, a vector per chunk read (so that the
  // collector can free each once parsed).
  std::vector<internal::OwnedRecords> records;
  uint64_t record_count = 0;
  uint64_t begins = 0;  // begin records among them
  // A flight recorder's stream starts wherever its files begin: the
  // position of the first record kept, and the index of the first side
  // record kept.
  uint64_t record_base = 0;
  uint64_t side_base = 0;
  // The largest position a thread chunk said the thread's records go on
  // at (a newer stream's; 0 in an older one): with no record kept, the
  // thread's records before it went with older files.
  uint64_t described_position = 0;
  bool records_gap = false;
  // Indices 0 .. size - 1: where they lie in the mapping of a session's own
  // stream, else copied.
  internal::SideRecords side;
  bool side_gap = false;
  // Whether their positions never go down (so that those past the last
  // record kept are found from the end), and whether a context scope's push
  // is among them: both counted as each chunk is checked.
  bool side_sorted = true;
  uint64_t last_side_position = 0;
  bool side_has_push = false;
  uint64_t dropped_args = 0;
  std::vector<uint64_t> drops_by_site;
  // A flight recorder's context scopes that began before side record
  // `from` and were open there (kChunkScopes), every such chunk read.
  struct OpenScope {
    uint64_t from;
    uint64_t index;  // of the push
    uint64_t pop;    // index of the pop; UINT64_MAX: open when written
    SideRecord push;
  };
  std::vector<OpenScope> open_scopes;
};

// The per-thread chunks that need no scanner state: a thread's description
// and a flight recorder's open scopes.

// A thread: u64 OS thread id, string name, then (a newer stream's) u64
// position its records go on at.
bool ReadThread(StreamDecoder& d, ThreadData& t) {
  if (!d.U64(&t.os_tid) || !d.String(&t.name)) return false;
  uint64_t position = 0;
  if (!d.Rest().empty() && !d.U64(&position)) return false;
  t.described_position = std::max(t.described_position, position);
  return true;
}

// A flight recorder's scopes open at side record `from`: u64 from, u32
// n, then n entries (u64 push index, u64 pop index, the push). A push
// must come before `from` and its pop after it; more than a thread's
// side records could hold is refused.
bool ReadScopes(StreamDecoder& d, ThreadData& t) {
  uint64_t from = 0;
  uint32_t n = 0;
  constexpr size_t kEntryBytes = 2 * sizeof(uint64_t) + sizeof(SideRecord);
  if (!d.U64(&from) || !d.U32(&n) || n == 0 ||
      d.Rest().size() != size_t{n} * kEntryBytes) {
    return false;
  }
  std::vector<ThreadData::OpenScope> scopes(n);
  for (ThreadData::OpenScope& scope : scopes) {
    scope.from = from;
    if (!d.U64(&scope.index) || !d.U64(&scope.pop) ||
        !d.Raw(&scope.push, sizeof(SideRecord)) || scope.index >= from ||
        scope.pop < from || scope.push.kind != internal::kSideContextPush) {
      return false;
    }
  }
  t.open_scopes.insert(t.open_scopes.end(), scopes.begin(), scopes.end());
  return true;
}

// The pushes of the scopes open where thread `t`'s side records start
// (its side base), from the newest kChunkScopes written at or before
// that index, in push order: a scope whose pop is past the base, or that
// was open when the chunk was written.
std::vector<ThreadData::OpenScope> ScopesOpenAtBase(const ThreadData& t) {
  std::vector<ThreadData::OpenScope> open;
  uint64_t best = 0;
  bool found = false;
  for (const ThreadData::OpenScope& scope : t.open_scopes) {
    if (scope.from <= t.side_base && (!found || scope.from >= best)) {
      best = scope.from;
      found = true;
    }
  }
  if (!found) return open;
  for (const ThreadData::OpenScope& scope : t.open_scopes) {
    if (scope.from == best && scope.index < t.side_base &&
        scope.pop >= t.side_base) {
      open.push_back(scope);
    }
  }
  std::sort(open.begin(), open.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  // One entry per push (a chunk written twice at the same index).
  open.erase(std::unique(open.begin(), open.end(),
                         [](const auto& a, const auto& b) {
                           return a.index == b.index;
                         }),
             open.end());
  return open;
}

class StreamScanner {
 public:
  // `own_session`: the stream of this process's session, read back at its
  // end from a read-only mapping of the file: the session knows its stop
  // time, and the pages scanned are given back as the scan goes.
  StreamScanner(std::string_view bytes, std::string_view name, bool own_session)
      : bytes_(bytes), name_(name), own_session_(own_session) {}

  // Reads `files` in order: the stream's files oldest first (a flight
  // recorder's `<path>.old`, then `<path>`), as one stream.
  absl::StatusOr<internal::StreamContents> Read(
      const std::vector<std::string_view>& files) {
    for (const std::string_view file : files) {
      bytes_ = file;
      released_ = 0;
      if (absl::Status s = CheckHeader(); !s.ok()) return s;
      ScanChunks();
    }
    if (!has_session_) {
      return absl::InvalidArgumentError(
          std::string(name_) +
          ": the stream has no valid session chunk (cut or corrupt before "
          "its first chunk ended)");
    }
    internal::StreamContents contents;
    contents.inputs = Inputs();
    contents.facts = facts_;
    contents.end_reason = out_.ended ? end_reason_ : "";
    contents.info = std::move(out_);
    return contents;
  }

 private:
  absl::Status CheckHeader() const {
    const std::string_view magic = internal::kStreamMagic;
    if (bytes_.size() < internal::kStreamHeaderBytes ||
        bytes_.substr(0, magic.size()) != magic) {
      return absl::InvalidArgumentError(
          std::string(name_) + ": not a spanprof stream (no \"" +
          std::string(magic.substr(0, magic.size() - 1)) + "\" header)");
    }
    const uint32_t version = internal::GetU32(Byte(magic.size()));
    if (version != internal::kStreamVersion) {
      return absl::InvalidArgumentError(
          std::string(name_) + ": unsupported spanprof.stream version " +
          std::to_string(version) + " (this reader reads version 1)");
    }
    return absl::OkStatus();
  }

  const unsigned char* Byte(size_t at) const {
    return reinterpret_cast<const unsigned char*>(bytes_.data() + at);
  }

  // The next chunk magic at or after `from`, or the end.
  size_t Resync(size_t from) const {
    unsigned char magic[4];
    internal::PutU32(magic, internal::kChunkMagic);
    const std::string_view needle(reinterpret_cast<const char*>(magic), 4);
    const size_t at = bytes_.find(needle, from);
    return at == std::string_view::npos ? bytes_.size() : at;
  }

  void Skip(size_t& at) {
    const size_t next = Resync(at + 1);
    ++out_.skipped_chunks;
    out_.skipped_bytes += next - at;
    at = next;
  }

  void ScanChunks() {
    size_t at = internal::kStreamHeaderBytes;
    while (at < bytes_.size()) {
      const size_t left = bytes_.size() - at;
      if (left < internal::kChunkHeaderBytes) {
        out_.torn_bytes = left;
        return;
      }
      const unsigned char* h = Byte(at);
      const uint32_t size = internal::GetU32(h + 12);
      if (internal::GetU32(h) != internal::kChunkMagic ||
          size > internal::kMaxChunkPayload) {
        Skip(at);
        continue;
      }
      if (left - internal::kChunkHeaderBytes < size) {
        out_.torn_bytes = left;  // the last chunk, cut short
        return;
      }
      const std::string_view payload =
          bytes_.substr(at + internal::kChunkHeaderBytes, size);
      if (internal::ChunkChecksum(h, payload.data(), payload.size()) !=
              internal::GetU32(h + 24) ||
          !Apply(internal::GetU32(h + 4), internal::GetU32(h + 8), payload)) {
        Skip(at);
        continue;
      }
      ++out_.chunks;
      at += internal::kChunkHeaderBytes + size;
      if (own_session_) ReleaseScanned(at);
    }
  }

  // Drops the mapped pages wholly before `at` every MiB: they were
  // checked, and the parser reads their records again later (the file stays
  // in the page cache; only this process's share of it goes meanwhile).
  void ReleaseScanned(size_t at) {
    internal::ReleaseReadPrefix(bytes_.data(), at, &released_);
  }

  // Applies one valid chunk; false when its payload does not fit its kind.
  bool Apply(uint32_t kind, uint32_t slot, std::string_view payload) {
    StreamDecoder d(payload);
    if (!has_session_) {
      if (kind != internal::kChunkSession || !ReadSession(d)) return false;
      session_payload_ = std::string(payload);
      return true;
    }
    if (kind == internal::kChunkSession) {
      // The next file of the same session (a flight recorder's) starts
      // with the session again; another session's is not read into this.
      return payload == session_payload_;
    }
    if (slot >= (1u << 24)) return false;
    switch (kind) {
      case internal::kChunkSites:
        return ReadSites(d);
      case internal::kChunkCounters:
        return ReadCounters(d);
      case internal::kChunkThread:
        return ReadThread(d, Thread(slot));
      case internal::kChunkRecords: {
        ThreadData& t = Thread(slot);
        return ReadRecords(d, t);
      }
      case internal::kChunkSide:
        return ReadSide(d, Thread(slot));
      case internal::kChunkClock:
        return ReadClock(d);
      case internal::kChunkDrops:
        return ReadDrops(d, Thread(slot));
      case internal::kChunkScopes:
        return ReadScopes(d, Thread(slot));
      case internal::kChunkEnd:
        out_.ended = d.String(&end_reason_);
        return out_.ended;
      default:
        return false;
    }
  }

  ThreadData& Thread(uint32_t slot) {
    if (slot >= threads_.size()) threads_.resize(slot + 1);
    return threads_[slot];
  }

  bool ReadSession(StreamDecoder& d) {
    uint64_t pid = 0;
    uint64_t wall = 0;
    uint64_t uncertainty = 0;
    uint32_t flags = 0;
    const bool ok = d.U64(&pid) && d.U64(&facts_.start_tsc) &&
                    d.U64(&facts_.start_mono_ns) && d.U64(&wall) &&
                    d.U64(&uncertainty) && d.U64(&facts_.max_events) &&
                    d.U32(&flags) && d.U64(&facts_.trace_high) &&
                    d.U64(&facts_.trace_low) &&
                    d.U64(&facts_.remote_parent_span_id) &&
                    d.U64(&facts_.span_id_seed) && d.String(&facts_.version) &&
                    d.String(&facts_.process_name) && d.String(&facts_.host) &&
                    d.String(&out_.trace_path) && d.String(&out_.summary_path);
    if (!ok) return false;
    facts_.pid = static_cast<int64_t>(pid);
    facts_.start_wall_ns = static_cast<int64_t>(wall);
    facts_.start_wall_uncertainty_ns = static_cast<int64_t>(uncertainty);
    facts_.use_tsc = (flags & 1u) != 0;
    facts_.overflow =
        (flags & 2u) != 0 ? OverflowPolicy::kRing : OverflowPolicy::kDropNewest;
    facts_.count_allocs = (flags & 4u) != 0;
    stop_ = {facts_.start_tsc, facts_.start_mono_ns};
    has_session_ = true;
    return true;
  }

  bool ReadSites(StreamDecoder& d) {
    uint32_t first = 0;
    uint32_t count = 0;
    if (!d.U32(&first) || !d.U32(&count) || first == 0 ||
        count > internal::kMaxChunkPayload / 28) {
      return false;
    }
    std::vector<Site> sites(count);
    for (Site& site : sites) {
      for (std::string* field :
           {&site.name, &site.phase, &site.module, &site.activity,
            &site.backend, &site.dtype, &site.device}) {
        if (!d.String(field)) return false;
      }
    }
    if (sites_.size() < first + count) sites_.resize(first + count);
    std::move(sites.begin(), sites.end(), sites_.begin() + first);
    return true;
  }

  bool ReadCounters(StreamDecoder& d) {
    uint32_t first = 0;
    uint32_t count = 0;
    if (!d.U32(&first) || !d.U32(&count) || count > 4096 || first > 4096) {
      return false;
    }
    std::vector<std::string> names(count);
    for (std::string& name : names) {
      if (!d.String(&name)) return false;
    }
    if (counters_.size() < first + count) counters_.resize(first + count);
    std::move(names.begin(), names.end(), counters_.begin() + first);
    return true;
  }

  bool Flight() const { return facts_.overflow == OverflowPolicy::kRing; }

  // A side-records chunk: u64 index of its first, then whole records.
  // Appended while it follows on from what the thread holds; after a gap,
  // counted as lost (what follows a gap cannot be placed), except in a
  // flight recorder's stream, where the newest records win: what came
  // before the gap goes.
  bool ReadSide(StreamDecoder& d, ThreadData& t) {
    uint64_t first = 0;
    if (!d.U64(&first) || d.Rest().size() % sizeof(SideRecord) != 0) {
      return false;
    }
    const size_t n = d.Rest().size() / sizeof(SideRecord);
    if (Flight() && (t.side.empty() || first > t.side_base + t.side.size())) {
      if (first < t.side_base) return true;  // read already
      t.side.Clear();
      t.side_base = first;
      t.side_sorted = true;
      t.last_side_position = 0;
      t.side_has_push = false;
    }
    const uint64_t end = t.side_base + t.side.size();
    if (first < end) return true;  // read already
    if (t.side_gap || first > end) {
      t.side_gap = true;
      out_.lost_records += n;
      return true;
    }
    // Read while the checksum has just brought them into the CPU's cache:
    // the collector then need not read every side record (and fault in
    // their pages) again before it parses them.
    const char* const bytes = d.Rest().data();
    for (size_t k = 0; k < n; ++k) {
      SideRecord record;
      std::memcpy(&record, bytes + k * sizeof(SideRecord), sizeof(record));
      t.side_sorted = t.side_sorted && record.position >= t.last_side_position;
      t.last_side_position = record.position;
      t.side_has_push =
          t.side_has_push || record.kind == internal::kSideContextPush;
    }
    if (own_session_) {
      // The session's own mapping outlives the parse: its side records are
      // read where they lie, as its records are.
      t.side.AddMapped(bytes, n);
      return true;
    }
    std::vector<SideRecord>& side = t.side.Owned();
    const size_t old = side.size();
    side.resize(old + n);
    std::memcpy(side.data() + old, bytes, n * sizeof(SideRecord));
    return true;
  }

  // A records chunk: u64 position of its first, then whole records, kept
  // as a piece of its own while it follows on from what the thread holds
  // (after a gap, as for side records).
  bool ReadRecords(StreamDecoder& d, ThreadData& t) {
    uint64_t first = 0;
    if (!d.U64(&first) || d.Rest().size() % sizeof(Record) != 0) return false;
    const size_t n = d.Rest().size() / sizeof(Record);
    if (Flight() &&
        (t.record_count == 0 || first > t.record_base + t.record_count)) {
      if (first < t.record_base) return true;  // read already
      t.records.clear();
      t.record_count = 0;
      t.begins = 0;
      t.record_base = first;
    }
    const uint64_t end = t.record_base + t.record_count;
    if (first < end) return true;  // read already
    if (t.records_gap || first > end) {
      t.records_gap = true;
      out_.lost_records += n;
      return true;
    }
    if (n == 0) return true;
    // Counted here, while the checksum has just brought the records into
    // the CPU's cache: the collector sizes the capture from the count
    // without reading every record (and faulting in the whole file) again.
    const auto* records = reinterpret_cast<const Record*>(d.Rest().data());
    for (size_t i = 0; i < n; ++i) {
      t.begins += (internal::LoadRecord(records, i).word >>
                   internal::kKindShift) == internal::kBeginRecord;
    }
    if (own_session_) {
      // The session's own mapping outlives the parse: its records are read
      // where they lie (the pages scanned come back from the page cache).
      t.records.push_back(
          internal::OwnedRecords::InMapping(d.Rest().data(), n));
      t.record_count += n;
      return true;
    }
    internal::OwnedRecords& piece = t.records.emplace_back(n);
    if (piece.data() == nullptr) throw std::bad_alloc();
    std::memcpy(piece.data(), d.Rest().data(), n * sizeof(Record));
    t.record_count += n;
    return true;
  }

  bool ReadClock(StreamDecoder& d) {
    internal::ClockPair pair{};
    if (!d.U64(&pair.tsc) || !d.U64(&pair.mono_ns)) return false;
    if (pair.mono_ns >= stop_.mono_ns) stop_ = pair;
    return true;
  }

  static bool ReadDrops(StreamDecoder& d, ThreadData& t) {
    uint32_t count = 0;
    if (!d.U64(&t.dropped_args) || !d.U32(&count) || count > (1u << 24)) {
      return false;
    }
    std::vector<uint64_t> drops;
    for (uint32_t k = 0; k < count; ++k) {
      uint32_t site = 0;
      uint64_t n = 0;
      if (!d.U32(&site) || !d.U64(&n) || site >= (1u << 24)) return false;
      if (site >= drops.size()) drops.resize(site + 1, 0);
      drops[site] = n;
    }
    t.drops_by_site = std::move(drops);  // the latest counts replace earlier
    return true;
  }

  // The last clock value of the stream: the latest clock pair, or a later
  // span time (records drained after the pair was read).
  internal::ClockPair Stop() const {
    internal::ClockPair stop = stop_;
    for (const ThreadData& t : threads_) {
      for (const internal::OwnedRecords& piece : t.records) {
        for (const Record& r :
             std::span<const Record>(piece.data(), piece.size())) {
          if ((r.word >> internal::kKindShift) != internal::kAllocRecord) {
            const uint64_t raw = r.time;
            if (facts_.use_tsc && raw > stop.tsc) stop.tsc = raw;
            if (!facts_.use_tsc && raw > stop.mono_ns) stop.mono_ns = raw;
          }
        }
      }
    }
    return stop;
  }

  CaptureInputs Inputs() {
    CaptureInputs in;
    if (!own_session_) in.stop = Stop();
    in.sites = std::move(sites_);
    if (in.sites.empty()) in.sites.resize(1);
    for (size_t id = 1; id < in.sites.size(); ++id) {
      if (in.sites[id].name.empty()) {
        in.sites[id].name = "(site " + std::to_string(id) + ", not in stream)";
      }
    }
    in.counter_names = std::move(counters_);
    for (uint32_t slot = 0; slot < threads_.size(); ++slot) {
      ThreadData& t = threads_[slot];
      // Side records past the last record kept (after a gap) cannot be
      // placed.
      const uint64_t records_end = t.record_base + t.record_count;
      size_t keep = t.side.size();
      if (t.side_sorted) {
        // From the end: the pages already given back stay so.
        while (keep > 0 && t.side[keep - 1].position > records_end) --keep;
      } else {
        keep = 0;
        while (keep < t.side.size() && t.side[keep].position <= records_end) {
          ++keep;
        }
      }
      out_.lost_records += t.side.size() - keep;
      t.side.Truncate(keep);
      internal::RingSnapshot& snap = in.snaps.emplace_back();
      snap.slot = slot;
      // A flight recorder's thread may start past its first record: its
      // spans that began before are gone, as when its ring overwrote them.
      snap.truncated = t.record_base > 0;
      snap.side_base = t.side_base;
      snap.side_truncated = t.side_base > 0;
      uint64_t position = t.record_base;
      for (internal::OwnedRecords& piece : t.records) {
        snap.chunks.push_back(internal::Chunk{piece.data(), piece.size(),
                                              piece.size(), position});
        position += piece.size();
      }
      if (t.record_count == 0 && t.described_position > 0) {
        // No record kept of a thread that wrote some: they went with older
        // files (an empty piece says from where).
        snap.truncated = true;
        snap.chunks.push_back(
            internal::Chunk{nullptr, 0, 0, t.described_position});
      }
      snap.owned = std::move(t.records);
      snap.begins = t.begins;
      // The pushes of the scopes open at the side base come first, at their
      // own indices, as a wrapped ring's snapshot restores them
      // (SnapshotWrappedSide): the spans after them ran inside.
      const std::vector<ThreadData::OpenScope> open = ScopesOpenAtBase(t);
      std::vector<SideRecord> pushes;
      for (const ThreadData::OpenScope& scope : open) {
        pushes.push_back(scope.push);
        snap.side_index.push_back(scope.index);
      }
      snap.side = std::move(t.side);
      snap.side.Prepend(pushes);
      snap.has_context_push = (t.side_has_push || !open.empty()) ? 1 : 0;
      snap.side_index_rest = t.side_base;
      snap.os_tid = t.os_tid;
      snap.name = t.name;
      snap.dropped_args = t.dropped_args;
      snap.drops_by_site = t.drops_by_site;
      if (in.drops_by_site.size() < t.drops_by_site.size()) {
        in.drops_by_site.resize(t.drops_by_site.size(), 0);
      }
      for (size_t s = 0; s < t.drops_by_site.size(); ++s) {
        in.drops_by_site[s] += t.drops_by_site[s];
      }
    }
    return in;
  }

  std::string_view bytes_;
  std::string_view name_;
  bool own_session_ = false;
  size_t released_ = 0;  // own session: mapped bytes given back
  std::string session_payload_;
  bool has_session_ = false;
  SessionFacts facts_;
  internal::ClockPair stop_{};
  std::vector<Site> sites_;
  std::vector<std::string> counters_;
  std::vector<ThreadData> threads_;
  std::string end_reason_;
  RecoveredCapture out_;
};

}  // namespace

namespace internal {

absl::StatusOr<StreamContents> ReadStream(std::string_view bytes,
                                          std::string_view name,
                                          bool own_session) {
  return StreamScanner({}, name, own_session).Read({bytes});
}

}  // namespace internal

absl::StatusOr<RecoveredCapture> RecoverStream(std::string_view bytes,
                                               std::string_view name) {
  return RecoverStream(std::vector<std::string_view>{bytes}, name);
}

absl::StatusOr<RecoveredCapture> RecoverStream(
    const std::vector<std::string_view>& files, std::string_view name) {
  absl::StatusOr<internal::StreamContents> read =
      StreamScanner({}, name, /*own_session=*/false).Read(files);
  if (!read.ok()) return read.status();
  RecoveredCapture out = std::move(read->info);
  out.capture = internal::AssembleCapture(read->facts, read->inputs);
  const bool known = internal::IsEndReason(read->end_reason) &&
                     read->end_reason != internal::kEndLost;
  out.capture.end_reason = known ? read->end_reason : "lost";
  out.capture.finished_normally = out.capture.end_reason == "finished";
  if (out.capture.end_reason == internal::kEndExit) {
    // A kept stream of a session that exit() ended: a normal end, as the
    // session's own outputs say (spans open then closed at exit).
    out.capture.finished_normally = true;
    for (Span& span : out.capture.spans) {
      if ((span.flags & kSpanUnfinished) == 0) continue;
      span.flags = static_cast<uint16_t>((span.flags & ~kSpanUnfinished) |
                                         kSpanOpenAtExit);
    }
  }
  return out;
}

}  // namespace spanprof
