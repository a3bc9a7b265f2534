// spanprof/internal/compact_spans.h — a capture's spans in 40 bytes each
// instead of a 56-byte Span.
//
// A session end builds its capture only to write its own outputs (the trace,
// the summary, the table), and the capture's spans are most of its peak. The
// collector numbers a capture's spans 1, 2, 3, ... in order, so a span's id
// is its index plus one and its parent's id a 32-bit index: with the depth in
// 16 bits and the heartbeats in a column that exists only when some span has
// any, a span fits in 40 bytes. Only that capture is compact
// (`Capture::compact_spans`, with `spans` empty); a capture handed to the
// program, read from a file or recovered keeps `Capture::spans`. The analysis
// library reads either form through one view (analysis/src/model/
// span_list.h).
//
// Nothing outside the libraries includes this header.
#ifndef SPANPROF_INTERNAL_COMPACT_SPANS_H_
#define SPANPROF_INTERNAL_COMPACT_SPANS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spanprof/capture.h"

namespace spanprof::internal {

class CompactSpans {
 public:
  // Whether `span`, the capture's span at `index`, has a compact form: its
  // id is index + 1, its parent's id and its depth fit their fields.
  static bool Fits(const Span& span, size_t index) noexcept {
    return span.id == index + 1 && span.parent_id <= UINT32_MAX &&
           span.depth <= UINT16_MAX;
  }

  void Reserve(size_t count) { spans_.reserve(count); }

  // Appends the capture's next span; Fits(span, size()) must hold.
  [[gnu::always_inline]] void Append(const Span& span) {
    spans_.push_back(Pack(span));
    StoreHeartbeats(spans_.size() - 1, span.heartbeats);
  }

  // The span at `index` (< size()), whole. Inlined, so that a reader that
  // uses a few fields loads only those (an out-of-line call was a fifth of
  // a session end's time).
  [[gnu::always_inline]] Span operator[](size_t index) const noexcept {
    const Packed& p = spans_[index];
    Span span;
    span.id = index + 1;
    span.parent_id = p.parent;
    span.site = p.site;
    span.thread = p.thread;
    span.depth = p.depth;
    span.flags = p.flags;
    span.arg_count = p.arg_count;
    span.start_ns = p.start_ns;
    span.end_ns = p.end_ns;
    span.heartbeats = heartbeats_.empty() ? 0 : heartbeats_[index];
    span.first_arg = p.first_arg;
    return span;
  }

  // Replaces the span at `index` (< size()); Fits(span, index) must hold.
  // The collector moves spans here while it still ends and flags them.
  void Set(size_t index, const Span& span) {
    spans_[index] = Pack(span);
    StoreHeartbeats(index, span.heartbeats);
  }

  // A session the program ended early marks its open spans
  // (kSpanOpenAtExit) after the capture is built.
  uint16_t flags(size_t index) const noexcept { return spans_[index].flags; }
  void set_flags(size_t index, uint16_t flags) noexcept {
    spans_[index].flags = flags;
  }

  size_t size() const noexcept { return spans_.size(); }
  size_t capacity() const noexcept { return spans_.capacity(); }
  // The spans' storage, capacity() * 40 bytes (for faulting its pages in
  // ahead, and giving them back once read for the last time).
  const void* data() const noexcept { return spans_.data(); }
  static constexpr size_t kBytesPerSpan = 40;
  // Bytes held, for the tests of what a session end keeps.
  size_t size_bytes() const noexcept {
    return spans_.capacity() * sizeof(Packed) +
           heartbeats_.capacity() * sizeof(uint32_t);
  }

 private:
  struct Packed {
    int64_t start_ns;
    int64_t end_ns;
    uint32_t parent;  // the parent's id (index + 1), 0 for a root
    uint32_t site;
    uint32_t thread;
    uint32_t first_arg;
    uint16_t depth;
    uint16_t flags;
    uint16_t arg_count;
  };
  static_assert(sizeof(Packed) == kBytesPerSpan, "a compact span's cost");

  [[gnu::always_inline]] static Packed Pack(const Span& span) noexcept {
    return Packed{
        .start_ns = span.start_ns,
        .end_ns = span.end_ns,
        .parent = static_cast<uint32_t>(span.parent_id),
        .site = span.site,
        .thread = span.thread,
        .first_arg = span.first_arg,
        .depth = static_cast<uint16_t>(span.depth),
        .flags = span.flags,
        .arg_count = span.arg_count,
    };
  }

  // Span `index`'s heartbeats. The column starts (zeros before it) with
  // the first span that has any, and then covers every span.
  [[gnu::always_inline]] void StoreHeartbeats(size_t index,
                                              uint32_t heartbeats) {
    if (heartbeats == 0 && heartbeats_.empty()) return;
    if (heartbeats_.empty()) heartbeats_.reserve(spans_.capacity());
    if (heartbeats_.size() < spans_.size()) {
      heartbeats_.resize(spans_.size(), 0);
    }
    heartbeats_[index] = heartbeats;
  }

  std::vector<Packed> spans_;
  // Each span's heartbeats, parallel to spans_ once a span had some; empty
  // until then.
  std::vector<uint32_t> heartbeats_;
};

}  // namespace spanprof::internal

#endif  // SPANPROF_INTERNAL_COMPACT_SPANS_H_
