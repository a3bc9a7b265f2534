// Session start and the collector: stop recording, take every ring (live and
// exited threads), convert ticks to ns, pair begins with ends, resolve
// cross-thread parents, close open spans as unfinished, and build the Capture.
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "recorder/recorder_internal.h"
#include "spanprof/recording.h"

namespace spanprof {

using internal::Chunk;
using internal::g_epoch;
using internal::Record;
using internal::SessionState;
using internal::SideRecord;
using internal::ThreadRing;

namespace {

__extension__ using Uint128 = unsigned __int128;

constexpr int64_t kNsPerSec = 1'000'000'000;
// Bytes of ring memory per span: a 16-byte begin and a 16-byte end record,
// plus three 32-byte side records: drop mode budgets one per span for
// arguments, and context scopes take at most two per retained span in
// practice (a push and a pop around it; empty scopes leave nothing); ring
// mode budgets two per span for both.
constexpr uint64_t kMainBytesPerSpan = 2 * sizeof(Record);
constexpr uint64_t kSideBytesPerSpan = 3 * sizeof(SideRecord);

std::string DefaultProcessName() {
  char buf[256] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) {
    std::string path(buf, static_cast<size_t>(n));
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  }
  return "process";
}

int64_t WallClockNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

}  // namespace

const char* OverflowPolicyName(OverflowPolicy policy) noexcept {
  return policy == OverflowPolicy::kRing ? "ring" : "drop";
}

absl::Status ParseOverflowPolicy(const std::string& text, OverflowPolicy* out) {
  if (text == "drop") {
    *out = OverflowPolicy::kDropNewest;
  } else if (text == "ring") {
    *out = OverflowPolicy::kRing;
  } else {
    return absl::InvalidArgumentError("expected 'drop' or 'ring', got '" +
                                      text + "'");
  }
  return absl::OkStatus();
}

uint64_t PredictedMemoryBytes(uint64_t max_events, OverflowPolicy overflow) {
  static_cast<void>(overflow);  // both policies are bounded by the same cap
  const uint64_t per_span =
      (internal::g_alloc_counting_linked.load(std::memory_order_relaxed) ? 2
                                                                         : 1) *
          kMainBytesPerSpan +
      kSideBytesPerSpan;
  return max_events * per_span;
}

double MeasureSpanOverheadNs() {
  // Times the record-writing path into a private scratch ring: the same
  // stores and clock reads as a real span, without touching the session.
  // 4 rounds of 48 spans: ~5 us in all at ~25 ns a span; the minimum round
  // (1.2 us, against a clock read of ~20 ns) is the figure.
  constexpr int kSpans = 48;
  static const unsigned int kNoExceptions = 0;
  static Record buffer[2 * kSpans + 2];
  internal::ThreadState scratch;
  scratch.uncaught = &kNoExceptions;
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed) != 0
                             ? g_epoch.load(std::memory_order_relaxed)
                             : (internal::TscIsInvariant() ? 2u : 3u);
  double best = 1e9;
  for (int round = 0; round < 4; ++round) {
    scratch.cursor.store(buffer, std::memory_order_relaxed);
    scratch.limit = buffer + 2 * kSpans;
    const uint64_t t0 = internal::ReadMonotonicNs();
    for (int i = 0; i < kSpans; ++i) {
      Record* c = scratch.cursor.load(std::memory_order_relaxed);
      if (c >= scratch.limit) break;
      internal::WriteBegin(&scratch, c, 1, epoch);
      asm volatile("" ::: "memory");
      c = scratch.cursor.load(std::memory_order_relaxed);
      c->time = internal::ReadClock(epoch);
      c->word = internal::kEndRecord << internal::kKindShift;
      c->heartbeats = static_cast<uint32_t>(internal::tls_heartbeats);
      scratch.limit += 1;
      scratch.cursor.store(c + 1, std::memory_order_release);
      asm volatile("" ::: "memory");
    }
    const uint64_t t1 = internal::ReadMonotonicNs();
    best = std::min(best, static_cast<double>(t1 - t0) / kSpans);
  }
  return best;
}

absl::Status StartRecording(const RecordingOptions& options) {
  if (options.max_events == 0) {
    return absl::InvalidArgumentError("max_events must be a positive integer");
  }
  const bool invariant = internal::TscIsInvariant();
  if (options.clock == ClockKind::kTsc && !invariant) {
    return absl::FailedPreconditionError(
        "the TSC clock was requested but this CPU has no invariant TSC");
  }
  SessionState& session = internal::Session();
  std::lock_guard<std::mutex> lock(session.mu);
  if (session.active) {
    return absl::FailedPreconditionError(
        "a spanprof session is already active in this process (one at a "
        "time)");
  }
  // Release every ring a previous session left registered (defensive: the
  // collector normally does it).
  session.rings.clear();
  session.options = options;
  if (session.options.process_name.empty()) {
    session.options.process_name = DefaultProcessName();
  }
  session.use_tsc = options.clock == ClockKind::kTsc ||
                    (options.clock == ClockKind::kAuto && invariant);
  session.count_allocs =
      internal::g_alloc_counting_linked.load(std::memory_order_relaxed);
  const auto cap = static_cast<int64_t>(
      std::min<uint64_t>(options.max_events, INT64_MAX / 4));
  session.span_budget.store(
      options.overflow == OverflowPolicy::kDropNewest ? cap : 0,
      std::memory_order_relaxed);
  session.ring_budget.store(options.overflow == OverflowPolicy::kRing ? cap : 0,
                            std::memory_order_relaxed);
  // Side records (arguments, context scopes): one per span of the cap in
  // drop mode, where context records are not budgeted (see AppendSide); two
  // in ring mode, where both share the wrapping buffer.
  session.side_budget.store(
      static_cast<uint64_t>(cap) *
          (options.overflow == OverflowPolicy::kRing ? 2 : 1),
      std::memory_order_relaxed);
  session.pid = getpid();
  // Epochs: bit 0 = monotonic clock, the rest counts sessions. Never 0 and
  // never internal::kDroppedEpoch.
  static uint32_t session_counter = 0;
  session_counter = (session_counter % 0x3FFFFFF0u) + 1;
  session.epoch = (session_counter << 1) | (session.use_tsc ? 0u : 1u);
  const internal::ClockPair start = internal::ReadClockPair();
  session.start_tsc = start.tsc;
  session.start_mono_ns = start.mono_ns;
  session.start_wall_ns = WallClockNs();
  session.active = true;
  g_epoch.store(session.epoch, std::memory_order_release);
  return absl::OkStatus();
}

bool IsRecording() noexcept {
  return g_epoch.load(std::memory_order_relaxed) != 0;
}

namespace {

// One thread's consistent snapshot, taken under its mutex after stop.
struct RingSnapshot {
  ThreadRing* ring = nullptr;
  std::vector<Chunk> chunks;  // with `used` filled in
  // Side records oldest first, and the index of each in the thread's side
  // stream (ring mode overwrites the oldest, so indices need not start at 0).
  std::vector<SideRecord> side;
  std::vector<uint64_t> side_index;
  uint64_t side_base = 0;       // index of the oldest side record still held
  bool side_truncated = false;  // older side records were overwritten
  std::vector<uint64_t> drops_by_site;
  uint64_t os_tid = 0;
  std::string name;
  bool truncated = false;  // the stream lost a prefix (ring mode)
};

// The collector builds the spans in place, in the Capture's own array, and
// in their final form as far as one thread's records tell: a retained span
// costs the 80 bytes of its `Span` and one write pass over them, because
// fresh memory is what session end pays most for (a first-touch page fault
// costs ~3 us per 4 KiB on a VM: more than all the parsing). Ids are the
// index + 1 and parent ids the parent's index + 1, so a capture without
// context scopes or discarded spans needs no second pass. While a span is
// open, `heartbeats` and `alloc_*` hold the thread's counters at its begin.
// Cross-thread parents (contexts) and discarded spans (ring mode) are fixed
// up afterwards: depths from the parent links, and a compaction that
// renumbers ids and threads.
constexpr uint32_t kRemovedFlag = 1u << 31;  // not retained (collector only)
constexpr size_t kNoSpan = SIZE_MAX;

// A span's stream positions, kept only when some thread used context scopes
// (context resolution looks spans up by position).
struct SpanPositions {
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;
};

// A span that began under a context scope with no same-thread span open: its
// cross-thread parent is resolved after every thread is parsed.
struct ContextRef {
  size_t span = 0;
  uint32_t snapshot = 0;  // the span's own thread, as a snapshot index
  uint32_t slot = 0;
  uint64_t position = 0;
  uint64_t side = 0;
};

struct PendingArg {
  size_t span;
  SpanArg arg;
};

// One context scope of a thread, as its side records describe it.
struct ScopeFrame {
  uint64_t push_index = 0;          // side index of the push
  uint64_t pop_index = UINT64_MAX;  // side index of the pop; none: still open
  uint32_t slot = 0;                // the context it made current
  uint64_t position = 0;
  uint64_t side = 0;
  int64_t outer = -1;  // the frame that was innermost when this one began
};

// What context resolution needs to know about one thread's streams.
struct ThreadStreams {
  size_t first_span = 0;
  size_t span_count = 0;
  bool truncated = false;       // main stream lost a prefix
  uint64_t first_position = 0;  // of the oldest record still held
  // The last end of a span whose begin was overwritten: such a span was open
  // at every position before it.
  bool has_orphan_end = false;
  uint64_t last_orphan_end = 0;
  std::vector<ScopeFrame> frames;  // in push order
  bool side_truncated = false;
  uint64_t side_base = 0;
  // The last pop of a scope whose push was overwritten.
  bool has_orphan_pop = false;
  uint64_t last_orphan_pop = 0;
  // Ring mode: spans that began before this stream position may have lost
  // side records (arguments, the push of the scope they ran under) and are
  // discarded, like spans whose begin was overwritten.
  uint64_t side_horizon = 0;
};

// Converts raw clock values to session-relative ns: floor(delta * ns / ticks)
// for the TSC, exactly, without a division per span (a 64.64 fixed-point
// estimate, corrected by one step).
class TimeBase {
 public:
  TimeBase(bool tsc, uint64_t start_raw, uint64_t stop_raw, uint64_t start_mono,
           uint64_t stop_mono)
      : tsc_(tsc), start_raw_(start_raw) {
    if (tsc_) {
      ticks_ = stop_raw > start_raw ? stop_raw - start_raw : 1;
      ns_ = stop_mono > start_mono ? stop_mono - start_mono : 0;
      // ns / ticks < 1 (a TSC faster than 1 GHz): the multiplier fits 64
      // bits. Otherwise every conversion divides.
      if (ns_ < ticks_) {
        mult_ =
            static_cast<uint64_t>((static_cast<Uint128>(ns_) << 64) / ticks_);
        use_mult_ = true;
      }
    }
  }

  int64_t ToNs(uint64_t raw) const {
    if (raw <= start_raw_) return 0;
    const uint64_t delta = raw - start_raw_;
    if (!tsc_) return static_cast<int64_t>(delta);
    const Uint128 product = static_cast<Uint128>(delta) * ns_;
    if (!use_mult_) return static_cast<int64_t>(product / ticks_);
    // mult_ <= ns * 2^64 / ticks < mult_ + 1, so the estimate is the exact
    // quotient or one less.
    auto q = static_cast<uint64_t>((static_cast<Uint128>(delta) * mult_) >> 64);
    if (product - static_cast<Uint128>(q) * ticks_ >= ticks_) ++q;
    return static_cast<int64_t>(q);
  }

 private:
  bool tsc_;
  bool use_mult_ = false;
  uint64_t start_raw_;
  uint64_t ticks_ = 1;
  uint64_t ns_ = 1;
  uint64_t mult_ = 0;
};

class Collector {
 public:
  Collector(Capture& capture, const std::vector<Site>& sites,
            const TimeBase& time, uint64_t stop_raw, bool keep_positions)
      : capture_(capture),
        spans_(capture.spans),
        sites_(sites),
        site_index_(sites.size(), UINT32_MAX),
        time_(time),
        stop_raw_(stop_raw),
        stop_ns_(time.ToNs(stop_raw)),
        keep_positions_(keep_positions) {}

  // The capture's index of interned site `id` (added on first use).
  uint32_t UseSite(uint32_t id) {
    if (id >= sites_.size()) id = 0;
    uint32_t& index = site_index_[id];
    if (index == UINT32_MAX) {
      index = static_cast<uint32_t>(capture_.sites.size());
      capture_.sites.push_back(sites_[id]);
      site_id_.push_back(id);
    }
    return index;
  }
  // The interned id of the capture's site `index`.
  uint32_t SiteId(uint32_t index) const { return site_id_[index]; }

  // Parses snapshot `snap` (the `snapshot`th ring) into spans; the thread is
  // added to the capture when it has any.
  void ParseThread(uint32_t snapshot, const RingSnapshot& snap) {
    const std::vector<Site>& sites = sites_;
    const auto thread = static_cast<uint32_t>(capture_.threads.size());
    ThreadStreams& ts = threads_.emplace_back();
    ts.first_span = spans_.size();
    ts.truncated = snap.truncated;
    ts.first_position =
        snap.chunks.empty() ? 0 : snap.chunks.front().base_position;
    ts.side_truncated = snap.side_truncated;
    ts.side_base = snap.side_base;
    for (size_t k = 0; k < snap.side.size() && snap.side_truncated; ++k) {
      if (snap.side_index[k] >= snap.side_base) {
        ts.side_horizon = snap.side[k].position;
        break;
      }
    }
    open_.clear();
    std::vector<size_t> scopes;  // frame indices, innermost last
    // Roots that a span whose begin was overwritten may enclose (ring mode):
    // when the lost span's end shows up, they lost their parent.
    std::vector<size_t> pending_roots;
    size_t side_i = 0;
    uint64_t next_side =
        snap.side.empty() ? UINT64_MAX : snap.side.front().position;
    uint64_t last_raw = 0;
    uint32_t last_hb = 0;
    // The span an alloc record belongs to (the last begin or end).
    size_t last_span = kNoSpan;
    bool last_was_begin = false;

    auto apply_side = [&](uint64_t position) {
      while (side_i < snap.side.size() &&
             snap.side[side_i].position <= position) {
        const SideRecord& s = snap.side[side_i];
        const uint64_t index = snap.side_index[side_i];
        ++side_i;
        switch (s.kind) {
          case internal::kSideArgInt:
          case internal::kSideArgDouble: {
            if (open_.empty() || s.key >= sites.size()) break;
            SpanArg arg;
            arg.key = sites[s.key].name;
            arg.is_double = s.kind == internal::kSideArgDouble;
            if (arg.is_double) {
              std::memcpy(&arg.double_value, &s.value, sizeof(double));
            } else {
              arg.int_value = static_cast<int64_t>(s.value);
            }
            args_.push_back(PendingArg{open_.back(), std::move(arg)});
            break;
          }
          case internal::kSideContextPush: {
            ScopeFrame frame;
            frame.push_index = index;
            frame.slot = s.key;
            frame.position = s.value;
            frame.side = s.side;
            frame.outer =
                scopes.empty() ? -1 : static_cast<int64_t>(scopes.back());
            ts.frames.push_back(frame);
            scopes.push_back(ts.frames.size() - 1);
            break;
          }
          case internal::kSideContextPop:
            if (!scopes.empty() &&
                ts.frames[scopes.back()].push_index == s.value) {
              ts.frames[scopes.back()].pop_index = index;
              scopes.pop_back();
            } else if (s.value < snap.side_base) {
              // The end of a scope whose push was overwritten: the spans
              // opened before it may have run under it.
              ts.has_orphan_pop = true;
              ts.last_orphan_pop = index;
              ts.side_horizon = std::max(ts.side_horizon, s.position);
            }
            break;
          default:
            break;
        }
      }
      next_side =
          side_i < snap.side.size() ? snap.side[side_i].position : UINT64_MAX;
    };

    uint64_t cut_position = UINT64_MAX;
    for (size_t chunk_index = 0; chunk_index < snap.chunks.size();
         ++chunk_index) {
      const Chunk& chunk = snap.chunks[chunk_index];
      const Record* const records = chunk.records;
      for (uint64_t i = 0; i < chunk.used; ++i) {
        const Record& rec = records[i];
        const uint64_t position = chunk.base_position + i;
        const uint32_t kind = rec.word >> internal::kKindShift;
        if (SPANPROF_UNLIKELY(kind == internal::kAllocRecord)) {
          if (last_span != kNoSpan) {
            Span& span = spans_[last_span];
            const auto count = static_cast<int64_t>(rec.time);
            const auto bytes = static_cast<int64_t>(
                (static_cast<uint64_t>(rec.word & internal::kSiteMask) << 32) |
                rec.heartbeats);
            if (last_was_begin) {
              span.alloc_count = count;
              span.alloc_bytes = bytes;
            } else {
              span.alloc_count = count - span.alloc_count;
              span.alloc_bytes = bytes - span.alloc_bytes;
            }
          }
          continue;
        }
        if (SPANPROF_UNLIKELY(rec.time > stop_raw_)) {
          // Written after the stop by a thread that was still running: this
          // and every later record of the thread are not part of the
          // capture; spans still open here end at the stop, unfinished.
          cut_position = position;
          break;
        }
        if (SPANPROF_UNLIKELY(position >= next_side)) apply_side(position);
        // Timestamps never go backwards within a thread.
        const uint64_t raw = std::max(rec.time, last_raw);
        last_raw = raw;
        last_hb = rec.heartbeats;
        if (kind == internal::kBeginRecord) {
          const size_t index = spans_.size();
          Span& span = spans_.emplace_back();
          span.id = index + 1;
          span.site = UseSite(rec.word & internal::kSiteMask);
          span.thread = thread;
          span.depth = static_cast<uint32_t>(open_.size());
          span.start_ns = time_.ToNs(raw);
          span.heartbeats = rec.heartbeats;
          if (keep_positions_) positions_.push_back(SpanPositions{position});
          if (!open_.empty()) {
            span.parent_id = open_.back() + 1;
          } else {
            // No span of this thread is open: the innermost context scope,
            // if any, supplies a cross-thread parent.
            if (!scopes.empty()) {
              const ScopeFrame& frame = ts.frames[scopes.back()];
              contexts_.push_back(ContextRef{index, snapshot, frame.slot,
                                             frame.position, frame.side});
            }
            if (snap.truncated) pending_roots.push_back(index);
          }
          open_.push_back(index);
          last_span = index;
          last_was_begin = true;
        } else if (kind == internal::kEndRecord ||
                   kind == internal::kEndExceptionRecord) {
          if (SPANPROF_UNLIKELY(open_.empty())) {
            // The end of a span whose begin was overwritten: every root
            // since the last such end ran inside that lost span.
            for (size_t root : pending_roots) {
              spans_[root].flags |= kSpanRerooted;
            }
            pending_roots.clear();
            ts.has_orphan_end = true;
            ts.last_orphan_end = position;
            last_span = kNoSpan;
            continue;
          }
          const size_t index = open_.back();
          open_.pop_back();
          Span& span = spans_[index];
          span.end_ns = std::max(span.start_ns, time_.ToNs(raw));
          span.heartbeats =
              static_cast<uint32_t>(rec.heartbeats - span.heartbeats);
          if (kind == internal::kEndExceptionRecord) {
            span.flags |= kSpanException;
          }
          if (keep_positions_) positions_[index].end = position;
          last_span = index;
          last_was_begin = false;
        }
      }
      if (cut_position != UINT64_MAX) break;
      // A closed chunk is never written again and is read only here: free
      // it now (the ring's own descriptor, so the hand-back skips it), so
      // the spans written next can reuse its memory.
      if (chunk_index + 1 < snap.chunks.size()) {
        std::lock_guard<std::mutex> lock(snap.ring->mu);
        internal::FreeChunk(snap.ring->chunks[chunk_index]);
      }
    }
    apply_side(cut_position);
    // Spans still open at stop are closed there and flagged.
    for (size_t index : open_) {
      Span& span = spans_[index];
      span.end_ns = std::max(stop_ns_, span.start_ns);
      span.heartbeats = static_cast<uint32_t>(last_hb - span.heartbeats);
      span.alloc_count = 0;  // no end counters
      span.alloc_bytes = 0;
      span.flags |= kSpanUnfinished;
    }
    ts.span_count = spans_.size() - ts.first_span;
    if (ts.side_horizon > 0) {  // keep_positions_ is set (NeedPositions)
      for (size_t i = ts.first_span; i < spans_.size(); ++i) {
        if (positions_[i].begin >= ts.side_horizon) break;
        spans_[i].flags |= kRemovedFlag;
        ++removed_;
      }
    }
    if (ts.span_count > 0) {
      ThreadInfo info;
      info.os_tid = snap.os_tid & 0xFFFFFFFFu;
      info.name = snap.name;
      info.sort_index = thread;
      capture_.threads.push_back(std::move(info));
    }
  }

  // Resolves each context reference to the innermost span open at that
  // position on the context's thread; when none was open there, to the
  // context of the scope that thread ran under (hand-off chains). A parent on
  // the child's own thread is not linked: a thread is never its own
  // cross-thread parent, and a same-thread parent must enclose its child.
  // Returns whether any parent changed.
  bool ResolveContexts(const std::vector<uint32_t>& slot_to_thread) {
    // Resolve every reference first: the lookups walk same-thread parents,
    // which must not see a cross-thread link yet.
    std::vector<int64_t> parents(contexts_.size(), -1);
    for (size_t k = 0; k < contexts_.size(); ++k) {
      const ContextRef& ref = contexts_[k];
      Span& span = spans_[ref.span];
      // Discarded, or already known to have lost its (same-thread) parent.
      if (span.flags & (kRemovedFlag | kSpanRerooted)) continue;
      bool lost = false;
      uint32_t thread = UINT32_MAX;
      const int64_t parent = Resolve(slot_to_thread, ref.slot, ref.position,
                                     ref.side, &lost, &thread);
      if (thread == ref.snapshot) continue;  // never its own parent thread
      if (parent >= 0) {
        parents[k] = parent;
      } else if (lost) {
        span.flags |= kSpanRerooted;  // the parent was overwritten
      }
    }
    bool changed = false;
    for (size_t k = 0; k < contexts_.size(); ++k) {
      if (parents[k] < 0) continue;
      spans_[contexts_[k].span].parent_id =
          static_cast<uint64_t>(parents[k]) + 1;
      changed = true;
    }
    return changed;
  }

  std::vector<PendingArg>& args() { return args_; }
  // Spans discarded while parsing (their side records were overwritten).
  size_t removed() const { return removed_; }

 private:
  // The innermost span of `ts` open at stream position `pos`, or -1.
  int64_t InnermostSpan(const ThreadStreams& ts, uint64_t pos) const {
    // The last span of the thread that began before `pos`...
    size_t lo = ts.first_span;
    size_t hi = ts.first_span + ts.span_count;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (positions_[mid].begin < pos) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    int64_t candidate = lo > ts.first_span ? static_cast<int64_t>(lo - 1) : -1;
    // ...or the nearest of its enclosing spans still open at `pos`.
    while (candidate >= 0) {
      if (positions_[static_cast<size_t>(candidate)].end >= pos) break;
      candidate = static_cast<int64_t>(
                      spans_[static_cast<size_t>(candidate)].parent_id) -
                  1;
    }
    return candidate;
  }

  // The innermost scope of `ts` active after `side` side records, or -1.
  static int64_t InnermostScope(const ThreadStreams& ts, uint64_t side) {
    const auto it = std::partition_point(
        ts.frames.begin(), ts.frames.end(),
        [side](const ScopeFrame& f) { return f.push_index < side; });
    int64_t frame = static_cast<int64_t>(it - ts.frames.begin()) - 1;
    while (frame >= 0 &&
           ts.frames[static_cast<size_t>(frame)].pop_index < side) {
      frame = ts.frames[static_cast<size_t>(frame)].outer;
    }
    return frame;
  }

  // Follows a context to its span. `*thread` is the parent's thread when it
  // is known (also when the parent itself was overwritten), else UINT32_MAX:
  // when a thread's history was overwritten at the context's point, whether
  // a span was open there, or which scope was active, is unknown.
  int64_t Resolve(const std::vector<uint32_t>& slot_to_thread, uint32_t slot,
                  uint64_t pos, uint64_t side, bool* lost,
                  uint32_t* thread) const {
    // Hand-off chains are short; the bound only guards against garbage.
    for (int hop = 0; hop < 256; ++hop) {
      if (slot >= slot_to_thread.size() || slot_to_thread[slot] == UINT32_MAX) {
        return -1;
      }
      *thread = slot_to_thread[slot];
      const ThreadStreams& ts = threads_[*thread];
      const int64_t span = InnermostSpan(ts, pos);
      if (span >= 0) return span;
      if (ts.truncated && ts.has_orphan_end && ts.last_orphan_end >= pos) {
        *lost = true;  // the span open there was overwritten
        return -1;
      }
      if (ts.truncated && pos < ts.first_position) {
        *lost = true;  // no record of that point is left
        *thread = UINT32_MAX;
        return -1;
      }
      const int64_t frame = InnermostScope(ts, side);
      if (frame < 0) {
        *lost = ts.side_truncated &&
                (side < ts.side_base ||
                 (ts.has_orphan_pop && ts.last_orphan_pop >= side));
        if (*lost) *thread = UINT32_MAX;
        return -1;
      }
      const ScopeFrame& f = ts.frames[static_cast<size_t>(frame)];
      slot = f.slot;
      pos = f.position;
      side = f.side;
    }
    return -1;
  }

  Capture& capture_;
  std::vector<Span>& spans_;
  const std::vector<Site>& sites_;
  std::vector<uint32_t> site_index_;  // interned id -> capture index
  std::vector<uint32_t> site_id_;     // capture index -> interned id
  const TimeBase& time_;
  uint64_t stop_raw_;
  int64_t stop_ns_;
  bool keep_positions_;
  size_t removed_ = 0;
  std::vector<size_t> open_;
  std::vector<SpanPositions> positions_;
  std::vector<ContextRef> contexts_;
  std::vector<PendingArg> args_;
  std::vector<ThreadStreams> threads_;
};

// Recomputes every depth from the parent links (after cross-thread parents
// were linked or parents were lost). A link that would close a loop is cut.
void RecomputeDepths(std::vector<Span>& spans) {
  const size_t n = spans.size();
  std::vector<uint8_t> state(n, 0);  // 0 = unknown, 1 = on the walk, 2 = done
  std::vector<size_t> walk;
  for (size_t i = 0; i < n; ++i) {
    if (state[i] == 2) continue;
    walk.clear();
    size_t cur = i;
    uint32_t depth = 0;
    while (true) {
      if (state[cur] == 2) {
        depth = spans[cur].depth + 1;
        break;
      }
      state[cur] = 1;
      walk.push_back(cur);
      const uint64_t parent = spans[cur].parent_id;
      if (parent == 0) break;
      if (state[parent - 1] == 1) {  // a loop: make `cur` a root
        spans[cur].parent_id = 0;
        spans[cur].flags |= kSpanRerooted;
        break;
      }
      cur = static_cast<size_t>(parent - 1);
    }
    for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
      spans[*it].depth = depth++;
      state[*it] = 2;
    }
  }
}

// Raw stream positions are only needed to resolve contexts and to discard
// the spans older than a wrapped side buffer.
bool NeedPositions(const std::vector<RingSnapshot>& snaps) {
  for (const RingSnapshot& snap : snaps) {
    if (snap.side_truncated) return true;
    for (const SideRecord& s : snap.side) {
      if (s.kind == internal::kSideContextPush) return true;
    }
  }
  return false;
}

uint64_t CountBegins(const std::vector<RingSnapshot>& snaps) {
  uint64_t begins = 0;
  for (const RingSnapshot& snap : snaps) {
    for (const Chunk& chunk : snap.chunks) {
      for (uint64_t i = 0; i < chunk.used; ++i) {
        begins += (chunk.records[i].word >> internal::kKindShift) ==
                  internal::kBeginRecord;
      }
    }
  }
  return begins;
}

}  // namespace

Capture StopRecording() {
  SessionState& session = internal::Session();
  std::unique_lock<std::mutex> session_lock(session.mu);
  if (!session.active) return Capture{};
  // From here on no span is recorded: the fast path sees epoch 0, slow paths
  // re-check it under their ring's lock.
  g_epoch.store(0, std::memory_order_seq_cst);
  const internal::ClockPair stop = internal::ReadClockPair();
  session.active = false;
  std::vector<ThreadRing*> rings = std::move(session.rings);
  session.rings.clear();
  session_lock.unlock();

  // Snapshot every ring. After we hold and release its lock once, the thread
  // can no longer switch chunks, so closed chunks and the published prefix of
  // the current chunk are stable.
  std::vector<RingSnapshot> snaps(rings.size());
  std::vector<uint64_t> drops_by_site;
  for (size_t i = 0; i < rings.size(); ++i) {
    ThreadRing* r = rings[i];
    RingSnapshot& snap = snaps[i];
    std::lock_guard<std::mutex> lock(r->mu);
    snap.ring = r;
    snap.chunks = r->chunks;
    if (!snap.chunks.empty() && snap.chunks.back().records != nullptr) {
      snap.chunks.back().used = static_cast<uint64_t>(
          r->cursor.load(std::memory_order_acquire) - r->chunk_begin);
    } else if (!snap.chunks.empty()) {
      snap.chunks.pop_back();  // the placeholder of a thread that never wrote
    }
    snap.truncated =
        !snap.chunks.empty() && snap.chunks.front().base_position != 0;
    const uint64_t side_count =
        r->side_published.load(std::memory_order_acquire);
    if (!r->side_wrapped) {
      snap.side.assign(r->side.begin(),
                       r->side.begin() + static_cast<ptrdiff_t>(side_count));
      snap.side_index.resize(snap.side.size());
      for (uint64_t k = 0; k < side_count; ++k) snap.side_index[k] = k;
    } else {
      // Oldest first; the very oldest slot is skipped because a straggler may
      // be overwriting it right now.
      const uint64_t cap = r->side_capacity;
      snap.side_base = side_count - cap + 1;
      snap.side_truncated = true;
      // Scopes whose push was overwritten come back first, in push order:
      // those still alive, and those that ended with their pop still here.
      std::vector<std::pair<uint64_t, SideRecord>> restored;
      for (const ThreadRing::LiveScope& scope : r->live_scopes) {
        if (scope.index >= snap.side_base) break;
        restored.emplace_back(scope.index, scope.push);
      }
      for (size_t k = r->ended_scopes_head; k < r->ended_scopes.size(); ++k) {
        const ThreadRing::EndedScope& scope = r->ended_scopes[k];
        if (scope.index < snap.side_base && scope.pop_index >= snap.side_base &&
            scope.pop_index < side_count) {
          restored.emplace_back(scope.index, scope.push);
        }
      }
      std::sort(restored.begin(), restored.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [index, push] : restored) {
        snap.side.push_back(push);
        snap.side_index.push_back(index);
      }
      for (uint64_t k = snap.side_base; k < side_count; ++k) {
        snap.side.push_back(r->side[k % cap]);
        snap.side_index.push_back(k);
      }
    }
    snap.drops_by_site = r->drops_by_site;
    snap.os_tid = r->os_tid;
    snap.name = r->name;
    if (drops_by_site.size() < snap.drops_by_site.size()) {
      drops_by_site.resize(snap.drops_by_site.size(), 0);
    }
    for (size_t s = 0; s < snap.drops_by_site.size(); ++s) {
      drops_by_site[s] += snap.drops_by_site[s];
    }
  }

  const std::vector<Site> sites = internal::SnapshotSites();
  const uint64_t stop_raw = session.use_tsc ? stop.tsc : stop.mono_ns;
  const TimeBase time(
      session.use_tsc,
      session.use_tsc ? session.start_tsc : session.start_mono_ns, stop_raw,
      session.start_mono_ns, stop.mono_ns);

  Capture capture;
  std::vector<Span>& spans = capture.spans;
  spans.reserve(CountBegins(snaps));
  Collector collector(capture, sites, time, stop_raw, NeedPositions(snaps));
  // Each ring goes back as soon as it is parsed, so that its memory is
  // free again (or cached for the next session) before the next thread's
  // spans are written: the peak is the capture plus one ring, not plus all.
  // Exited threads are freed; live threads keep only the chunk they may
  // still be writing into (a straggler's records there are never read).
  auto hand_back = [](const RingSnapshot& snap) {
    ThreadRing* r = snap.ring;
    bool destroy = false;
    {
      std::lock_guard<std::mutex> lock(r->mu);
      r->in_session = false;
      if (r->owner_exited) {
        destroy = true;
      } else if (r->chunks.size() > 1) {
        for (size_t c = 0; c + 1 < r->chunks.size(); ++c) {
          internal::FreeChunk(r->chunks[c]);
        }
        r->chunks.erase(r->chunks.begin(), r->chunks.end() - 1);
      }
    }
    if (destroy) {
      for (Chunk& chunk : r->chunks) internal::FreeChunk(chunk);
      delete r;
    }
  };
  std::vector<uint32_t> slot_to_thread(rings.size(), UINT32_MAX);
  for (uint32_t t = 0; t < snaps.size(); ++t) {
    slot_to_thread[snaps[t].ring->slot] = t;
  }
  for (uint32_t t = 0; t < snaps.size(); ++t) {
    collector.ParseThread(t, snaps[t]);
    hand_back(snaps[t]);
    snaps[t].ring = nullptr;
  }
  bool depths_changed = collector.ResolveContexts(slot_to_thread);

  auto count_drop = [&](const Span& span) {
    const uint32_t id = collector.SiteId(span.site);
    if (id >= drops_by_site.size()) drops_by_site.resize(id + 1, 0);
    ++drops_by_site[id];
  };
  size_t removed = collector.removed();
  // Ring mode keeps the newest `max_events` spans overall: trim the oldest
  // (by start, then by index).
  const uint64_t cap = session.options.max_events;
  if (session.options.overflow == OverflowPolicy::kRing &&
      spans.size() - removed > cap) {
    std::vector<std::pair<int64_t, size_t>> order;
    order.reserve(spans.size() - removed);
    for (size_t i = 0; i < spans.size(); ++i) {
      if (!(spans[i].flags & kRemovedFlag)) {
        order.emplace_back(spans[i].start_ns, i);
      }
    }
    const size_t excess = order.size() - cap;
    std::nth_element(order.begin(),
                     order.begin() + static_cast<ptrdiff_t>(excess - 1),
                     order.end());
    for (size_t i = 0; i < excess; ++i) {
      spans[order[i].second].flags |= kRemovedFlag;
    }
    removed += excess;
  }
  // Discarded spans (side records overwritten, or trimmed) count as drops;
  // their children become roots, flagged; the rest move down so that ids
  // stay dense, in thread and begin order, and threads left without spans
  // leave the capture.
  std::vector<size_t> new_index;
  if (removed > 0) {
    for (Span& span : spans) {
      if (span.flags & kRemovedFlag) {
        count_drop(span);
      } else if (span.parent_id != 0 &&
                 (spans[span.parent_id - 1].flags & kRemovedFlag)) {
        span.parent_id = 0;
        span.flags |= kSpanRerooted;
      }
    }
    new_index.assign(spans.size(), kNoSpan);
    std::vector<uint32_t> thread_index(capture.threads.size(), UINT32_MAX);
    std::vector<ThreadInfo> threads;
    size_t next = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      if (spans[i].flags & kRemovedFlag) continue;
      new_index[i] = next;
      Span& span = spans[next];
      if (next != i) span = spans[i];
      span.id = next + 1;
      uint32_t& thread = thread_index[span.thread];
      if (thread == UINT32_MAX) {
        thread = static_cast<uint32_t>(threads.size());
        threads.push_back(std::move(capture.threads[span.thread]));
        threads.back().sort_index = thread;
      }
      span.thread = thread;
      ++next;
    }
    spans.resize(next);
    capture.threads = std::move(threads);
    for (Span& span : spans) {
      if (span.parent_id != 0) {
        span.parent_id = new_index[span.parent_id - 1] + 1;
      }
    }
    depths_changed = true;
  }
  if (depths_changed) RecomputeDepths(spans);

  capture.spanprof_version = "0.1.0";
  capture.process_name = session.options.process_name;
  capture.pid = session.pid;
  capture.clock = session.use_tsc ? "tsc" : "monotonic";
  capture.wall_clock_anchor_ns = session.start_wall_ns;
  capture.window_ns =
      stop.mono_ns > session.start_mono_ns
          ? static_cast<int64_t>(stop.mono_ns - session.start_mono_ns)
          : 0;
  capture.event_limit = cap;
  capture.overflow_policy = OverflowPolicyName(session.options.overflow);
  capture.alloc_measured = session.count_allocs;

  // Arguments, contiguous per span.
  std::vector<PendingArg>& args = collector.args();
  std::stable_sort(
      args.begin(), args.end(),
      [](const PendingArg& a, const PendingArg& b) { return a.span < b.span; });
  for (PendingArg& pending : args) {
    const size_t index =
        new_index.empty() ? pending.span : new_index[pending.span];
    if (index == kNoSpan) continue;
    Span& span = spans[index];
    if (span.arg_count == 0) {
      span.first_arg = static_cast<uint32_t>(capture.args.size());
    }
    ++span.arg_count;
    capture.args.push_back(std::move(pending.arg));
  }

  for (size_t s = 0; s < drops_by_site.size(); ++s) {
    if (drops_by_site[s] == 0) continue;
    capture.dropped_events += drops_by_site[s];
    capture.dropped_by_site.push_back(SiteDrops{
        collector.UseSite(static_cast<uint32_t>(s)), drops_by_site[s]});
  }

  return capture;
}

}  // namespace spanprof
