// spanprof/analysis/compare.h — the regression gate over two summaries.
//
// `Compare()` matches the rows of a baseline and a candidate summary by their
// full key (name + phase + module + activity + backend + dtype + device) and
// classifies each on one metric. A row regresses only when the increase
// Δ = candidate − baseline exceeds BOTH tolerances: Δ > absolute tolerance AND
// Δ·10000 > bps·baseline (integer arithmetic, no overflow; a zero baseline
// regresses on any Δ > absolute tolerance). An improvement is the mirror
// image; everything else is within tolerance. Keys only in the candidate are
// `new`, only in the baseline `missing`; they fail the gate only when the
// policy says so. A comparison without evidence (an empty candidate, no key
// in common, missing rows holding more than `kMissingShareLimitBps` of the
// baseline's recorded thread time) fails unless `allow_missing`.
//
// clang-format off
// Example:
//
//   spanprof::analysis::Summary base = ...;  // e.g. ReadSummary("base.json")
//   spanprof::analysis::Summary cand = ...;
//   spanprof::analysis::ComparePolicy policy{
//       .metric = spanprof::analysis::CompareMetric::kP95Ns,
//       .absolute_tolerance_ns = 500'000,
//       .relative_tolerance_bps = 1000};
//   absl::StatusOr<spanprof::analysis::Comparison> comparison =
//       spanprof::analysis::Compare(base, cand, policy);
//   if (comparison.ok() && !comparison->passed) { ... }
// clang-format on
#ifndef SPANPROF_ANALYSIS_COMPARE_H_
#define SPANPROF_ANALYSIS_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis {

inline constexpr std::string_view kComparisonSchema = "spanprof.comparison";
inline constexpr int64_t kComparisonSchemaVersion = 1;
// The version written for a comparison of repeated runs (`CompareRuns()`).
inline constexpr int64_t kComparisonRunsSchemaVersion = 2;
// `spanprof compare`'s tolerances for one run against one on a duration
// metric when none is given (docs/cli.md, "Default tolerances", has the A/A
// measurements they rest on): 5% of the baseline and 500 us. Two runs of
// one binary on a quiet machine stay inside them; a real slowdown must be
// larger to count. Counts (heartbeats, allocations, counters) have no
// timing noise: exact (0 and 0).
inline constexpr int64_t kDefaultRelativeToleranceBps = 500;
inline constexpr int64_t kDefaultAbsoluteToleranceNs = 500'000;
// The defaults of a comparison of repeated runs, on every metric: the same
// 5%, and no absolute tolerance (the statistics absorb the noise that the
// absolute tolerance of one run against one is there for).
inline constexpr int64_t kRunsDefaultRelativeToleranceBps =
    kDefaultRelativeToleranceBps;
inline constexpr int64_t kRunsDefaultAbsoluteToleranceNs = 0;
// The gate's evidence rule: rows of the baseline that the candidate lacks
// may hold at most this share of the baseline's recorded thread time (their
// `self_ns` summed, in basis points: 10%) unless `allow_missing`.
inline constexpr int64_t kMissingShareLimitBps = 1000;

// `CompareMetric` is the row field a comparison judges.
enum class CompareMetric {
  kTotalNs,
  kSelfNs,
  kMeanNs,
  kMedianNs,
  kP95Ns,
  kP99Ns,
  kMaxNs,
  kTotalHeartbeats,
  kSelfHeartbeats,
  kAllocCount,
  kAllocBytes,
  // A named counter's row total (`ComparePolicy::counter`); a row without
  // the counter counts 0. Written `counter:NAME` on the command line.
  kCounter,
};

// `IsDurationMetric()`: the metric is in nanoseconds (not a count).
bool IsDurationMetric(CompareMetric metric);

// `DefaultAbsoluteTolerance()` and `DefaultRelativeToleranceBps()` are the
// tolerances of one run against one when none is given:
// `kDefaultAbsoluteToleranceNs` and `kDefaultRelativeToleranceBps` for a
// duration metric, 0 for a count (heartbeats, allocations and counters are
// exact).
int64_t DefaultAbsoluteTolerance(CompareMetric metric);
int64_t DefaultRelativeToleranceBps(CompareMetric metric);

// `AllCompareMetrics()` lists every metric of a fixed field, in the order of
// the CLI help (not `kCounter`, which needs a name).
const std::vector<CompareMetric>& AllCompareMetrics();

// `CompareMetricName()` is the summary field name (`"p95_ns"`; `"counter"`
// for `kCounter`).
std::string_view CompareMetricName(CompareMetric metric);

// `ParseCompareMetric()` maps a field name back; anything else is an error
// listing the valid names.
absl::StatusOr<CompareMetric> ParseCompareMetric(std::string_view name);

// `MetricValue()` is the row's value of `metric`; nullopt for allocation
// counts that were not measured (and for `kCounter`, which needs the name:
// use the `ComparePolicy` overload).
std::optional<int64_t> MetricValue(const Row& row, CompareMetric metric);

// `RowStatus` is the verdict on one key.
enum class RowStatus {
  kRegressed,    // Δ beyond both tolerances
  kImproved,     // −Δ beyond both tolerances
  kWithin,       // anything else
  kNew,          // key only in the candidate
  kMissing,      // key only in the baseline
  kNotMeasured,  // allocation metric null on either side
  // Repeated runs only (`CompareRuns()`):
  kSame,     // the shift's whole interval lies inside the tolerance band
  kUnknown,  // neither: more runs would decide (`ComparisonRow::reason`)
};

// `RowStatusName()`: "regressed", "improved", "within", "new", "missing",
// "not_measured", "same", "unknown".
std::string_view RowStatusName(RowStatus status);

// `Classify()` is the gate's rule for one pair of values, exactly as stated
// at the top of this header. Pure; exact for every int64 input.
RowStatus Classify(int64_t base, int64_t candidate,
                   int64_t absolute_tolerance_ns,
                   int64_t relative_tolerance_bps);

// `ChangeBps()` is Δ·10000/base truncated toward zero (saturated to int64);
// nullopt when base is 0.
std::optional<int64_t> ChangeBps(int64_t base, int64_t candidate);

// `ComparePolicy` is the gate's configuration. Tolerances are non-negative.
struct ComparePolicy {
  CompareMetric metric = CompareMetric::kP95Ns;
  int64_t absolute_tolerance_ns = 0;
  int64_t relative_tolerance_bps = 0;
  bool fail_on_new = false;
  bool fail_on_missing = false;
  bool allow_incomplete = false;
  // Pass even without evidence (`Comparison::no_evidence`): no row in
  // common, a candidate without spans, or missing rows beyond
  // `kMissingShareLimitBps` of the baseline's time.
  bool allow_missing = false;
  // The counter's name when `metric` is `kCounter`.
  std::string counter = {};
  // Repeated runs only: the confidence of the shift's interval (0.5 < c < 1),
  // and whether an `unknown` row fails the gate.
  double confidence = 0.95;
  bool fail_on_unknown = false;

  friend bool operator==(const ComparePolicy&, const ComparePolicy&) = default;
};

// `ParseMetric()` parses a `--metric` value into `policy.metric` (and
// `policy.counter`): a field name as `ParseCompareMetric()` takes it, or
// `counter:NAME` with a non-empty NAME.
absl::Status ParseMetric(std::string_view text, ComparePolicy& policy);

// `MetricLabel()` names the policy's metric: `"p95_ns"`, `"counter:NAME"`.
std::string MetricLabel(const ComparePolicy& policy);

// `MetricValue()` is the row's value of the policy's metric; for `kCounter`
// the counter's total, 0 when the row does not have it.
std::optional<int64_t> MetricValue(const Row& row, const ComparePolicy& policy);

// `MetricValue()` of a row of `summary`: as above, except that a counter is
// not measured (nullopt) in a summary none of whose rows has it (a version 1
// summary cannot hold counters; a program built before the counter was
// added does not count it), just as allocations are not measured in a
// program without `spanprof::alloc`.
std::optional<int64_t> MetricValue(const Row& row, const Summary& summary,
                                   const ComparePolicy& policy);

// `ComparisonRow` is one key of the union of both summaries' keys.
struct ComparisonRow {
  RowKey key;
  std::string label;
  RowStatus status = RowStatus::kWithin;
  std::optional<int64_t> base;        // metric value; nullopt when absent
  std::optional<int64_t> candidate;   // or not measured
  std::optional<int64_t> delta;       // candidate − base when both present
  std::optional<int64_t> change_bps;  // ChangeBps(); nullopt when base is 0
  uint64_t base_calls = 0;
  uint64_t candidate_calls = 0;
  // The row's share of the summary's recorded thread time (total_ns /
  // recorded_thread_time_ns; over runs, the median); nullopt when absent.
  // Not in the document: the table lists, for a failing gate, the rows
  // whose share moved most, which names the culprit even when the metric
  // judged it per call.
  std::optional<double> base_share;
  std::optional<double> candidate_share;
  // Repeated runs only. `base` and `candidate` are then the medians over the
  // runs that have the row, `base_calls` and `candidate_calls` the median
  // calls, and `delta` the shift rounded to an integer.
  uint64_t runs_baseline = 0;   // runs of each side that have the row
  uint64_t runs_candidate = 0;  // (with the metric measured)
  std::optional<double> shift;  // Hodges–Lehmann estimate of cand − base
  std::optional<double> delta_ci_low;   // its interval at the policy's
  std::optional<double> delta_ci_high;  // confidence; nullopt: unreachable
  std::optional<double> p_value;        // two-sided Mann–Whitney U
  // Why the verdict: for `unknown`, what is missing and roughly how many
  // runs per side would decide; for an exact decision, "no spread".
  std::string reason;

  friend bool operator==(const ComparisonRow&, const ComparisonRow&) = default;
};

struct ComparisonCounts {
  uint64_t regressed = 0;
  uint64_t improved = 0;
  uint64_t within = 0;
  uint64_t new_keys = 0;
  uint64_t missing = 0;
  uint64_t not_measured = 0;
  uint64_t same = 0;     // repeated runs only
  uint64_t unknown = 0;  // repeated runs only

  friend bool operator==(const ComparisonCounts&,
                         const ComparisonCounts&) = default;
};

// `Comparison` is the gate's result. Rows are sorted worst first:
// regressions by Δ descending, then new keys, missing keys, the rest by Δ
// descending (so improvements come last), then not measured; ties by key.
struct Comparison {
  ComparePolicy policy;
  std::string base_path;       // for reports; may be empty
  std::string candidate_path;  // for reports; may be empty
  std::vector<ComparisonRow> rows;
  ComparisonCounts counts;
  // No regression, no new (missing, unknown) key when the policy fails on
  // them, and evidence (`no_evidence` empty, or `policy.allow_missing`).
  bool passed = true;
  // Why the comparison is no evidence, empty when it is: "the candidate has
  // no spans", "the two sides have no row in common", or the share of the
  // baseline's recorded thread time held by missing rows beyond
  // `kMissingShareLimitBps`. Set even when `policy.allow_missing` lets it
  // pass.
  std::string no_evidence;
  // The missing rows' `self_ns` over the baseline's recorded thread time
  // (over runs: summed over the baseline's runs); nullopt when nothing is
  // missing or the baseline recorded no time.
  std::optional<double> missing_share;
  // A comparison of repeated runs (`CompareRuns()`), and their numbers.
  bool runs = false;
  uint64_t base_runs = 0;
  uint64_t candidate_runs = 0;
  // The confidence of each row's interval: `policy.confidence` over the
  // whole table, shared among the rows tested (Bonferroni).
  double row_confidence = 0;

  friend bool operator==(const Comparison&, const Comparison&) = default;
};

// `CheckComparable()` refuses an incomplete summary (complete false, dropped
// or unfinished events, dropped args, validation issues) unless
// `allow_incomplete`; the message names `path` and says why.
absl::Status CheckComparable(const Summary& summary, std::string_view path,
                             bool allow_incomplete);

// `Compare()` runs the gate. Fails (without comparing) when either summary is
// refused by `CheckComparable()`, a tolerance is negative, or the metric is a
// counter that no row of either summary has.
absl::StatusOr<Comparison> Compare(const Summary& base,
                                   const Summary& candidate,
                                   const ComparePolicy& policy,
                                   std::string_view base_path = "",
                                   std::string_view candidate_path = "");

// `SummaryRuns` is one side of a comparison of repeated runs: every summary
// of a directory, each one run of the program.
struct SummaryRuns {
  std::string path;                    // the directory, for reports
  std::vector<Summary> runs;           // at least one
  std::vector<std::string> run_paths;  // the file of each run
};

// `ReadSummaryRuns()` reads one side of a comparison of repeated runs: a
// directory whose every file directly in it named `*.json` that declares
// the schema "spanprof.summary" is one run, in name order. Other files
// (traces, logs) are skipped, each with a line in `notes`. A summary that
// does not parse, or a directory with no summary, is an error naming the
// file or the directory; so is a directory whose summaries are of different
// programs (`process_name`), or that holds one capture twice (identical
// files, or the same host, pid and wall-clock anchor), naming both files.
absl::StatusOr<SummaryRuns> ReadSummaryRuns(const std::string& directory,
                                            std::vector<std::string>* notes);

// `CompareRuns()` is the gate over repeated runs (docs/cli.md, "compare on
// repeated runs", has the formulas). Per key, the metric of each run that
// has the row is one sample value. A metric with no spread on either side
// (heartbeats, allocations and counters of a deterministic program) is
// decided exactly, by `Classify()` of the two values. Otherwise the shift
// of the candidate against the baseline is the Hodges–Lehmann estimate,
// with the interval from the Mann–Whitney test at `row_confidence` (the
// table's `policy.confidence` shared by Bonferroni among the rows that need
// a test, so that a table of many rows is no likelier to raise a false
// verdict than one row), and with T = max(absolute tolerance, relative
// tolerance × baseline median):
// `regressed` when the interval lies above T, `improved` when below −T,
// `same` when inside [−T, T], `unknown` otherwise (also when the runs are
// too few to reach the confidence). Fails when a run is refused by
// `CheckComparable()`, a side has no run, a tolerance is negative, or the
// confidence is outside (0.5, 1).
absl::StatusOr<Comparison> CompareRuns(const SummaryRuns& base,
                                       const SummaryRuns& candidate,
                                       const ComparePolicy& policy);

// `ComparabilityWarnings()` lists, one line each, what differs between the
// two sides that makes their numbers less comparable: the host, the clock,
// the program (`process_name`) or the source (a spanprof capture against a
// foreign trace). Empty fields (older summaries) are not compared.
std::vector<std::string> ComparabilityWarnings(const Summary& base,
                                               const Summary& candidate);

// `FormatComparison()` renders the human table and a final verdict line;
// for a failing gate, the rows whose share of thread time moved most
// come just before the verdict.
std::string FormatComparison(const Comparison& comparison);

// `ComparisonToJson()` renders the versioned `spanprof.comparison` document:
// {"schema","schema_version","metric","policy":{...},"base","candidate",
//  "rows":[{key,label,status,base,candidate,delta,change_bps,base_calls,
//  candidate_calls}],"counts":{...},"no_evidence","passed"}. Absent values
// are `null`.
std::string ComparisonToJson(const Comparison& comparison);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_COMPARE_H_
