// `spanprof validate`: kind detection, the strict readers, and the rules of
// Perfetto's JSON importer checked over the events as they appear in the file.
#include "spanprof/analysis/validate.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "input/input_kind.h"
#include "json/strict_json.h"
#include "perfetto/perfetto_reader.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis {
namespace {

using internal::Cat;
using internal::TraceEvent;

std::string StatusText(const absl::Status& status) {
  const absl::string_view message = status.message();
  return std::string(message.data(), message.size());
}

class Problems {
 public:
  explicit Problems(std::vector<std::string>* out) : out_(out) {}

  void Add(std::string problem) {
    ++count_;
    if (out_->size() < kMaxValidationProblems) {
      out_->push_back(std::move(problem));
    }
  }

  void Finish(std::string_view source) {
    if (count_ > out_->size()) {
      out_->push_back(
          Cat(source, ": ... and ", count_ - out_->size(), " more problems"));
    }
  }

 private:
  std::vector<std::string>* out_;
  size_t count_ = 0;
};

std::string EventPath(std::string_view source, const TraceEvent& event,
                      std::string_view field) {
  return Cat(source, ": $.traceEvents[", event.index, "]",
             field.empty() ? "" : ".", field, ": ");
}

bool Fits32(int64_t v) { return v >= 0 && v <= int64_t{UINT32_MAX}; }

// pid and tid fit in 32 bits; spans have ts >= 0 and dur >= 0.
void CheckEventFields(const std::vector<TraceEvent>& events,
                      std::string_view source, Problems& problems) {
  for (const TraceEvent& event : events) {
    if (!Fits32(event.pid)) {
      problems.Add(Cat(EventPath(source, event, "pid"), event.pid,
                       " does not fit in 32 bits"));
    }
    if (!Fits32(event.tid)) {
      problems.Add(Cat(EventPath(source, event, "tid"), event.tid,
                       " does not fit in 32 bits"));
    }
    if (!event.is_span) continue;
    if (event.ts_ns < 0) {
      problems.Add(Cat(EventPath(source, event, "ts"), "negative timestamp ",
                       FormatMicros(event.ts_ns), " us"));
    }
    if (event.dur_ns < 0) {
      problems.Add(Cat(EventPath(source, event, "dur"), "negative duration ",
                       FormatMicros(event.dur_ns), " us"));
    }
  }
}

// Strict nesting of one thread's spans: in (ts, longer first) order, an
// event must end no later than every enclosing event still open.
void CheckThreadNesting(std::vector<const TraceEvent*>& list, int64_t tid,
                        std::string_view source, Problems& problems) {
  std::stable_sort(list.begin(), list.end(),
                   [](const TraceEvent* a, const TraceEvent* b) {
                     return std::make_tuple(a->ts_ns, -a->dur_ns) <
                            std::make_tuple(b->ts_ns, -b->dur_ns);
                   });
  std::vector<const TraceEvent*> open;
  for (const TraceEvent* event : list) {
    const int64_t start = event->ts_ns;
    const int64_t end = event->ts_ns + event->dur_ns;
    while (!open.empty() && open.back()->ts_ns + open.back()->dur_ns <= start) {
      open.pop_back();
    }
    if (!open.empty()) {
      const TraceEvent* outer = open.back();
      const int64_t outer_end = outer->ts_ns + outer->dur_ns;
      if (end > outer_end) {
        problems.Add(Cat(EventPath(source, *event, ""), "span ", event->span_id,
                         " [", FormatMicros(start), ", ", FormatMicros(end),
                         ") us partially overlaps span ", outer->span_id, " [",
                         FormatMicros(outer->ts_ns), ", ",
                         FormatMicros(outer_end), ") us on tid ", tid,
                         " (same-thread spans must nest)"));
        continue;
      }
    }
    open.push_back(event);
  }
}

// Strict nesting per (pid, tid).
void CheckNesting(const std::vector<TraceEvent>& events,
                  std::string_view source, Problems& problems) {
  std::map<std::pair<int64_t, int64_t>, std::vector<const TraceEvent*>>
      by_thread;
  for (const TraceEvent& event : events) {
    if (event.is_span && event.dur_ns >= 0) {
      by_thread[{event.pid, event.tid}].push_back(&event);
    }
  }
  for (auto& [thread, list] : by_thread) {
    CheckThreadNesting(list, thread.second, source, problems);
  }
}

// The two ends of one flow id.
struct Flow {
  const TraceEvent* out = nullptr;
  std::vector<const TraceEvent*> ins;
};

// Groups the flow ends by id, reporting events whose flow fields cannot be
// an end (no bind_id, both or neither direction, a second flow_out).
std::map<uint64_t, Flow> CollectFlows(const std::vector<TraceEvent>& events,
                                      std::string_view source,
                                      Problems& problems) {
  std::map<uint64_t, Flow> flows;
  for (const TraceEvent& event : events) {
    if (!event.is_span) continue;
    if (!event.has_bind_id) {
      if (event.flow_in || event.flow_out) {
        problems.Add(Cat(EventPath(source, event, ""),
                         "flow_in/flow_out without a bind_id"));
      }
      continue;
    }
    if (event.flow_in == event.flow_out) {
      problems.Add(Cat(EventPath(source, event, "bind_id"),
                       "needs exactly one of flow_in and flow_out"));
      continue;
    }
    Flow& flow = flows[event.bind_id];
    if (event.flow_out) {
      if (flow.out != nullptr) {
        problems.Add(Cat(EventPath(source, event, "bind_id"), "flow id ",
                         event.bind_id,
                         " is not unique (also starts at "
                         "$.traceEvents[",
                         flow.out->index, "])"));
        continue;
      }
      flow.out = &event;
    } else {
      flow.ins.push_back(&event);
    }
  }
  return flows;
}

// Flows: each id starts at exactly one flow_out and is bound by at least
// one flow_in that Perfetto imports after it (ts, then longer first).
void CheckFlows(const std::vector<TraceEvent>& events, std::string_view source,
                Problems& problems) {
  const std::map<uint64_t, Flow> flows = CollectFlows(events, source, problems);
  for (const auto& [id, flow] : flows) {
    if (flow.out == nullptr) {
      for (const TraceEvent* in : flow.ins) {
        problems.Add(Cat(EventPath(source, *in, "bind_id"), "flow ", id,
                         " has no flow_out end"));
      }
      continue;
    }
    if (flow.ins.empty()) {
      problems.Add(Cat(EventPath(source, *flow.out, "bind_id"), "flow ", id,
                       " has no flow_in end"));
      continue;
    }
    for (const TraceEvent* in : flow.ins) {
      const bool after =
          std::make_tuple(flow.out->ts_ns, -flow.out->dur_ns, flow.out->index) <
          std::make_tuple(in->ts_ns, -in->dur_ns, in->index);
      if (!after) {
        problems.Add(Cat(EventPath(source, *in, "bind_id"), "flow ", id,
                         " ends before it starts (its flow_out event at "
                         "$.traceEvents[",
                         flow.out->index, "] sorts after it)"));
      }
    }
  }
}

// The rules of Perfetto's JSON importer, in this order: fields, nesting,
// flows.
void CheckTraceEvents(const std::vector<TraceEvent>& events,
                      std::string_view source, Problems& problems) {
  CheckEventFields(events, source, problems);
  CheckNesting(events, source, problems);
  CheckFlows(events, source, problems);
}

// A protobuf trace: the reader's own checks (its flows end where they
// start, its slices balance), then the capture's invariants.
void ValidatePerfettoTrace(std::string_view bytes, std::string_view source,
                           ValidationReport& report) {
  absl::StatusOr<Capture> capture =
      internal::perfetto::ParsePerfettoTrace(bytes, source);
  if (!capture.ok()) {
    report.problems.push_back(StatusText(capture.status()));
    return;
  }
  report.items = capture->spans.size();
  Problems problems(&report.problems);
  for (const ValidationIssue& issue : ValidateForest(*capture)) {
    problems.Add(Cat(source, ": span ", issue.span, ": ", issue.message));
  }
  problems.Finish(source);
}

}  // namespace

ValidationReport ValidateArtifact(std::string_view json,
                                  std::string_view source) {
  ValidationReport report;
  absl::StatusOr<internal::InputKind> kind =
      internal::DetectInputKind(json, source);
  if (!kind.ok() || *kind == internal::InputKind::kStreamFile) {
    // DetectArtifactKind() says why (for a stream file: what reads it).
    report.problems.push_back(
        StatusText(DetectArtifactKind(json, source).status()));
    return report;
  }
  report.kind = *kind == internal::InputKind::kSummary ? ArtifactKind::kSummary
                                                       : ArtifactKind::kTrace;
  if (*kind == internal::InputKind::kSummary) {
    absl::StatusOr<Summary> summary = ParseSummary(json, source);
    if (!summary.ok()) {
      report.problems.push_back(StatusText(summary.status()));
    } else {
      report.items = summary->rows.size();
    }
    return report;
  }
  if (*kind == internal::InputKind::kPerfettoTrace) {
    ValidatePerfettoTrace(json, source, report);
    return report;
  }
  absl::StatusOr<internal::ParsedTrace> trace =
      internal::ParseTraceDocument(json, source);
  if (!trace.ok()) {
    report.problems.push_back(StatusText(trace.status()));
    return report;
  }
  report.items = trace->capture.spans.size();
  Problems problems(&report.problems);
  CheckTraceEvents(trace->events, source, problems);
  for (const ValidationIssue& issue : ValidateForest(trace->capture)) {
    problems.Add(Cat(source, ": span ", issue.span, ": ", issue.message));
  }
  problems.Finish(source);
  return report;
}

}  // namespace spanprof::analysis
