// spanprof/analysis/forest.h — the span forest of a capture: parent and
// children indexes, and the validation of the forest's shape.
//
// A `Capture` links spans by id (`Span::parent_id`). `Forest` resolves those
// links once into indexes into `Capture::spans`, so analyses walk parents and
// children without hashing. It never fails: a missing parent makes a span a
// root of the index, and a parent chain that loops is cut so that every walk
// terminates. `ValidateForest()` reports what is wrong with the capture as
// `ValidationIssue`s; analysis continues after issues.
//
// clang-format off
// Example:
//
//   void Visit(const spanprof::Span& span);  // the caller's
//
//   spanprof::Capture capture = ...;
//   const spanprof::analysis::Forest forest(capture);
//   for (uint32_t root : forest.roots()) {
//     for (uint32_t child : forest.children(root)) {
//       Visit(capture.spans[child]);
//     }
//   }
//   std::vector<spanprof::analysis::ValidationIssue> issues =
//       spanprof::analysis::ValidateForest(capture);
// clang-format on
#ifndef SPANPROF_ANALYSIS_FOREST_H_
#define SPANPROF_ANALYSIS_FOREST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

// `Forest` indexes the spans of one capture. Indexes are positions in
// `Capture::spans`. It refers to nothing in the capture after construction
// (it copies what it needs), but its indexes are only meaningful for that
// capture. Immutable after construction; safe to share between threads.
class Forest {
 public:
  // Marks "no span" (a root's parent).
  static constexpr uint32_t kNone = UINT32_MAX;

  // Builds the index in O(n) for a capture sorted as the collector sorts it
  // (by thread, start_ns, depth), O(n log n) otherwise.
  explicit Forest(const Capture& capture);

  size_t size() const { return parent_.size(); }

  // The parent of span `i`, or `kNone` when the span is a root, its parent is
  // not in the capture, or its parent link was cut because it closes a cycle.
  uint32_t parent(size_t i) const { return parent_[i]; }

  // The immediate children of span `i` on every thread, ordered by (thread,
  // start_ns, depth), ties in capture order: same-thread children come in
  // start order.
  std::span<const uint32_t> children(size_t i) const {
    return {child_list_.data() + child_offsets_[i],
            child_list_.data() + child_offsets_[i + 1]};
  }

  // The spans whose `parent()` is `kNone`, ordered like `children()`.
  std::span<const uint32_t> roots() const { return roots_; }

  // The index of the first span with `id`, if any.
  std::optional<uint32_t> Find(uint64_t id) const;

  // Spans whose id already belongs to an earlier span (by index).
  std::span<const uint32_t> duplicate_ids() const { return duplicates_; }

  // Spans whose parent link was cut because the parent chain loops back to
  // the span (including a span that names itself as parent).
  std::span<const uint32_t> cycle_cuts() const { return cycle_cuts_; }

 private:
  // The steps of construction, in order. `order` is every span ordered by
  // (thread, start_ns, depth), ties in capture order.
  void IndexDense(const Capture& capture, uint64_t min_id, uint64_t max_id,
                  std::vector<uint32_t>& unresolved, bool& depths_consistent);
  void IndexSparse(const Capture& capture, std::vector<uint32_t>& unresolved);
  void LinkUnresolved(const Capture& capture,
                      std::span<const uint32_t> unresolved,
                      bool& depths_consistent);
  void CutCycles(std::span<const uint32_t> order);
  void BuildChildren(std::span<const uint32_t> order);

  // Dense: `dense_index_[id - id_base_]` when the ids span a small range (the
  // runtime numbers spans consecutively); sparse: (id, index) pairs sorted by
  // id otherwise.
  std::vector<uint32_t> dense_index_;
  uint64_t id_base_ = 0;
  std::vector<std::pair<uint64_t, uint32_t>> sparse_index_;
  bool dense_ = true;

  std::vector<uint32_t> parent_;
  std::vector<uint32_t> child_offsets_;
  std::vector<uint32_t> child_list_;
  std::vector<uint32_t> roots_;
  std::vector<uint32_t> duplicates_;
  std::vector<uint32_t> cycle_cuts_;
};

// `ValidateForest()` checks the shape of the capture's span forest and returns
// one issue per problem, sorted by span id, then message:
//   - a span whose end is before its start;
//   - a duplicate span id (reported on every span after the first);
//   - a parent id that is not in the capture;
//   - a depth that is not the parent's depth + 1 (0 for roots);
//   - a same-thread child that is not inside its parent's interval;
//   - same-thread siblings (same parent, or both roots) that overlap;
//   - a parent chain that loops; a site or thread index out of range.
// Cross-thread children may lie anywhere in time. Pure; never fails.
std::vector<ValidationIssue> ValidateForest(const Capture& capture);

// The same, reusing an already built `forest` of `capture`.
std::vector<ValidationIssue> ValidateForest(const Capture& capture,
                                            const Forest& forest);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_FOREST_H_
