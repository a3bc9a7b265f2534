#include "row_selection.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace spanprof::cli::internal {
namespace {

using analysis::Row;

// A sortable column: its name for --sort and the number it sorts by
// (largest first).
struct SortColumn {
  std::string_view name;
  std::function<uint64_t(const Row&)> key;
};

uint64_t NonNegative(int64_t value) {
  return value < 0 ? 0 : static_cast<uint64_t>(value);
}

const std::vector<SortColumn>& SortColumns() {
  static const auto* const kColumns = new std::vector<SortColumn>{
      {"self", [](const Row& r) { return NonNegative(r.self_ns); }},
      {"total", [](const Row& r) { return NonNegative(r.total_ns); }},
      {"calls", [](const Row& r) { return r.calls; }},
      {"mean", [](const Row& r) { return NonNegative(r.mean_ns); }},
      {"median", [](const Row& r) { return NonNegative(r.median_ns); }},
      {"p95", [](const Row& r) { return NonNegative(r.p95_ns); }},
      {"p99", [](const Row& r) { return NonNegative(r.p99_ns); }},
      {"max", [](const Row& r) { return NonNegative(r.max_ns); }},
      {"heartbeats", [](const Row& r) { return r.self_heartbeats; }},
      {"share", [](const Row& r) { return NonNegative(r.share_permille); }},
  };
  return *kColumns;
}

absl::Status SortRows(std::string_view column, std::vector<Row>* rows) {
  if (column == "name") {
    std::stable_sort(
        rows->begin(), rows->end(),
        [](const Row& a, const Row& b) { return a.label < b.label; });
    return absl::OkStatus();
  }
  std::string known = "name";
  for (const SortColumn& sort : SortColumns()) {
    absl::StrAppend(&known, ", ", std::string(sort.name));
    if (sort.name != column) continue;
    std::stable_sort(
        rows->begin(), rows->end(),
        [&](const Row& a, const Row& b) { return sort.key(a) > sort.key(b); });
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("--sort: unknown column \"",
                                                 std::string(column),
                                                 "\" (one of ", known, ")"));
}

absl::Status FilterRows(const std::string& pattern, std::vector<Row>* rows) {
  std::optional<std::regex> regex;
  try {
    regex.emplace(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat("--filter: \"", pattern,
                     "\" is not a regular expression (", error.what(), ")"));
  }
  std::erase_if(*rows, [&](const Row& row) {
    return !std::regex_search(row.label, *regex);
  });
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RowsLeftOut> SelectRows(const ParsedFlags& flags,
                                       std::vector<Row>* rows) {
  RowsLeftOut left_out;
  const size_t before = rows->size();
  std::vector<std::string> by;
  if (const std::optional<std::string> filter = flags.Value("--filter")) {
    if (absl::Status status = FilterRows(*filter, rows); !status.ok()) {
      return status;
    }
    by.push_back(absl::StrCat("--filter ", *filter));
  }
  if (const std::optional<std::string> sort = flags.Value("--sort")) {
    if (absl::Status status = SortRows(*sort, rows); !status.ok()) {
      return status;
    }
  }
  if (const std::optional<std::string> top = flags.Value("--top")) {
    absl::StatusOr<int64_t> n = ParseNonNegativeInt("--top", *top);
    if (!n.ok()) return n.status();
    if (*n == 0) {
      return absl::InvalidArgumentError("--top: expected at least 1 row");
    }
    if (rows->size() > static_cast<uint64_t>(*n)) {
      rows->resize(static_cast<size_t>(*n));
      by.push_back(absl::StrCat("--top ", *top));
    }
  }
  left_out.count = before - rows->size();
  for (const std::string& b : by) {
    absl::StrAppend(&left_out.by, left_out.by.empty() ? "" : ", ", b);
  }
  return left_out;
}

}  // namespace spanprof::cli::internal
