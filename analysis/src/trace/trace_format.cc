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
  for (size_t i = 0; i < kTagFields.size(); ++i) {
    const std::string& value = site.*kTagFields[i].site;
    if (value.empty()) continue;
    out.tags += ",\"";
    out.tags.append(kSpanArgKeys[kArgPhase + i]);
    out.tags += "\":";
    AppendJsonString(&out.tags, value);
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
