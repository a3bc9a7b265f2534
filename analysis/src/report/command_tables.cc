// The rows of the commands' tables for the machine formats
// (spanprof/analysis/command_tables.h).
#include "spanprof/analysis/command_tables.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "json/cat.h"
#include "spanprof/analysis/table_output.h"

namespace spanprof::analysis {
namespace {

using internal::Cat;

TableCell OptionalInt(const std::optional<int64_t>& value) {
  return value.has_value() ? TableCell::Int(*value) : TableCell::Null();
}

TableCell OptionalReal(const std::optional<double>& value) {
  return value.has_value() ? TableCell::Real(*value) : TableCell::Null();
}

TableCell Count(uint64_t value) {
  return TableCell::Int(static_cast<int64_t>(value));
}

bool Moved(RowStatus status) {
  return status != RowStatus::kWithin && status != RowStatus::kSame &&
         status != RowStatus::kNotMeasured;
}

// "1.234 ms"-free text of a signed change in basis points: "+12.34%".
std::string PercentText(int64_t bps) {
  const int64_t magnitude = bps < 0 ? -bps : bps;
  std::string fraction = std::to_string(magnitude % 100);
  if (fraction.size() < 2) fraction.insert(0, "0");
  return Cat(bps < 0 ? "-" : "+", magnitude / 100, ".", fraction, "%");
}

std::string MarkdownCell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string OptionalText(const std::optional<int64_t>& value) {
  return value.has_value() ? std::to_string(*value) : "";
}

}  // namespace

OutputTable SummaryRowsTable(const Summary& summary) {
  OutputTable table;
  table.columns = {"name",    "self_ns", "total_ns",        "calls",
                   "mean_ns", "p95_ns",  "self_heartbeats", "share_permille"};
  const bool processes = summary.process_count > 1;
  if (processes) table.columns.emplace_back("processes");
  std::set<std::string> counters;
  for (const Row& row : summary.rows) {
    for (const RowCounter& counter : row.counters)
      counters.insert(counter.name);
  }
  for (const std::string& name : counters) {
    table.columns.push_back(Cat("counters.", name));
  }
  for (const Row& row : summary.rows) {
    std::vector<TableCell>& cells = table.rows.emplace_back();
    cells = {TableCell::Text(row.label),   TableCell::Int(row.self_ns),
             TableCell::Int(row.total_ns), Count(row.calls),
             TableCell::Int(row.mean_ns),  TableCell::Int(row.p95_ns),
             Count(row.self_heartbeats),   TableCell::Int(row.share_permille)};
    if (processes) cells.push_back(Count(row.processes));
    for (const std::string& name : counters) {
      TableCell cell;
      for (const RowCounter& counter : row.counters) {
        if (counter.name == name) cell = TableCell::Int(counter.total);
      }
      cells.push_back(cell);
    }
  }
  return table;
}

OutputTable ComparisonRowsTable(const Comparison& comparison) {
  OutputTable table;
  table.columns = {"name",  "status",     "base",       "candidate",
                   "delta", "change_bps", "base_calls", "candidate_calls"};
  if (comparison.runs) {
    for (const char* column :
         {"runs_baseline", "runs_candidate", "delta_ci_low", "delta_ci_high",
          "p_value", "reason"}) {
      table.columns.emplace_back(column);
    }
  }
  for (const ComparisonRow& row : comparison.rows) {
    std::vector<TableCell>& cells = table.rows.emplace_back();
    cells = {TableCell::Text(row.label),
             TableCell::Text(std::string(RowStatusName(row.status))),
             OptionalInt(row.base),
             OptionalInt(row.candidate),
             OptionalInt(row.delta),
             OptionalInt(row.change_bps),
             Count(row.base_calls),
             Count(row.candidate_calls)};
    if (comparison.runs) {
      cells.push_back(Count(row.runs_baseline));
      cells.push_back(Count(row.runs_candidate));
      cells.push_back(OptionalReal(row.delta_ci_low));
      cells.push_back(OptionalReal(row.delta_ci_high));
      cells.push_back(OptionalReal(row.p_value));
      cells.push_back(TableCell::Text(row.reason));
    }
  }
  return table;
}

std::string ComparisonMarkdown(const Comparison& comparison) {
  const ComparisonCounts& n = comparison.counts;
  std::string out = Cat(
      "**spanprof compare: ", comparison.passed ? "PASS" : "FAIL", "** (",
      MetricLabel(comparison.policy), "): ", n.regressed, " regressed, ",
      n.improved, " improved, ", n.new_keys, " new, ", n.missing, " missing");
  if (comparison.runs) out += Cat(", ", n.unknown, " unknown");
  out += comparison.runs ? Cat(", ", n.same, " same")
                         : Cat(", ", n.within, " within tolerance");
  if (!comparison.no_evidence.empty()) {
    out += Cat("; no evidence: ", comparison.no_evidence);
  }
  out += "\n\n";
  OutputTable moved;
  moved.columns = {"name", "status", "base", "candidate", "delta", "change"};
  for (const ComparisonRow& row : comparison.rows) {
    if (!Moved(row.status)) continue;
    moved.rows.push_back(
        {TableCell::Text(MarkdownCell(row.label)),
         TableCell::Text(std::string(RowStatusName(row.status))),
         OptionalInt(row.base), OptionalInt(row.candidate),
         OptionalInt(row.delta),
         TableCell::Text(row.change_bps.has_value()
                             ? PercentText(*row.change_bps)
                             : OptionalText(std::nullopt))});
  }
  if (moved.rows.empty()) {
    out += "No row moved beyond the tolerances.\n";
    return out;
  }
  out += RenderTable(moved, TableFormat::kMarkdown);
  return out;
}

OutputTable ScalingRowsTable(const ScalingReport& report) {
  OutputTable table;
  table.columns = {
      "name",         "size_arg", "spans",           "size_min",
      "size_max",     "exponent", "exponent_ci_low", "exponent_ci_high",
      "p95_exponent", "verdict",  "driver"};
  for (const ScalingGroup& group : report.groups) {
    const auto estimate = [](const std::optional<Exponent>& e,
                             double Exponent::*field) {
      return e.has_value() ? TableCell::Real((*e).*field) : TableCell::Null();
    };
    table.rows.push_back(
        {TableCell::Text(group.label), TableCell::Text(group.size_arg),
         Count(group.spans), TableCell::Real(group.size_min),
         TableCell::Real(group.size_max),
         estimate(group.exponent, &Exponent::estimate),
         estimate(group.exponent, &Exponent::ci_low),
         estimate(group.exponent, &Exponent::ci_high),
         estimate(group.p95_exponent, &Exponent::estimate),
         TableCell::Text(group.verdict),
         group.driver.has_value() ? TableCell::Text(*group.driver)
                                  : TableCell::Null()});
  }
  return table;
}

OutputTable OverheadRowsTable(const OverheadReport& report) {
  OutputTable table;
  table.columns = {"name",   "off_ns", "on_ns", "ratio", "spans_per_iteration",
                   "verdict"};
  for (const OverheadPair& pair : report.pairs) {
    table.rows.push_back(
        {TableCell::Text(pair.name), TableCell::Real(pair.off.median_ns),
         TableCell::Real(pair.on.median_ns), TableCell::Real(pair.ratio),
         OptionalReal(pair.spans_per_iteration),
         TableCell::Text(pair.passed ? "pass" : "fail")});
  }
  return table;
}

}  // namespace spanprof::analysis
