// Output path templates: %p %h %n %t %% (path_template.h).
#include "path_template.h"

#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace spanprof::internal {
namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;

bool IsField(char c) {
  return c == 'p' || c == 'h' || c == 'n' || c == 't' || c == '%';
}

// A value safe inside one path component: never a `/`, never a whole
// component `.` or `..` (which would name the directory or its parent).
std::string PathSafe(std::string_view value) {
  if (value.empty()) return "unknown";
  std::string out(value);
  for (char& c : out) {
    if (c == '/' || static_cast<unsigned char>(c) < 0x20) c = '_';
  }
  if (out == "." || out == "..") out.assign(out.size(), '_');
  return out;
}

}  // namespace

absl::Status CheckPathTemplate(std::string_view path) {
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') continue;
    if (i + 1 == path.size()) {
      return absl::InvalidArgumentError(
          "a '%' at the end: the fields are %p %h %n %t, and %% for a '%'");
    }
    if (!IsField(path[i + 1])) {
      return absl::InvalidArgumentError(
          "'%" + std::string(1, path[i + 1]) +
          "' is not a path field: the fields are %p (pid), %h (host), %n "
          "(process name), %t (session start, UTC), and %% for a '%'");
    }
    ++i;
  }
  return absl::OkStatus();
}

std::string ExpandPathTemplate(std::string_view path,
                               const PathFields& fields) {
  std::string out;
  out.reserve(path.size() + 32);
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%' || i + 1 == path.size() || !IsField(path[i + 1])) {
      out += path[i];
      continue;
    }
    switch (path[++i]) {
      case 'p':
        out += std::to_string(fields.pid);
        break;
      case 'h':
        out += PathSafe(fields.host);
        break;
      case 'n':
        out += PathSafe(fields.process_name);
        break;
      case 't':
        out += UtcStamp(fields.start_wall_ns);
        break;
      default:
        out += '%';
        break;
    }
  }
  return out;
}

std::string UtcStamp(int64_t ns) {
  int64_t seconds = ns / kNsPerSec;
  int64_t rest = ns % kNsPerSec;
  if (rest < 0) {  // before 1970: floor, not truncation
    rest += kNsPerSec;
    --seconds;
  }
  const time_t t = static_cast<time_t>(seconds);
  tm utc{};
  gmtime_r(&t, &utc);
  char text[48];
  std::snprintf(text, sizeof(text), "%04d%02d%02dT%02d%02d%02d.%03dZ",
                utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                utc.tm_min, utc.tm_sec, static_cast<int>(rest / 1'000'000));
  return text;
}

}  // namespace spanprof::internal
