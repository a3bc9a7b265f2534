// The regression gate: matching, classification, the table and the JSON.
#include "spanprof/analysis/compare.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "json/cat.h"
#include "json/json_writer.h"
#include "spanprof/analysis/table.h"

namespace spanprof::analysis {
namespace {

using internal::Cat;

struct MetricInfo {
  CompareMetric metric;
  std::string_view name;
  bool is_duration;
};

constexpr MetricInfo kMetrics[] = {
    {CompareMetric::kTotalNs, "total_ns", true},
    {CompareMetric::kSelfNs, "self_ns", true},
    {CompareMetric::kMeanNs, "mean_ns", true},
    {CompareMetric::kMedianNs, "median_ns", true},
    {CompareMetric::kP95Ns, "p95_ns", true},
    {CompareMetric::kP99Ns, "p99_ns", true},
    {CompareMetric::kMaxNs, "max_ns", true},
    {CompareMetric::kTotalHeartbeats, "total_heartbeats", false},
    {CompareMetric::kSelfHeartbeats, "self_heartbeats", false},
    {CompareMetric::kAllocCount, "alloc_count", false},
    {CompareMetric::kAllocBytes, "alloc_bytes", false},
};

const MetricInfo& Info(CompareMetric metric) {
  for (const MetricInfo& info : kMetrics) {
    if (info.metric == metric) return info;
  }
  return kMetrics[4];
}

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
    case RowStatus::kWithin:
    case RowStatus::kImproved:
      return 3;
    case RowStatus::kNotMeasured:
      return 4;
  }
  return 5;
}

std::string FormatValue(int64_t value, bool is_duration) {
  if (!is_duration) return Cat(value);
  return FormatDuration(value);
}

std::string FormatSigned(int64_t value, bool is_duration) {
  if (value == 0) return is_duration ? "0 ns" : "0";
  const std::string sign = value > 0 ? "+" : "-";
  // |value| fits: deltas of two non-negative int64 values are > INT64_MIN.
  const int64_t magnitude = value > 0 ? value : -value;
  return sign + FormatValue(magnitude, is_duration);
}

std::string FormatBps(std::optional<int64_t> bps) {
  if (!bps.has_value()) return "n/a";
  const int64_t v = *bps;
  const uint64_t magnitude =
      v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return absl::StrFormat("%s%d.%02d%%", v < 0 ? "-" : (v > 0 ? "+" : ""),
                         magnitude / 100, magnitude % 100);
}

std::string Shorten(std::string_view text, size_t width) {
  if (text.size() <= width) return std::string(text);
  return Cat(text.substr(0, width - 3), "...");
}

}  // namespace

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
  }
  return std::nullopt;
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
  if (policy.absolute_tolerance_ns < 0) {
    return absl::InvalidArgumentError(
        "absolute tolerance must be a non-negative integer");
  }
  if (policy.relative_tolerance_bps < 0) {
    return absl::InvalidArgumentError(
        "relative tolerance must be a non-negative integer");
  }
  absl::Status status =
      CheckComparable(base, base_path, policy.allow_incomplete);
  if (!status.ok()) return status;
  status = CheckComparable(candidate, candidate_path, policy.allow_incomplete);
  if (!status.ok()) return status;

  Comparison comparison;
  comparison.policy = policy;
  comparison.base_path = std::string(base_path);
  comparison.candidate_path = std::string(candidate_path);

  std::map<RowKey, std::pair<const Row*, const Row*>> keys;
  for (const Row& row : base.rows) keys[row.key].first = &row;
  for (const Row& row : candidate.rows) keys[row.key].second = &row;

  ComparisonCounts& counts = comparison.counts;
  for (const auto& [key, pair] : keys) {
    const auto [b, c] = pair;
    ComparisonRow& row = comparison.rows.emplace_back();
    row.key = key;
    row.label = b != nullptr ? b->label : c->label;
    if (b != nullptr) {
      row.base_calls = b->calls;
      row.base = MetricValue(*b, policy.metric);
    }
    if (c != nullptr) {
      row.candidate_calls = c->calls;
      row.candidate = MetricValue(*c, policy.metric);
    }
    if (b == nullptr) {
      row.status = RowStatus::kNew;
      ++counts.new_keys;
      continue;
    }
    if (c == nullptr) {
      row.status = RowStatus::kMissing;
      ++counts.missing;
      continue;
    }
    if (!row.base.has_value() || !row.candidate.has_value()) {
      row.status = RowStatus::kNotMeasured;
      ++counts.not_measured;
      continue;
    }
    row.delta = Saturate(absl::int128(*row.candidate) - *row.base);
    row.change_bps = ChangeBps(*row.base, *row.candidate);
    row.status =
        Classify(*row.base, *row.candidate, policy.absolute_tolerance_ns,
                 policy.relative_tolerance_bps);
    switch (row.status) {
      case RowStatus::kRegressed:
        ++counts.regressed;
        break;
      case RowStatus::kImproved:
        ++counts.improved;
        break;
      default:
        ++counts.within;
        break;
    }
  }

  std::stable_sort(comparison.rows.begin(), comparison.rows.end(),
                   [](const ComparisonRow& a, const ComparisonRow& b) {
                     const int rank_a = Rank(a.status);
                     const int rank_b = Rank(b.status);
                     if (rank_a != rank_b) return rank_a < rank_b;
                     const int64_t delta_a = a.delta.value_or(0);
                     const int64_t delta_b = b.delta.value_or(0);
                     if (delta_a != delta_b) return delta_a > delta_b;
                     return a.key < b.key;
                   });

  comparison.passed = counts.regressed == 0 &&
                      !(policy.fail_on_new && counts.new_keys > 0) &&
                      !(policy.fail_on_missing && counts.missing > 0);
  return comparison;
}

std::string FormatComparison(const Comparison& comparison) {
  const ComparePolicy& policy = comparison.policy;
  const MetricInfo& metric = Info(policy.metric);
  std::string out;
  out += absl::StrFormat(
      "spanprof compare: metric %s; regression when the increase exceeds "
      "%d%s AND %d bps (%s) of the baseline\n",
      metric.name, policy.absolute_tolerance_ns,
      metric.is_duration ? " ns" : "", policy.relative_tolerance_bps,
      FormatBps(policy.relative_tolerance_bps));
  if (!comparison.base_path.empty()) {
    out += Cat("Base:      ", comparison.base_path, "\n");
  }
  if (!comparison.candidate_path.empty()) {
    out += Cat("Candidate: ", comparison.candidate_path, "\n");
  }
  out += "\n";

  constexpr size_t kLabelWidth = 48;
  size_t label_width = 4;
  for (const ComparisonRow& row : comparison.rows) {
    label_width =
        std::max(label_width, std::min(row.label.size(), kLabelWidth));
  }
  const std::string header =
      absl::StrFormat("%-12s  %-*s  %12s  %12s  %13s  %10s\n", "Status",
                      static_cast<int>(label_width), "Key", "Base", "Candidate",
                      "Delta", "Change");
  out += header;
  auto value_or_dash = [&](std::optional<int64_t> v) {
    return v.has_value() ? FormatValue(*v, metric.is_duration)
                         : std::string("-");
  };
  for (const ComparisonRow& row : comparison.rows) {
    std::string status(RowStatusName(row.status));
    std::string delta = "-";
    std::string change = "-";
    if (row.delta.has_value()) {
      delta = FormatSigned(*row.delta, metric.is_duration);
      change = row.change_bps.has_value()
                   ? FormatBps(row.change_bps)
                   : (*row.delta == 0 ? "0.00%" : "from 0");
    }
    out += absl::StrFormat(
        "%-12s  %-*s  %12s  %12s  %13s  %10s\n", status,
        static_cast<int>(label_width), Shorten(row.label, kLabelWidth),
        value_or_dash(row.base), value_or_dash(row.candidate), delta, change);
  }
  if (comparison.rows.empty()) out += "(no rows in either summary)\n";

  const ComparisonCounts& c = comparison.counts;
  out += "\n";
  std::string tally = absl::StrFormat(
      "%d regressed, %d improved, %d within tolerance, %d new, %d missing",
      c.regressed, c.improved, c.within, c.new_keys, c.missing);
  if (c.not_measured > 0) {
    tally += absl::StrFormat(", %d not measured", c.not_measured);
  }
  if (comparison.passed) {
    out += Cat("PASS: ", tally, "\n");
  } else {
    std::vector<std::string> why;
    if (c.regressed > 0) why.push_back(Cat(c.regressed, " regressed"));
    if (policy.fail_on_new && c.new_keys > 0) {
      why.push_back(Cat(c.new_keys, " new (--fail-on-new)"));
    }
    if (policy.fail_on_missing && c.missing > 0) {
      why.push_back(Cat(c.missing, " missing (--fail-on-missing)"));
    }
    std::string reasons;
    for (const std::string& w : why) {
      reasons += reasons.empty() ? "" : ", ";
      reasons += w;
    }
    out += Cat("FAIL (", reasons, "): ", tally, "\n");
  }
  return out;
}

std::string ComparisonToJson(const Comparison& comparison) {
  std::string out;
  // Rows one per line: readable in a diff, still compact.
  JsonWriter w(&out, {.indent = 2, .line_depth = 2});
  const ComparePolicy& policy = comparison.policy;
  auto optional_int = [&](std::string_view key, std::optional<int64_t> v) {
    w.Key(key);
    w.OptionalInt(v);
  };
  w.BeginObject();
  w.Key("schema");
  w.String(kComparisonSchema);
  w.Key("schema_version");
  w.Int(kComparisonSchemaVersion);
  w.Key("metric");
  w.String(CompareMetricName(policy.metric));
  w.Key("policy");
  w.BeginObject();
  w.Key("absolute_tolerance_ns");
  w.Int(policy.absolute_tolerance_ns);
  w.Key("relative_tolerance_bps");
  w.Int(policy.relative_tolerance_bps);
  w.Key("fail_on_new");
  w.Bool(policy.fail_on_new);
  w.Key("fail_on_missing");
  w.Bool(policy.fail_on_missing);
  w.Key("allow_incomplete");
  w.Bool(policy.allow_incomplete);
  w.EndObject();
  w.Key("base");
  w.String(comparison.base_path);
  w.Key("candidate");
  w.String(comparison.candidate_path);
  w.Key("rows");
  w.BeginArray();
  for (const ComparisonRow& row : comparison.rows) {
    w.BeginObject();
    w.Key("key");
    w.BeginObject();
    w.Key("name");
    w.String(row.key.name);
    w.Key("phase");
    w.String(row.key.phase);
    w.Key("module");
    w.String(row.key.module);
    w.Key("activity");
    w.String(row.key.activity);
    w.EndObject();
    w.Key("label");
    w.String(row.label);
    w.Key("status");
    w.String(RowStatusName(row.status));
    optional_int("base", row.base);
    optional_int("candidate", row.candidate);
    optional_int("delta", row.delta);
    optional_int("change_bps", row.change_bps);
    w.Key("base_calls");
    w.Uint(row.base_calls);
    w.Key("candidate_calls");
    w.Uint(row.candidate_calls);
    w.EndObject();
  }
  w.EndArray();
  const ComparisonCounts& c = comparison.counts;
  w.Key("counts");
  w.BeginObject();
  w.Key("regressed");
  w.Uint(c.regressed);
  w.Key("improved");
  w.Uint(c.improved);
  w.Key("within");
  w.Uint(c.within);
  w.Key("new");
  w.Uint(c.new_keys);
  w.Key("missing");
  w.Uint(c.missing);
  w.Key("not_measured");
  w.Uint(c.not_measured);
  w.EndObject();
  w.Key("passed");
  w.Bool(comparison.passed);
  w.EndObject();
  w.Newline();
  return out;
}

}  // namespace spanprof::analysis
