// The scaling report as the `spanprof.scaling` JSON document
// (docs/formats.md) and as console tables.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "json/json_writer.h"
#include "spanprof/analysis/scaling.h"
#include "summary/row_key_json.h"

namespace spanprof::analysis {
namespace {

// Fitted values are written to 4 decimals: more would only print noise.
double Rounded(double value) { return std::round(value * 1e4) / 1e4; }

void WriteExponent(JsonWriter& w, const std::optional<Exponent>& exponent) {
  if (!exponent.has_value()) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Key("estimate");
  w.Double(Rounded(exponent->estimate));
  w.Key("ci_low");
  w.Double(Rounded(exponent->ci_low));
  w.Key("ci_high");
  w.Double(Rounded(exponent->ci_high));
  w.EndObject();
}

void WriteBucket(JsonWriter& w, const ScalingGroup& group,
                 const ScalingBucket& bucket) {
  w.BeginObject();
  w.Key("size_low");
  w.Double(bucket.size_low);
  w.Key("size_high");
  w.Double(bucket.size_high);
  w.Key("spans");
  w.Uint(bucket.spans);
  w.Key("median_ns");
  w.Int(bucket.median_ns);
  w.Key("p95_ns");
  w.Int(bucket.p95_ns);
  w.Key("median_ns_per_unit");
  w.Double(Rounded(bucket.median_ns_per_unit));
  w.Key("counters");
  w.BeginObject();
  for (size_t c = 0; c < group.counter_names.size(); ++c) {
    w.Key(group.counter_names[c]);
    const std::optional<double>& value = bucket.counters_per_unit[c];
    if (value.has_value()) {
      w.Double(Rounded(*value));
    } else {
      w.Null();
    }
  }
  w.EndObject();
  w.EndObject();
}

void WriteCounters(JsonWriter& w, const ScalingGroup& group) {
  w.BeginArray();
  for (const CounterScaling& counter : group.counters) {
    w.BeginObject();
    w.Key("name");
    w.String(counter.name);
    w.Key("exponent");
    WriteExponent(w, counter.exponent);
    w.Key("role");
    w.String(counter.role);
    w.Key("share");
    WriteExponent(w, counter.share);
    w.EndObject();
  }
  w.EndArray();
}

void WriteGroup(JsonWriter& w, const ScalingGroup& group) {
  w.BeginObject();
  w.Key("key");
  internal::WriteRowKey(w, group.key);
  w.Key("label");
  w.String(group.label);
  w.Key("size_arg");
  w.String(group.size_arg);
  w.Key("spans");
  w.Uint(group.spans);
  w.Key("size_min");
  w.Double(group.size_min);
  w.Key("size_max");
  w.Double(group.size_max);
  w.Key("buckets");
  w.BeginArray();
  for (const ScalingBucket& bucket : group.buckets) {
    WriteBucket(w, group, bucket);
  }
  w.EndArray();
  w.Key("overhead_ns");
  w.Double(Rounded(group.overhead_ns));
  w.Key("exponent");
  WriteExponent(w, group.exponent);
  w.Key("p95_exponent");
  WriteExponent(w, group.p95_exponent);
  w.Key("verdict");
  w.String(group.verdict);
  w.Key("reason");
  w.String(group.reason);
  w.Key("counters");
  WriteCounters(w, group);
  w.Key("driver");
  if (group.driver.has_value()) {
    w.String(*group.driver);
  } else {
    w.Null();
  }
  w.EndObject();
}

std::string ExponentText(const std::optional<Exponent>& exponent) {
  if (!exponent.has_value()) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f [%.2f, %.2f]", exponent->estimate,
                exponent->ci_low, exponent->ci_high);
  return text;
}

// Sizes as integers up to 99999, then with 3 significant digits.
std::string SizeText(double size) {
  char text[32];
  if (size < 1e5 && size == std::floor(size)) {
    std::snprintf(text, sizeof(text), "%.0f", size);
  } else {
    std::snprintf(text, sizeof(text), "%.3g", size);
  }
  return text;
}

std::string Clip(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

std::string CounterSummary(const ScalingGroup& group) {
  std::string out;
  for (const CounterScaling& counter : group.counters) {
    if (!counter.exponent.has_value()) continue;
    char text[160];
    std::snprintf(text, sizeof(text), "%s%s %.2f (%s", out.empty() ? "" : ", ",
                  counter.name.c_str(), counter.exponent->estimate,
                  counter.role.c_str());
    out += text;
    if (counter.share.has_value()) {
      std::snprintf(text, sizeof(text),
                    ", share of the super-linearity %.2f [%.2f, %.2f]",
                    counter.share->estimate, counter.share->ci_low,
                    counter.share->ci_high);
      out += text;
    }
    out += ')';
  }
  return out.empty() ? "-" : out;
}

void AppendGroupLine(std::string& out, const ScalingGroup& group) {
  const std::string sizes =
      SizeText(group.size_min) + "-" + SizeText(group.size_max);
  char line[512];
  std::snprintf(line, sizeof(line),
                "%-40s %-10s %8llu %-16s %-22s %-22s %-11s %s\n",
                Clip(group.label, 40).c_str(), Clip(group.size_arg, 10).c_str(),
                static_cast<unsigned long long>(group.spans), sizes.c_str(),
                ExponentText(group.exponent).c_str(),
                ExponentText(group.p95_exponent).c_str(), group.verdict.c_str(),
                group.driver.has_value() ? group.driver->c_str() : "-");
  out += line;
}

}  // namespace

std::string ScalingToJson(const ScalingReport& report) {
  std::string out;
  JsonWriter w(&out, {.indent = 2, .line_depth = 3});
  w.BeginObject();
  w.Key("schema");
  w.String(kScalingSchema);
  w.Key("schema_version");
  w.Int(kScalingSchemaVersion);
  w.Key("traces");
  w.BeginArray();
  for (const std::string& trace : report.traces) w.String(trace);
  w.EndArray();
  w.Key("skipped_nonpositive_sizes");
  w.Uint(report.skipped_nonpositive_sizes);
  w.Key("groups");
  w.BeginArray();
  for (const ScalingGroup& group : report.groups) WriteGroup(w, group);
  w.EndArray();
  w.EndObject();
  w.Newline();
  return out;
}

std::string ScalingTable(const ScalingReport& report) {
  std::string out;
  if (report.groups.empty()) {
    out +=
        "spanprof scaling: no group has a numeric size argument that "
        "varies; add one with SPANPROF_ARG(\"bytes\", n)\n";
    return out;
  }
  char header[256];
  std::snprintf(header, sizeof(header),
                "%-40s %-10s %8s %-16s %-22s %-22s %-11s %s\n", "Group", "Size",
                "Spans", "Sizes", "Exponent [95% CI]", "P95 exponent",
                "Verdict", "Driver");
  out += header;
  for (const ScalingGroup& group : report.groups) {
    AppendGroupLine(out, group);
    out += "    " + group.reason + "\n";
    out += "    counters: " + CounterSummary(group) + "\n";
  }
  return out;
}

std::string ScalingGateTable(std::span<const ScalingGateRow> rows) {
  std::string out;
  // The fixed columns are formatted; the reason, of any length, is appended
  // as it is (a buffer would cut it).
  char columns[160];
  std::snprintf(columns, sizeof(columns), "%-40s %-10s %-22s %-22s %-10s ",
                "Group", "Size", "Baseline exponent", "Candidate exponent",
                "Verdict");
  out += columns;
  out += "Reason\n";
  for (const ScalingGateRow& row : rows) {
    std::snprintf(columns, sizeof(columns), "%-40s %-10s %-22s %-22s %-10s ",
                  Clip(row.label, 40).c_str(), Clip(row.size_arg, 10).c_str(),
                  ExponentText(row.base).c_str(),
                  ExponentText(row.candidate).c_str(), row.verdict.c_str());
    out += columns;
    out += row.reason;
    out += '\n';
  }
  return out;
}

}  // namespace spanprof::analysis
