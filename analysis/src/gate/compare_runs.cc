// The gate over repeated runs: per key, the metric's values over the runs of
// each side, the Hodges–Lehmann shift with its Mann–Whitney interval, and a
// verdict of regressed, improved, same or unknown (docs/cli.md, "compare on
// repeated runs").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gate/compare_internal.h"
#include "gate/shift.h"
#include "input/input_kind.h"
#include "json/cat.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/summary.h"

namespace spanprof::analysis {
namespace {

using internal::Cat;

// One key's values over the runs of both sides.
struct KeySamples {
  std::string label;
  std::vector<double> base;  // the metric of each run that has it
  std::vector<double> candidate;
  std::vector<double> base_calls;
  std::vector<double> candidate_calls;
  std::vector<double> base_share;
  std::vector<double> candidate_share;
  bool base_seen = false;  // some run of the side has the row
  bool candidate_seen = false;
};

void Gather(const SummaryRuns& side, const ComparePolicy& policy, bool is_base,
            std::map<RowKey, KeySamples>& keys) {
  for (const Summary& run : side.runs) {
    const bool measured = internal::Measures(run, policy);
    for (const Row& row : run.rows) {
      KeySamples& k = keys[row.key];
      if (k.label.empty()) k.label = row.label;
      (is_base ? k.base_seen : k.candidate_seen) = true;
      if (const std::optional<double> share =
              internal::ShareOfThreadTime(row, run)) {
        (is_base ? k.base_share : k.candidate_share).push_back(*share);
      }
      const std::optional<int64_t> value =
          measured ? MetricValue(row, policy) : std::nullopt;
      if (!value.has_value()) continue;
      (is_base ? k.base : k.candidate).push_back(static_cast<double>(*value));
      (is_base ? k.base_calls : k.candidate_calls)
          .push_back(static_cast<double>(row.calls));
    }
  }
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int64_t ToInt64(double v) {
  if (!(v > -9.2e18)) return INT64_MIN;
  if (!(v < 9.2e18)) return INT64_MAX;
  return std::llround(v);
}

bool NoSpread(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(),
                     [&](double v) { return v == values.front(); });
}

bool AllPositive(const KeySamples& k) {
  const auto positive = [](double v) { return v > 0; };
  return std::all_of(k.base.begin(), k.base.end(), positive) &&
         std::all_of(k.candidate.begin(), k.candidate.end(), positive);
}

// The fewest runs per side that give an interval: 3 for Welch's t on
// positive values, else those whose exact Mann–Whitney interval reaches
// `confidence` at all (4 for 95%: 2 / C(8, 4) = 0.029 ≤ 0.05).
size_t MinimumRuns(const KeySamples& k, double confidence) {
  if (AllPositive(k)) return gate::kLogTestMinRuns;
  for (size_t n = 2; n < 64; ++n) {
    if (2 * gate::ExactUCdf(n, n, 0) <= 1 - confidence) return n;
  }
  return 64;
}

// The tolerance band's half-width T for a baseline median `base`: a shift
// beyond T is beyond both tolerances.
double Band(const ComparePolicy& policy, double base) {
  return std::max(static_cast<double>(policy.absolute_tolerance_ns),
                  static_cast<double>(policy.relative_tolerance_bps) *
                      std::abs(base) / 10000.0);
}

// Roughly how many runs per side would bring the interval's half-width
// down to the distance between the estimate and the nearest edge that
// decides (the interval narrows as 1/sqrt(runs)).
std::string RunsToDecide(const ComparisonRow& row, double band, size_t runs) {
  const double half = (*row.delta_ci_high - *row.delta_ci_low) / 2;
  const double estimate = *row.shift;
  const double distance = std::abs(estimate) > band ? std::abs(estimate) - band
                                                    : band - std::abs(estimate);
  if (!(distance > 0)) {
    return "the shift sits on the tolerance's edge: more than 1000 runs per "
           "side would decide it";
  }
  const double needed = std::ceil(static_cast<double>(runs) *
                                  (half / distance) * (half / distance));
  if (needed > 1000) return "more than 1000 runs per side would decide it";
  return absl::StrFormat(
      "about %d runs per side would decide it",
      static_cast<int64_t>(std::max(needed, 2.0 + static_cast<double>(runs))));
}

// The shift and its interval: Mann–Whitney needs 6 runs a side to reach a
// table's confidence over a few rows (4 for one row at 95%), whatever the
// effect; below that, Welch's t on the logarithms decides from 3 runs a side
// when the effect is large against the spread of the runs.
gate::Shift EstimateRowShift(const KeySamples& k, double confidence) {
  const size_t runs = std::min(k.base.size(), k.candidate.size());
  if (runs >= gate::kLogTestMinRuns && runs < gate::kRankTestRuns) {
    std::optional<gate::Shift> welch =
        gate::EstimateLogShift(k.base, k.candidate, confidence);
    if (welch.has_value()) return *welch;
  }
  return gate::EstimateShift(k.base, k.candidate, confidence);
}

// The verdict of a row whose sides both have values.
void Decide(const KeySamples& k, const ComparePolicy& policy, double confidence,
            ComparisonRow& row) {
  const double base_median = Median(k.base);
  if (NoSpread(k.base) && NoSpread(k.candidate)) {
    row.shift = k.candidate.front() - k.base.front();
    row.delta = ToInt64(*row.shift);
    row.status =
        Classify(ToInt64(k.base.front()), ToInt64(k.candidate.front()),
                 policy.absolute_tolerance_ns, policy.relative_tolerance_bps);
    if (row.status == RowStatus::kWithin) row.status = RowStatus::kSame;
    row.reason = "no spread over the runs: decided exactly";
    return;
  }
  const gate::Shift shift = EstimateRowShift(k, confidence);
  row.shift = shift.estimate;
  row.delta = ToInt64(shift.estimate);
  row.p_value = shift.p_value;
  row.delta_ci_low = shift.ci_low;
  row.delta_ci_high = shift.ci_high;
  const size_t runs = std::min(k.base.size(), k.candidate.size());
  if (!shift.ci_low.has_value()) {
    row.status = RowStatus::kUnknown;
    row.reason = absl::StrFormat(
        "%d vs %d runs cannot reach %.4g%% confidence: nothing can be "
        "decided; at least %d runs per side",
        k.base.size(), k.candidate.size(), confidence * 100,
        MinimumRuns(k, confidence));
    return;
  }
  const double band = Band(policy, base_median);
  if (*shift.ci_low > band) {
    row.status = RowStatus::kRegressed;
  } else if (*shift.ci_high < -band) {
    row.status = RowStatus::kImproved;
  } else if (*shift.ci_low >= -band && *shift.ci_high <= band) {
    row.status = RowStatus::kSame;
  } else {
    row.status = RowStatus::kUnknown;
    row.reason = absl::StrFormat(
        "the interval [%.0f, %.0f] straddles the tolerance %.0f; %s",
        *shift.ci_low, *shift.ci_high, band, RunsToDecide(row, band, runs));
  }
}

ComparisonRow CompareKey(const RowKey& key, const KeySamples& k,
                         const ComparePolicy& policy, double confidence) {
  ComparisonRow row;
  row.key = key;
  row.label = k.label;
  row.runs_baseline = k.base.size();
  row.runs_candidate = k.candidate.size();
  if (!k.base.empty()) {
    row.base = ToInt64(Median(k.base));
    row.base_calls = static_cast<uint64_t>(ToInt64(Median(k.base_calls)));
  }
  if (!k.candidate.empty()) {
    row.candidate = ToInt64(Median(k.candidate));
    row.candidate_calls =
        static_cast<uint64_t>(ToInt64(Median(k.candidate_calls)));
  }
  if (!k.base_share.empty()) row.base_share = Median(k.base_share);
  if (!k.candidate_share.empty()) {
    row.candidate_share = Median(k.candidate_share);
  }
  if (!k.base_seen) {
    row.status = RowStatus::kNew;
  } else if (!k.candidate_seen) {
    row.status = RowStatus::kMissing;
  } else if (k.base.empty() || k.candidate.empty()) {
    row.status = RowStatus::kNotMeasured;
  } else {
    Decide(k, policy, confidence, row);
    row.change_bps = ChangeBps(*row.base, *row.base + *row.delta);
  }
  return row;
}

absl::Status CheckSide(const SummaryRuns& side, const ComparePolicy& policy) {
  if (side.runs.empty()) {
    return absl::InvalidArgumentError(
        Cat(side.path.empty() ? std::string_view("side") : side.path,
            ": no spanprof summary (a directory of runs needs at least one)"));
  }
  for (size_t i = 0; i < side.runs.size(); ++i) {
    const std::string_view path =
        i < side.run_paths.size() ? std::string_view(side.run_paths[i]) : "";
    absl::Status status =
        CheckComparable(side.runs[i], path, policy.allow_incomplete);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// The keys whose verdict takes a statistical test: both sides have values,
// with spread on either.
size_t CountTested(const std::map<RowKey, KeySamples>& keys) {
  size_t tested = 0;
  for (const auto& [key, k] : keys) {
    if (k.base_seen && k.candidate_seen && !k.base.empty() &&
        !k.candidate.empty() && !(NoSpread(k.base) && NoSpread(k.candidate))) {
      ++tested;
    }
  }
  return tested;
}

// Bonferroni: each of `tested` rows at 1 − (1 − confidence) / tested, so that
// the chance of any false verdict over the whole table stays 1 − confidence.
double RowConfidence(double confidence, size_t tested) {
  if (tested <= 1) return confidence;
  return 1 - (1 - confidence) / static_cast<double>(tested);
}

// The files directly in `directory`, in name order.
absl::StatusOr<std::vector<std::filesystem::path>> ListFiles(
    const std::string& directory) {
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(directory, error), end;
       !error && it != end; it.increment(error)) {
    if (it->is_regular_file(error)) files.push_back(it->path());
  }
  if (error) {
    return absl::NotFoundError(
        Cat(directory, ": cannot list the directory (", error.message(), ")"));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<const Summary*> RunsOf(const SummaryRuns& side) {
  std::vector<const Summary*> runs;
  runs.reserve(side.runs.size());
  for (const Summary& run : side.runs) runs.push_back(&run);
  return runs;
}

// One side's runs must be runs of one program, each capture once: a run
// directory that mixes programs, or counts a copy of a run as a second run,
// would let the gate decide on samples that are not what they claim.
absl::Status CheckOneProgramOnce(const SummaryRuns& side,
                                 const std::vector<std::string>& texts) {
  for (size_t i = 0; i < side.runs.size(); ++i) {
    const Summary& first = side.runs.front();
    const Summary& run = side.runs[i];
    if (run.process_name != first.process_name) {
      return absl::InvalidArgumentError(
          Cat(side.path, ": the summaries are of different programs: ",
              side.run_paths.front(), " of \"", first.process_name, "\", ",
              side.run_paths[i], " of \"", run.process_name,
              "\"; a directory of runs holds runs of one program"));
    }
    for (size_t j = 0; j < i; ++j) {
      const Summary& earlier = side.runs[j];
      const bool same_anchor =
          run.wall_clock_anchor_ns != 0 &&
          run.wall_clock_anchor_ns == earlier.wall_clock_anchor_ns &&
          run.pid == earlier.pid && run.host == earlier.host;
      if (!same_anchor && texts[i] != texts[j]) continue;
      return absl::InvalidArgumentError(
          Cat(side.path, ": ", side.run_paths[j], " and ", side.run_paths[i],
              same_anchor ? " are the same capture (host, pid and wall-clock "
                            "anchor)"
                          : " are identical files",
              "; a directory of runs counts each run once"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SummaryRuns> ReadSummaryRuns(const std::string& directory,
                                            std::vector<std::string>* notes) {
  absl::StatusOr<std::vector<std::filesystem::path>> files =
      ListFiles(directory);
  if (!files.ok()) return files.status();
  SummaryRuns side;
  side.path = directory;
  std::vector<std::string> texts;  // of each run, to find a file twice
  for (const std::filesystem::path& file : *files) {
    const std::string path = file.string();
    std::string text;
    if (HasExtension(path, ".json")) {
      absl::StatusOr<std::string> read = ReadFile(path);
      if (!read.ok()) return read.status();
      text = std::move(*read);
    }
    // A summary is told by what the file is (input/input_kind.h), not by a
    // mention of the schema's name: a trace with a span of that name is
    // another program's output in the directory, skipped like it.
    if (text.empty() ||
        internal::SniffInput(text) != internal::InputKind::kSummary ||
        text.find("\"spanprof.summary\"") == std::string::npos) {
      notes->push_back(Cat(path, ": not a spanprof summary, skipped"));
      continue;
    }
    absl::StatusOr<Summary> summary = ParseSummary(text, path);
    if (!summary.ok()) return summary.status();
    side.runs.push_back(std::move(*summary));
    side.run_paths.push_back(path);
    texts.push_back(std::move(text));
  }
  if (side.runs.empty()) {
    return absl::InvalidArgumentError(
        Cat(directory, ": no spanprof summary in the directory"));
  }
  absl::Status checked = CheckOneProgramOnce(side, texts);
  if (!checked.ok()) return checked;
  return side;
}

absl::StatusOr<Comparison> CompareRuns(const SummaryRuns& base,
                                       const SummaryRuns& candidate,
                                       const ComparePolicy& policy) {
  absl::Status status = internal::CheckPolicy(policy);
  if (!status.ok()) return status;
  status = CheckSide(base, policy);
  if (!status.ok()) return status;
  status = CheckSide(candidate, policy);
  if (!status.ok()) return status;

  std::map<RowKey, KeySamples> keys;
  std::vector<const Summary*> all = RunsOf(base);
  for (const Summary* run : RunsOf(candidate)) all.push_back(run);
  status = internal::CheckCounterKnown(all, policy);
  if (!status.ok()) return status;
  Gather(base, policy, /*is_base=*/true, keys);
  Gather(candidate, policy, /*is_base=*/false, keys);
  Comparison comparison;
  comparison.policy = policy;
  comparison.base_path = base.path;
  comparison.candidate_path = candidate.path;
  comparison.runs = true;
  comparison.base_runs = base.runs.size();
  comparison.candidate_runs = candidate.runs.size();
  comparison.row_confidence =
      RowConfidence(policy.confidence, CountTested(keys));
  for (const auto& [key, samples] : keys) {
    comparison.rows.push_back(
        CompareKey(key, samples, policy, comparison.row_confidence));
    internal::CountStatus(comparison.rows.back().status, comparison.counts);
  }
  internal::SortWorstFirst(comparison.rows);
  internal::JudgeEvidence(RunsOf(base), RunsOf(candidate), comparison);
  const ComparisonCounts& c = comparison.counts;
  comparison.passed = c.regressed == 0 &&
                      !(policy.fail_on_new && c.new_keys > 0) &&
                      !(policy.fail_on_missing && c.missing > 0) &&
                      !(policy.fail_on_unknown && c.unknown > 0) &&
                      (comparison.no_evidence.empty() || policy.allow_missing);
  return comparison;
}

}  // namespace spanprof::analysis
