// The strict trace reader: the whole document in one pass with simdjson On
// Demand, then the checks against metadata (which comes last in the file),
// then the spans in the capture's order.
#include "trace/strict_trace_reader.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "spanprof/capture.h"
#include "status_macros.h"
#include "trace/span_resolver.h"
#include "trace/strict_event_reader.h"
#include "trace/trace_format.h"
#include "trace/trace_metadata_reader.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

constexpr auto kRootFields = RequiredFields(kRootKeys);

// `StrictTraceReader` reads one trace; it is used once.
class StrictTraceReader {
 public:
  explicit StrictTraceReader(std::string_view source) : json_(source) {}

  absl::StatusOr<ParsedTrace> Read(std::string_view text) {
    absl::Status status;
    {
      ParsedDocument document(text);
      status = ReadDocument(document);
    }
    if (!status.ok()) return Diagnose(text, std::move(status));
    return Assemble();
  }

  // After a failure, a second look at the top level names a summary, or
  // another tool's trace, as such (rather than by its first odd field).
  absl::Status Diagnose(std::string_view text, absl::Status error) const {
    ParsedDocument document(text);
    absl::StatusOr<object> root = document.Start(json_);
    if (!root.ok()) return error;
    const JsonPath path = JsonPath::Root();
    bool has_events = false;
    bool has_schema = false;
    bool has_metadata = false;
    std::optional<std::string_view> schema;
    bool walked = true;
    for (auto field_result : *root) {
      simdjson::ondemand::field field;
      std::string_view key;
      if (std::move(field_result).get(field) != simdjson::SUCCESS ||
          field.unescaped_key().get(key) != simdjson::SUCCESS) {
        walked = false;
        break;
      }
      has_events |= key == "traceEvents";
      has_schema |= key == "schema";
      if (key != "metadata") continue;
      has_metadata = true;
      object metadata;
      std::string_view found;
      if (field.value().get_object().get(metadata) == simdjson::SUCCESS &&
          metadata.find_field_unordered("schema").get_string().get(found) ==
              simdjson::SUCCESS) {
        schema = found;
      }
      walked = false;  // stop here: metadata comes last in our traces
      break;
    }
    if (walked && !has_events && has_schema) {
      return json_.Error(path,
                         "this is a spanprof summary, not a trace (it has "
                         "\"schema\" and no \"traceEvents\")");
    }
    if (walked && !has_events) {
      return json_.Error(path, "missing field \"traceEvents\" (not a trace)");
    }
    if (walked && !has_metadata) {
      return json_.Error(path,
                         "missing field \"metadata\" (not a spanprof trace; "
                         "a foreign Chrome trace, which the commands that "
                         "read traces read, but validate does not check)");
    }
    if (has_metadata && !schema.has_value()) {
      return json_.Error(path.Field("metadata"),
                         "no \"schema\" string (not a spanprof trace; "
                         "spanprof reads the traces it writes)");
    }
    if (schema.has_value() && *schema != kTraceSchema) {
      const JsonPath metadata = path.Field("metadata");
      return json_.Error(
          metadata.Field("schema"),
          Cat("expected \"", kTraceSchema, "\", got ", Quote(*schema)));
    }
    return error;
  }

 private:
  // One pass over the document; then the checks that need metadata, while
  // the document (and so every string view) is still alive.
  absl::Status ReadDocument(ParsedDocument& document) {
    SPANPROF_ASSIGN_OR_RETURN(object root, document.Start(json_));
    const JsonPath path = JsonPath::Root();
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read =
            json_.ReadObject(root, path, kRootFields,
                             [&](size_t field, value& v, const JsonPath& p) {
                               return ReadRootField(field, v, p);
                             });
        !read.ok())
      return read;
    SPANPROF_RETURN_IF_ERROR(document.Finish(json_));
    return Resolve();
  }

  absl::Status ReadRootField(size_t field, value& v, const JsonPath& p) {
    if (field == 0) return ReadEvents(v, p);
    if (field == 2) return ReadTraceMetadata(json_.source(), v, p, metadata_);
    return CheckDisplayTimeUnit(json_, v, p);
  }

  absl::Status ReadEvents(value& v, const JsonPath& p) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t index, value& ev, const JsonPath& ep) -> absl::Status {
          TraceEvent& event = events_.emplace_back();
          PendingSpan pending;
          bool is_span = false;
          SPANPROF_RETURN_IF_ERROR(ReadTraceEvent(json_.source(), index, ev, ep,
                                                  event, pending, is_span));
          if (is_span) {
            pending.event = events_.size() - 1;
            spans_.push_back(std::move(pending));
          }
          return absl::OkStatus();
        });
  }

  // The checks against metadata: every index in range, every repeated name,
  // category, tag, pid and tid equal to what metadata says.
  absl::Status Resolve() {
    const JsonPath root = JsonPath::Root();
    const JsonPath events = root.Field("traceEvents");
    const SpanResolver resolver(json_.source(), metadata_);
    for (const TraceEvent& event : events_) {
      if (event.is_span) continue;
      SPANPROF_RETURN_IF_ERROR(resolver.ResolveMetaEvent(events, event));
    }
    for (PendingSpan& pending : spans_) {
      SPANPROF_RETURN_IF_ERROR(
          resolver.ResolveSpan(events, pending, events_[pending.event]));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ParsedTrace> Assemble() {
    std::vector<size_t> order(spans_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    // The collector's order: (thread, start_ns, depth), ties by id.
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const Span& x = spans_[a].span;
      const Span& y = spans_[b].span;
      return std::tie(x.thread, x.start_ns, x.depth, x.id, a) <
             std::tie(y.thread, y.start_ns, y.depth, y.id, b);
    });
    ParsedTrace out;
    out.capture = std::move(metadata_.capture);
    Capture& c = out.capture;
    c.spans.reserve(spans_.size());
    if (c.alloc_measured) c.span_allocs.reserve(spans_.size());
    for (size_t i : order) {
      PendingSpan& pending = spans_[i];
      Span& span = c.spans.emplace_back(pending.span);
      if (c.alloc_measured) c.span_allocs.push_back(pending.allocs);
      if (!pending.args.empty()) {
        if (c.args.size() + pending.args.size() > UINT32_MAX) {
          return json_.Error(JsonPath::Root(), "too many span arguments");
        }
        if (pending.args.size() > kMaxSpanArgs) {
          return json_.Error(
              JsonPath::Root().Field("traceEvents").Index(pending.event),
              Cat("more than ", kMaxSpanArgs, " arguments on one span"));
        }
        span.first_arg = static_cast<uint32_t>(c.args.size());
        span.arg_count = static_cast<uint16_t>(pending.args.size());
        for (SpanArg& arg : pending.args) c.args.push_back(std::move(arg));
      }
    }
    out.events = std::move(events_);
    return out;
  }

  StrictJson json_;
  TraceMetadata metadata_;
  std::vector<PendingSpan> spans_;  // in file order
  std::vector<TraceEvent> events_;  // in file order
};

}  // namespace

absl::StatusOr<ParsedTrace> ReadStrictTrace(std::string_view text,
                                            std::string_view source) {
  return StrictTraceReader(source).Read(text);
}

absl::Status DiagnoseTraceError(std::string_view text, std::string_view source,
                                absl::Status error) {
  return StrictTraceReader(source).Diagnose(text, std::move(error));
}

}  // namespace spanprof::analysis::internal
