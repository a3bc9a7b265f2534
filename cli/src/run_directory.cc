#include "run_directory.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "spanprof/analysis/file_io.h"

namespace spanprof::cli::internal {
namespace {

namespace fs = std::filesystem;

constexpr char kSummarySuffix[] = ".summary";

// "run-<digits>" followed by `rest`.
bool IsRunName(std::string_view name, std::string_view* rest) {
  if (!name.starts_with("run-")) return false;
  name.remove_prefix(4);
  const size_t digits = name.find_first_not_of("0123456789");
  if (digits == 0 || digits == std::string_view::npos) return false;
  *rest = name.substr(digits);
  return true;
}

// run-007.summary.json, run-007.summary-cycle1.json
bool IsRunSummaryName(std::string_view name) {
  std::string_view rest;
  return IsRunName(name, &rest) && rest.starts_with(kSummarySuffix) &&
         rest.ends_with(".json");
}

bool IsJsonName(std::string_view name) {
  return analysis::HasExtension(name, ".json") ||
         analysis::HasExtension(name, ".json.gz");
}

// What a directory already holds, sorted by kind.
struct Contents {
  std::vector<fs::path> earlier_runs;  // ours: deleted by --force
  std::vector<fs::path> foreign_json;  // never deleted
};

absl::Status ListInto(const fs::path& dir, bool top_level, Contents* out) {
  std::error_code error;
  const size_t first_new = out->earlier_runs.size();
  for (fs::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    std::string_view rest;
    if (!top_level) {
      if (IsRunName(name, &rest)) out->earlier_runs.push_back(path);
    } else if (IsRunSummaryName(name)) {
      out->earlier_runs.push_back(path);
    } else if (IsJsonName(name)) {
      out->foreign_json.push_back(path);
    }
  }
  if (error) {
    return absl::UnavailableError(absl::StrCat(
        dir.string(), ": cannot list the directory: ", error.message()));
  }
  // Summaries first (they are listed first), then logs and traces, each
  // sorted: the refusal names the first.
  std::sort(out->earlier_runs.begin() + static_cast<std::ptrdiff_t>(first_new),
            out->earlier_runs.end());
  std::sort(out->foreign_json.begin(), out->foreign_json.end());
  return absl::OkStatus();
}

absl::StatusOr<Contents> ListContents(const RunFiles& files) {
  Contents contents;
  absl::Status listed = ListInto(files.dir(), /*top_level=*/true, &contents);
  if (!listed.ok()) return listed;
  for (const std::string& sub : {files.LogDir(), files.TraceDir()}) {
    std::error_code error;
    if (!fs::is_directory(sub, error)) continue;
    listed = ListInto(sub, /*top_level=*/false, &contents);
    if (!listed.ok()) return listed;
  }
  return contents;
}

absl::Status CreateDirectory(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat(dir, ": cannot create the directory: ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status Remove(const std::vector<fs::path>& paths) {
  for (const fs::path& path : paths) {
    std::error_code error;
    fs::remove(path, error);
    if (error) {
      return absl::UnavailableError(absl::StrCat(
          path.string(), ": cannot remove (--force): ", error.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckContents(const RunFiles& files, const Contents& contents,
                           bool force) {
  if (!contents.foreign_json.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        files.dir(), " already holds ", contents.foreign_json.front().string(),
        ", which `spanprof compare` would read as one more run if it is a "
        "summary; choose an empty or new directory (--force removes only "
        "the files of earlier runs)"));
  }
  if (!contents.earlier_runs.empty() && !force) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s already holds the files of earlier runs (%s, %d files in all); "
        "pass "
        "--force to replace them, or choose another directory",
        files.dir(), contents.earlier_runs.front().filename().string(),
        contents.earlier_runs.size()));
  }
  return absl::OkStatus();
}

}  // namespace

RunFiles::RunFiles(std::string dir, int64_t runs)
    : dir_(std::move(dir)),
      width_(std::max(3, static_cast<int>(std::to_string(runs).size()))) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

std::string RunFiles::Name(int64_t run) const {
  return absl::StrFormat("run-%0*d", width_, run);
}

std::string RunFiles::Summary(int64_t run) const {
  return absl::StrCat(dir_, "/", Name(run), kSummarySuffix, ".json");
}

std::string RunFiles::Trace(int64_t run) const {
  return absl::StrCat(TraceDir(), "/", Name(run), ".trace.json");
}

std::string RunFiles::PerfettoTrace(int64_t run) const {
  return absl::StrCat(TraceDir(), "/", Name(run), ".trace.pftrace");
}

std::string RunFiles::Stdout(int64_t run) const {
  return absl::StrCat(LogDir(), "/", Name(run), ".stdout");
}

std::string RunFiles::Stderr(int64_t run) const {
  return absl::StrCat(LogDir(), "/", Name(run), ".stderr");
}

std::string RunFiles::TraceDir() const { return dir_ + "/traces"; }

std::string RunFiles::LogDir() const { return dir_ + "/logs"; }

std::vector<std::string> RunFiles::SummariesOf(int64_t run) const {
  std::error_code error;
  if (fs::is_regular_file(Summary(run), error)) return {Summary(run)};
  const std::string prefix = Name(run) + std::string(kSummarySuffix) + "-";
  std::vector<std::string> out;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(".json")) {
      out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status CheckRunDirectory(const RunFiles& files, bool force) {
  std::error_code error;
  if (!fs::exists(files.dir(), error)) return absl::OkStatus();
  if (!fs::is_directory(files.dir(), error)) {
    return absl::FailedPreconditionError(
        absl::StrCat(files.dir(), " exists and is not a directory"));
  }
  absl::StatusOr<Contents> contents = ListContents(files);
  if (!contents.ok()) return contents.status();
  return CheckContents(files, *contents, force);
}

absl::Status ResetRunDirectory(const RunFiles& files, bool trace) {
  absl::Status created = CreateDirectory(files.dir());
  if (!created.ok()) return created;
  absl::StatusOr<Contents> contents = ListContents(files);
  if (!contents.ok()) return contents.status();
  absl::Status removed = Remove(contents->earlier_runs);
  if (!removed.ok()) return removed;
  created = CreateDirectory(files.LogDir());
  if (created.ok() && trace) created = CreateDirectory(files.TraceDir());
  return created;
}

}  // namespace spanprof::cli::internal
