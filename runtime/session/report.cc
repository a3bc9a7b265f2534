// Where the session's table goes, and the lines about a trace's size
// (report.h).
#include "report.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "path_template.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/session.h"

namespace spanprof::internal {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

bool IsStdout(std::string_view report) {
  return report == kReportStdout || report == analysis::kStandardOutputPath;
}

std::string MiB(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f MiB",
                static_cast<double>(bytes) / kMiB);
  return text;
}

void WriteTo(std::FILE* stream, const std::string& table) {
  std::fwrite(table.data(), 1, table.size(), stream);
  std::fflush(stream);
}

}  // namespace

absl::Status CheckReportValue(std::string_view report) {
  if (report == kReportStderr || IsStdout(report) || report == kReportOff) {
    return absl::OkStatus();
  }
  const std::string expected =
      "stderr, stdout, off or a file path (a path holds a '/' or a '.': "
      "write ./" +
      std::string(report) + " for a file of that name)";
  if (report.empty() || report.find_first_of("/.") == std::string_view::npos) {
    return absl::InvalidArgumentError(expected);
  }
  if (absl::Status fields = CheckPathTemplate(report); !fields.ok()) {
    return absl::InvalidArgumentError("a file path: " +
                                      std::string(fields.message()));
  }
  return absl::OkStatus();
}

bool ReportIsOff(const Config& config) {
  return config.quiet || config.report == kReportOff;
}

bool ReportIsPath(std::string_view report) {
  return report != kReportStderr && !IsStdout(report) && report != kReportOff;
}

absl::Status WriteReport(const Config& config, const std::string& table,
                         const PathFields& fields) {
  if (ReportIsOff(config)) return absl::OkStatus();
  if (config.report == kReportStderr) {
    WriteTo(stderr, table);
    return absl::OkStatus();
  }
  if (IsStdout(config.report)) {
    WriteTo(stdout, table);
    return absl::OkStatus();
  }
  const std::string path = ExpandPathTemplate(config.report, fields);
  absl::Status written = analysis::WriteFileAtomically(path, table);
  if (written.ok()) return written;
  return absl::UnavailableError("SPANPROF_REPORT (Config::report) '" + path +
                                "': " + std::string(written.message()));
}

std::string TraceSizeForecast(std::string_view trace_path,
                              uint64_t max_events) {
  if (trace_path == kReportOff) return "";
  if (analysis::IsPerfettoTracePath(trace_path)) {
    return "; a full trace (" + std::to_string(max_events) +
           " spans) is about " + MiB(max_events * kPftraceBytesPerSpan) +
           " (.pftrace, about " + std::to_string(kPftraceBytesPerSpan) +
           " bytes a span)";
  }
  return "; a full trace (" + std::to_string(max_events) + " spans) is about " +
         MiB(max_events * kJsonTraceBytesPerSpan) + " of JSON" +
         (analysis::HasExtension(trace_path, ".gz") ? " before gzip" : "") +
         " (about " + std::to_string(kJsonTraceBytesPerSpan) +
         " bytes a span; SPANPROF_OUT=x.pftrace: about " +
         MiB(max_events * kPftraceBytesPerSpan) + ")";
}

std::string LargeTraceHint(const std::string& trace_path, uint64_t bytes,
                           uint64_t threshold) {
  if (bytes <= threshold || analysis::IsPerfettoTracePath(trace_path)) {
    return "";
  }
  return "spanprof: the trace " + trace_path + " is " + MiB(bytes) +
         " of JSON, over " + MiB(threshold) +
         ": the Perfetto UI may fail to load it in a browser tab; "
         "SPANPROF_OUT=x.pftrace writes Perfetto's protobuf format, about "
         "an eighth of the size, which the UI loads (and every spanprof "
         "command reads)\n";
}

void PrintLargeTraceHint(const std::string& trace_path) {
  if (trace_path.empty()) return;
  std::error_code error;
  if (!std::filesystem::is_regular_file(trace_path, error)) return;
  const uintmax_t bytes = std::filesystem::file_size(trace_path, error);
  if (error) return;
  const std::string hint = LargeTraceHint(trace_path, bytes);
  if (!hint.empty()) std::fputs(hint.c_str(), stderr);
}

}  // namespace spanprof::internal
