// Output paths checked at session start (output_paths.h).
#include "output_paths.h"

#include <unistd.h>

#include <ctime>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "collector/ring_parser.h"
#include "path_template.h"
#include "recorder/recorder_internal.h"
#include "report.h"
#include "spanprof/analysis/file_io.h"

namespace spanprof::internal {
namespace {

// One output of the session and the names a user knows it by.
struct Output {
  std::string_view variable;  // SPANPROF_OUT
  std::string_view field;     // trace_path
  const std::string& path;    // the template
};

std::string Name(const Output& output) {
  return std::string(output.variable) +
         " (Config::" + std::string(output.field) + ") '" + output.path + "'";
}

// The fields as far as they are known before recording starts; the
// process name and host as the capture will carry them.
PathFields FieldsAtStart(const Config& config) {
  PathFields fields;
  fields.pid = getpid();
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) fields.host = ValidUtf8(host);
  fields.process_name = ValidUtf8(config.recording.process_name.empty()
                                      ? DefaultProcessName()
                                      : config.recording.process_name);
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  fields.start_wall_ns =
      static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  return fields;
}

// The position of the first `%t` field in `path` (not `%%t`), or npos.
size_t FirstStampField(std::string_view path) {
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (path[i] != '%') continue;
    if (path[i + 1] == 't') return i;
    ++i;
  }
  return std::string_view::npos;
}

absl::Status CheckOne(const Output& output, const PathFields& fields) {
  const std::string_view path = output.path;
  const size_t stamp = FirstStampField(path);
  absl::Status checked;
  if (stamp == std::string_view::npos) {
    checked = analysis::CheckOutput(ExpandPathTemplate(path, fields));
  } else {
    // The directories above the component that holds `%t`.
    const size_t slash = path.rfind('/', stamp);
    const std::string_view known =
        slash == std::string_view::npos ? "" : path.substr(0, slash);
    checked = analysis::CheckOutputDirectory(
        known.empty() && slash == 0 ? "/" : ExpandPathTemplate(known, fields));
  }
  if (checked.ok()) return checked;
  return absl::InvalidArgumentError(Name(output) + ": " +
                                    std::string(checked.message()));
}

// The table's destination (report.h): a keyword, or a file checked like the
// other outputs, which must not be the trace's or the summary's file.
absl::Status CheckReport(const Config& config, const PathFields& fields) {
  const Output report{"SPANPROF_REPORT", "report", config.report};
  if (absl::Status s = CheckReportValue(config.report); !s.ok()) {
    return absl::InvalidArgumentError(Name(report) + ": expected " +
                                      std::string(s.message()));
  }
  if (ReportIsOff(config) || !ReportIsPath(config.report)) {
    return absl::OkStatus();
  }
  const std::string path = ExpandPathTemplate(config.report, fields);
  for (const Output& other :
       {Output{"SPANPROF_OUT", "trace_path", config.trace_path},
        Output{"SPANPROF_SUMMARY_OUT", "summary_path", config.summary_path}}) {
    if (other.path != kOutputOff &&
        analysis::SameOutputTarget(path,
                                   ExpandPathTemplate(other.path, fields))) {
      return absl::InvalidArgumentError(
          Name(report) + " and " + Name(other) +
          " name the same file: the table would replace it");
    }
  }
  return CheckOne(report, fields);
}

}  // namespace

absl::Status CheckOutputPaths(const Config& config) {
  const Output trace{"SPANPROF_OUT", "trace_path", config.trace_path};
  const Output summary{"SPANPROF_SUMMARY_OUT", "summary_path",
                       config.summary_path};
  const PathFields fields = FieldsAtStart(config);
  const bool write_trace = config.trace_path != kOutputOff;
  const bool write_summary = config.summary_path != kOutputOff;
  if (write_trace && write_summary &&
      analysis::SameOutputTarget(
          ExpandPathTemplate(config.trace_path, fields),
          ExpandPathTemplate(config.summary_path, fields))) {
    return absl::InvalidArgumentError(
        Name(trace) + " and " + Name(summary) +
        " name the same file: the summary would replace the trace (give "
        "them different paths, or 'off' for the one not wanted)");
  }
  if (write_trace) {
    if (absl::Status s = CheckOne(trace, fields); !s.ok()) return s;
  }
  if (write_summary) {
    if (absl::Status s = CheckOne(summary, fields); !s.ok()) return s;
  }
  return CheckReport(config, fields);
}

}  // namespace spanprof::internal
