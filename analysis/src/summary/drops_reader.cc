// The summary's `drops`: the strict reader and the check against
// `dropped_args` (drops.h; the writer is drops.cc).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/numeric/int128.h"
#include "json/cat.h"
#include "status_macros.h"
#include "summary/drops.h"
#include "summary/summary_format.h"
#include "summary/versioned_object.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

constexpr auto kDropSpecs = RequiredFields(kSummaryDropKeys);
bool IsReason(std::string_view reason) {
  return std::any_of(
      kDropReasons.begin(), kDropReasons.end(),
      [reason](const DropReasonText& r) { return r.reason == reason; });
}

bool IsNull(value& v) {
  simdjson::ondemand::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS ||
      type != simdjson::ondemand::json_type::null) {
    return false;
  }
  bool is_null = false;
  return v.is_null().get(is_null) == simdjson::SUCCESS && is_null;
}

// A row key object, as the summary's rows write it (drops came with
// version 5: its key fields).
absl::Status ReadSiteKey(const StrictJson& json, value& v, const JsonPath& p,
                         RowKey& key) {
  SPANPROF_ASSIGN_OR_RETURN(object o, json.Object(v, p));
  std::string* const targets[] = {&key.name,     &key.phase,   &key.module,
                                  &key.activity, &key.backend, &key.dtype,
                                  &key.device};
  static_assert(std::size(targets) == kRowKeyFields.size());
  return ReadVersionedObject<kRowKeyFields>(
      json, o, p, kSummarySchemaVersion,
      [&](size_t field, value& fv, const JsonPath& fp) -> absl::Status {
        SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(fv, fp));
        *targets[field] = std::string(text);
        return absl::OkStatus();
      });
}

// Which of an element's `name` and `kind` were null (CheckDrop() checks them
// once the whole element is read: they may come before `reason`).
enum NullField : int { kNameNull = 1, kKindNull = 2 };

// One field of a `drops` element.
absl::Status ReadDropField(const StrictJson& json, size_t field, value& v,
                           const JsonPath& p, Drop& drop, int* nulls) {
  switch (field) {
    case 0:
      if (IsNull(v)) return absl::OkStatus();
      drop.site.emplace();
      return ReadSiteKey(json, v, p, *drop.site);
    case 1:
    case 2: {
      if (IsNull(v)) {
        *nulls |= field == 1 ? kNameNull : kKindNull;
        return absl::OkStatus();
      }
      SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(v, p));
      if (field == 2 && text != kDropKindArg && text != kDropKindCount) {
        return json.Error(
            p, Cat("expected \"arg\", \"count\" or null, got ", Quote(text)));
      }
      (field == 1 ? drop.name : drop.kind) = std::string(text);
      return absl::OkStatus();
    }
    case 3: {
      SPANPROF_ASSIGN_OR_RETURN(std::string_view text, json.String(v, p));
      if (!IsReason(text)) {
        return json.Error(
            p, Cat("expected \"cap\", \"side_budget\", \"no_open_span\", "
                   "\"span_left_open\", \"counter_limit\", \"arg_limit\" or "
                   "\"unknown\", got ",
                   Quote(text)));
      }
      drop.reason = std::string(text);
      return absl::OkStatus();
    }
    default: {
      SPANPROF_ASSIGN_OR_RETURN(drop.count, json.Unsigned(v, p));
      if (drop.count == 0) {
        return json.Error(p,
                          "expected a positive count (an entry with "
                          "nothing dropped is not written)");
      }
      return absl::OkStatus();
    }
  }
}

// An element's own rules: `name` and `kind` are null exactly when the
// reason is "unknown", and then `site` is null too.
absl::Status CheckDrop(const StrictJson& json, const JsonPath& p,
                       const Drop& drop, int nulls) {
  if (drop.reason == kDropReasonUnknown) {
    if (nulls != (kNameNull | kKindNull) || drop.site.has_value()) {
      return json.Error(p,
                        "a drop of reason \"unknown\" has a null site, "
                        "name and kind");
    }
    return absl::OkStatus();
  }
  if (nulls != 0) {
    return json.Error(p.Field((nulls & kNameNull) != 0 ? "name" : "kind"),
                      Cat("null, but the reason is ", Quote(drop.reason),
                          " (only an \"unknown\" drop has no name or kind)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadDrops(const StrictJson& json, value& v, const JsonPath& path,
                       std::vector<Drop>& drops) {
  SPANPROF_ASSIGN_OR_RETURN(array a, json.Array(v, path));
  return json.ForEachElement(
      a, path, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
        SPANPROF_ASSIGN_OR_RETURN(object o, json.Object(ev, ep));
        Drop& drop = drops.emplace_back();
        int nulls = 0;
        SPANPROF_RETURN_IF_ERROR(json.ReadObject(
            o, ep, kDropSpecs,
            [&](size_t field, value& fv, const JsonPath& fp) {
              return ReadDropField(json, field, fv, fp, drop, &nulls);
            }));
        return CheckDrop(json, ep, drop, nulls);
      });
}

absl::Status CheckDrops(const StrictJson& json, const Summary& summary) {
  // A path holds its parent by reference: the root outlives it.
  const JsonPath root = JsonPath::Root();
  const JsonPath drops_path = root.Field("drops");
  std::set<
      std::tuple<std::optional<RowKey>, std::string, std::string, std::string>>
      seen;
  absl::uint128 total = 0;
  for (size_t i = 0; i < summary.drops.size(); ++i) {
    const Drop& drop = summary.drops[i];
    if (!seen.emplace(drop.site, drop.name, drop.kind, drop.reason).second) {
      return json.Error(drops_path.Index(i),
                        "the same site, name, kind and reason as an earlier "
                        "entry (each is listed once)");
    }
    total += drop.count;
  }
  if (total != summary.dropped_args) {
    return json.Error(drops_path,
                      Cat("the counts add up to ", static_cast<uint64_t>(total),
                          ", but dropped_args is ", summary.dropped_args,
                          " (every dropped argument or count is listed once)"));
  }
  return absl::OkStatus();
}

}  // namespace spanprof::analysis::internal
