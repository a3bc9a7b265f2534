// `ComparisonToGithub()` and `ComparisonToJunit()` (compare_ci.h): a
// comparison as GitHub Actions workflow commands and as JUnit XML.
#include "spanprof/analysis/compare_ci.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gate/compare_metric.h"
#include "spanprof/analysis/compare.h"
#include "spanprof/analysis/table.h"

namespace spanprof::analysis {
namespace {

// Debian's abseil has its own string_view, which `StrCat` wants.
absl::string_view V(std::string_view s) { return {s.data(), s.size()}; }

// The runner's escapes: '%', CR and LF in every value; ':' and ',' too in
// a property (the title).
std::string EscapeWorkflow(std::string_view text, bool property) {
  std::string out;
  for (char c : text) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else if (property && c == ':') {
      out += "%3A";
    } else if (property && c == ',') {
      out += "%2C";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Value(std::optional<int64_t> v, bool is_duration) {
  if (!v.has_value()) return "absent";
  return is_duration ? FormatDuration(*v) : absl::StrCat(*v);
}

std::string Change(const ComparisonRow& row) {
  if (!row.change_bps.has_value()) return "";
  const int64_t bps = *row.change_bps;
  const int64_t magnitude = bps < 0 ? -bps : bps;
  return absl::StrFormat(" (%s%d.%02d%%)", bps < 0 ? "-" : "+", magnitude / 100,
                         magnitude % 100);
}

// "<label>: regressed, p95_ns 1.20 ms -> 1.50 ms (+25.00%)".
std::string RowMessage(const Comparison& comparison, const ComparisonRow& row) {
  const internal::MetricInfo& info = internal::Info(comparison.policy.metric);
  std::string message = absl::StrCat(
      row.label, ": ", V(RowStatusName(row.status)), ", ",
      MetricLabel(comparison.policy), " ", Value(row.base, info.is_duration),
      " -> ", Value(row.candidate, info.is_duration), Change(row));
  if (!row.reason.empty()) absl::StrAppend(&message, "; ", row.reason);
  return message;
}

// Whether the row fails the gate on its own.
bool Fails(const Comparison& comparison, const ComparisonRow& row) {
  const ComparePolicy& policy = comparison.policy;
  return row.status == RowStatus::kRegressed ||
         (row.status == RowStatus::kNew && policy.fail_on_new) ||
         (row.status == RowStatus::kMissing && policy.fail_on_missing) ||
         (row.status == RowStatus::kUnknown && policy.fail_on_unknown);
}

// The verdict line of the human table (its last line).
std::string VerdictOf(const Comparison& comparison) {
  std::string table = FormatComparison(comparison);
  while (!table.empty() && table.back() == '\n') table.pop_back();
  const size_t start = table.rfind('\n');
  return start == std::string::npos ? table : table.substr(start + 1);
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab, LF and CR.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' &&
            c != '\r') {
          out.push_back('?');
        } else {
          out.push_back(c);
        }
    }
  }
  return out;
}

}  // namespace

std::string ComparisonToGithub(const Comparison& comparison) {
  std::string out;
  for (const ComparisonRow& row : comparison.rows) {
    std::string_view command;
    if (Fails(comparison, row)) {
      command = "error";
    } else if (row.status == RowStatus::kUnknown) {
      command = "warning";
    } else {
      continue;
    }
    const std::string title = absl::StrCat(
        "spanprof compare: ", V(RowStatusName(row.status)), " ", row.label);
    absl::StrAppend(
        &out, "::", V(command), " title=", EscapeWorkflow(title, true),
        "::", EscapeWorkflow(RowMessage(comparison, row), false), "\n");
  }
  if (!comparison.passed && !comparison.no_evidence.empty() &&
      !comparison.policy.allow_missing) {
    absl::StrAppend(&out, "::error title=spanprof compare%3A no evidence::",
                    EscapeWorkflow(comparison.no_evidence, false), "\n");
  }
  absl::StrAppend(&out, "spanprof compare: ", VerdictOf(comparison), "\n");
  return out;
}

std::string ComparisonToJunit(const Comparison& comparison) {
  const std::string metric = MetricLabel(comparison.policy);
  size_t failures = 0;
  size_t skipped = 0;
  std::string cases;
  for (const ComparisonRow& row : comparison.rows) {
    absl::StrAppend(&cases, "    <testcase name=\"", XmlEscape(row.label),
                    "\" classname=\"spanprof.compare.", XmlEscape(metric),
                    "\" time=\"0\"");
    if (Fails(comparison, row)) {
      ++failures;
      absl::StrAppend(&cases, ">\n      <failure type=\"",
                      V(RowStatusName(row.status)), "\" message=\"",
                      XmlEscape(RowMessage(comparison, row)), "\"/>\n",
                      "    </testcase>\n");
    } else if (row.status == RowStatus::kNotMeasured) {
      ++skipped;
      absl::StrAppend(&cases, ">\n      <skipped message=\"",
                      XmlEscape(RowMessage(comparison, row)), "\"/>\n",
                      "    </testcase>\n");
    } else {
      absl::StrAppend(&cases, ">\n      <system-out>",
                      XmlEscape(RowMessage(comparison, row)),
                      "</system-out>\n    </testcase>\n");
    }
  }
  return absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n",
      "  <testsuite name=\"spanprof compare\" tests=\"", comparison.rows.size(),
      "\" failures=\"", failures, "\" errors=\"0\" skipped=\"", skipped,
      "\">\n", cases, "  </testsuite>\n</testsuites>\n");
}

}  // namespace spanprof::analysis
