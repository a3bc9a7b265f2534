// model/span_list.h — a capture's spans, read alike whether the capture holds
// them as `Capture::spans` or compact (`Capture::compact_spans`, the capture
// a session end builds for its own outputs; spanprof/internal/
// compact_spans.h).
//
// Every part of the analysis library that a session end's outputs reach (the
// summary, the trace writers, the table) reads a capture's spans through a
// SpanList. A span is read by value: 56 bytes built from either form, of
// which an inlined reader loads only the fields it uses.
#ifndef SPANPROF_ANALYSIS_MODEL_SPAN_LIST_H_
#define SPANPROF_ANALYSIS_MODEL_SPAN_LIST_H_

#include <cstddef>
#include <iterator>

#include "spanprof/capture.h"
#include "spanprof/internal/compact_spans.h"

namespace spanprof::analysis::internal {

class SpanList {
 public:
  explicit SpanList(const Capture& capture) noexcept
      : full_(capture.spans.data()),
        compact_(capture.compact_spans.get()),
        size_(compact_ != nullptr ? compact_->size() : capture.spans.size()) {}

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  // The span at `index` (< size()).
  [[gnu::always_inline]] Span operator[](size_t index) const noexcept {
    return compact_ == nullptr ? full_[index] : (*compact_)[index];
  }

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Span;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Span;

    Iterator(const SpanList* list, size_t index) noexcept
        : list_(list), index_(index) {}
    Span operator*() const noexcept { return (*list_)[index_]; }
    Iterator& operator++() noexcept {
      ++index_;
      return *this;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) noexcept {
      return a.index_ == b.index_;
    }

   private:
    const SpanList* list_;
    size_t index_;
  };
  Iterator begin() const noexcept { return Iterator(this, 0); }
  Iterator end() const noexcept { return Iterator(this, size_); }

 private:
  const Span* full_;
  const spanprof::internal::CompactSpans* compact_;
  size_t size_;
};

// How many spans `capture` holds, in either form.
inline size_t SpanCount(const Capture& capture) noexcept {
  return SpanList(capture).size();
}

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_MODEL_SPAN_LIST_H_
