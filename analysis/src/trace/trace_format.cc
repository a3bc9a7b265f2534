// The X event fragments that the trace writer and the fast reader share, and
// `FormatMicros()`.
#include "trace/trace_format.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "json/json_writer.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

SiteFragments RenderSiteFragments(const Site& site) {
  SiteFragments out;
  out.head.append(kLineHead);
  AppendJsonString(&out.head, site.name);
  out.head.append(kLineCat);
  AppendJsonString(&out.head, site.phase.empty()
                                  ? kDefaultCategory
                                  : std::string_view(site.phase));
  const std::pair<std::string_view, const std::string*> tags[] = {
      {kSpanArgKeys[kArgPhase], &site.phase},
      {kSpanArgKeys[kArgModule], &site.module},
      {kSpanArgKeys[kArgActivity], &site.activity},
      {kSpanArgKeys[kArgBackend], &site.backend},
      {kSpanArgKeys[kArgDtype], &site.dtype},
      {kSpanArgKeys[kArgDevice], &site.device}};
  for (const auto& [key, value] : tags) {
    if (value->empty()) continue;
    out.tags += ",\"";
    out.tags.append(key);
    out.tags += "\":";
    AppendJsonString(&out.tags, *value);
  }
  return out;
}

std::string RenderThreadFragment(int64_t pid, uint64_t tid) {
  std::string out(kLinePid);
  AppendInt(&out, pid);
  out.append(kLineTid);
  AppendUint(&out, tid);
  return out;
}

}  // namespace spanprof::analysis::internal

namespace spanprof::analysis {

std::string FormatMicros(int64_t ns) {
  std::string out;
  internal::AppendMicros(&out, ns);
  return out;
}

}  // namespace spanprof::analysis
