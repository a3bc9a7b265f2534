// spanprof/analysis/merge.h — captures of several processes on one timeline.
//
// `MergeCaptures()` turns the captures of cooperating processes (a
// coordinator and its workers, each with its own trace) into one `Capture`
// whose threads belong to several processes (`Capture::processes`,
// `ThreadInfo::process`). The captures are aligned through their wall-clock
// anchors: time 0 of the merged capture is the earliest anchor, and each
// capture's spans are shifted by its anchor minus that one. A capture whose
// `remote_parent_span_id` names a span of another input (its external id or
// one of its exported aliases) has its root spans made children of that
// span: ordinary cross-thread parents, which the trace writers draw as flows
// and analysis links without subtracting. Pure: no files, no clocks.
//
// clang-format off
// Example:
//
//   #include <spanprof/analysis/trace.h>
//
//   using spanprof::analysis::ReadTrace;
//   std::vector<spanprof::analysis::MergeInput> inputs;
//   inputs.push_back({"coordinator.json", *ReadTrace("coordinator.json")});
//   inputs.push_back({"worker-17.json", *ReadTrace("worker-17.json")});
//   absl::StatusOr<spanprof::analysis::MergeResult> merged =
//       spanprof::analysis::MergeCaptures(inputs);
//   if (merged.ok()) {
//     for (const std::string& w : merged->warnings) std::cerr << w << "\n";
//     absl::Status s =
//         spanprof::analysis::WriteTrace(merged->capture, "merged.pftrace");
//   }
// clang-format on
#ifndef SPANPROF_ANALYSIS_MERGE_H_
#define SPANPROF_ANALYSIS_MERGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/capture.h"

namespace spanprof::analysis {

// `MergeInput` is one capture to merge and the name it is called by in
// messages (its file).
struct MergeInput {
  std::string name;
  Capture capture;
};

// `kMergeMaxAnchorGapNs`: captures whose anchors are further apart than this
// (a day) are refused: they are not one run, or an anchor is wrong.
inline constexpr int64_t kMergeMaxAnchorGapNs = int64_t{86400} * 1000000000;

// `kMergeSkewToleranceNs`: how far (beyond the two anchors' uncertainties) a
// child process may seem to start before the span that started it before
// the merge warns that the anchors disagree (a clock jump or a skew between
// hosts): 100 µs.
inline constexpr int64_t kMergeSkewToleranceNs = 100000;

// `MergeResult` is the merged capture and what a person should know about it.
struct MergeResult {
  Capture capture;
  // The largest anchor uncertainty of the inputs: how far apart the
  // timelines of two processes may be ("aligned to ±X").
  int64_t anchor_uncertainty_ns = 0;
  // Cross-process parents linked (roots made children of a span of another
  // input).
  uint64_t linked_roots = 0;
  // Things that may be wrong with the result: different trace ids, anchors
  // that disagree with the parent links (a clock jump or skew), two
  // processes with one pid. Each names the files.
  std::vector<std::string> warnings;
  // Things worth saying that are not wrong: a remote parent found in no
  // input (the parent process's capture is missing; the roots stay roots).
  std::vector<std::string> notes;
};

// `MergeCaptures()` merges `inputs` (at least two) into one capture, in the
// order of their anchors (earliest first; ties keep the input order).
//
// Errors (InvalidArgument, naming the input): fewer than two inputs; a
// capture without a wall-clock anchor (0: a trace written before anchors
// existed, or a foreign Chrome trace); a capture that is already merged;
// two inputs that are the same capture (same pid, host and anchor, or the
// same non-zero `span_id_seed`); anchors more than `kMergeMaxAnchorGapNs`
// apart.
//
// The merged capture: spans, threads and arguments of every input (span ids
// renumbered by `ProcessInfo::span_id_offset`, times shifted by
// `ProcessInfo::time_offset_ns`), sites shared by equal name and tags,
// drops and process resources summed (peak RSS: the largest), the cap
// summed, `finished_normally` when every input finished normally,
// `overflow_policy` "ring" when any input's was, `overhead_ns_per_span` the
// largest, `alloc_measured` only when every input measured, `window_ns`
// covering every input. Its `trace_id` is the common one (the first
// process's when they differ), its `span_id_seed`, `remote_parent_span_id`
// and `exported_span_ids` are left empty: each process keeps its own in
// `processes`, so `ExternalSpanId()` still gives each span its id.
absl::StatusOr<MergeResult> MergeCaptures(
    const std::vector<MergeInput>& inputs);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_MERGE_H_
