// `DiffFlameGraphs()` and `PlotFlameDiff()` (plot_flame.h): the change of
// each stack's self time, and the candidate's flame graph coloured by it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/plot_flame_layout.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/plot_flame.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"

namespace spanprof::analysis {
namespace {

// Each stack's (self, calls, total) in one run.
struct StackValue {
  int64_t self_ns = 0;
  int64_t total_ns = 0;
  uint64_t calls = 0;
};
using Stacks = std::map<std::string, StackValue>;

Stacks StacksOf(const FlameGraph& graph) {
  Stacks stacks;
  for (uint32_t i = 1; i < graph.frames.size(); ++i) {
    const FlameFrame& f = graph.frames[i];
    if (f.thread_frame) continue;
    stacks[FlameStack(graph, i)] = {f.self_ns, f.total_ns, f.calls};
  }
  return stacks;
}

std::vector<Stacks> RunStacks(const std::vector<const Capture*>& runs,
                              const FlameBuildOptions& options) {
  std::vector<Stacks> out;
  out.reserve(runs.size());
  for (const Capture* run : runs) {
    out.push_back(StacksOf(BuildFlameGraph({run}, options)));
  }
  return out;
}

// A run as a summary whose rows are stacks, so that the gate over repeated
// runs judges stacks exactly as it judges rows.
Summary AsSummary(const Stacks& stacks) {
  Summary summary;
  for (const auto& [stack, value] : stacks) {
    Row row;
    row.key.name = stack;
    row.label = stack;
    row.calls = value.calls;
    row.self_ns = value.self_ns;
    row.total_ns = value.total_ns;
    summary.rows.push_back(std::move(row));
    summary.recorded_thread_time_ns += value.self_ns;
  }
  return summary;
}

absl::StatusOr<std::map<std::string, ComparisonRow>> Verdicts(
    const std::vector<Stacks>& base, const std::vector<Stacks>& cand) {
  SummaryRuns base_runs;
  SummaryRuns cand_runs;
  for (const Stacks& s : base) base_runs.runs.push_back(AsSummary(s));
  for (const Stacks& s : cand) cand_runs.runs.push_back(AsSummary(s));
  ComparePolicy policy;
  policy.metric = CompareMetric::kSelfNs;
  policy.relative_tolerance_bps = kRunsDefaultRelativeToleranceBps;
  policy.absolute_tolerance_ns = kRunsDefaultAbsoluteToleranceNs;
  policy.allow_incomplete = true;
  policy.allow_missing = true;
  absl::StatusOr<Comparison> comparison =
      CompareRuns(base_runs, cand_runs, policy);
  if (!comparison.ok()) return comparison.status();
  std::map<std::string, ComparisonRow> rows;
  for (ComparisonRow& row : comparison->rows) {
    std::string name = row.key.name;
    rows.emplace(std::move(name), std::move(row));
  }
  return rows;
}

// The frame's diff with one run a side: every change is coloured.
FlameDiffFrame OneRunFrame(const Stacks& base, const Stacks& cand,
                           const std::string& stack) {
  FlameDiffFrame frame;
  const auto b = base.find(stack);
  const auto c = cand.find(stack);
  frame.in_base = b != base.end();
  if (frame.in_base) frame.base_self_ns = b->second.self_ns;
  if (c != cand.end()) frame.cand_self_ns = c->second.self_ns;
  frame.coloured = frame.base_self_ns != frame.cand_self_ns;
  return frame;
}

FlameDiffFrame RunsFrame(const std::map<std::string, ComparisonRow>& rows,
                         const std::string& stack) {
  FlameDiffFrame frame;
  const auto it = rows.find(stack);
  if (it == rows.end()) return frame;
  const ComparisonRow& row = it->second;
  frame.in_base = row.status != RowStatus::kNew;
  frame.base_self_ns = row.base.value_or(0);
  frame.cand_self_ns = row.candidate.value_or(0);
  frame.verdict = std::string(RowStatusName(row.status));
  frame.coloured =
      row.status == RowStatus::kRegressed || row.status == RowStatus::kImproved;
  return frame;
}

// White to full red (slower) or blue (faster) by |change| / largest.
std::string DiffColour(int64_t change, int64_t largest) {
  if (change == 0 || largest <= 0) return "#eeeeee";
  const auto level =
      static_cast<int64_t>(absl::int128(std::abs(change)) * 180 / largest);
  const int64_t fade = 225 - std::min<int64_t>(level, 180);
  return change > 0 ? absl::StrFormat("#ff%02x%02x", fade, fade)
                    : absl::StrFormat("#%02x%02xff", fade, fade);
}

std::string DiffTitle(const FlameDiff& diff, uint32_t i) {
  const FlameFrame& f = diff.candidate.frames[i];
  const FlameDiffFrame& d = diff.frames[i];
  std::string title =
      i == 0 ? std::string("all") : FlameStack(diff.candidate, i);
  absl::StrAppend(&title, " \xE2\x80\x94 inclusive ",
                  FormatDuration(f.total_ns));
  if (i == 0 || f.thread_frame) return title;
  const int64_t change = d.cand_self_ns - d.base_self_ns;
  absl::StrAppend(&title, "; self ",
                  d.in_base ? FormatDuration(d.base_self_ns) : "(absent)",
                  " \xE2\x86\x92 ", FormatDuration(d.cand_self_ns), " (",
                  change >= 0 ? "+" : "-",
                  FormatDuration(change >= 0 ? change : -change), ")");
  if (!d.verdict.empty()) absl::StrAppend(&title, "; ", d.verdict);
  return title;
}

}  // namespace

absl::StatusOr<FlameDiff> DiffFlameGraphs(
    const std::vector<const Capture*>& base_runs,
    const std::vector<const Capture*>& candidate_runs,
    const FlameBuildOptions& options) {
  if (base_runs.empty() || candidate_runs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(base_runs.empty() ? "BASE" : "CAND",
                     ": no trace to compare (a side needs at least one run)"));
  }
  FlameDiff diff;
  diff.base_runs = base_runs.size();
  diff.candidate_runs = candidate_runs.size();
  diff.candidate = BuildFlameGraph(candidate_runs, options);
  const std::vector<Stacks> base = RunStacks(base_runs, options);
  const std::vector<Stacks> cand = RunStacks(candidate_runs, options);
  const bool one_run = base.size() == 1 && cand.size() == 1;
  std::map<std::string, ComparisonRow> rows;
  if (!one_run) {
    absl::StatusOr<std::map<std::string, ComparisonRow>> verdicts =
        Verdicts(base, cand);
    if (!verdicts.ok()) return verdicts.status();
    rows = std::move(*verdicts);
  }
  diff.frames.resize(diff.candidate.frames.size());
  std::map<std::string, bool> in_candidate;
  for (uint32_t i = 1; i < diff.candidate.frames.size(); ++i) {
    if (diff.candidate.frames[i].thread_frame) continue;
    const std::string stack = FlameStack(diff.candidate, i);
    in_candidate[stack] = true;
    diff.frames[i] =
        one_run ? OneRunFrame(base[0], cand[0], stack) : RunsFrame(rows, stack);
  }
  std::map<std::string, bool> base_stacks;
  for (const Stacks& run : base) {
    for (const auto& entry : run) base_stacks[entry.first] = true;
  }
  for (const auto& entry : base_stacks) {
    if (!in_candidate.contains(entry.first)) ++diff.only_in_base;
  }
  return diff;
}

std::string PlotFlameDiff(const FlameDiff& diff,
                          const FlamePlotOptions& options) {
  int64_t largest = 0;
  for (const FlameDiffFrame& d : diff.frames) {
    if (d.coloured) {
      largest = std::max(largest, std::abs(d.cand_self_ns - d.base_self_ns));
    }
  }
  std::string subtitle = absl::StrCat(
      diff.base_runs, diff.base_runs == 1 ? " baseline run" : " baseline runs",
      ", ", diff.candidate_runs,
      diff.candidate_runs == 1 ? " candidate run" : " candidate runs",
      "; width: the candidate's inclusive time; colour: the change of self "
      "time (the largest ",
      FormatDuration(largest), ")");
  if (diff.base_runs > 1 || diff.candidate_runs > 1) {
    absl::StrAppend(&subtitle,
                    ", only where the repeated-runs verdict is regressed or "
                    "improved");
  }
  if (diff.only_in_base > 0) {
    absl::StrAppend(&subtitle, "; ", diff.only_in_base,
                    diff.only_in_base == 1 ? " stack" : " stacks",
                    " only in the baseline not drawn");
  }
  return flame::Draw(
      diff.candidate, options, "Differential flame graph", subtitle,
      [&](uint32_t i) {
        const FlameDiffFrame& d = diff.frames[i];
        const int64_t change = d.coloured ? d.cand_self_ns - d.base_self_ns : 0;
        return flame::FrameStyle{.fill = DiffColour(change, largest),
                                 .title = DiffTitle(diff, i)};
      },
      {{"slower (self time)", "#ff2d2d"},
       {"faster (self time)", "#2d2dff"},
       {"no change", "#eeeeee"}});
}

}  // namespace spanprof::analysis
