// ConfigFromEnvironment(): the strict SPANPROF* environment table.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "path_template.h"
#include "report.h"
#include "spanprof/context.h"
#include "spanprof/internal/closest_name.h"
#include "spanprof/internal/parse_int.h"
#include "spanprof/recording.h"
#include "spanprof/session.h"

namespace spanprof {
namespace {

// The environment is read once, at session start, before any thread of the
// session exists; nothing here calls setenv.
const char* Get(const char* name) {
  return std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
}

absl::Status Bad(const char* name, const std::string& value,
                 const std::string& expected) {
  return absl::InvalidArgumentError(std::string(name) + "='" + value +
                                    "': expected " + expected);
}

// Strict boolean: 1/true/on/yes enable; 0/false/off/no/"" disable.
absl::Status ParseBool(const char* name, bool* out) {
  const char* raw = Get(name);
  if (raw == nullptr) return absl::OkStatus();
  const std::string v(raw);
  if (v == "1" || v == "true" || v == "on" || v == "yes") {
    *out = true;
  } else if (v == "0" || v == "false" || v == "off" || v == "no" || v.empty()) {
    *out = false;
  } else {
    return Bad(name, v, "one of 1, true, on, yes, 0, false, off, no or empty");
  }
  return absl::OkStatus();
}

absl::Status ParsePath(const char* name, std::string* out) {
  const char* raw = Get(name);
  if (raw == nullptr) return absl::OkStatus();
  if (raw[0] == '\0') return Bad(name, raw, "a non-empty file path");
  if (const absl::Status fields = internal::CheckPathTemplate(raw);
      !fields.ok()) {
    return Bad(name, raw, "a file path: " + std::string(fields.message()));
  }
  *out = raw;
  return absl::OkStatus();
}

absl::Status ParsePositive(const char* name, uint64_t* out) {
  const char* raw = Get(name);
  if (raw == nullptr) return absl::OkStatus();
  const std::string v(raw);
  const std::string expected = "a positive integer (no sign, no suffix)";
  // At most 19 digits, so never beyond uint64.
  uint64_t value = 0;
  if (v.size() > 19 || internal::ParseUint64(v, &value) != std::errc() ||
      value == 0) {
    return Bad(name, v, expected);
  }
  *out = value;
  return absl::OkStatus();
}

// A cap whose worst-case ring memory exceeds the memory this process may
// use (the smallest of physical memory, its cgroup's limit and RLIMIT_AS) is
// refused here, naming the variable and the limit that applied
// (StartRecording refuses it too, for Config users): such a process would be
// killed for memory, or fail to allocate, before the cap could protect it.
// Refusing beats clamping: the user learns the real bound.
absl::Status CheckCapFitsMemory(const RecordingOptions& recording) {
  const uint64_t worst =
      PredictedMemoryBytes(recording.max_events, recording.overflow);
  const MemoryLimit limit = ProcessMemoryLimit();
  if (worst <= limit.bytes) return absl::OkStatus();
  const uint64_t mib = uint64_t{1} << 20;
  const uint64_t per_span = PredictedMemoryBytes(1, recording.overflow);
  return Bad("SPANPROF_MAX_EVENTS", std::to_string(recording.max_events),
             "a cap whose worst-case ring memory fits " + limit.source + ", " +
                 std::to_string(limit.bytes / mib) + " MiB (" +
                 std::to_string(per_span) + " bytes a span: at most " +
                 std::to_string(limit.bytes / per_span) + " spans)");
}

// Every SPANPROF* variable spanprof knows. `session`: read by a session
// (the environment table in docs/api.md); the others are read by spanprof's
// own test and benchmark tools and are never warned about nor suggested.
// `meant`: for a common wrong name, the variable it stands for.
struct KnownVariable {
  std::string_view name;
  bool session = true;
  std::string_view meant = {};
};

constexpr KnownVariable kKnownVariables[] = {
    {"SPANPROF"},
    {"SPANPROF_OUT"},
    {"SPANPROF_SUMMARY_OUT"},
    {"SPANPROF_MAX_EVENTS"},
    {"SPANPROF_OVERFLOW"},
    {"SPANPROF_PROCESS_NAME"},
    {"SPANPROF_CLOCK"},
    {"SPANPROF_QUIET"},
    {"SPANPROF_TRACEPARENT"},
    {"SPANPROF_STREAM"},
    {"SPANPROF_KEEP_STREAM"},
    {"SPANPROF_SIGNALS"},
    {"SPANPROF_REPORT"},
    {"SPANPROF_BENCH_CLOCK", false},
    {"SPANPROF_CHROMIUM", false},
    {"SPANPROF_OTLP_CHECK_DIR", false},
    {"SPANPROF_VIEWER_DIR", false},
    {"SPANPROF_ENABLE", false, "SPANPROF"},
    {"SPANPROF_ENABLED", false, "SPANPROF"},
};

// The session variable closest to `name` (the first of equals in table
// order), or the one a known wrong name stands for.
std::string_view ClosestVariable(std::string_view name) {
  std::string_view best;
  size_t best_distance = SIZE_MAX;
  for (const KnownVariable& known : kKnownVariables) {
    if (known.name == name && !known.meant.empty()) return known.meant;
    if (!known.session) continue;
    const size_t distance = internal::EditDistance(name, known.name);
    if (distance < best_distance) {
      best = known.name;
      best_distance = distance;
    }
  }
  return best;
}

bool IsKnownVariable(std::string_view name) {
  return std::ranges::any_of(kKnownVariables, [name](const KnownVariable& k) {
    return k.name == name && k.meant.empty();
  });
}

// One line on stderr for each SPANPROF_* variable that no one reads: every
// value is checked strictly, so a misspelt name must not pass in silence.
void WarnAboutUnknownVariables() {
  constexpr std::string_view kPrefix = "SPANPROF_";
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    if (name.substr(0, kPrefix.size()) != kPrefix || IsKnownVariable(name)) {
      continue;
    }
    std::fprintf(stderr,
                 "spanprof: unknown variable %.*s; did you mean %.*s?\n",
                 static_cast<int>(name.size()), name.data(),
                 static_cast<int>(ClosestVariable(name).size()),
                 ClosestVariable(name).data());
  }
}

}  // namespace

absl::StatusOr<Config> ConfigFromEnvironment() {
  Config config;
  config.enabled = false;
  absl::Status s = ParseBool("SPANPROF", &config.enabled);
  if (!s.ok()) return s;
  if (config.enabled) WarnAboutUnknownVariables();
  s = ParsePath("SPANPROF_OUT", &config.trace_path);
  if (!s.ok()) return s;
  s = ParsePath("SPANPROF_SUMMARY_OUT", &config.summary_path);
  if (!s.ok()) return s;
  s = ParsePositive("SPANPROF_MAX_EVENTS", &config.recording.max_events);
  if (!s.ok()) return s;
  if (const char* raw = Get("SPANPROF_OVERFLOW"); raw != nullptr) {
    if (!ParseOverflowPolicy(raw, &config.recording.overflow).ok()) {
      return Bad("SPANPROF_OVERFLOW", raw, "'drop' or 'ring'");
    }
  }
  // Only a session that records needs the ring memory: a program run with
  // SPANPROF off reads no /proc or cgroup file at start.
  if (config.enabled) {
    s = CheckCapFitsMemory(config.recording);
    if (!s.ok()) return s;
  }
  if (const char* raw = Get("SPANPROF_PROCESS_NAME"); raw != nullptr) {
    if (raw[0] == '\0') {
      return Bad("SPANPROF_PROCESS_NAME", raw, "a non-empty name");
    }
    config.recording.process_name = raw;
  }
  if (const char* raw = Get("SPANPROF_CLOCK"); raw != nullptr) {
    const std::string v(raw);
    if (v == "auto") {
      config.recording.clock = ClockKind::kAuto;
    } else if (v == "tsc") {
      config.recording.clock = ClockKind::kTsc;
    } else if (v == "monotonic") {
      config.recording.clock = ClockKind::kMonotonic;
    } else {
      return Bad("SPANPROF_CLOCK", v, "'auto', 'tsc' or 'monotonic'");
    }
  }
  s = ParseBool("SPANPROF_QUIET", &config.quiet);
  if (!s.ok()) return s;
  if (const char* raw = Get("SPANPROF_REPORT"); raw != nullptr) {
    if (const absl::Status bad = internal::CheckReportValue(raw); !bad.ok()) {
      return Bad("SPANPROF_REPORT", raw, std::string(bad.message()));
    }
    config.report = raw;
  }
  if (const char* raw = Get("SPANPROF_STREAM");
      raw != nullptr && std::string(raw) == "off") {
    config.stream_path = "off";
  } else {
    s = ParsePath("SPANPROF_STREAM", &config.stream_path);
    if (!s.ok()) return s;
  }
  s = ParseBool("SPANPROF_KEEP_STREAM", &config.keep_stream);
  if (!s.ok()) return s;
  s = ParseBool("SPANPROF_SIGNALS", &config.signals);
  if (!s.ok()) return s;
  // Empty means none, as for a header that was not sent.
  if (const char* raw = Get("SPANPROF_TRACEPARENT");
      raw != nullptr && raw[0] != '\0') {
    if (const absl::StatusOr<Context> parent = ContextFromTraceparent(raw);
        !parent.ok()) {
      return Bad("SPANPROF_TRACEPARENT", raw,
                 "a W3C traceparent 00-<32 hex>-<16 hex>-<2 hex> (" +
                     std::string(parent.status().message()) + ")");
    }
    config.recording.traceparent = raw;
  }
  return config;
}

}  // namespace spanprof
