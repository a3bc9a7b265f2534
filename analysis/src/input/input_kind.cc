// The one sniffer: what kind of file an input is (input_kind.h has the
// rules). It reads as little as it can: the first bytes for a Perfetto
// trace, a stream file or a JSON array; the tail (metadata) for a spanprof
// trace in the writer's layout; the top-level keys for anything else.
#include "input/input_kind.h"

#include <simdjson.h>

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "perfetto/perfetto_format.h"
#include "status_macros.h"
#include "trace/trace_format.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::object;

// The first line of a spanprof stream file: `kStreamMagic` of
// runtime/src/stream/stream_format.h, which the analysis library does not
// include (it knows nothing of the runtime's sources); a test checks that
// the two agree.
constexpr std::string_view kStreamFileMagic = "spanprof.stream\n";

// True when a `metadata` object names spanprof (`spanprof_version` or
// `schema`); `*failed` when its members cannot be walked.
bool NamesSpanprof(object& metadata, bool* failed) {
  for (auto member_result : metadata) {
    simdjson::ondemand::field member;
    std::string_view name;
    if (std::move(member_result).get(member) != simdjson::SUCCESS ||
        member.unescaped_key().get(name) != simdjson::SUCCESS) {
      *failed = true;
      return false;
    }
    if (name == "spanprof_version" || name == "schema") return true;
  }
  return false;
}

// A top level with `traceEvents` is a foreign trace when no `metadata`
// object names spanprof. A top level that cannot be walked is not foreign:
// spanprof's reader then gives the error.
bool IsForeignTopLevel(object& root) {
  bool has_events = false;
  for (auto field_result : root) {
    simdjson::ondemand::field field;
    std::string_view key;
    if (std::move(field_result).get(field) != simdjson::SUCCESS ||
        field.unescaped_key().get(key) != simdjson::SUCCESS) {
      return false;
    }
    has_events |= key == "traceEvents";
    if (key != "metadata") continue;
    object metadata;
    if (field.value().get_object().get(metadata) != simdjson::SUCCESS) {
      continue;
    }
    bool failed = false;
    if (NamesSpanprof(metadata, &failed) || failed) return false;
  }
  return has_events;
}

// A trace in the writer's layout (`{\n"traceEvents":[\n` ... a line that
// starts with `],` and holds the rest) whose rest names spanprof in its
// metadata: told without parsing the events, however many there are.
bool TailNamesSpanprof(std::string_view bytes) {
  if (bytes.substr(0, kTraceHead.size()) != kTraceHead) return false;
  const size_t close = bytes.rfind("\n],");
  if (close == std::string_view::npos || close <= kTraceHead.size()) {
    return false;
  }
  std::string tail = "{";
  tail.append(bytes.substr(close + 3));
  const simdjson::padded_string padded(tail);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document document;
  object root;
  if (parser.iterate(padded).get(document) != simdjson::SUCCESS ||
      document.get_object().get(root) != simdjson::SUCCESS) {
    return false;
  }
  for (auto field_result : root) {
    simdjson::ondemand::field field;
    std::string_view key;
    if (std::move(field_result).get(field) != simdjson::SUCCESS ||
        field.unescaped_key().get(key) != simdjson::SUCCESS) {
      return false;
    }
    object metadata;
    if (key != "metadata" ||
        field.value().get_object().get(metadata) != simdjson::SUCCESS) {
      continue;
    }
    bool failed = false;
    return NamesSpanprof(metadata, &failed);
  }
  return false;
}

// The top-level keys: `traceEvents` makes a trace (spanprof's or another
// tool's), else `schema` a summary; anything else is an error.
absl::StatusOr<InputKind> DetectByKeys(std::string_view bytes,
                                       std::string_view source) {
  const StrictJson strict(source);
  ParsedDocument document(bytes);
  SPANPROF_ASSIGN_OR_RETURN(object root, document.Start(strict));
  bool has_events = false;
  bool has_schema = false;
  for (auto field_result : root) {
    simdjson::ondemand::field field;
    simdjson::error_code error = std::move(field_result).get(field);
    if (error != simdjson::SUCCESS) {
      return strict.Simdjson(error, JsonPath::Root());
    }
    std::string_view key;
    error = field.unescaped_key().get(key);
    if (error != simdjson::SUCCESS) {
      return strict.Simdjson(error, JsonPath::Root());
    }
    if (key == "traceEvents") {
      has_events = true;
      break;
    }
    has_schema |= key == "schema";
  }
  if (!has_events && has_schema) return InputKind::kSummary;
  if (!has_events) {
    return strict.Error(JsonPath::Root(),
                        "neither a spanprof summary (no \"schema\") nor a "
                        "trace (no \"traceEvents\")");
  }
  absl::StatusOr<object> again = document.Rewind(strict);
  if (!again.ok()) return InputKind::kSpanprofTrace;
  return IsForeignTopLevel(*again) ? InputKind::kChromeTrace
                                   : InputKind::kSpanprofTrace;
}

}  // namespace

std::string_view InputKindName(InputKind kind) {
  switch (kind) {
    case InputKind::kSpanprofTrace:
      return "spanprof trace";
    case InputKind::kChromeTrace:
      return "Chrome trace";
    case InputKind::kPerfettoTrace:
      return "Perfetto trace";
    case InputKind::kSummary:
      return "summary";
    case InputKind::kStreamFile:
      return "stream file";
    case InputKind::kUnknown:
      break;
  }
  return "unknown";
}

absl::StatusOr<InputKind> DetectInputKind(std::string_view bytes,
                                          std::string_view source) {
  if (perfetto::LooksLikeProtobufTrace(bytes)) {
    return InputKind::kPerfettoTrace;
  }
  if (bytes.substr(0, kStreamFileMagic.size()) == kStreamFileMagic) {
    return InputKind::kStreamFile;
  }
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && bytes[first] == '[') {
    return InputKind::kChromeTrace;
  }
  if (TailNamesSpanprof(bytes)) return InputKind::kSpanprofTrace;
  return DetectByKeys(bytes, source);
}

InputKind SniffInput(std::string_view bytes) {
  return DetectInputKind(bytes, "").value_or(InputKind::kUnknown);
}

bool IsTraceKind(InputKind kind) {
  return kind == InputKind::kSpanprofTrace || kind == InputKind::kChromeTrace ||
         kind == InputKind::kPerfettoTrace;
}

}  // namespace spanprof::analysis::internal
