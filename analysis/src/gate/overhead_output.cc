// The outputs of the users' overhead gate (spanprof/analysis/overhead.h):
// the table `spanprof overhead` prints and the `spanprof.overhead` document.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "json/json_writer.h"
#include "spanprof/analysis/overhead.h"

namespace spanprof::analysis {
namespace {

constexpr size_t kMaxNameWidth = 56;

// A per-iteration time with three significant-ish digits: "12.34 ns",
// "1.21 us".
std::string FormatNs(double ns) {
  if (ns < 1e3) return absl::StrFormat("%.2f ns", ns);
  if (ns < 1e6) return absl::StrFormat("%.2f us", ns / 1e3);
  if (ns < 1e9) return absl::StrFormat("%.2f ms", ns / 1e6);
  return absl::StrFormat("%.2f s", ns / 1e9);
}

// "10" repetitions, or "median" when the median aggregate stood in.
std::string FormatRuns(const OverheadSide& side) {
  return side.repetitions > 0 ? absl::StrFormat("%d", side.repetitions)
                              : std::string("median");
}

std::string Shorten(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

size_t NameWidth(const OverheadReport& report) {
  size_t width = std::string_view("Benchmark").size();
  for (const OverheadPair& pair : report.pairs) {
    width = std::max(width, std::min(pair.name.size(), kMaxNameWidth));
  }
  return width;
}

std::string Row(const OverheadPair& pair, size_t name_width) {
  const std::string spans =
      pair.spans_per_iteration
          ? absl::StrFormat("%.1f", *pair.spans_per_iteration)
          : std::string("-");
  const std::string runs = FormatRuns(pair.off) + "/" + FormatRuns(pair.on);
  return absl::StrFormat(
      "%-*s  %11s  %11s  %7.3f  %10s  %13s  %s\n", static_cast<int>(name_width),
      Shorten(pair.name, name_width), FormatNs(pair.off.median_ns),
      FormatNs(pair.on.median_ns), pair.ratio, spans, runs,
      pair.passed ? "pass" : "FAIL");
}

std::string VerdictLine(const OverheadReport& report) {
  size_t failed = 0;
  for (const OverheadPair& pair : report.pairs) {
    if (!pair.passed) ++failed;
  }
  if (failed == 0) {
    return absl::StrFormat(
        "overhead gate: PASS: %d of %d pairs within on/off <= %.3f\n",
        report.pairs.size(), report.pairs.size(), report.options.max_ratio);
  }
  return absl::StrFormat(
      "overhead gate: FAIL: %d of %d pairs above on/off %.3f\n", failed,
      report.pairs.size(), report.options.max_ratio);
}

void WriteSide(JsonWriter& w, const OverheadSide& side) {
  w.BeginObject();
  w.Key("run_name");
  w.String(side.run_name);
  w.Key("repetitions");
  w.Int(side.repetitions);
  w.Key("median_ns");
  w.Double(side.median_ns);
  w.EndObject();
}

void WritePair(JsonWriter& w, const OverheadPair& pair) {
  w.BeginObject();
  w.Key("name");
  w.String(pair.name);
  w.Key("off");
  WriteSide(w, pair.off);
  w.Key("on");
  WriteSide(w, pair.on);
  w.Key("ratio");
  w.Double(pair.ratio);
  w.Key("spans_per_iteration");
  if (pair.spans_per_iteration) {
    w.Double(*pair.spans_per_iteration);
  } else {
    w.Null();
  }
  w.Key("passed");
  w.Bool(pair.passed);
  w.EndObject();
}

}  // namespace

std::string OverheadTable(const OverheadReport& report) {
  const size_t width = NameWidth(report);
  std::string out = absl::StrFormat(
      "spanprof overhead: %s, %s per iteration, median over repetitions\n\n",
      report.source, OverheadMetricName(report.options.metric));
  out += absl::StrFormat("%-*s  %11s  %11s  %7s  %10s  %13s  %s\n",
                         static_cast<int>(width), "Benchmark", "off", "on",
                         "on/off", "spans/iter", "runs off/on", "verdict");
  for (const OverheadPair& pair : report.pairs) out += Row(pair, width);
  out += "\n";
  if (report.unpaired_runs > 0) {
    out += absl::StrFormat(
        "(%d runs without a spanprof:on/off variant are not gated)\n",
        report.unpaired_runs);
  }
  out += VerdictLine(report);
  return out;
}

std::string OverheadToJson(const OverheadReport& report) {
  std::string out;
  JsonWriter w(&out, {.indent = 2, .line_depth = 3});
  w.BeginObject();
  w.Key("schema");
  w.String("spanprof.overhead");
  w.Key("schema_version");
  w.Int(1);
  w.Key("source");
  w.String(report.source);
  w.Key("metric");
  w.String(OverheadMetricName(report.options.metric));
  w.Key("max_ratio");
  w.Double(report.options.max_ratio);
  w.Key("passed");
  w.Bool(report.passed());
  w.Key("unpaired_runs");
  w.Int(report.unpaired_runs);
  w.Key("pairs");
  w.BeginArray();
  for (const OverheadPair& pair : report.pairs) WritePair(w, pair);
  w.EndArray();
  w.EndObject();
  w.Newline();
  return out;
}

}  // namespace spanprof::analysis
