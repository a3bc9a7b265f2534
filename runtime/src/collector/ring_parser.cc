// Parsing rings into spans and linking cross-thread parents.
#include "collector/ring_parser.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spanprof::internal {

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t n = 0;  // continuation bytes
    uint32_t min = 0;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if ((c & 0xE0u) == 0xC0u) {
      n = 1;
      min = 0x80;
    } else if ((c & 0xF0u) == 0xE0u) {
      n = 2;
      min = 0x800;
    } else if ((c & 0xF8u) == 0xF0u) {
      n = 3;
      min = 0x10000;
    }
    uint32_t code = n == 0 ? 0 : (c & (0x3Fu >> n));
    bool ok = n > 0;
    for (size_t k = 1; ok && k <= n; ++k) {
      if (i + k >= text.size()) {
        ok = false;
        break;
      }
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0u) != 0x80u) {
        ok = false;
        break;
      }
      code = (code << 6) | (cc & 0x3Fu);
    }
    ok = ok && code >= min && code <= 0x10FFFF &&
         !(code >= 0xD800 && code <= 0xDFFF);
    if (ok) {
      out.append(text.data() + i, n + 1);
      i += n + 1;
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      ++i;
    }
  }
  return out;
}

struct Collector::ThreadParse {
  ThreadParse(uint32_t snapshot_index, uint32_t thread_index,
              const RingSnapshot& ring, ThreadStreams& streams)
      : snapshot(snapshot_index),
        thread(thread_index),
        snap(ring),
        ts(streams) {}

  uint32_t snapshot;  // the thread's snapshot index
  uint32_t thread;    // the thread's index in the capture
  const RingSnapshot& snap;
  ThreadStreams& ts;
  std::vector<size_t> scopes;  // frame indices, innermost last
  // Roots that a span whose begin was overwritten may enclose (ring mode):
  // when the lost span's end shows up, they lost their parent.
  std::vector<size_t> pending_roots;
  size_t side_i = 0;  // the next side record to apply
  // Where the side records read so far go back to the kernel, and the next
  // side record at which they do.
  MappingRelease* mapping = nullptr;
  size_t side_release_at = 0;
  // How much of the snapshot's side indices went back to the kernel once
  // parsed (ReleaseReadPrefix).
  size_t index_released = 0;
  uint64_t next_side = UINT64_MAX;  // its stream position
  uint64_t last_raw = 0;
  uint32_t last_hb = 0;
  // The span an alloc record belongs to (the last begin or end).
  size_t last_span = kNoSpan;
  // Inside an enrich bracket: the span the side records attach to.
  size_t enrich = kNoSpan;
  bool enriching = false;
  bool last_was_begin = false;
  // The position of the first record written after the stop, if any.
  uint64_t cut_position = UINT64_MAX;
};

void Collector::ParseThread(uint32_t snapshot, const RingSnapshot& snap) {
  const auto thread = static_cast<uint32_t>(capture_.threads.size());
  ThreadStreams& ts = StartThread(snap);
  open_.clear();
  ThreadParse p(snapshot, thread, snap, ts);
  p.next_side = snap.side.empty() ? UINT64_MAX : snap.side[0].position;
  // A sixty-fourth of the thread's records at a time, at most 4 MiB: few
  // calls, and little held beyond the capture at the end's peak.
  uint64_t record_bytes = 0;
  for (const Chunk& chunk : snap.chunks) {
    record_bytes += chunk.used * sizeof(Record);
  }
  MappingRelease mapping(std::min<uint64_t>(record_bytes / 64, 4u << 20));
  p.mapping = &mapping;
  for (size_t chunk_index = 0; chunk_index < snap.chunks.size();
       ++chunk_index) {
    const bool more = ParseChunk(p, snap.chunks[chunk_index]);
    if (chunk_index < snap.owned.size()) {
      snap.owned[chunk_index].ReleaseInto(mapping);
    }
    if (!more) break;
    if (store_ != nullptr && args_.size() >= attach_at_) AttachFinished(p);
    if (progress_ != nullptr && spans_.size() >= published_ + 16384) {
      published_ = spans_.size();
      progress_->Publish(progress_->spans, published_);
    }
    snap.side.ReleaseRead(p.side_i, mapping);
    ReleaseReadPrefix(snap.side_index,
                      std::min(p.side_i, snap.side_index.size()),
                      &p.index_released);
    // A closed chunk is never written again and is read only here: free it
    // now (the ring's own descriptor, so the hand-back skips it), so that the
    // rings shrink while the capture grows.
    if (snap.ring != nullptr && chunk_index + 1 < snap.chunks.size()) {
      std::lock_guard<std::mutex> lock(snap.ring->mu);
      FreeChunk(snap.ring->chunks[chunk_index], !release_blocks_);
    }
  }
  ApplySide(p, p.cut_position);
  PlaceDrops(0);  // no span began after them
  SettleProvisional();
  CloseOpenSpans(p.last_hb);
  ts.span_count = spans_.size() - ts.first_span;
  if (ts.side_horizon > 0) DiscardBeforeSideHorizon(ts);
  if (ts.span_count > 0) AddThread(thread, snap);
  if (store_ != nullptr) {
    // The thread's spans are all final: its arguments go now.
    AttachPending(args_, {}, *store_, nullptr, /*release=*/false);
    args_.clear();
    attach_at_ = kAttachBatch;
  }
}

void Collector::AttachFinished(const ThreadParse& p) {
  std::vector<size_t> open = open_;
  std::sort(open.begin(), open.end());
  const auto may_grow = [&](size_t span) {
    return span == p.last_span || span == p.enrich ||
           std::binary_search(open.begin(), open.end(), span);
  };
  finished_.clear();
  size_t kept = 0;
  for (size_t k = 0; k < args_.size(); ++k) {
    if (may_grow(args_[k].span)) {
      args_[kept++] = args_[k];
    } else {
      finished_.push_back(args_[k]);
    }
  }
  args_.resize(kept);
  AttachPending(finished_, {}, *store_, nullptr, /*release=*/false);
  // What stays (the open spans' arguments) is not scanned again until as
  // much again has come: linear in all.
  attach_at_ = std::max(kAttachBatch, 2 * args_.size());
}

ThreadStreams& Collector::StartThread(const RingSnapshot& snap) {
  ThreadStreams& ts = threads_.emplace_back();
  ts.first_span = spans_.size();
  ts.truncated = snap.truncated;
  ts.first_position =
      snap.chunks.empty() ? 0 : snap.chunks.front().base_position;
  ts.side_truncated = snap.side_truncated;
  ts.side_base = snap.side_base;
  for (size_t k = 0; k < snap.side.size() && snap.side_truncated; ++k) {
    if (snap.SideIndex(k) >= snap.side_base) {
      ts.side_horizon = snap.side[k].position;
      break;
    }
  }
  return ts;
}

// One chunk of the main stream. Returns false at the first record written
// after the stop (`p.cut_position`), where the thread's capture ends.
bool Collector::ParseChunk(ThreadParse& p, const Chunk& chunk) {
  const Record* const records = chunk.records;
  for (uint64_t i = 0; i < chunk.used; ++i) {
    const Record rec = LoadRecord(records, i);
    const uint64_t position = chunk.base_position + i;
    const uint32_t kind = rec.word >> kKindShift;
    if (SPANPROF_UNLIKELY(kind == kAllocRecord)) {
      OnAlloc(p, rec);
      continue;
    }
    if (SPANPROF_UNLIKELY(rec.time > stop_raw_)) {
      // Written after the stop by a thread that was still running: this and
      // every later record of the thread are not part of the capture; spans
      // still open here end at the stop, unfinished.
      p.cut_position = position;
      return false;
    }
    if (SPANPROF_UNLIKELY(position >= p.next_side)) ApplySide(p, position);
    // Timestamps never go backwards within a thread.
    const uint64_t raw = std::max(rec.time, p.last_raw);
    p.last_raw = raw;
    p.last_hb = rec.heartbeats;
    if (kind == kBeginRecord) {
      OnBegin(p, rec, position, raw);
    } else if (kind == kEndRecord || kind == kEndExceptionRecord ||
               kind == kEndCountRecord) {
      OnEnd(p, rec, position, raw);
    }
  }
  return true;
}

// Applies the side records written up to main stream `position`.
void Collector::ApplySide(ThreadParse& p, uint64_t position) {
  const RingSnapshot& snap = p.snap;
  while (p.side_i < snap.side.size() &&
         snap.side[p.side_i].position <= position) {
    const SideRecord s = snap.side[p.side_i];
    const uint64_t index = snap.SideIndex(p.side_i);
    ++p.side_i;
    switch (s.kind) {
      case kSideArgInt:
      case kSideArgDouble:
        ApplyArg(s, Target(p));
        break;
      case kSideArgString:
        ApplyString(p, s, index);
        break;
      case kSideCounter:
        ApplyCounter(s, Target(p));
        break;
      case kSideEnrichBegin:
        p.enriching = true;
        p.enrich = !p.last_was_begin ? p.last_span : kNoSpan;
        break;
      case kSideEnrichEnd:
        p.enriching = false;
        p.enrich = kNoSpan;
        break;
      case kSideHookFailed:
        if (const size_t target = Target(p); target != kNoSpan) {
          spans_.Update(target,
                        [](Span& span) { span.flags |= kSpanHookFailed; });
        }
        break;
      case kSideContextPush:
        PushScope(p, s, index);
        break;
      case kSideContextPop:
        PopScope(p, s, index);
        break;
      default:
        break;
    }
  }
  // A stream chunk of side records is 1 MiB (96 B a span with three
  // arguments): given back as it is read, not only at a chunk of records'
  // end, it adds a few pages to the end's peak instead of up to a chunk.
  if (p.side_i >= p.side_release_at && p.mapping != nullptr) {
    snap.side.ReleaseRead(p.side_i, *p.mapping);
    p.side_release_at = p.side_i + kSideReleaseStep;
  }
  // Here as well as at a chunk's end: a chunk of records brings about
  // 100,000 arguments with three a span, 1.5 MiB pending at 16 bytes each.
  if (store_ != nullptr && args_.size() >= attach_at_) AttachFinished(p);
  p.next_side =
      p.side_i < snap.side.size() ? snap.side[p.side_i].position : UINT64_MAX;
}

// The span side records attach to now: the one being enriched, else the
// innermost open span; kNoSpan when none.
size_t Collector::Target(const ThreadParse& p) const {
  if (p.enriching) return p.enrich;
  return open_.empty() ? kNoSpan : open_.back();
}

// A string argument: the string record at side index `index` (already
// consumed) and the text records right after it, which this consumes. One
// whose text records are missing (refused by the side budget, which counted
// it, or overwritten) is dropped.
void Collector::ApplyString(ThreadParse& p, const SideRecord& s,
                            uint64_t index) {
  const RingSnapshot& snap = p.snap;
  const size_t size = static_cast<size_t>(s.value & ~kTextTruncatedBit);
  if (size > kMaxArgTextBytes) return;
  char bytes[kTextBytesInString + 3 * kTextBytesInText] = {};
  std::memcpy(bytes, &s.side, sizeof(s.side));
  size_t at = kTextBytesInString;
  for (uint64_t next = index + 1; at < size; ++next) {
    if (p.side_i >= snap.side.size() || snap.SideIndex(p.side_i) != next ||
        snap.side[p.side_i].kind != kSideArgText) {
      return;
    }
    const SideRecord t = snap.side[p.side_i++];
    std::memcpy(bytes + at, &t.key, sizeof(t.key));
    std::memcpy(bytes + at + 4, &t.value, sizeof(t.value));
    std::memcpy(bytes + at + 12, &t.side, sizeof(t.side));
    at += kTextBytesInText;
  }
  const size_t target = Target(p);
  if (s.key >= sites_.size()) return;
  if (target == kNoSpan) {
    Unplaced(s.key, false, s.position);
    return;
  }
  AddPending(
      target, PendingArg::kString, s.key,
      static_cast<uint64_t>(texts_.size()) | (s.value & kTextTruncatedBit));
  texts_.push_back(ValidUtf8(std::string_view(bytes, size)));
}

// An argument of the innermost open span (or the span being enriched).
void Collector::ApplyArg(const SideRecord& s, size_t target) {
  if (s.key >= sites_.size()) return;
  if (target == kNoSpan) {
    Unplaced(s.key, false, s.position);
    return;
  }
  AddPending(target,
             s.kind == kSideArgDouble ? PendingArg::kDouble : PendingArg::kInt,
             s.key, s.value);
}

// A named counter's counts, made while the innermost open span was innermost.
void Collector::ApplyCounter(const SideRecord& s, size_t target) {
  if (s.key == 0 || s.key > counter_names_.size()) {
    CountDrop(0, 0, true, kDropReasonCount);  // a counter this capture lacks
    return;
  }
  if (target == kNoSpan) {
    Unplaced(s.key, true, s.position);
    return;
  }
  AddPending(target, PendingArg::kCounter, s.key, s.value);
}

void Collector::ApplyEndCount(const Record& rec, size_t target) {
  const uint32_t bits = rec.word & kSiteMask;
  const uint32_t id = bits >> kEndCountValueBits;
  if (id == 0 || id > counter_names_.size()) {
    CountDrop(0, 0, true, kDropReasonCount);  // a counter this capture lacks
    return;
  }
  AddPending(target, PendingArg::kCounter, id, bits & kEndCountValueMask);
}

void Collector::AddPending(size_t target, PendingArg::Kind kind, uint32_t key,
                           uint64_t value) {
  if (target >= UINT32_MAX || key > PendingArg::kMaxKey) {
    // Past 4 G spans or 2^30 sites: named as the cap on a span's arguments.
    CountDrop(target < spans_.size() ? SiteId(spans_[target].site) : 0,
              key <= PendingArg::kMaxKey ? key : 0,
              kind == PendingArg::kCounter, kDropArgLimit);
    return;
  }
  PendingArg pending{};
  pending.span = static_cast<uint32_t>(target);
  pending.kind = kind;
  pending.key = key & PendingArg::kMaxKey;  // checked above
  pending.value = value;
  args_.push_back(pending);
}

void Collector::CountDrop(uint32_t site, uint32_t key, bool is_counter,
                          uint8_t reason, uint64_t count) {
  for (GatheredDrop& drop : parsed_drops_) {
    if (drop.site == site && drop.key == key && drop.is_counter == is_counter &&
        drop.reason == reason) {
      drop.count += count;
      return;
    }
  }
  parsed_drops_.push_back(GatheredDrop{site, key, is_counter, reason, count});
}

void Collector::Unplaced(uint32_t key, bool is_counter, uint64_t position) {
  const ThreadStreams& ts = threads_.back();  // the thread being parsed
  if (ts.truncated && position < ts.first_position) {
    // Made where the ring has overwritten the records: gone with them.
    CountDrop(kUnknownSite, key, is_counter, kDropCap);
    return;
  }
  for (GatheredDrop& drop : unplaced_) {
    if (drop.key == key && drop.is_counter == is_counter) {
      ++drop.count;
      return;
    }
  }
  unplaced_.push_back(GatheredDrop{0, key, is_counter, kDropNoOpenSpan, 1});
}

void Collector::PlaceDrops(uint32_t site) {
  for (const GatheredDrop& drop : unplaced_) {
    if (threads_.back().truncated) {
      provisional_.push_back(GatheredDrop{site, drop.key, drop.is_counter,
                                          kDropNoOpenSpan, drop.count});
    } else {
      CountDrop(site, drop.key, drop.is_counter, kDropNoOpenSpan, drop.count);
    }
  }
  unplaced_.clear();
}

// The end of a span whose begin was overwritten: what the thread made with
// no span open before it was made inside that span, and went with it.
void Collector::DropWithLostSpan() {
  for (const std::vector<GatheredDrop>* drops : {&provisional_, &unplaced_}) {
    for (const GatheredDrop& drop : *drops) {
      CountDrop(kUnknownSite, drop.key, drop.is_counter, kDropCap, drop.count);
    }
  }
  provisional_.clear();
  unplaced_.clear();
}

// The thread's end: what still waits was made with no span open.
void Collector::SettleProvisional() {
  for (const GatheredDrop& drop : provisional_) {
    CountDrop(drop.site, drop.key, drop.is_counter, drop.reason, drop.count);
  }
  provisional_.clear();
}

const ArgKey& Collector::CachedKey(std::vector<ArgKey>& keys, size_t index,
                                   const std::string& name) {
  if (keys.size() <= index) keys.resize(index + 1);
  if (keys[index].empty()) keys[index] = name;
  return keys[index];
}

void ParsedSpans::Move() {
  if (!moving()) return;
  for (size_t k = 0; k < window_.size(); ++k) {
    if (!CompactSpans::Fits(window_[k], moved_ + k)) {
      fit_ = false;
      MoveBack();
      return;
    }
  }
  for (const Span& span : window_) compact_->Append(span);
  moved_ += window_.size();
  window_.clear();
}

void ParsedSpans::MoveBack() {
  if (!moving()) return;
  spans_.reserve(spans_.size() + size());
  size_t released = 0;
  for (size_t i = 0; i < moved_; ++i) {
    spans_.push_back((*compact_)[i]);
    if (i % 4096 == 0) {
      ReleaseReadPrefix(compact_->data(), i * CompactSpans::kBytesPerSpan,
                        &released);
    }
  }
  spans_.insert(spans_.end(), window_.begin(), window_.end());
  *compact_ = CompactSpans();
  std::vector<Span>().swap(window_);
  compact_ = nullptr;
  moved_ = 0;
}

SpanArgStore::SpanArgStore(Capture& capture)
    : capture_(capture), packed_(std::make_shared<PackedArgs>()) {}

SpanArgStore::SpanArgStore(Capture& capture, std::vector<SpanArg>& reserved,
                           size_t count)
    : capture_(capture) {
  // Storage reserved ahead (a slot per side record) is taken when it holds
  // every argument: a text argument takes up to four side records, and the
  // helper that faults the storage in stops just past the last argument, so
  // the rest stays address space, never memory.
  TakeReserved(reserved, count, 4 * count + 4096, capture.args);
  capture.args.reserve(capture.args.size() + count);
}

uint32_t SpanArgStore::Put(std::vector<SpanArg>& args) {
  if (args.empty()) return UINT32_MAX;
  uint32_t first = UINT32_MAX;
  if (packed_ != nullptr) {
    first = packed_->Append(args);
  } else if (capture_.args.size() + args.size() <= UINT32_MAX) {
    first = static_cast<uint32_t>(capture_.args.size());
    std::move(args.begin(), args.end(), std::back_inserter(capture_.args));
  }
  if (first == UINT32_MAX) capture_.dropped_args += args.size();
  args.clear();
  return first;
}

void SpanArgStore::Finish() {
  if (packed_ != nullptr) capture_.packed_args = std::move(packed_);
}

namespace {

// The order in which AttachPending() reads `args`: by span, each span's
// arguments in arrival order and its counts after them. They usually
// arrive in that order already (one thread's stream after another): then
// the result is empty; otherwise it holds their indices, stably sorted (8
// bytes an argument only then).
std::vector<size_t> PendingOrder(const std::vector<PendingArg>& args) {
  const auto before = [&args](size_t a, size_t b) {
    if (args[a].span != args[b].span) return args[a].span < args[b].span;
    return (args[a].kind == PendingArg::kCounter) <
           (args[b].kind == PendingArg::kCounter);
  };
  bool sorted = true;
  for (size_t i = 1; i < args.size() && sorted; ++i) {
    sorted = !before(i, i - 1);
  }
  std::vector<size_t> order;
  if (!sorted) {
    order.resize(args.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), before);
  }
  return order;
}

}  // namespace

void Collector::AttachPending(std::vector<PendingArg>& args,
                              const std::vector<size_t>& new_index,
                              SpanArgStore& store, EndProgress* progress,
                              bool release) {
  const std::vector<size_t> order = PendingOrder(args);
  const bool sorted = order.empty();
  // One span's arguments at a time: they come together, in span order.
  std::vector<SpanArg> current;
  size_t current_span = kNoSpan;
  const auto put = [&] {
    const auto count = static_cast<uint16_t>(current.size());
    const uint32_t first = store.Put(current);
    if (first == UINT32_MAX) return;
    spans_.Update(current_span, [first, count](Span& span) {
      span.first_arg = first;
      span.arg_count = count;
    });
  };
  size_t released = 0;  // of `args`, read in order when sorted
  for (size_t k = 0; k < args.size(); ++k) {
    if (k % 4096 == 0) {
      if (sorted && release) ReleaseReadPrefix(args, k, &released);
      if (progress != nullptr) {
        progress->Publish(progress->args, capture_.args.size());
      }
    }
    PendingArg& pending = args[sorted ? k : order[k]];
    const size_t index =
        new_index.empty() ? pending.span : new_index[pending.span];
    if (index == kNoSpan) continue;
    if (index != current_span) {
      if (current_span != kNoSpan) put();
      current_span = index;
    }
    SpanArg arg = MakeArg(pending);
    if (arg.is_counter) {
      const auto same = std::find_if(current.begin(), current.end(),
                                     [&arg](const SpanArg& a) {
                                       return a.is_counter && a.key == arg.key;
                                     });
      if (same != current.end()) {
        same->int_value += arg.int_value;
        continue;
      }
    }
    if (current.size() == kMaxSpanArgs) {
      CountDrop(SiteId(spans_[index].site), pending.key, arg.is_counter,
                kDropArgLimit);
      continue;
    }
    current.push_back(std::move(arg));
  }
  if (current_span != kNoSpan) put();
}

SpanArg Collector::MakeArg(PendingArg& pending) {
  SpanArg arg;
  arg.key = pending.kind == PendingArg::kCounter
                ? CachedKey(counter_keys_, pending.key - 1,
                            counter_names_[pending.key - 1])
                : CachedKey(site_keys_, pending.key, sites_[pending.key].name);
  switch (pending.kind) {
    case PendingArg::kInt:
      arg.int_value = static_cast<int64_t>(pending.value);
      break;
    case PendingArg::kDouble:
      arg.is_double = true;
      std::memcpy(&arg.double_value, &pending.value, sizeof(double));
      break;
    case PendingArg::kString:
      arg.is_string = true;
      arg.text = std::move(texts_[pending.value & ~kTextTruncatedBit]);
      arg.truncated = (pending.value & kTextTruncatedBit) != 0;
      break;
    case PendingArg::kCounter:
      arg.int_value = static_cast<int64_t>(pending.value);
      arg.is_counter = true;
      break;
  }
  return arg;
}

void Collector::PushScope(ThreadParse& p, const SideRecord& s, uint64_t index) {
  ScopeFrame frame;
  frame.push_index = index;
  frame.slot = s.key;
  frame.position = s.value;
  frame.side = s.side;
  frame.outer = p.scopes.empty() ? -1 : static_cast<int64_t>(p.scopes.back());
  p.ts.frames.push_back(frame);
  p.scopes.push_back(p.ts.frames.size() - 1);
}

void Collector::PopScope(ThreadParse& p, const SideRecord& s, uint64_t index) {
  ThreadStreams& ts = p.ts;
  if (!p.scopes.empty() && ts.frames[p.scopes.back()].push_index == s.value) {
    ts.frames[p.scopes.back()].pop_index = index;
    p.scopes.pop_back();
  } else if (s.value < p.snap.side_base) {
    // The end of a scope whose push was overwritten: the spans opened before
    // it may have run under it.
    ts.has_orphan_pop = true;
    ts.last_orphan_pop = index;
    ts.side_horizon = std::max(ts.side_horizon, s.position);
  }
}

// An allocation record: the counters at the last begin, or at the last end
// (then the span's counters become the difference).
void Collector::OnAlloc(ThreadParse& p, const Record& rec) {
  if (p.last_span == kNoSpan || p.last_span >= allocs_.size()) return;
  SpanAllocs& allocs = allocs_[p.last_span];
  const auto count = static_cast<int64_t>(rec.time);
  const auto bytes = static_cast<int64_t>(
      (static_cast<uint64_t>(rec.word & kSiteMask) << 32) | rec.heartbeats);
  if (p.last_was_begin) {
    allocs.count = count;
    allocs.bytes = bytes;
  } else {
    allocs.count = count - allocs.count;
    allocs.bytes = bytes - allocs.bytes;
  }
}

void Collector::OnBegin(ThreadParse& p, const Record& rec, uint64_t position,
                        uint64_t raw) {
  if (SPANPROF_UNLIKELY(!unplaced_.empty())) PlaceDrops(rec.word & kSiteMask);
  const size_t index = spans_.size();
  Span& span = spans_.Append();
  if (alloc_column_) allocs_.emplace_back();
  span.id = index + 1;
  span.site = UseSite(rec.word & kSiteMask);
  span.thread = p.thread;
  span.depth = static_cast<uint32_t>(open_.size());
  span.start_ns = time_.ToNs(raw);
  span.heartbeats = rec.heartbeats;
  if (keep_positions_) positions_.push_back(SpanPositions{position});
  if (!open_.empty()) {
    span.parent_id = open_.back() + 1;
  } else {
    // No span of this thread is open: the innermost context scope, if any,
    // supplies a cross-thread parent.
    if (!p.scopes.empty()) {
      const ScopeFrame& frame = p.ts.frames[p.scopes.back()];
      contexts_.push_back(ContextRef{index, p.snapshot, frame.slot,
                                     frame.position, frame.side});
    }
    if (p.snap.truncated) p.pending_roots.push_back(index);
  }
  open_.push_back(index);
  p.last_span = index;
  p.last_was_begin = true;
}

void Collector::OnEnd(ThreadParse& p, const Record& rec, uint64_t position,
                      uint64_t raw) {
  if (SPANPROF_UNLIKELY(open_.empty())) {
    // The end of a span whose begin was overwritten: every root since the
    // last such end ran inside that lost span.
    for (size_t root : p.pending_roots) {
      spans_.Update(root, [](Span& span) { span.flags |= kSpanRerooted; });
    }
    p.pending_roots.clear();
    DropWithLostSpan();
    p.ts.has_orphan_end = true;
    p.ts.last_orphan_end = position;
    p.last_span = kNoSpan;
    if ((rec.word >> kKindShift) == kEndCountRecord) {
      // The count of a span whose begin the ring overwrote (the cap).
      const uint32_t id = (rec.word & kSiteMask) >> kEndCountValueBits;
      const bool known = id != 0 && id <= counter_names_.size();
      CountDrop(kUnknownSite, known ? id : 0, true,
                known ? kDropCap : kDropReasonCount);
    }
    return;
  }
  const size_t index = open_.back();
  open_.pop_back();
  if ((rec.word >> kKindShift) == kEndCountRecord) {
    // The span's one count, carried by its end (thread_ring.cc, EndSlow).
    ApplyEndCount(rec, index);
  }
  const int64_t end_ns = time_.ToNs(raw);
  const bool exception = (rec.word >> kKindShift) == kEndExceptionRecord;
  spans_.Update(index, [&](Span& span) {
    span.end_ns = std::max(span.start_ns, end_ns);
    span.heartbeats = static_cast<uint32_t>(rec.heartbeats - span.heartbeats);
    if (exception) span.flags |= kSpanException;
  });
  if (keep_positions_) positions_[index].end = position;
  p.last_span = index;
  p.last_was_begin = false;
}

// Spans still open at stop are closed there and flagged.
void Collector::CloseOpenSpans(uint32_t last_hb) {
  for (size_t index : open_) {
    spans_.Update(index, [&](Span& span) {
      span.end_ns = std::max(stop_ns_, span.start_ns);
      span.heartbeats = static_cast<uint32_t>(last_hb - span.heartbeats);
      span.flags |= kSpanUnfinished;
    });
    if (index < allocs_.size()) allocs_[index] = SpanAllocs{};  // no end
  }
}

// Ring mode: the spans that began before the side horizon may have lost side
// records, so they are discarded (keep_positions_ is set: NeedPositions).
void Collector::DiscardBeforeSideHorizon(const ThreadStreams& ts) {
  for (size_t i = ts.first_span; i < spans_.size(); ++i) {
    if (positions_[i].begin >= ts.side_horizon) break;
    spans_.Update(i, [](Span& span) { span.flags |= kRemovedFlag; });
    ++removed_;
  }
}

void Collector::AddThread(uint32_t thread, const RingSnapshot& snap) {
  ThreadInfo info;
  info.os_tid = snap.os_tid & 0xFFFFFFFFu;
  info.name = ValidUtf8(snap.name);
  info.sort_index = thread;
  capture_.threads.push_back(std::move(info));
}

bool Collector::ResolveContexts(const std::vector<uint32_t>& slot_to_thread) {
  // Resolve every reference first: the lookups walk same-thread parents,
  // which must not see a cross-thread link yet.
  std::vector<int64_t> parents(contexts_.size(), -1);
  for (size_t k = 0; k < contexts_.size(); ++k) {
    const ContextRef& ref = contexts_[k];
    // Discarded, or already known to have lost its (same-thread) parent.
    if (spans_[ref.span].flags & (kRemovedFlag | kSpanRerooted)) continue;
    bool lost = false;
    uint32_t thread = UINT32_MAX;
    const int64_t parent = Resolve(slot_to_thread, ref.slot, ref.position,
                                   ref.side, &lost, &thread);
    if (thread == ref.snapshot) continue;  // never its own parent thread
    if (parent >= 0) {
      parents[k] = parent;
    } else if (lost) {
      // The parent was overwritten.
      spans_.Update(ref.span, [](Span& span) { span.flags |= kSpanRerooted; });
    }
  }
  bool changed = false;
  for (size_t k = 0; k < contexts_.size(); ++k) {
    if (parents[k] < 0) continue;
    const auto parent = static_cast<uint64_t>(parents[k]) + 1;
    spans_.Update(contexts_[k].span,
                  [parent](Span& span) { span.parent_id = parent; });
    changed = true;
  }
  return changed;
}

std::vector<int64_t> Collector::ResolvePoints(
    const std::vector<uint32_t>& slot_to_thread,
    const std::vector<ExportPoint>& points) const {
  std::vector<int64_t> spans(points.size(), -1);
  for (size_t k = 0; k < points.size(); ++k) {
    bool lost = false;
    uint32_t thread = UINT32_MAX;
    const int64_t span =
        Resolve(slot_to_thread, points[k].slot, points[k].position,
                points[k].side, &lost, &thread);
    if (span >= 0 &&
        !(spans_[static_cast<size_t>(span)].flags & kRemovedFlag)) {
      spans[k] = span;
    }
  }
  return spans;
}

int64_t Collector::InnermostSpan(const ThreadStreams& ts, uint64_t pos) const {
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
    candidate =
        static_cast<int64_t>(spans_[static_cast<size_t>(candidate)].parent_id) -
        1;
  }
  return candidate;
}

int64_t Collector::InnermostScope(const ThreadStreams& ts, uint64_t side) {
  const auto it = std::partition_point(
      ts.frames.begin(), ts.frames.end(),
      [side](const ScopeFrame& f) { return f.push_index < side; });
  int64_t frame = static_cast<int64_t>(it - ts.frames.begin()) - 1;
  while (frame >= 0 && ts.frames[static_cast<size_t>(frame)].pop_index < side) {
    frame = ts.frames[static_cast<size_t>(frame)].outer;
  }
  return frame;
}

int64_t Collector::Resolve(const std::vector<uint32_t>& slot_to_thread,
                           uint32_t slot, uint64_t pos, uint64_t side,
                           bool* lost, uint32_t* thread) const {
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
    // A span open at `pos` began before it: at or before the oldest record
    // left, its begin is gone with the rest.
    if (ts.truncated && pos <= ts.first_position) {
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

}  // namespace spanprof::internal
