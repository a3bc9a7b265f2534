// The span resolver: an event checked against the trace's metadata.
#include "trace/span_resolver.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "json/strict_json.h"
#include "spanprof/capture.h"
#include "trace/trace_format.h"

namespace spanprof::analysis::internal {

absl::Status SpanResolver::ResolveMetaEvent(const JsonPath& events,
                                            const TraceEvent& event) const {
  const Capture& capture = metadata_.capture;
  const JsonPath p = events.Index(event.index);
  if (!std::binary_search(metadata_.sorted_pids.begin(),
                          metadata_.sorted_pids.end(), event.pid)) {
    return json_.Error(
        p.Field("pid"),
        capture.processes.empty()
            ? Cat(event.pid, " != metadata.pid (", capture.pid, ")")
            : Cat(event.pid,
                  " is not the pid of any process in "
                  "metadata.processes"));
  }
  if (event.is_process_name) {
    if (event.tid != event.pid) {
      return json_.Error(p.Field("tid"), Cat("expected the pid (", event.pid,
                                             "), got ", event.tid));
    }
  } else if (event.tid < 0 ||
             !std::binary_search(
                 metadata_.sorted_tids.begin(), metadata_.sorted_tids.end(),
                 std::pair<int64_t, uint64_t>(
                     event.pid, static_cast<uint64_t>(event.tid)))) {
    return json_.Error(
        p.Field("tid"),
        Cat(event.tid, " is not the tid of any thread in metadata.threads",
            capture.processes.empty() ? std::string()
                                      : Cat(" of pid ", event.pid)));
  }
  return absl::OkStatus();
}

absl::Status SpanResolver::ResolveSpan(const JsonPath& events,
                                       PendingSpan& pending,
                                       const TraceEvent& event) const {
  const Capture& capture = metadata_.capture;
  const JsonPath p = events.Index(event.index);
  const JsonPath args_path = p.Field("args");
  Span& span = pending.span;
  if (static_cast<uint64_t>(pending.site) >= capture.sites.size()) {
    return json_.Error(args_path.Field("site"),
                       Cat("site index ", pending.site, " out of range (",
                           capture.sites.size(), " sites)"));
  }
  if (static_cast<uint64_t>(pending.thread) >= capture.threads.size()) {
    return json_.Error(args_path.Field("thread"),
                       Cat("thread index ", pending.thread, " out of range (",
                           capture.threads.size(), " threads)"));
  }
  span.site = static_cast<uint32_t>(pending.site);
  span.thread = static_cast<uint32_t>(pending.thread);
  if (const int64_t pid = ThreadPid(capture, span.thread); event.pid != pid) {
    return json_.Error(p.Field("pid"),
                       capture.processes.empty()
                           ? Cat(event.pid, " != metadata.pid (", pid, ")")
                           : Cat(event.pid, " != the pid of metadata.threads[",
                                 span.thread, "]'s process (", pid, ")"));
  }
  const Site& site = capture.sites[span.site];
  if (pending.name != site.name) {
    return json_.Error(p.Field("name"),
                       Cat(Quote(pending.name), " != metadata.sites[",
                           span.site, "].name ", Quote(site.name)));
  }
  const std::string_view expected_cat =
      site.phase.empty() ? kDefaultCategory : std::string_view(site.phase);
  if (pending.cat != expected_cat) {
    return json_.Error(p.Field("cat"),
                       Cat("expected ", Quote(expected_cat),
                           " (the site's phase), got ", Quote(pending.cat)));
  }
  const std::pair<std::string_view, const std::optional<std::string_view>*>
      tags[] = {{kSpanArgKeys[kArgPhase], &pending.phase},
                {kSpanArgKeys[kArgModule], &pending.module},
                {kSpanArgKeys[kArgActivity], &pending.activity},
                {kSpanArgKeys[kArgBackend], &pending.backend},
                {kSpanArgKeys[kArgDtype], &pending.dtype},
                {kSpanArgKeys[kArgDevice], &pending.device}};
  const std::string* site_tags[] = {&site.phase,   &site.module, &site.activity,
                                    &site.backend, &site.dtype,  &site.device};
  static_assert(std::size(site_tags) == std::size(tags));
  for (size_t t = 0; t < std::size(tags); ++t) {
    const std::optional<std::string_view>& got = *tags[t].second;
    const std::string& want = *site_tags[t];
    const bool match =
        want.empty() ? !got.has_value() : (got.has_value() && *got == want);
    if (!match) {
      return json_.Error(
          args_path.Field(tags[t].first),
          Cat("does not match metadata.sites[", span.site, "].", tags[t].first,
              " ", Quote(want),
              want.empty() ? " (an unset tag is left out)" : ""));
    }
  }
  if (pending.has_alloc_count != capture.alloc_measured ||
      pending.has_alloc_bytes != capture.alloc_measured) {
    return json_.Error(
        args_path, capture.alloc_measured
                       ? "alloc_count and alloc_bytes are required when "
                         "metadata.alloc_measured is true"
                       : "alloc_count and alloc_bytes must be left out when "
                         "metadata.alloc_measured is false");
  }
  const uint64_t thread_tid = capture.threads[span.thread].os_tid;
  if (event.tid < 0 || static_cast<uint64_t>(event.tid) != thread_tid) {
    return json_.Error(p.Field("tid"),
                       Cat(event.tid, " != metadata.threads[", span.thread,
                           "].tid (", thread_tid, ")"));
  }
  return absl::OkStatus();
}

}  // namespace spanprof::analysis::internal
