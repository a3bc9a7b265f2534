// The reader of spanprof's own JSON traces: the fast line reader when the
// trace is in the writer's layout, else the strict reader. Each step is a
// file of its own (trace_reader.h lists them); between the steps is one
// value, `TraceMetadata`, which the metadata reader produces and the others
// check events against. The layout both the fast path and the writer
// follow is described once, in trace_format.h.
#include "trace/trace_reader.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/status/statusor.h"
#include "json/cat.h"
#include "json/strict_json.h"
#include "model/group_by_arg.h"
#include "model/span_args.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "trace/fast_line_reader.h"
#include "trace/strict_trace_reader.h"

namespace spanprof::analysis::internal {

absl::StatusOr<ParsedTrace> ReadSpanprofTrace(std::string_view json,
                                              std::string_view source,
                                              bool keep_events,
                                              bool* used_fast_path) {
  std::optional<ParsedTrace> fast = ReadTraceLines(json, source, keep_events);
  if (used_fast_path != nullptr) *used_fast_path = fast.has_value();
  if (fast.has_value()) return *std::move(fast);
  return ReadStrictTrace(json, source);
}

absl::StatusOr<ParsedTrace> ParseTraceDocument(std::string_view json,
                                               std::string_view source,
                                               bool* used_fast_path) {
  return ReadSpanprofTrace(json, source, /*keep_events=*/true, used_fast_path);
}

// spanprof's own traces with `--group-by-arg ARG`: a span with the string
// argument ARG (SPANPROF_ARG_STR) is keyed by GroupedSiteName (its tags
// kept), as a foreign trace's span is. A cut value and a whole one with the
// same bytes are two rows.
void GroupByStringArg(Capture& capture, std::string_view source,
                      const TraceReadOptions& options) {
  using internal::Cat;
  using internal::Quote;
  if (options.group_by_arg.empty()) return;
  std::map<std::tuple<uint32_t, std::string, bool>, uint32_t> grouped;
  bool any = false;
  for (Span& span : capture.spans) {
    for (const SpanArg& arg : ArgsOf(capture, span)) {
      if (!arg.is_string || arg.key != options.group_by_arg) continue;
      auto [it, inserted] =
          grouped.emplace(std::make_tuple(span.site, arg.text, arg.truncated),
                          static_cast<uint32_t>(capture.sites.size()));
      if (inserted) {
        Site site = capture.sites[span.site];
        site.name = GroupedSiteName(site.name, options.group_by_arg, arg.text,
                                    arg.truncated);
        capture.sites.push_back(std::move(site));
      }
      span.site = it->second;
      any = true;
      break;
    }
  }
  if (!any && options.notes != nullptr) {
    options.notes->push_back(Cat(source, ": no span has a string argument ",
                                 Quote(options.group_by_arg),
                                 " (rows are not split by it)"));
  }
}

}  // namespace spanprof::analysis::internal
