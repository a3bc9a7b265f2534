// The strict event reader: one element of `traceEvents` (an X or an M
// event) checked field by field. An X event's `args` hold the span's ids,
// site and thread indexes, tags, allocations, flags, user arguments and
// counters (docs/formats.md, "spanprof JSON trace").
#include "trace/strict_event_reader.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "json/strict_json.h"
#include "spanprof/capture.h"
#include "status_macros.h"
#include "trace/strict_values.h"
#include "trace/trace_format.h"

namespace spanprof::analysis::internal {
namespace {

using simdjson::ondemand::array;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

constexpr auto kTruncatedTextFields = RequiredFields(kTruncatedTextKeys);
constexpr auto kMetaEventFields = RequiredFields(kMetaEventKeys);

// An X event's flow binding, and all but the first six of its args, are
// optional.
constexpr std::array<FieldSpec, kSpanEventKeys.size()> kSpanEventFields = [] {
  auto specs = RequiredFields(kSpanEventKeys);
  for (size_t f : {kEvBindId, kEvFlowIn, kEvFlowOut}) {
    specs[f].required = false;
  }
  return specs;
}();
constexpr std::array<FieldSpec, kSpanArgKeys.size()> kSpanArgFields = [] {
  auto specs = RequiredFields(kSpanArgKeys);
  for (size_t f = kArgPhase; f < specs.size(); ++f) specs[f].required = false;
  return specs;
}();

// `EventReader` reads events for one source; each member reads one part of
// an event.
class EventReader {
 public:
  explicit EventReader(std::string_view source) : json_(source) {}

  // One element of traceEvents into `event` and, for an X event (then
  // `is_span`), `pending`.
  absl::Status ReadEvent(size_t index, value& ev, const JsonPath& ep,
                         TraceEvent& event, PendingSpan& pending,
                         bool& is_span) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(ev, ep));
    // "ph" decides the schema of the rest: look it up first.
    value ph_value;
    simdjson::error_code error = o.find_field_unordered("ph").get(ph_value);
    if (error == simdjson::NO_SUCH_FIELD) {
      return json_.Error(ep, "missing field \"ph\"");
    }
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, ep);
    const JsonPath ph_path = ep.Field("ph");
    SPANPROF_ASSIGN_OR_RETURN(std::string_view ph,
                              json_.String(ph_value, ph_path));
    is_span = ph == "X";
    if (!is_span && ph != "M") {
      return json_.Error(ph_path,
                         Cat("expected \"X\" or \"M\", got ", Quote(ph)));
    }
    bool reset = false;
    error = o.reset().get(reset);
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, ep);
    event.index = index;
    event.is_span = is_span;
    return is_span ? ReadSpanEvent(o, ep, event, pending)
                   : ReadMetaEvent(o, ep, event);
  }

 private:
  absl::Status ReadMicros(value& v, const JsonPath& p, int64_t* ns) {
    simdjson::ondemand::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS ||
        type != simdjson::ondemand::json_type::number) {
      return json_.Expected(v, p, "microseconds (a number)");
    }
    const std::string_view raw = StrictJson::TrimRight(v.raw_json_token());
    if (!ParseMicros(raw, ns)) {
      return json_.Error(p, Cat("expected microseconds written as "
                                "<integer>.<up to 3 digits> within int64 ns, "
                                "got ",
                                StrictJson::Describe(v)));
    }
    return absl::OkStatus();
  }

  absl::Status ReadMetaEvent(object& o, const JsonPath& p, TraceEvent& event) {
    std::string name;
    // "name" decides the schema of "args": find it first as well.
    value name_value;
    simdjson::error_code error = o.find_field_unordered("name").get(name_value);
    if (error == simdjson::NO_SUCH_FIELD) {
      return json_.Error(p, "missing field \"name\"");
    }
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
    SPANPROF_RETURN_IF_ERROR(ReadString(name_value, p.Field("name"), name));
    if (name != "process_name" && name != "thread_name" &&
        name != "thread_sort_index") {
      return json_.Error(p.Field("name"),
                         Cat("expected \"process_name\", \"thread_name\" or "
                             "\"thread_sort_index\", got ",
                             Quote(name)));
    }
    bool reset = false;
    error = o.reset().get(reset);
    if (error != simdjson::SUCCESS) return json_.Simdjson(error, p);
    absl::Status read = json_.ReadObject(
        o, p, kMetaEventFields,
        [&](size_t field, value& v, const JsonPath& fp) -> absl::Status {
          switch (field) {
            case 2:
              return Assign(json_.Int(v, fp, INT64_MIN, INT64_MAX), event.pid);
            case 3:
              return Assign(json_.Int(v, fp, INT64_MIN, INT64_MAX), event.tid);
            case 4:
              return ReadMicros(v, fp, &event.ts_ns);
            case 5: {
              SPANPROF_ASSIGN_OR_RETURN(object args, json_.Object(v, fp));
              const bool sort_index = name == "thread_sort_index";
              const std::array<FieldSpec, 1> spec = {
                  {{sort_index ? "sort_index" : "name"}}};
              return json_.ReadObject(
                  args, fp, spec,
                  [&](size_t, value& av, const JsonPath& ap) -> absl::Status {
                    if (sort_index) {
                      return json_.Int(av, ap, 0, UINT32_MAX).status();
                    }
                    return json_.String(av, ap).status();
                  });
            }
            default:
              return absl::OkStatus();  // ph and name: already read
          }
        });
    if (!read.ok()) return read;
    event.is_process_name = name == "process_name";
    return absl::OkStatus();
  }

  absl::Status ReadSpanEvent(object& o, const JsonPath& p, TraceEvent& event,
                             PendingSpan& pending) {
    Span& span = pending.span;
    // Not SPANPROF_RETURN_IF_ERROR: the lambdas use it too (-Wshadow).
    if (absl::Status read = json_.ReadObject(
            o, p, kSpanEventFields,
            [&](size_t field, value& v, const JsonPath& fp) -> absl::Status {
              switch (static_cast<SpanEventField>(field)) {
                case kEvPh:
                  return absl::OkStatus();
                case kEvName:
                  return Assign(json_.String(v, fp), pending.name);
                case kEvCat:
                  return Assign(json_.String(v, fp), pending.cat);
                case kEvPid:
                  return Assign(json_.Int(v, fp, INT64_MIN, INT64_MAX),
                                event.pid);
                case kEvTid:
                  return Assign(json_.Int(v, fp, INT64_MIN, INT64_MAX),
                                event.tid);
                case kEvTs:
                  return ReadMicros(v, fp, &event.ts_ns);
                case kEvDur:
                  return ReadMicros(v, fp, &event.dur_ns);
                case kEvBindId:
                  event.has_bind_id = true;
                  return Assign(json_.Unsigned(v, fp), event.bind_id);
                case kEvFlowIn:
                  return Assign(json_.Bool(v, fp), event.flow_in);
                case kEvFlowOut:
                  return Assign(json_.Bool(v, fp), event.flow_out);
                case kEvArgs:
                  return ReadSpanArgs(v, fp, pending);
              }
              return absl::InternalError("unhandled event field");
            });
        !read.ok())
      return read;
    span.start_ns = event.ts_ns;
    if (__builtin_add_overflow(event.ts_ns, event.dur_ns, &span.end_ns)) {
      return json_.Error(p.Field("dur"), "ts + dur overflows int64 ns");
    }
    event.span_id = span.id;
    // Counters follow the numeric arguments, whatever the key order was.
    for (SpanArg& counter : pending.counters) {
      pending.args.push_back(std::move(counter));
    }
    pending.counters.clear();
    return absl::OkStatus();
  }

  absl::Status ReadSpanArgs(value& v, const JsonPath& p, PendingSpan& pending) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    Span& span = pending.span;
    return json_.ReadObject(
        o, p, kSpanArgFields,
        [&](size_t field, value& fv, const JsonPath& fp) -> absl::Status {
          switch (static_cast<SpanArgField>(field)) {
            case kArgSpanId:
              SPANPROF_RETURN_IF_ERROR(Assign(json_.Unsigned(fv, fp), span.id));
              if (span.id == 0) {
                return json_.Error(fp, "span ids start at 1");
              }
              return absl::OkStatus();
            case kArgParentId:
              return Assign(json_.Unsigned(fv, fp), span.parent_id);
            case kArgDepth:
              return Assign(json_.Int(fv, fp, 0, UINT32_MAX), span.depth);
            case kArgHeartbeats:
              return Assign(json_.Int(fv, fp, 0, UINT32_MAX), span.heartbeats);
            case kArgSite:
              return Assign(json_.Int(fv, fp, 0, UINT32_MAX), pending.site);
            case kArgThread:
              return Assign(json_.Int(fv, fp, 0, UINT32_MAX), pending.thread);
            case kArgPhase:
              return ReadTag(fv, fp, pending.phase);
            case kArgModule:
              return ReadTag(fv, fp, pending.module);
            case kArgActivity:
              return ReadTag(fv, fp, pending.activity);
            case kArgBackend:
              return ReadTag(fv, fp, pending.backend);
            case kArgDtype:
              return ReadTag(fv, fp, pending.dtype);
            case kArgDevice:
              return ReadTag(fv, fp, pending.device);
            case kArgAllocCount:
              pending.has_alloc_count = true;
              return Assign(json_.Int(fv, fp, INT64_MIN, INT64_MAX),
                            pending.allocs.count);
            case kArgAllocBytes:
              pending.has_alloc_bytes = true;
              return Assign(json_.Int(fv, fp, INT64_MIN, INT64_MAX),
                            pending.allocs.bytes);
            case kArgFlags:
              return ReadFlags(fv, fp, span.flags);
            case kArgUserArgs:
              return ReadUserArgs(fv, fp, pending.args);
            case kArgCounters:
              return ReadCounters(fv, fp, pending.counters);
          }
          return absl::InternalError("unhandled args field");
        });
  }

  absl::Status ReadTag(value& v, const JsonPath& p,
                       std::optional<std::string_view>& out) {
    SPANPROF_ASSIGN_OR_RETURN(std::string_view s, json_.String(v, p));
    out.emplace(s);
    return absl::OkStatus();
  }

  absl::Status ReadFlags(value& v, const JsonPath& p, uint16_t& flags) {
    SPANPROF_ASSIGN_OR_RETURN(array a, json_.Array(v, p));
    return json_.ForEachElement(
        a, p, [&](size_t, value& ev, const JsonPath& ep) -> absl::Status {
          SPANPROF_ASSIGN_OR_RETURN(std::string_view name,
                                    json_.String(ev, ep));
          for (const auto& [bit, flag_name] : kFlagNames) {
            if (flag_name != name) continue;
            if ((flags & bit) != 0) {
              return json_.Error(ep, Cat("duplicate flag ", Quote(name)));
            }
            flags |= bit;
            return absl::OkStatus();
          }
          return json_.Error(
              ep, Cat("unknown flag ", Quote(name),
                      " (expected \"unfinished\", \"exception\", "
                      "\"rerooted\", \"hook_failed\" or \"open_at_exit\")"));
        });
  }

  // User arguments: key → integer, or a number with '.' or an exponent
  // (double), or null (a double that was NaN or infinite). Repeated keys are
  // kept: a span may record one key twice.
  absl::Status ReadUserArgs(value& v, const JsonPath& p,
                            std::vector<SpanArg>& out) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    return json_.ForEachField(
        o, p, [&](std::string_view key, value& av) -> absl::Status {
          SpanArg& arg = out.emplace_back();
          arg.key = std::string(key);
          return ReadUserArg(av, p.Field(arg.key), arg);
        });
  }

  // One user argument's value (see ReadUserArgs).
  absl::Status ReadUserArg(value& av, const JsonPath& ap, SpanArg& arg) {
    simdjson::ondemand::json_type type;
    if (av.type().get(type) != simdjson::SUCCESS) {
      return json_.Expected(av, ap, "a number or null");
    }
    if (type == simdjson::ondemand::json_type::null) {
      bool is_null = false;
      if (av.is_null().get(is_null) != simdjson::SUCCESS || !is_null) {
        return json_.Expected(av, ap, "a number or null");
      }
      arg.is_double = true;
      arg.double_value = std::numeric_limits<double>::quiet_NaN();
      return absl::OkStatus();
    }
    if (type == simdjson::ondemand::json_type::string) {
      std::string_view text;
      if (av.get_string().get(text) != simdjson::SUCCESS) {
        return json_.Expected(av, ap, "a string");
      }
      return SetStringArg(text, false, ap, arg);
    }
    if (type == simdjson::ondemand::json_type::object) {
      return ReadTruncatedText(av, ap, arg);
    }
    if (type != simdjson::ondemand::json_type::number) {
      return json_.Expected(
          av, ap, "a number, null, a string or {\"text\", \"truncated\"}");
    }
    const std::string_view raw = StrictJson::TrimRight(av.raw_json_token());
    if (!StrictJson::IsJsonNumber(raw)) {
      return json_.Error(ap, Cat("invalid number ", StrictJson::Describe(av)));
    }
    if (raw.find_first_of(".eE") == std::string_view::npos) {
      if (StrictJson::ParseInteger(raw, &arg.int_value) !=
          StrictJson::IntegerForm::kOk) {
        return json_.Error(ap, Cat("integer out of range (beyond int64): ",
                                   StrictJson::Describe(av)));
      }
      return absl::OkStatus();
    }
    arg.is_double = true;
    const auto [end, ec] =
        std::from_chars(raw.data(), raw.data() + raw.size(), arg.double_value);
    if (ec != std::errc() || end != raw.data() + raw.size()) {
      return json_.Error(
          ap, Cat("number out of double range: ", StrictJson::Describe(av)));
    }
    return absl::OkStatus();
  }

  // A string argument's text: at most kMaxArgTextBytes bytes.
  absl::Status SetStringArg(std::string_view text, bool truncated,
                            const JsonPath& p, SpanArg& arg) {
    if (text.size() > kMaxArgTextBytes) {
      return json_.Error(p, Cat("a string argument has at most ",
                                kMaxArgTextBytes, " bytes, got ", text.size()));
    }
    arg.is_string = true;
    arg.text = std::string(text);
    arg.truncated = truncated;
    return absl::OkStatus();
  }

  // A truncated string argument: {"text": "...", "truncated": true}.
  absl::Status ReadTruncatedText(value& v, const JsonPath& p, SpanArg& arg) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    std::string text;
    return json_.ReadObject(
        o, p, kTruncatedTextFields,
        [&](size_t field, value& fv, const JsonPath& fp) -> absl::Status {
          if (field == 0) {
            SPANPROF_ASSIGN_OR_RETURN(std::string_view t, json_.String(fv, fp));
            return SetStringArg(t, true, fp, arg);
          }
          SPANPROF_ASSIGN_OR_RETURN(bool truncated, json_.Bool(fv, fp));
          if (!truncated) return json_.Error(fp, "expected true");
          return absl::OkStatus();
        });
  }

  // Counters: name → integer self count (never a double or null), names
  // non-empty and each at most once (the runtime keeps one entry per name
  // per span). A counter may share its name with a numeric argument: they
  // are separate namespaces.
  absl::Status ReadCounters(value& v, const JsonPath& p,
                            std::vector<SpanArg>& out) {
    SPANPROF_ASSIGN_OR_RETURN(object o, json_.Object(v, p));
    return json_.ForEachField(
        o, p, [&](std::string_view key, value& cv) -> absl::Status {
          if (key.empty()) return json_.Error(p, "empty counter name");
          const JsonPath cp = p.Field(key);
          for (const SpanArg& seen : out) {
            if (seen.key == key) {
              return json_.Error(cp, Cat("duplicate counter ", Quote(key)));
            }
          }
          SpanArg& counter = out.emplace_back();
          counter.key = std::string(key);
          counter.is_counter = true;
          return Assign(json_.Int(cv, cp, INT64_MIN, INT64_MAX),
                        counter.int_value);
        });
  }

  absl::Status ReadString(value& v, const JsonPath& p, std::string& out) {
    return internal::ReadString(json_, v, p, out);
  }

  StrictJson json_;
};

}  // namespace

absl::Status ReadTraceEvent(std::string_view source, size_t index, value& ev,
                            const JsonPath& ep, TraceEvent& event,
                            PendingSpan& pending, bool& is_span) {
  return EventReader(source).ReadEvent(index, ev, ep, event, pending, is_span);
}

}  // namespace spanprof::analysis::internal
