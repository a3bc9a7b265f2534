// drops.h — the summary's `drops` (version 5): arguments and counts the
// capture lost, by span site, name, kind and reason (private to the analysis
// library). Its one description (the fields and the reasons), its one
// writer, its strict reader, and the check that the entries add up to
// `dropped_args`; the summary's writer and reader call these.
#ifndef SPANPROF_ANALYSIS_SRC_SUMMARY_DROPS_H_
#define SPANPROF_ANALYSIS_SRC_SUMMARY_DROPS_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "json/json_writer.h"
#include "json/strict_json.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

// A `drops` element's fields, in order.
inline constexpr std::array<std::string_view, 5> kSummaryDropKeys = {
    "site", "name", "kind", "reason", "count"};
// The values of `kind`.
inline constexpr std::string_view kDropKindArg = "arg";
inline constexpr std::string_view kDropKindCount = "count";
// The values of `reason` (Capture::ArgDrop), and what each means in words
// (the console table's).
struct DropReasonText {
  std::string_view reason;
  std::string_view words;
};
inline constexpr std::array<DropReasonText, 7> kDropReasons = {{
    {"cap", "its span was dropped by the cap"},
    {"side_budget", "side record budget full"},
    {"no_open_span", "no open span"},
    {"span_left_open", "its span never ended"},
    {"counter_limit", "more than 64 counter names"},
    {"arg_limit", "more than 65,535 arguments on one span"},
    {"unknown", "only the total is known"},
}};
inline constexpr std::string_view kDropReasonUnknown = "unknown";

// `DropReasonWords()` is `reason` in words ("no open span"), or `reason`
// itself when it is not one of kDropReasons.
std::string_view DropReasonWords(std::string_view reason);

// `SummarizeDrops()` is the summary's `drops` of `capture`: its `arg_drops`
// with their sites' keys, the largest first, and one "unknown" entry for
// what `dropped_args` counts beyond them (a trace written before drops were
// named). When they add up to more than `dropped_args`, they cannot be
// trusted: one "unknown" entry of `dropped_args` replaces them.
std::vector<Drop> SummarizeDrops(const Capture& capture);

// `UnknownDrops()` is the `drops` of a summary that does not name them (a
// version before 5): one "unknown" entry of `dropped_args`, if any.
std::vector<Drop> UnknownDrops(uint64_t dropped_args);

// `WriteDrops()` writes the `drops` array (the key is the caller's).
void WriteDrops(JsonWriter& w, const std::vector<Drop>& drops);

// `ReadDrops()` reads the `drops` array at `path` strictly: each element has
// exactly kSummaryDropKeys; `site` a row key object or null; `name` a string
// and `kind` "arg" or "count", both null exactly when `reason` is "unknown";
// `reason` one of kDropReasons; `count` a positive integer.
absl::Status ReadDrops(const StrictJson& json, simdjson::ondemand::value& value,
                       const JsonPath& path, std::vector<Drop>& drops);

// `CheckDrops()` checks the cross-field rules of a version 5 summary: no two
// entries with the same site, name, kind and reason, and Σ count =
// `dropped_args`.
absl::Status CheckDrops(const StrictJson& json, const Summary& summary);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_SUMMARY_DROPS_H_
