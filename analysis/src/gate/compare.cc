// The regression gate: matching rows by key and classifying each on one
// metric. Its table is in compare_table.cc, its JSON in compare_json.cc.
#include "spanprof/analysis/compare.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gate/compare_internal.h"
#include "gate/compare_metric.h"
#include "json/cat.h"

namespace spanprof::analysis {
namespace {

using internal::Cat;
using internal::Info;
using internal::kMetrics;
using internal::MetricInfo;

int64_t Saturate(absl::int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(v);
}

int64_t Saturate(uint64_t v) {
  return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX
                                              : static_cast<int64_t>(v);
}

// Sort rank of a status: worst first.
int Rank(RowStatus status) {
  switch (status) {
    case RowStatus::kRegressed:
      return 0;
    case RowStatus::kNew:
      return 1;
    case RowStatus::kMissing:
      return 2;
    case RowStatus::kUnknown:
      return 3;
    case RowStatus::kWithin:
    case RowStatus::kSame:
    case RowStatus::kImproved:
      return 4;
    case RowStatus::kNotMeasured:
      return 5;
  }
  return 6;
}

// The rows of both summaries by key: (base row, candidate row), either null.
using KeyedRows = std::map<RowKey, std::pair<const Row*, const Row*>>;

KeyedRows MatchKeys(const Summary& base, const Summary& candidate) {
  KeyedRows keys;
  for (const Row& row : base.rows) keys[row.key].first = &row;
  for (const Row& row : candidate.rows) keys[row.key].second = &row;
  return keys;
}

// Fills `row` for one key; `measured` says whether each side measured the
// metric at all (`internal::Measures()`).
void CompareKey(const RowKey& key, const Row* b, const Row* c,
                const ComparePolicy& policy, const Summary& base,
                const Summary& candidate, std::pair<bool, bool> measured,
                ComparisonRow& row) {
  row.key = key;
  row.label = b != nullptr ? b->label : c->label;
  if (b != nullptr) {
    row.base_calls = b->calls;
    if (measured.first) row.base = MetricValue(*b, policy);
    row.base_share = internal::ShareOfThreadTime(*b, base);
  }
  if (c != nullptr) {
    row.candidate_calls = c->calls;
    if (measured.second) row.candidate = MetricValue(*c, policy);
    row.candidate_share = internal::ShareOfThreadTime(*c, candidate);
  }
  if (b == nullptr) {
    row.status = RowStatus::kNew;
    return;
  }
  if (c == nullptr) {
    row.status = RowStatus::kMissing;
    return;
  }
  if (!row.base.has_value() || !row.candidate.has_value()) {
    row.status = RowStatus::kNotMeasured;
    return;
  }
  row.delta = Saturate(absl::int128(*row.candidate) - *row.base);
  row.change_bps = ChangeBps(*row.base, *row.candidate);
  row.status = Classify(*row.base, *row.candidate, policy.absolute_tolerance_ns,
                        policy.relative_tolerance_bps);
}

}  // namespace

void internal::CountStatus(RowStatus status, ComparisonCounts& counts) {
  switch (status) {
    case RowStatus::kRegressed:
      ++counts.regressed;
      break;
    case RowStatus::kImproved:
      ++counts.improved;
      break;
    case RowStatus::kNew:
      ++counts.new_keys;
      break;
    case RowStatus::kMissing:
      ++counts.missing;
      break;
    case RowStatus::kNotMeasured:
      ++counts.not_measured;
      break;
    case RowStatus::kSame:
      ++counts.same;
      break;
    case RowStatus::kUnknown:
      ++counts.unknown;
      break;
    case RowStatus::kWithin:
      ++counts.within;
      break;
  }
}

// Worst first: by status rank, then Δ descending, then key.
void internal::SortWorstFirst(std::vector<ComparisonRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ComparisonRow& a, const ComparisonRow& b) {
                     const int rank_a = Rank(a.status);
                     const int rank_b = Rank(b.status);
                     if (rank_a != rank_b) return rank_a < rank_b;
                     const int64_t delta_a = a.delta.value_or(0);
                     const int64_t delta_b = b.delta.value_or(0);
                     if (delta_a != delta_b) return delta_a > delta_b;
                     return a.key < b.key;
                   });
}

namespace {

bool HasCounter(const Summary& summary, std::string_view name) {
  for (const Row& row : summary.rows) {
    for (const RowCounter& counter : row.counters) {
      if (counter.name == name) return true;
    }
  }
  return false;
}

}  // namespace

// A counter metric must name a counter of at least one side: a typo must not
// compare zeros and pass.
absl::Status internal::CheckCounterKnown(
    const std::vector<const Summary*>& summaries, const ComparePolicy& policy) {
  if (policy.metric != CompareMetric::kCounter) return absl::OkStatus();
  if (policy.counter.empty()) {
    return absl::InvalidArgumentError("--metric counter: needs a name");
  }
  for (const Summary* summary : summaries) {
    if (HasCounter(*summary, policy.counter)) return absl::OkStatus();
  }
  std::set<std::string> known;
  for (const Summary* summary : summaries) {
    for (const Row& row : summary->rows) {
      for (const RowCounter& counter : row.counters) known.insert(counter.name);
    }
  }
  std::string names;
  for (const std::string& name : known) {
    names += names.empty() ? "" : ", ";
    names += name;
  }
  return absl::InvalidArgumentError(
      Cat("--metric counter:", policy.counter,
          ": no row of either summary has "
          "the counter \"",
          policy.counter, "\" (",
          known.empty() ? std::string("they have no counters")
                        : Cat("their counters: ", names),
          ")"));
}

namespace {

// The time a summary recorded: its recorded thread time, or, in a summary
// built without one, its rows' self time (which a summary read from a file
// always equals).
absl::int128 RecordedTime(const Summary& summary) {
  if (summary.recorded_thread_time_ns > 0) {
    return summary.recorded_thread_time_ns;
  }
  absl::int128 total = 0;
  for (const Row& row : summary.rows) {
    total += std::max<int64_t>(row.self_ns, 0);
  }
  return total;
}

// The rows of `runs` missing from the candidate: their self time over the
// runs' recorded time; nullopt when nothing is missing or nothing recorded.
std::optional<double> MissingShare(const std::vector<const Summary*>& runs,
                                   const std::set<RowKey>& missing) {
  if (missing.empty()) return std::nullopt;
  absl::int128 missing_ns = 0;
  absl::int128 recorded_ns = 0;
  for (const Summary* run : runs) {
    recorded_ns += RecordedTime(*run);
    for (const Row& row : run->rows) {
      if (missing.contains(row.key)) {
        missing_ns += std::max<int64_t>(row.self_ns, 0);
      }
    }
  }
  if (recorded_ns <= 0) return std::nullopt;
  return static_cast<double>(missing_ns) / static_cast<double>(recorded_ns);
}

}  // namespace

void internal::JudgeEvidence(const std::vector<const Summary*>& base_runs,
                             const std::vector<const Summary*>& candidate_runs,
                             Comparison& comparison) {
  const bool candidate_has_spans =
      std::any_of(candidate_runs.begin(), candidate_runs.end(),
                  [](const Summary* run) { return !run->rows.empty(); });
  std::set<RowKey> missing;
  bool common = false;
  for (const ComparisonRow& row : comparison.rows) {
    if (row.status == RowStatus::kMissing) {
      missing.insert(row.key);
    } else if (row.status != RowStatus::kNew) {
      common = true;
    }
  }
  comparison.missing_share = MissingShare(base_runs, missing);
  const double limit = static_cast<double>(kMissingShareLimitBps) / 10000;
  if (!candidate_has_spans) {
    comparison.no_evidence = "the candidate has no spans";
  } else if (!common) {
    comparison.no_evidence = "the two sides have no row in common";
  } else if (comparison.missing_share.value_or(0) > limit) {
    comparison.no_evidence = absl::StrFormat(
        "rows missing from the candidate held %.1f%% of the baseline's "
        "recorded thread time (more than %g%%)",
        *comparison.missing_share * 100, limit * 100);
  }
}

std::optional<double> internal::ShareOfThreadTime(const Row& row,
                                                  const Summary& summary) {
  if (summary.recorded_thread_time_ns <= 0) return std::nullopt;
  return static_cast<double>(row.total_ns) /
         static_cast<double>(summary.recorded_thread_time_ns);
}

absl::Status internal::CheckPolicy(const ComparePolicy& policy) {
  if (policy.absolute_tolerance_ns < 0) {
    return absl::InvalidArgumentError(
        "absolute tolerance must be a non-negative integer");
  }
  if (policy.relative_tolerance_bps < 0) {
    return absl::InvalidArgumentError(
        "relative tolerance must be a non-negative integer");
  }
  if (!(policy.confidence > 0.5 && policy.confidence < 1)) {
    return absl::InvalidArgumentError(
        "confidence must lie strictly between 0.5 and 1");
  }
  return absl::OkStatus();
}

bool IsDurationMetric(CompareMetric metric) { return Info(metric).is_duration; }

int64_t DefaultAbsoluteTolerance(CompareMetric metric) {
  return IsDurationMetric(metric) ? kDefaultAbsoluteToleranceNs : 0;
}

int64_t DefaultRelativeToleranceBps(CompareMetric metric) {
  return IsDurationMetric(metric) ? kDefaultRelativeToleranceBps : 0;
}

const std::vector<CompareMetric>& AllCompareMetrics() {
  static const std::vector<CompareMetric>* const kAll = [] {
    auto* all = new std::vector<CompareMetric>();
    for (const MetricInfo& info : kMetrics) all->push_back(info.metric);
    return all;
  }();
  return *kAll;
}

std::string_view CompareMetricName(CompareMetric metric) {
  return Info(metric).name;
}

absl::StatusOr<CompareMetric> ParseCompareMetric(std::string_view name) {
  std::string valid;
  for (const MetricInfo& info : kMetrics) {
    if (info.name == name) return info.metric;
    valid += valid.empty() ? "" : " ";
    valid += info.name;
  }
  return absl::InvalidArgumentError(
      Cat("unknown metric \"", name, "\" (one of: ", valid, ")"));
}

std::optional<int64_t> MetricValue(const Row& row, CompareMetric metric) {
  switch (metric) {
    case CompareMetric::kTotalNs:
      return row.total_ns;
    case CompareMetric::kSelfNs:
      return row.self_ns;
    case CompareMetric::kMeanNs:
      return row.mean_ns;
    case CompareMetric::kMedianNs:
      return row.median_ns;
    case CompareMetric::kP95Ns:
      return row.p95_ns;
    case CompareMetric::kP99Ns:
      return row.p99_ns;
    case CompareMetric::kMaxNs:
      return row.max_ns;
    case CompareMetric::kTotalHeartbeats:
      return Saturate(row.total_heartbeats);
    case CompareMetric::kSelfHeartbeats:
      return Saturate(row.self_heartbeats);
    case CompareMetric::kAllocCount:
      return row.alloc_count;
    case CompareMetric::kAllocBytes:
      return row.alloc_bytes;
    case CompareMetric::kCounter:
      return std::nullopt;
  }
  return std::nullopt;
}

absl::Status ParseMetric(std::string_view text, ComparePolicy& policy) {
  constexpr std::string_view kCounterPrefix = "counter:";
  if (text.substr(0, kCounterPrefix.size()) == kCounterPrefix) {
    const std::string_view name = text.substr(kCounterPrefix.size());
    if (name.empty()) {
      return absl::InvalidArgumentError(
          "counter: needs a counter name (counter:NAME)");
    }
    policy.metric = CompareMetric::kCounter;
    policy.counter = std::string(name);
    return absl::OkStatus();
  }
  absl::StatusOr<CompareMetric> metric = ParseCompareMetric(text);
  if (!metric.ok()) {
    return absl::InvalidArgumentError(
        Cat(std::string(metric.status().message()), " or counter:NAME"));
  }
  policy.metric = *metric;
  policy.counter.clear();
  return absl::OkStatus();
}

std::string MetricLabel(const ComparePolicy& policy) {
  if (policy.metric == CompareMetric::kCounter) {
    return Cat("counter:", policy.counter);
  }
  return std::string(CompareMetricName(policy.metric));
}

std::optional<int64_t> MetricValue(const Row& row,
                                   const ComparePolicy& policy) {
  if (policy.metric != CompareMetric::kCounter) {
    return MetricValue(row, policy.metric);
  }
  for (const RowCounter& counter : row.counters) {
    if (counter.name == policy.counter) return counter.total;
  }
  return 0;
}

bool internal::Measures(const Summary& summary, const ComparePolicy& policy) {
  return policy.metric != CompareMetric::kCounter ||
         HasCounter(summary, policy.counter);
}

std::optional<int64_t> MetricValue(const Row& row, const Summary& summary,
                                   const ComparePolicy& policy) {
  if (!internal::Measures(summary, policy)) return std::nullopt;
  return MetricValue(row, policy);
}

std::vector<std::string> ComparabilityWarnings(const Summary& base,
                                               const Summary& candidate) {
  struct Field {
    std::string_view what;
    const std::string& base;
    const std::string& candidate;
  };
  const Field fields[] = {
      {"host", base.host, candidate.host},
      {"clock", base.clock, candidate.clock},
      {"program (process_name)", base.process_name, candidate.process_name},
      {"source", base.source, candidate.source},
  };
  std::vector<std::string> warnings;
  for (const Field& field : fields) {
    if (field.base.empty() || field.candidate.empty() ||
        field.base == field.candidate) {
      continue;
    }
    warnings.push_back(absl::StrFormat(
        "the %s differs: baseline \"%s\", candidate \"%s\"; the numbers "
        "may not be comparable",
        field.what, field.base, field.candidate));
  }
  return warnings;
}

std::string_view RowStatusName(RowStatus status) {
  switch (status) {
    case RowStatus::kRegressed:
      return "regressed";
    case RowStatus::kImproved:
      return "improved";
    case RowStatus::kWithin:
      return "within";
    case RowStatus::kNew:
      return "new";
    case RowStatus::kMissing:
      return "missing";
    case RowStatus::kNotMeasured:
      return "not_measured";
    case RowStatus::kSame:
      return "same";
    case RowStatus::kUnknown:
      return "unknown";
  }
  return "within";
}

RowStatus Classify(int64_t base, int64_t candidate,
                   int64_t absolute_tolerance_ns,
                   int64_t relative_tolerance_bps) {
  // 128-bit: |Δ| < 2^64, |Δ·10000| < 2^78, |bps·base| < 2^126.
  const absl::int128 delta = absl::int128(candidate) - base;
  const absl::int128 relative =
      absl::int128(relative_tolerance_bps) * absl::int128(base);
  if (delta > absolute_tolerance_ns && delta * 10000 > relative) {
    return RowStatus::kRegressed;
  }
  if (-delta > absolute_tolerance_ns && -delta * 10000 > relative) {
    return RowStatus::kImproved;
  }
  return RowStatus::kWithin;
}

std::optional<int64_t> ChangeBps(int64_t base, int64_t candidate) {
  if (base == 0) return std::nullopt;
  const absl::int128 delta = absl::int128(candidate) - base;
  return Saturate(delta * 10000 / base);
}

absl::Status CheckComparable(const Summary& summary, std::string_view path,
                             bool allow_incomplete) {
  if (allow_incomplete) return absl::OkStatus();
  std::vector<std::string> reasons;
  if (summary.dropped_events > 0) {
    reasons.push_back(Cat(summary.dropped_events, " dropped events"));
  }
  if (summary.dropped_args > 0) {
    reasons.push_back(Cat(summary.dropped_args, " dropped args or counts"));
  }
  if (summary.unfinished_events > 0) {
    reasons.push_back(Cat(summary.unfinished_events, " unfinished events"));
  }
  if (!summary.validation_issues.empty()) {
    reasons.push_back(
        Cat(summary.validation_issues.size(), " validation issues"));
  }
  if (!summary.complete && reasons.empty()) {
    reasons.push_back("the capture did not end normally (complete: false)");
  }
  if (reasons.empty()) return absl::OkStatus();
  std::string why;
  for (const std::string& reason : reasons) {
    why += why.empty() ? "" : ", ";
    why += reason;
  }
  return absl::FailedPreconditionError(
      Cat(path.empty() ? std::string_view("summary") : path,
          ": incomplete capture (", why,
          "); its numbers are not comparable. Pass --allow-incomplete to "
          "compare anyway"));
}

absl::StatusOr<Comparison> Compare(const Summary& base,
                                   const Summary& candidate,
                                   const ComparePolicy& policy,
                                   std::string_view base_path,
                                   std::string_view candidate_path) {
  absl::Status status = internal::CheckPolicy(policy);
  if (!status.ok()) return status;
  status = CheckComparable(base, base_path, policy.allow_incomplete);
  if (!status.ok()) return status;
  status = CheckComparable(candidate, candidate_path, policy.allow_incomplete);
  if (!status.ok()) return status;
  status = internal::CheckCounterKnown({&base, &candidate}, policy);
  if (!status.ok()) return status;

  Comparison comparison;
  comparison.policy = policy;
  comparison.base_path = std::string(base_path);
  comparison.candidate_path = std::string(candidate_path);
  ComparisonCounts& counts = comparison.counts;
  const std::pair<bool, bool> measured = {
      internal::Measures(base, policy), internal::Measures(candidate, policy)};
  for (const auto& [key, pair] : MatchKeys(base, candidate)) {
    ComparisonRow& row = comparison.rows.emplace_back();
    CompareKey(key, pair.first, pair.second, policy, base, candidate, measured,
               row);
    internal::CountStatus(row.status, counts);
  }
  internal::SortWorstFirst(comparison.rows);
  internal::JudgeEvidence({&base}, {&candidate}, comparison);
  comparison.passed = counts.regressed == 0 &&
                      !(policy.fail_on_new && counts.new_keys > 0) &&
                      !(policy.fail_on_missing && counts.missing > 0) &&
                      (comparison.no_evidence.empty() || policy.allow_missing);
  return comparison;
}

}  // namespace spanprof::analysis
