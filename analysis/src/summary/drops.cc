// The summary's `drops`: built from a capture and written (drops.h). The
// strict reader and the cross-field check are drops_reader.cc: the writer's
// side links no JSON parser into a program that only records.
#include "summary/drops.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "summary/row_key_json.h"

namespace spanprof::analysis::internal {

std::string_view DropReasonWords(std::string_view reason) {
  for (const DropReasonText& r : kDropReasons) {
    if (r.reason == reason) return r.words;
  }
  return reason;
}

std::vector<Drop> SummarizeDrops(const Capture& capture) {
  std::vector<Drop> drops;
  absl::uint128 named = 0;
  for (const ArgDrop& d : capture.arg_drops) named += d.count;
  if (named <= capture.dropped_args) {
    for (const ArgDrop& d : capture.arg_drops) {
      if (d.count == 0) continue;
      Drop& drop = drops.emplace_back();
      if (d.site.has_value() && *d.site < capture.sites.size()) {
        drop.site = RowKeyOf(capture.sites[*d.site]);
      }
      drop.reason = d.reason;
      if (drop.reason != kDropReasonUnknown) {
        drop.name = d.name;
        drop.kind = std::string(d.is_counter ? kDropKindCount : kDropKindArg);
      } else {
        drop.site.reset();
      }
      drop.count = d.count;
    }
  }
  const uint64_t rest =
      named <= capture.dropped_args
          ? capture.dropped_args - static_cast<uint64_t>(named)
          : capture.dropped_args;
  if (rest > 0) {
    drops.push_back(
        Drop{.reason = std::string(kDropReasonUnknown), .count = rest});
  }
  // Entries that the summary's key merges (two sites with one key, two
  // "unknown" entries) become one; then the largest first.
  std::sort(drops.begin(), drops.end(), [](const Drop& a, const Drop& b) {
    return std::tie(a.site, a.name, a.kind, a.reason) <
           std::tie(b.site, b.name, b.kind, b.reason);
  });
  std::vector<Drop> merged;
  for (Drop& drop : drops) {
    if (!merged.empty() && merged.back().site == drop.site &&
        merged.back().name == drop.name && merged.back().kind == drop.kind &&
        merged.back().reason == drop.reason) {
      merged.back().count += drop.count;
    } else {
      merged.push_back(std::move(drop));
    }
  }
  std::stable_sort(
      merged.begin(), merged.end(),
      [](const Drop& a, const Drop& b) { return a.count > b.count; });
  return merged;
}

std::vector<Drop> UnknownDrops(uint64_t dropped_args) {
  if (dropped_args == 0) return {};
  return {
      Drop{.reason = std::string(kDropReasonUnknown), .count = dropped_args}};
}

void WriteDrops(JsonWriter& w, const std::vector<Drop>& drops) {
  w.BeginArray();
  for (const Drop& drop : drops) {
    const bool unknown = drop.reason == kDropReasonUnknown;
    w.BeginObject();
    w.Key(kSummaryDropKeys[0]);
    if (drop.site.has_value()) {
      WriteRowKey(w, *drop.site);
    } else {
      w.Null();
    }
    w.Key(kSummaryDropKeys[1]);
    if (unknown) {
      w.Null();
    } else {
      w.String(drop.name);
    }
    w.Key(kSummaryDropKeys[2]);
    if (unknown) {
      w.Null();
    } else {
      w.String(drop.kind);
    }
    w.Key(kSummaryDropKeys[3]);
    w.String(drop.reason);
    w.Key(kSummaryDropKeys[4]);
    w.Uint(drop.count);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace spanprof::analysis::internal
