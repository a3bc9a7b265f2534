#include "spanprof/analysis/forest.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "model/span_list.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {
namespace {

// Ids up to this multiple of the span count use the dense index. The runtime
// numbers spans from 1, so its ids always qualify; a sparse fallback keeps
// hand-made or merged captures correct.
constexpr uint64_t kDenseFactor = 4;
constexpr uint64_t kDenseSlack = 1024;

bool OrderLess(const Span& a, const Span& b) {
  return std::tie(a.thread, a.start_ns, a.depth) <
         std::tie(b.thread, b.start_ns, b.depth);
}

std::string Interval(const Span& span) {
  return absl::StrCat("[", span.start_ns, ", ", span.end_ns, "]");
}

// One pass over the spans: are they in the collector's order, and which ids
// occur.
struct SpanScan {
  bool sorted = true;
  uint64_t min_id = UINT64_MAX;
  uint64_t max_id = 0;
};

SpanScan Scan(const internal::SpanList& spans) {
  SpanScan scan;
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& span = spans[i];
    if (i > 0 && OrderLess(span, spans[i - 1])) scan.sorted = false;
    scan.min_id = std::min(scan.min_id, span.id);
    scan.max_id = std::max(scan.max_id, span.id);
  }
  return scan;
}

// Every span by (thread, start_ns, depth), ties in capture order.
std::vector<uint32_t> CollectorOrder(const internal::SpanList& spans,
                                     bool sorted) {
  std::vector<uint32_t> order(spans.size());
  std::iota(order.begin(), order.end(), 0U);
  if (!sorted) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return OrderLess(spans[a], spans[b]);
    });
  }
  return order;
}

}  // namespace

Forest::Forest(const Capture& capture) {
  const internal::SpanList spans(capture);
  const size_t n = spans.size();
  const SpanScan scan = Scan(spans);
  const std::vector<uint32_t> order = CollectorOrder(spans, scan.sorted);

  // The id index, and every parent that is already indexed (in the
  // collector's order, same-thread parents always are); then the rest.
  dense_ =
      n == 0 || scan.max_id - scan.min_id <= kDenseFactor * n + kDenseSlack;
  parent_.assign(n, kNone);
  std::vector<uint32_t> unresolved;
  bool depths_consistent = true;
  if (dense_) {
    IndexDense(capture, scan.min_id, scan.max_id, unresolved,
               depths_consistent);
  } else {
    IndexSparse(capture, unresolved);
  }
  LinkUnresolved(capture, unresolved, depths_consistent);

  // Depth strictly increases along consistent links, so a loop is only
  // possible when some depth is inconsistent: only then look for loops.
  if (!depths_consistent) CutCycles(order);
  BuildChildren(order);
}

void Forest::IndexDense(const Capture& capture, uint64_t min_id,
                        uint64_t max_id, std::vector<uint32_t>& unresolved,
                        bool& depths_consistent) {
  const internal::SpanList spans(capture);
  const uint32_t count = static_cast<uint32_t>(spans.size());
  id_base_ = count == 0 ? 0 : min_id;
  dense_index_.assign(count == 0 ? 0 : static_cast<size_t>(max_id - min_id) + 1,
                      kNone);
  for (uint32_t i = 0; i < count; ++i) {
    const Span& span = spans[i];
    uint32_t& slot = dense_index_[static_cast<size_t>(span.id - id_base_)];
    if (slot == kNone) {
      slot = i;
    } else {
      duplicates_.push_back(i);
    }
    if (span.parent_id == 0) continue;
    const uint64_t offset = span.parent_id - id_base_;
    if (span.parent_id >= id_base_ && offset < dense_index_.size() &&
        dense_index_[static_cast<size_t>(offset)] != kNone) {
      const uint32_t parent = dense_index_[static_cast<size_t>(offset)];
      parent_[i] = parent;
      if (span.depth != spans[parent].depth + 1) depths_consistent = false;
    } else {
      unresolved.push_back(i);
    }
  }
}

void Forest::IndexSparse(const Capture& capture,
                         std::vector<uint32_t>& unresolved) {
  const internal::SpanList spans(capture);
  const uint32_t count = static_cast<uint32_t>(spans.size());
  sparse_index_.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    sparse_index_.emplace_back(spans[i].id, i);
  }
  std::sort(sparse_index_.begin(), sparse_index_.end());
  size_t kept = 0;
  for (size_t k = 0; k < sparse_index_.size(); ++k) {
    if (kept > 0 && sparse_index_[kept - 1].first == sparse_index_[k].first) {
      duplicates_.push_back(sparse_index_[k].second);
    } else {
      sparse_index_[kept++] = sparse_index_[k];
    }
  }
  sparse_index_.resize(kept);
  std::sort(duplicates_.begin(), duplicates_.end());
  for (uint32_t i = 0; i < count; ++i) {
    if (spans[i].parent_id != 0) unresolved.push_back(i);
  }
}

// A parent indexed later: a cross-thread parent on a later thread, or an
// irregular capture. (A duplicate id resolves to its first span either way:
// the dense pass only links to a slot's first owner.)
void Forest::LinkUnresolved(const Capture& capture,
                            std::span<const uint32_t> unresolved,
                            bool& depths_consistent) {
  const internal::SpanList spans(capture);
  for (uint32_t i : unresolved) {
    const std::optional<uint32_t> parent = Find(spans[i].parent_id);
    if (!parent.has_value()) continue;
    parent_[i] = *parent;
    if (spans[i].depth != spans[*parent].depth + 1) depths_consistent = false;
  }
}

void Forest::CutCycles(std::span<const uint32_t> order) {
  enum : uint8_t { kUnvisited, kOnPath, kDone };
  std::vector<uint8_t> state(parent_.size(), kUnvisited);
  std::vector<uint32_t> path;
  for (uint32_t start : order) {
    if (state[start] != kUnvisited) continue;
    path.clear();
    uint32_t j = start;
    while (j != kNone && state[j] == kUnvisited) {
      state[j] = kOnPath;
      path.push_back(j);
      j = parent_[j];
    }
    if (j != kNone && state[j] == kOnPath) {
      // `j` is where the walk met itself: cut the link that closes the loop.
      parent_[j] = kNone;
      cycle_cuts_.push_back(j);
    }
    for (uint32_t k : path) state[k] = kDone;
  }
  std::sort(cycle_cuts_.begin(), cycle_cuts_.end());
}

// Children (CSR), filled in `order` so each list is in that order.
void Forest::BuildChildren(std::span<const uint32_t> order) {
  const size_t n = parent_.size();
  child_offsets_.assign(n + 1, 0);
  size_t root_count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (parent_[i] == kNone) {
      ++root_count;
    } else {
      ++child_offsets_[parent_[i] + 1];
    }
  }
  for (size_t i = 0; i < n; ++i) child_offsets_[i + 1] += child_offsets_[i];
  child_list_.resize(child_offsets_[n]);
  roots_.reserve(root_count);
  std::vector<uint32_t> fill(child_offsets_.begin(), child_offsets_.end() - 1);
  for (uint32_t i : order) {
    const uint32_t parent = parent_[i];
    if (parent == kNone) {
      roots_.push_back(i);
    } else {
      child_list_[fill[parent]++] = i;
    }
  }
}

std::optional<uint32_t> Forest::Find(uint64_t id) const {
  if (dense_) {
    if (id < id_base_ || id - id_base_ >= dense_index_.size()) {
      return std::nullopt;
    }
    const uint32_t index = dense_index_[static_cast<size_t>(id - id_base_)];
    if (index == kNone) return std::nullopt;
    return index;
  }
  auto it = std::lower_bound(sparse_index_.begin(), sparse_index_.end(), id,
                             [](const std::pair<uint64_t, uint32_t>& entry,
                                uint64_t key) { return entry.first < key; });
  if (it == sparse_index_.end() || it->first != id) return std::nullopt;
  return it->second;
}

std::vector<ValidationIssue> ValidateForest(const Capture& capture) {
  return ValidateForest(capture, Forest(capture));
}

namespace {

void Report(std::vector<ValidationIssue>& issues, const Span& span,
            std::string message) {
  issues.push_back(ValidationIssue{span.id, std::move(message)});
}

// What the index found: duplicate ids and parent chains that loop.
void CheckIndex(const internal::SpanList& spans, const Forest& forest,
                std::vector<ValidationIssue>& issues) {
  for (uint32_t dup : forest.duplicate_ids()) {
    const Span& span = spans[dup];
    const uint32_t first = *forest.Find(span.id);
    Report(issues, span,
           absl::StrCat("duplicate span id (the span at index ", dup,
                        " repeats the span at index ", first, ")"));
  }
  for (uint32_t cut : forest.cycle_cuts()) {
    Report(issues, spans[cut],
           absl::StrCat("parent chain loops back to this span (its link to "
                        "parent ",
                        spans[cut].parent_id, " is ignored)"));
  }
}

// The span's own fields: id, thread and site indexes, interval.
void CheckFields(const Capture& capture, const Span& span,
                 std::vector<ValidationIssue>& issues) {
  if (span.id == 0) {
    Report(issues, span, "span id 0 is reserved (it means \"no parent\")");
  }
  if (span.thread >= capture.threads.size()) {
    Report(issues, span,
           absl::StrCat("thread index ", span.thread,
                        " is out of range (the capture has ",
                        capture.threads.size(), " threads)"));
  }
  if (span.site >= capture.sites.size()) {
    Report(issues, span,
           absl::StrCat("site index ", span.site,
                        " is out of range (the capture has ",
                        capture.sites.size(), " sites)"));
  }
  if (span.end_ns < span.start_ns) {
    Report(issues, span,
           absl::StrCat("end_ns ", span.end_ns, " is before start_ns ",
                        span.start_ns));
  }
}

// Span `i` against its parent: known, one level deeper, inside it when on
// the same thread.
void CheckParent(const internal::SpanList& spans, const Forest& forest,
                 size_t i, std::vector<ValidationIssue>& issues) {
  const Span& span = spans[i];
  if (span.parent_id == 0) {
    if (span.depth != 0) {
      Report(issues, span,
             absl::StrCat("root span has depth ", span.depth, ", expected 0"));
    }
    return;
  }
  const std::optional<uint32_t> parent_index = forest.Find(span.parent_id);
  if (!parent_index.has_value()) {
    Report(
        issues, span,
        absl::StrCat("parent span ", span.parent_id, " is not in the capture"));
    return;
  }
  const Span& parent = spans[*parent_index];
  if (span.depth != parent.depth + 1) {
    Report(issues, span,
           absl::StrCat("depth ", span.depth, " is not parent ", parent.id,
                        "'s depth ", parent.depth, " + 1"));
  }
  if (forest.parent(i) != Forest::kNone && parent.thread == span.thread &&
      (span.start_ns < parent.start_ns || span.end_ns > parent.end_ns)) {
    Report(issues, span,
           absl::StrCat("same-thread child ", Interval(span),
                        " is outside its parent ", parent.id, " ",
                        Interval(parent)));
  }
}

// Overlapping same-thread siblings: each child list (and the root list) is
// ordered by (thread, start), so one pass per list with the furthest end
// seen so far on the current thread finds every overlap.
void CheckSiblings(const internal::SpanList& spans,
                   std::span<const uint32_t> siblings, bool roots_only,
                   std::vector<ValidationIssue>& issues) {
  uint32_t furthest = Forest::kNone;
  for (uint32_t index : siblings) {
    const Span& span = spans[index];
    if (roots_only && span.parent_id != 0) continue;
    if (furthest != Forest::kNone && spans[furthest].thread == span.thread) {
      const Span& other = spans[furthest];
      if (span.start_ns < other.end_ns) {
        Report(issues, span,
               absl::StrCat("overlaps same-thread sibling ", other.id, " ",
                            Interval(other)));
      }
      if (span.end_ns > other.end_ns) furthest = index;
    } else {
      furthest = index;
    }
  }
}

}  // namespace

std::vector<ValidationIssue> ValidateForest(const Capture& capture,
                                            const Forest& forest) {
  const internal::SpanList spans(capture);
  std::vector<ValidationIssue> issues;
  CheckIndex(spans, forest, issues);
  for (size_t i = 0; i < spans.size(); ++i) {
    CheckFields(capture, spans[i], issues);
    CheckParent(spans, forest, i, issues);
  }
  for (size_t i = 0; i < spans.size(); ++i) {
    if (forest.children(i).size() > 1) {
      CheckSiblings(spans, forest.children(i), false, issues);
    }
  }
  CheckSiblings(spans, forest.roots(), true, issues);

  std::sort(issues.begin(), issues.end(),
            [](const ValidationIssue& a, const ValidationIssue& b) {
              return std::tie(a.span, a.message) < std::tie(b.span, b.message);
            });
  return issues;
}

}  // namespace spanprof::analysis
