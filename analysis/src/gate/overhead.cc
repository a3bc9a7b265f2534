// The users' own overhead gate (spanprof/analysis/overhead.h): Google
// Benchmark's JSON output read strictly, `spanprof:on` runs paired with
// their `spanprof:off` runs, medians over repetitions, ratios.
#include "spanprof/analysis/overhead.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/cat.h"
#include "json/strict_json.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/internal/benchmark_names.h"
#include "status_macros.h"

namespace spanprof::analysis {
namespace {

using internal::Cat;
using internal::FieldSpec;
using internal::JsonPath;
using internal::ParsedDocument;
using internal::Quote;
using internal::StrictJson;
using simdjson::ondemand::value;

// One element of `benchmarks`: the fields the gate uses (Google Benchmark
// 1.7's JSON reporter; the others are checked for their type only).
struct BenchmarkEntry {
  std::string name;
  std::string run_name;
  std::string run_type;        // "iteration" or "aggregate"
  std::string aggregate_name;  // "mean", "median", "stddev", "cv", ...
  std::optional<double> real_ns;
  std::optional<double> cpu_ns;
  std::optional<double> real_time;  // in time_unit, until converted
  std::optional<double> cpu_time;
  std::string time_unit;
  bool error_occurred = false;
  std::string error_message;
  std::optional<double> spans_per_iteration;
};

// Google Benchmark's own fields, by the JSON type they must have. Any other
// field of a benchmark is a user counter: a number.
enum class FieldKind { kString, kInteger, kNumber, kBool };

struct KnownField {
  std::string_view name;
  FieldKind kind;
};

constexpr std::array<KnownField, 20> kKnownFields = {{
    {"name", FieldKind::kString},
    {"family_index", FieldKind::kInteger},
    {"per_family_instance_index", FieldKind::kInteger},
    {"run_name", FieldKind::kString},
    {"run_type", FieldKind::kString},
    {"repetitions", FieldKind::kInteger},
    {"repetition_index", FieldKind::kInteger},
    {"threads", FieldKind::kInteger},
    {"aggregate_name", FieldKind::kString},
    {"aggregate_unit", FieldKind::kString},
    {"iterations", FieldKind::kInteger},
    {"real_time", FieldKind::kNumber},
    {"cpu_time", FieldKind::kNumber},
    {"time_unit", FieldKind::kString},
    {"error_occurred", FieldKind::kBool},
    {"error_message", FieldKind::kString},
    {"label", FieldKind::kString},
    {"big_o", FieldKind::kString},
    {"cpu_coefficient", FieldKind::kNumber},
    {"real_coefficient", FieldKind::kNumber},
}};

std::optional<size_t> KnownFieldIndex(std::string_view key) {
  for (size_t i = 0; i < kKnownFields.size(); ++i) {
    if (kKnownFields[i].name == key) return i;
  }
  return std::nullopt;
}

// A finite number (any JSON number form; a counter may be negative).
absl::StatusOr<double> ReadNumber(const StrictJson& json, value& v,
                                  const JsonPath& path) {
  simdjson::ondemand::json_type type;
  double parsed = 0;
  if (v.type().get(type) != simdjson::SUCCESS ||
      type != simdjson::ondemand::json_type::number ||
      v.get_double().get(parsed) != simdjson::SUCCESS ||
      !std::isfinite(parsed)) {
    return json.Expected(v, path, "a finite number");
  }
  return parsed;
}

absl::Status StoreString(std::string_view key, std::string_view text,
                         BenchmarkEntry* entry) {
  if (key == "name") entry->name = text;
  if (key == "run_name") entry->run_name = text;
  if (key == "run_type") entry->run_type = text;
  if (key == "aggregate_name") entry->aggregate_name = text;
  if (key == "time_unit") entry->time_unit = text;
  if (key == "error_message") entry->error_message = text;
  return absl::OkStatus();
}

// Reads the value of Google Benchmark field `field` into `entry`.
absl::Status ReadKnownField(const StrictJson& json, const KnownField& field,
                            value& v, const JsonPath& path,
                            BenchmarkEntry* entry) {
  switch (field.kind) {
    case FieldKind::kString: {
      SPANPROF_ASSIGN_OR_RETURN(const std::string_view text,
                                json.String(v, path));
      return StoreString(field.name, text, entry);
    }
    case FieldKind::kInteger:
      return json.NonNegative(v, path).status();
    case FieldKind::kNumber: {
      SPANPROF_ASSIGN_OR_RETURN(const double number, ReadNumber(json, v, path));
      if (field.name == "real_time") entry->real_time = number;
      if (field.name == "cpu_time") entry->cpu_time = number;
      return absl::OkStatus();
    }
    case FieldKind::kBool: {
      SPANPROF_ASSIGN_OR_RETURN(entry->error_occurred, json.Bool(v, path));
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status ReadEntryField(const StrictJson& json,
                            simdjson::ondemand::field& field,
                            const JsonPath& path, uint64_t* seen,
                            BenchmarkEntry* entry) {
  std::string_view key;
  if (const simdjson::error_code error = field.unescaped_key().get(key);
      error != simdjson::SUCCESS) {
    return json.Simdjson(error, path);
  }
  const std::optional<size_t> known = KnownFieldIndex(key);
  const JsonPath field_path =
      path.Field(known ? kKnownFields[*known].name : key);
  value& v = field.value();
  if (!known) {
    // A user counter; the "on" variant's own one is kept.
    SPANPROF_ASSIGN_OR_RETURN(const double number,
                              ReadNumber(json, v, field_path));
    if (key == spanprof::internal::kBenchmarkSpansCounter) {
      entry->spans_per_iteration = number;
    }
    return absl::OkStatus();
  }
  const uint64_t bit = uint64_t{1} << *known;
  if ((*seen & bit) != 0) {
    return json.Error(path, Cat("duplicate field ", Quote(key)));
  }
  *seen |= bit;
  return ReadKnownField(json, kKnownFields[*known], v, field_path, entry);
}

// Nanoseconds per `unit`, or nullopt for an unknown unit.
std::optional<double> NanosecondsPer(std::string_view unit) {
  if (unit == "ns") return 1.0;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return std::nullopt;
}

// The times of an entry the gate reads, converted to ns.
absl::Status ConvertTimes(const StrictJson& json, const JsonPath& path,
                          BenchmarkEntry* entry) {
  if (!entry->real_time || !entry->cpu_time) {
    return json.Error(path,
                      Cat("missing field ",
                          Quote(entry->real_time ? "cpu_time" : "real_time")));
  }
  if (entry->time_unit.empty()) {
    return json.Error(path, "missing field \"time_unit\"");
  }
  const std::optional<double> scale = NanosecondsPer(entry->time_unit);
  if (!scale) {
    return json.Error(path.Field("time_unit"),
                      Cat("expected \"ns\", \"us\", \"ms\" or \"s\", got ",
                          Quote(entry->time_unit)));
  }
  entry->real_ns = *entry->real_time * *scale;
  entry->cpu_ns = *entry->cpu_time * *scale;
  return absl::OkStatus();
}

// Whether the gate uses this entry: every repetition, and the median
// aggregate (used only when a run has no repetitions in the file).
bool IsGated(const BenchmarkEntry& entry) {
  return entry.run_type == "iteration" ||
         (entry.run_type == "aggregate" && entry.aggregate_name == "median");
}

absl::Status CheckEntry(const StrictJson& json, const JsonPath& path,
                        BenchmarkEntry* entry) {
  for (const std::string_view required : {"name", "run_name", "run_type"}) {
    const std::string& text = required == "name"       ? entry->name
                              : required == "run_name" ? entry->run_name
                                                       : entry->run_type;
    if (text.empty()) {
      return json.Error(path, Cat("missing field ", Quote(required),
                                  " (or an empty string)"));
    }
  }
  if (entry->run_type != "iteration" && entry->run_type != "aggregate") {
    return json.Error(path.Field("run_type"),
                      Cat("expected \"iteration\" or \"aggregate\", got ",
                          Quote(entry->run_type)));
  }
  if (entry->error_occurred) {
    return json.Error(path, Cat("benchmark ", Quote(entry->name),
                                " failed: ", entry->error_message));
  }
  if (!IsGated(*entry)) return absl::OkStatus();
  return ConvertTimes(json, path, entry);
}

absl::StatusOr<BenchmarkEntry> ReadEntry(const StrictJson& json, value& v,
                                         const JsonPath& path) {
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object object,
                            json.Object(v, path));
  BenchmarkEntry entry;
  uint64_t seen = 0;
  for (auto field_result : object) {
    simdjson::ondemand::field field;
    if (const simdjson::error_code error = std::move(field_result).get(field);
        error != simdjson::SUCCESS) {
      return json.Simdjson(error, path);
    }
    SPANPROF_RETURN_IF_ERROR(ReadEntryField(json, field, path, &seen, &entry));
  }
  SPANPROF_RETURN_IF_ERROR(CheckEntry(json, path, &entry));
  return entry;
}

// The samples of one variant of one benchmark.
struct SideSamples {
  std::string run_name;
  size_t first_entry = 0;  // index in `benchmarks`, for messages
  std::vector<double> real_ns;
  std::vector<double> cpu_ns;
  std::vector<double> spans;
  std::optional<BenchmarkEntry> median_aggregate;
};

struct PairSamples {
  std::string name;
  std::optional<SideSamples> off;
  std::optional<SideSamples> on;
};

// The gate's view of the file: pairs in order of first appearance.
struct Collected {
  std::vector<PairSamples> pairs;
  std::map<std::string, size_t, std::less<>> index_of;
  int unpaired = 0;
};

enum class Variant { kOff, kOn };

// Splits `run_name` into the pair's name (the other components, in order)
// and the variant, or nullopt when no component names one.
std::optional<std::pair<std::string, Variant>> SplitRunName(
    std::string_view run_name) {
  std::optional<Variant> variant;
  std::string rest;
  bool first = true;
  size_t start = 0;
  while (start <= run_name.size()) {
    size_t end = run_name.find('/', start);
    if (end == std::string_view::npos) end = run_name.size();
    const std::string_view part = run_name.substr(start, end - start);
    start = end + 1;
    if (!variant && part == spanprof::internal::kBenchmarkOff) {
      variant = Variant::kOff;
      continue;
    }
    if (!variant && part == spanprof::internal::kBenchmarkOn) {
      variant = Variant::kOn;
      continue;
    }
    if (!first) rest += '/';
    rest += part;
    first = false;
  }
  if (!variant) return std::nullopt;
  return std::make_pair(std::move(rest), *variant);
}

absl::Status AddSample(const StrictJson& json, const JsonPath& path,
                       size_t index, BenchmarkEntry entry, Collected* out) {
  const auto split = SplitRunName(entry.run_name);
  if (!split) {
    if (entry.run_type == "iteration") ++out->unpaired;
    return absl::OkStatus();
  }
  auto [it, inserted] = out->index_of.try_emplace(split->first, 0);
  if (inserted) {
    it->second = out->pairs.size();
    out->pairs.emplace_back();
    out->pairs.back().name = split->first;
  }
  PairSamples& pair = out->pairs[it->second];
  std::optional<SideSamples>& side =
      split->second == Variant::kOn ? pair.on : pair.off;
  if (!side) {
    side.emplace();
    side->run_name = entry.run_name;
    side->first_entry = index;
  }
  if (entry.run_type == "aggregate") {
    if (side->median_aggregate) {
      return json.Error(
          path, Cat("a second median aggregate of ", Quote(entry.run_name)));
    }
    side->median_aggregate = std::move(entry);
    return absl::OkStatus();
  }
  side->real_ns.push_back(*entry.real_ns);
  side->cpu_ns.push_back(*entry.cpu_ns);
  if (entry.spans_per_iteration)
    side->spans.push_back(*entry.spans_per_iteration);
  return absl::OkStatus();
}

absl::StatusOr<Collected> ReadBenchmarks(const StrictJson& json, value& v,
                                         const JsonPath& path) {
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::array array,
                            json.Array(v, path));
  Collected collected;
  SPANPROF_RETURN_IF_ERROR(json.ForEachElement(
      array, path,
      [&](size_t index, value& element,
          const JsonPath& element_path) -> absl::Status {
        SPANPROF_ASSIGN_OR_RETURN(BenchmarkEntry entry,
                                  ReadEntry(json, element, element_path));
        if (!IsGated(entry)) return absl::OkStatus();
        return AddSample(json, element_path, index, std::move(entry),
                         &collected);
      }));
  return collected;
}

absl::StatusOr<Collected> ReadDocument(std::string_view text,
                                       const StrictJson& json) {
  ParsedDocument document(text);
  SPANPROF_ASSIGN_OR_RETURN(simdjson::ondemand::object root,
                            document.Start(json));
  constexpr std::array<FieldSpec, 2> kTopLevel = {
      {{"context", /*required=*/false}, {"benchmarks"}}};
  std::optional<Collected> collected;
  SPANPROF_RETURN_IF_ERROR(json.ReadObject(
      root, JsonPath::Root(), kTopLevel,
      [&](size_t index, value& v, const JsonPath& path) -> absl::Status {
        if (index == 0) return json.Object(v, path).status();
        SPANPROF_ASSIGN_OR_RETURN(collected, ReadBenchmarks(json, v, path));
        return absl::OkStatus();
      }));
  SPANPROF_RETURN_IF_ERROR(document.Finish(json));
  return *std::move(collected);
}

// The median of `values` (not empty): the middle value, or the mean of the
// two middle values.
double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  return (values[n / 2 - 1] + values[n / 2]) / 2;
}

// An error about element `index` of `$.benchmarks` (the paths are built
// here: a `JsonPath` must not outlive its parent).
absl::Status EntryError(const StrictJson& json, size_t index,
                        std::string_view message) {
  const JsonPath root = JsonPath::Root();
  const JsonPath benchmarks = root.Field("benchmarks");
  return json.Error(benchmarks.Index(index), message);
}

absl::StatusOr<OverheadSide> SideOf(const StrictJson& json,
                                    const SideSamples& samples,
                                    OverheadMetric metric) {
  OverheadSide side;
  side.run_name = samples.run_name;
  const bool cpu = metric == OverheadMetric::kCpuTime;
  if (!samples.cpu_ns.empty()) {
    side.repetitions = static_cast<int>(samples.cpu_ns.size());
    side.median_ns = Median(cpu ? samples.cpu_ns : samples.real_ns);
  } else if (samples.median_aggregate) {
    side.median_ns = cpu ? *samples.median_aggregate->cpu_ns
                         : *samples.median_aggregate->real_ns;
  } else {
    return EntryError(
        json, samples.first_entry,
        Cat("run ", Quote(samples.run_name),
            " has no repetitions (run_type \"iteration\") and no median "
            "aggregate in the file"));
  }
  return side;
}

std::optional<double> SpansPerIteration(const SideSamples& on) {
  if (!on.spans.empty()) return Median(on.spans);
  if (on.median_aggregate) return on.median_aggregate->spans_per_iteration;
  return std::nullopt;
}

absl::Status MissingSide(const StrictJson& json, const SideSamples& present,
                         std::string_view missing_variant) {
  return EntryError(
      json, present.first_entry,
      Cat("run ", Quote(present.run_name), " has no ", Quote(missing_variant),
          " counterpart to pair with (register the benchmark with "
          "SPANPROF_BENCHMARK and run both variants)"));
}

absl::StatusOr<OverheadPair> PairOf(const StrictJson& json,
                                    const PairSamples& samples,
                                    const OverheadOptions& options) {
  if (!samples.off) {
    return MissingSide(json, *samples.on, spanprof::internal::kBenchmarkOff);
  }
  if (!samples.on) {
    return MissingSide(json, *samples.off, spanprof::internal::kBenchmarkOn);
  }
  OverheadPair pair;
  pair.name = samples.name;
  SPANPROF_ASSIGN_OR_RETURN(pair.off,
                            SideOf(json, *samples.off, options.metric));
  SPANPROF_ASSIGN_OR_RETURN(pair.on, SideOf(json, *samples.on, options.metric));
  if (!(pair.off.median_ns > 0)) {
    return EntryError(json, samples.off->first_entry,
                      Cat("run ", Quote(pair.off.run_name),
                          " takes 0 ns per iteration: no ratio to form"));
  }
  pair.ratio = pair.on.median_ns / pair.off.median_ns;
  pair.passed = pair.ratio <= options.max_ratio;
  pair.spans_per_iteration = SpansPerIteration(*samples.on);
  return pair;
}

}  // namespace

absl::StatusOr<OverheadReport> AnalyzeOverhead(std::string_view json_text,
                                               std::string_view source,
                                               const OverheadOptions& options) {
  if (!std::isfinite(options.max_ratio) || !(options.max_ratio > 0)) {
    return absl::InvalidArgumentError(
        "max_ratio: expected a finite number > 0");
  }
  const StrictJson json(source);
  SPANPROF_ASSIGN_OR_RETURN(const Collected collected,
                            ReadDocument(json_text, json));
  OverheadReport report;
  report.source = std::string(source);
  report.options = options;
  report.unpaired_runs = collected.unpaired;
  for (const PairSamples& samples : collected.pairs) {
    SPANPROF_ASSIGN_OR_RETURN(OverheadPair pair,
                              PairOf(json, samples, options));
    report.pairs.push_back(std::move(pair));
  }
  if (report.pairs.empty()) {
    return absl::InvalidArgumentError(
        Cat(source, ": $.benchmarks: no run named NAME/",
            spanprof::internal::kBenchmarkOn, " or NAME/",
            spanprof::internal::kBenchmarkOff,
            ": nothing to gate (register benchmarks with SPANPROF_BENCHMARK)"));
  }
  return report;
}

absl::StatusOr<OverheadReport> ReadOverhead(const std::string& path,
                                            const OverheadOptions& options) {
  SPANPROF_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return AnalyzeOverhead(text, path, options);
}

std::string_view OverheadMetricName(OverheadMetric metric) {
  return metric == OverheadMetric::kCpuTime ? "cpu_time" : "real_time";
}

absl::StatusOr<OverheadMetric> ParseOverheadMetric(std::string_view name) {
  if (name == "cpu_time") return OverheadMetric::kCpuTime;
  if (name == "real_time") return OverheadMetric::kRealTime;
  return absl::InvalidArgumentError(
      Cat("expected cpu_time or real_time, got ", Quote(name)));
}

}  // namespace spanprof::analysis
