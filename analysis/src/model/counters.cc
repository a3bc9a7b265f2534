#include "model/counters.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/span_args.h"
#include "model/span_list.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {
namespace {

void SatAdd(int64_t& sum, int64_t value) {
  if (__builtin_add_overflow(sum, value, &sum)) sum = INT64_MAX;
}

// Every span after its same-thread descendants: the reverse of a pre-order
// walk of the forest (whose parent links never loop).
std::vector<uint32_t> ChildrenFirst(const Forest& forest) {
  std::vector<uint32_t> order;
  order.reserve(forest.size());
  std::vector<uint32_t> stack(forest.roots().begin(), forest.roots().end());
  while (!stack.empty()) {
    const uint32_t span = stack.back();
    stack.pop_back();
    order.push_back(span);
    for (uint32_t child : forest.children(span)) stack.push_back(child);
  }
  std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace

std::vector<std::string> CounterNames(const Capture& capture) {
  std::vector<std::string> names;
  if (!AnyCounter(capture)) return names;
  absl::flat_hash_map<std::string_view, size_t> seen;
  ForEachArg(capture, [&](const SpanArg& arg) {
    if (arg.is_counter && seen.emplace(arg.key, names.size()).second) {
      names.push_back(arg.key);
    }
  });
  return names;
}

bool AnyCounter(const Capture& capture) {
  if (capture.packed_args != nullptr) return capture.packed_args->any_counter();
  return std::any_of(capture.args.begin(), capture.args.end(),
                     [](const SpanArg& arg) { return arg.is_counter; });
}

SpanCounters::SpanCounters(const Capture& capture, const Forest& forest) {
  ReadSelfCounts(capture);
  if (names_.empty()) return;
  for (const uint32_t i : ChildrenFirst(forest)) {
    AddToParent(capture, i, forest.parent(i));
  }
}

SpanCounters::SpanCounters(const Capture& capture,
                           std::span<const uint32_t> parent) {
  ReadSelfCounts(capture);
  if (names_.empty()) return;
  // Parents come before their children, so backwards is children first.
  for (size_t i = std::min(parent.size(), internal::SpanCount(capture));
       i-- > 0;) {
    if (parent[i] < i)
      AddToParent(capture, static_cast<uint32_t>(i), parent[i]);
  }
}

void SpanCounters::ReadSelfCounts(const Capture& capture) {
  names_ = CounterNames(capture);
  if (names_.empty()) return;
  absl::flat_hash_map<std::string_view, size_t> index;
  for (size_t k = 0; k < names_.size(); ++k) index.emplace(names_[k], k);
  const internal::SpanList spans(capture);
  const size_t n = spans.size();
  const size_t width = names_.size();
  slot_of_span_.assign(n, kNone);
  size_t last = 0;  // spans mostly count the counter the previous one did
  for (size_t i = 0; i < n; ++i) {
    const Span& span = spans[i];
    if (span.arg_count == 0) continue;
    for (const SpanArg& arg : ArgsOf(capture, span)) {
      if (!arg.is_counter || arg.int_value <= 0) continue;
      if (names_[last] != arg.key) last = index.find(arg.key)->second;
      const size_t base = size_t{SlotOf(i)} * 2 * width;
      SatAdd(values_[base + last], arg.int_value);
      SatAdd(values_[base + width + last], arg.int_value);
    }
  }
}

void SpanCounters::AddToParent(const Capture& capture, uint32_t i,
                               uint32_t parent) {
  const uint32_t slot = slot_of_span_[i];
  const internal::SpanList spans(capture);
  if (slot == kNone || parent == kNone || parent >= spans.size() ||
      spans[parent].thread != spans[i].thread) {
    return;
  }
  const size_t width = names_.size();
  const size_t to = size_t{SlotOf(parent)} * 2 * width + width;
  const size_t from = size_t{slot} * 2 * width + width;
  for (size_t k = 0; k < width; ++k) SatAdd(values_[to + k], values_[from + k]);
}

uint32_t SpanCounters::SlotOf(size_t span) {
  uint32_t& slot = slot_of_span_[span];
  if (slot == kNone) {
    slot = static_cast<uint32_t>(span_of_slot_.size());
    span_of_slot_.push_back(static_cast<uint32_t>(span));
    values_.resize(values_.size() + 2 * names_.size(), 0);
  }
  return slot;
}

int64_t SpanCounters::Value(size_t i, size_t k, bool inclusive) const {
  if (i >= slot_of_span_.size() || k >= names_.size()) return 0;
  const uint32_t slot = slot_of_span_[i];
  if (slot == kNone) return 0;
  return values_[size_t{slot} * 2 * names_.size() +
                 (inclusive ? names_.size() : 0) + k];
}

}  // namespace spanprof::analysis::internal
