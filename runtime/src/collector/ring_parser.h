// Parsing rings into spans: the collector's per-thread pass over a ring
// snapshot (begins and ends paired into spans in place, arguments and context
// scopes read from the side stream), and the resolution of cross-thread
// parents once every thread is parsed. collector.cc assembles the capture.
#ifndef SPANPROF_RUNTIME_SRC_COLLECTOR_RING_PARSER_H_
#define SPANPROF_RUNTIME_SRC_COLLECTOR_RING_PARSER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collector/ring_snapshot.h"
#include "recorder/recorder_internal.h"
#include "spanprof/capture.h"
#include "spanprof/internal/compact_spans.h"
#include "spanprof/internal/packed_args.h"

namespace spanprof::internal {

__extension__ using Uint128 = unsigned __int128;

// The collector builds the spans in place, in the Capture's own array, and
// in their final form as far as one thread's records tell: a retained span
// costs the 80 bytes of its `Span` and one write pass over them, because
// fresh memory is what session end pays most for (a first-touch page fault
// costs ~3 us per 4 KiB on a VM: more than all the parsing). Ids are the
// index + 1 and parent ids the parent's index + 1, so a capture without
// context scopes or discarded spans needs no second pass. While a span is
// open, `heartbeats` (and its `Capture::span_allocs` entry) hold the thread's
// counters at its begin.
// Cross-thread parents (contexts) and discarded spans (ring mode) are fixed
// up afterwards: depths from the parent links, and a compaction that
// renumbers ids and threads.
inline constexpr uint16_t kRemovedFlag =
    1u << 15;  // not retained (collector only; SpanFlag bits are below it)
inline constexpr size_t kNoSpan = SIZE_MAX;

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

// An argument or count found while parsing, attached to its span at the
// end (AttachArgs). 16 bytes: the `SpanArg` with its strings is built only
// when attached (building it here, then sorting and copying it, made
// arguments most of a session end's time and memory), and every argument's
// pending entry sits beside the spans at the end of the parse.
struct PendingArg {
  enum Kind : uint32_t { kInt, kDouble, kString, kCounter };
  static constexpr uint32_t kMaxKey = (1u << 30) - 1;
  uint32_t span;  // the parse-time index of its span (below UINT32_MAX)
  Kind kind : 2;
  uint32_t key : 30;  // interned site id of the key; counter id for kCounter
  uint64_t value;     // the bits; kString: index into Collector::texts_,
                      // with kTextTruncatedBit when the text was cut
};
static_assert(sizeof(PendingArg) == 16, "a session end holds one an argument");

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

// How far a session end has come, for a helper that faults its storage in
// just ahead of it (stream_end.cc): the spans parsed, then the arguments
// attached. Each step is published with a wake-up; Stop() ends the wait.
struct EndProgress {
  std::atomic<uint64_t> spans{0};
  std::atomic<uint64_t> args{0};
  std::atomic<uint32_t> changes{0};  // what the helper waits on
  std::atomic<bool> stopped{false};

  void Publish(std::atomic<uint64_t>& what, uint64_t value) {
    what.store(value, std::memory_order_relaxed);
    changes.fetch_add(1, std::memory_order_release);
    changes.notify_one();
  }
  void Stop() {
    stopped.store(true, std::memory_order_relaxed);
    changes.fetch_add(1, std::memory_order_release);
    changes.notify_one();
  }
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

// Where each span's arguments go once all of them are known: into
// `Capture::args`, in span order, or, for a capture that only feeds a
// session end's outputs, into a packed store (Capture::packed_args, a few
// bytes an argument instead of a 32-byte SpanArg) in any order.
class SpanArgStore {
 public:
  // Packed.
  explicit SpanArgStore(Capture& capture);
  // Into `Capture::args`, for `count` arguments: storage reserved ahead
  // (`reserved`) is taken when it fits them.
  SpanArgStore(Capture& capture, std::vector<SpanArg>& reserved, size_t count);

  // Packed: room for `count` arguments, reserved once (address space until
  // written) instead of the doublings of a growing store, whose copies sat
  // beside the spans at the end's peak.
  void Reserve(size_t count) {
    // A tag and a value under 2^34 (a varint of 5 bytes).
    if (packed_ != nullptr) packed_->Reserve(6 * count);
  }
  // Stores `args`, and clears them. Returns where they begin (the span's
  // `first_arg`), or UINT32_MAX when they were dropped (past 4 GiB of them:
  // counted in Capture::dropped_args).
  uint32_t Put(std::vector<SpanArg>& args);
  // The packed store goes to the capture.
  void Finish();

 private:
  Capture& capture_;
  std::shared_ptr<PackedArgs> packed_;
};

// The spans a parse appends: to `Capture::spans`, or, for the capture of a
// session end's own outputs, to a window of whole spans that moves on into
// their compact form (Capture::compact_spans, 40 bytes instead of 56) a
// block at a time while the parse goes. The window's memory is reused, so
// the parse's peak holds 40 bytes a span and the whole spans of a block. A
// span that moved can still change (its end, flags and arguments come
// later): operator[] and Update() reach it wherever it is.
class ParsedSpans {
 public:
  explicit ParsedSpans(std::vector<Span>& spans) : spans_(spans) {}

  // From now on spans go to the window, which moves into `compact` (empty)
  // whenever it holds kWindow spans; `Capture::spans` stays empty.
  void MoveInto(CompactSpans* compact) {
    compact_ = compact;
    window_.reserve(kWindow);
  }
  // Whether spans move (MoveInto, and none failed to fit).
  bool moving() const { return compact_ != nullptr; }
  // False once a span did not fit the compact form (deeper than 65,535).
  bool fit() const { return fit_; }

  size_t size() const {
    return moving() ? moved_ + window_.size() : spans_.size();
  }
  Span& Append() {
    if (!moving()) return spans_.emplace_back();
    if (window_.size() == kWindow) Move();
    // Moving back (a span did not fit) stops the moving.
    return moving() ? window_.emplace_back() : spans_.emplace_back();
  }
  Span operator[](size_t index) const {
    if (!moving()) return spans_[index];
    return index < moved_ ? (*compact_)[index] : window_[index - moved_];
  }
  // Calls `f` with span `index` (a Span&) and keeps what it changed.
  template <typename F>
  void Update(size_t index, const F& f) {
    if (!moving()) {
      f(spans_[index]);
    } else if (index >= moved_) {
      f(window_[index - moved_]);
    } else {
      Span span = (*compact_)[index];
      f(span);
      compact_->Set(index, span);
    }
  }

  // Moves the window into compact form. A span that does not fit puts
  // every span back whole (MoveBack), and none moves again.
  void Move();
  // Puts every span into `Capture::spans`, whole (the compact store's
  // pages go back as it is read), and stops moving them.
  void MoveBack();

 private:
  std::vector<Span>& spans_;
  // Whole spans held at most: 224 KiB, reused.
  static constexpr size_t kWindow = size_t{1} << 12;
  std::vector<Span> window_;  // spans [moved_, size())
  CompactSpans* compact_ = nullptr;
  size_t moved_ = 0;
  bool fit_ = true;
};

// `ValidUtf8(text)` is `text` with every byte that does not start a valid
// UTF-8 sequence replaced by U+FFFD: what the program wrote (string
// arguments, thread names, span, counter and process names) may be cut or
// not be UTF-8, and the trace must be
// valid JSON.
std::string ValidUtf8(std::string_view text);

// `Collector` turns ring snapshots into the capture's spans, threads and
// sites, one thread at a time, then links cross-thread parents. Spans it had
// to discard are flagged `kRemovedFlag`; collector.cc trims and compacts.
class Collector {
 public:
  Collector(Capture& capture, const std::vector<Site>& sites,
            const TimeBase& time, uint64_t stop_raw, bool keep_positions)
      : capture_(capture),
        spans_(capture.spans),
        allocs_(capture.span_allocs),
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
  void ParseThread(uint32_t snapshot, const RingSnapshot& snap);

  // Resolves each context reference to the innermost span open at that
  // position on the context's thread; when none was open there, to the
  // context of the scope that thread ran under (hand-off chains). A parent on
  // the child's own thread is not linked: a thread is never its own
  // cross-thread parent, and a same-thread parent must enclose its child.
  // Returns whether any parent changed.
  bool ResolveContexts(const std::vector<uint32_t>& slot_to_thread);

  // The span (parse-time index) each exported point names, -1 for none:
  // the innermost span open there, through hand-off scopes as for contexts.
  std::vector<int64_t> ResolvePoints(
      const std::vector<uint32_t>& slot_to_thread,
      const std::vector<ExportPoint>& points) const;

  // Ring blocks read while parsing go back to the kernel rather than to the
  // block cache (a session whose rings outgrew the cache: keeping 64 MiB of
  // them cached only adds to the session end's peak).
  void set_release_blocks(bool release) { release_blocks_ = release; }
  // Allocations were measured: each span gets a `Capture::span_allocs`
  // entry (reserve it with the spans).
  void set_alloc_column(bool measured) { alloc_column_ = measured; }

  // A helper faults the end's storage in just ahead of the parse
  // (EndProgress::spans): published every few thousand spans.
  void set_progress(EndProgress* progress) { progress_ = progress; }

  std::vector<PendingArg>& args() { return args_; }
  void ReserveArgs(size_t count) { args_.reserve(count); }
  // Each span's arguments go to `store` (packed) as soon as no more can
  // come, while its thread is parsed, instead of waiting in args() until
  // the end: a few thousand pending at a time, not 16 bytes of every
  // argument beside the spans.
  void set_arg_store(SpanArgStore* store) { store_ = store; }
  bool packs_args() const { return store_ != nullptr; }
  SpanArgStore& arg_store() { return *store_; }
  // Attaches `args` to their spans in `store`, contiguous per span, numeric
  // arguments first, then one entry per counter (a counter flushed several
  // times, around the span's children, is summed). `new_index` maps their
  // parse-time span indices to the capture's (empty: nothing moved); a span
  // keeps at most kMaxSpanArgs entries, the rest count as dropped.
  // `release`: `args` is not read again, its pages go back as it is read.
  void AttachPending(std::vector<PendingArg>& args,
                     const std::vector<size_t>& new_index, SpanArgStore& store,
                     EndProgress* progress, bool release);
  // The `SpanArg` of a pending argument (its key and text looked up).
  SpanArg MakeArg(PendingArg& pending);
  // Adds an argument of span `target` (a parse-time index) to attach at the
  // end; one that PendingArg cannot hold is counted as dropped.
  void AddPending(size_t target, PendingArg::Kind kind, uint32_t key,
                  uint64_t value);
  // The key of `name`, made once and kept in `keys[index]`.
  static const ArgKey& CachedKey(std::vector<ArgKey>& keys, size_t index,
                                 const std::string& name);
  // The process's counter names (by id - 1), for counter side records.
  void set_counter_names(std::vector<std::string> names) {
    counter_names_ = std::move(names);
  }
  // The name of counter `id`, "" when the capture has none by that id.
  std::string CounterName(uint32_t id) const {
    return id != 0 && id <= counter_names_.size() ? counter_names_[id - 1]
                                                  : std::string();
  }
  // Arguments and counter flushes the parse could not attach (no span open
  // on their thread, a span whose begin was overwritten, an unknown counter
  // id), by (interned site id, key, kind, reason); site 0: no span.
  const std::vector<GatheredDrop>& parsed_drops() const {
    return parsed_drops_;
  }
  // Counts one such drop (also used for the arguments past kMaxSpanArgs).
  void CountDrop(uint32_t site, uint32_t key, bool is_counter, uint8_t reason,
                 uint64_t count = 1);
  // Spans discarded while parsing (their side records were overwritten).
  size_t removed() const { return removed_; }
  // The spans as parsed (ParsedSpans: whole or moving into compact form).
  ParsedSpans& spans() { return spans_; }

 private:
  struct ThreadParse;  // one ParseThread call's cursor state

  // Per-thread steps of ParseThread. The per-record ones are `inline` (and
  // defined in ring_parser.cc, their only user): they run once per record,
  // and a call per record costs the collector a few percent.
  ThreadStreams& StartThread(const RingSnapshot& snap);
  inline bool ParseChunk(ThreadParse& p, const Chunk& chunk);
  void ApplySide(ThreadParse& p, uint64_t position);
  static void PushScope(ThreadParse& p, const SideRecord& s, uint64_t index);
  static void PopScope(ThreadParse& p, const SideRecord& s, uint64_t index);
  size_t Target(const ThreadParse& p) const;
  void ApplyArg(const SideRecord& s, size_t target);
  void ApplyString(ThreadParse& p, const SideRecord& s, uint64_t index);
  void ApplyCounter(const SideRecord& s, size_t target);
  void ApplyEndCount(const Record& rec, size_t target);
  inline void OnAlloc(ThreadParse& p, const Record& rec);
  inline void OnBegin(ThreadParse& p, const Record& rec, uint64_t position,
                      uint64_t raw);
  inline void OnEnd(ThreadParse& p, const Record& rec, uint64_t position,
                    uint64_t raw);
  void CloseOpenSpans(uint32_t last_hb);
  void Unplaced(uint32_t key, bool is_counter, uint64_t position);
  void PlaceDrops(uint32_t site);
  void DropWithLostSpan();
  void SettleProvisional();
  void DiscardBeforeSideHorizon(const ThreadStreams& ts);
  void AddThread(uint32_t thread, const RingSnapshot& snap);
  // With an argument store: attaches the pending arguments of the spans
  // that can get no more (neither open, nor the span an enrich bracket may
  // still reach) once enough are pending.
  void AttachFinished(const ThreadParse& p);

  // The innermost span of `ts` open at stream position `pos`, or -1.
  int64_t InnermostSpan(const ThreadStreams& ts, uint64_t pos) const;
  // The innermost scope of `ts` active after `side` side records, or -1.
  static int64_t InnermostScope(const ThreadStreams& ts, uint64_t side);
  // Follows a context to its span. `*thread` is the parent's thread when it
  // is known (also when the parent itself was overwritten), else UINT32_MAX:
  // when a thread's history was overwritten at the context's point, whether
  // a span was open there, or which scope was active, is unknown.
  int64_t Resolve(const std::vector<uint32_t>& slot_to_thread, uint32_t slot,
                  uint64_t pos, uint64_t side, bool* lost,
                  uint32_t* thread) const;

  Capture& capture_;
  ParsedSpans spans_;
  std::vector<SpanAllocs>& allocs_;
  const std::vector<Site>& sites_;
  std::vector<uint32_t> site_index_;  // interned id -> capture index
  std::vector<uint32_t> site_id_;     // capture index -> interned id
  const TimeBase& time_;
  uint64_t stop_raw_;
  int64_t stop_ns_;
  bool keep_positions_;
  EndProgress* progress_ = nullptr;
  size_t published_ = 0;  // spans, when progress_ was last told
  bool release_blocks_ = false;
  bool alloc_column_ = false;
  size_t removed_ = 0;
  std::vector<size_t> open_;
  std::vector<SpanPositions> positions_;
  std::vector<ContextRef> contexts_;
  std::vector<PendingArg> args_;
  SpanArgStore* store_ = nullptr;
  // With a store: the pending count that makes AttachFinished() run, and
  // its batch of arguments.
  static constexpr size_t kAttachBatch = size_t{1} << 12;
  // Side records read between two give-backs of their pages (128 KiB).
  static constexpr size_t kSideReleaseStep = size_t{1} << 12;
  size_t attach_at_ = kAttachBatch;
  std::vector<PendingArg> finished_;
  // String arguments' texts (PendingArg::value indexes them).
  std::vector<std::string> texts_;
  std::vector<std::string> counter_names_;
  // The keys made from site and counter names so far (by id): one lookup
  // in the process's name table per name, not per argument.
  std::vector<ArgKey> site_keys_;
  std::vector<ArgKey> counter_keys_;
  std::vector<GatheredDrop> parsed_drops_;
  // Arguments and counts of the thread being parsed made with no span open:
  // named after the next span that begins on the thread (where the program
  // meant them to go, as a rule: an argument made just before its span
  // opened), or after none at the thread's end.
  std::vector<GatheredDrop> unplaced_;
  // A thread whose stream lost its oldest records (a flight recorder's,
  // ThreadStreams::truncated): what it made with no span open may have gone
  // to a span whose begin was overwritten. Those drops wait here, named as
  // above, until the thread's next end of such a span (then they went with
  // it: the cap) or its end (no open span indeed).
  std::vector<GatheredDrop> provisional_;
  std::vector<ThreadStreams> threads_;
};

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_COLLECTOR_RING_PARSER_H_
