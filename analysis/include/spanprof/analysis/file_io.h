// spanprof/analysis/file_io.h — whole-file reads and atomic writes.
//
// Example:
//
//   absl::Status s = spanprof::analysis::WriteFileAtomically("out/a.json",
//   text);
#ifndef SPANPROF_ANALYSIS_FILE_IO_H_
#define SPANPROF_ANALYSIS_FILE_IO_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace spanprof::analysis {

// `WriteFileAtomically()` creates parent directories, writes `bytes` to a
// temporary file beside `path`, fsyncs and renames it over `path`. On error the
// old file (if any) is untouched and the message names `path`.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes);

// The default bound on what a read may hold: 16 GiB.
inline constexpr uint64_t kDefaultMaxInputBytes = uint64_t{16} << 30;
// A gzip file may decompress to at most this many times its size (and at
// most kDefaultMaxInputBytes) unless `ReadLimits::max_input_bytes` is set.
inline constexpr uint64_t kGzipExpansionLimit = 64;

// `ReadLimits` bound the bytes `ReadFile()` holds in memory, so that a
// gzip bomb or an endless file (`/dev/zero`, a FIFO) is an error, not the
// machine's memory. docs/cli.md ("Input limits") states the rule.
struct ReadLimits {
  // When not 0, the most bytes any read may produce (a file's bytes, or a
  // gzip file's decompressed bytes): the CLI's `--max-input-bytes`. When 0:
  // a regular file is read whole, anything else up to
  // kDefaultMaxInputBytes, and a gzip file decompresses to at most
  // min(kGzipExpansionLimit x its size, kDefaultMaxInputBytes).
  uint64_t max_input_bytes = 0;
};

// `ReadFile()` reads a whole file; a file starting with the gzip magic is
// decompressed. Errors name `path`: past the limit, a ResourceExhausted
// error naming the limit; when memory runs out, "out of memory reading PATH
// at byte N". The one-argument form uses the process's default limits
// (`SetDefaultReadLimits()`), as every reader of this library does.
absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const ReadLimits& limits);

// `SetDefaultReadLimits()` sets the limits of `ReadFile(path)` for the
// whole process (the CLI sets them once from its flags, before reading).
// Not thread-safe: call it before any thread reads.
void SetDefaultReadLimits(const ReadLimits& limits);

// `GzipCompress()` returns the gzip encoding of `bytes`.
absl::StatusOr<std::string> GzipCompress(std::string_view bytes);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_FILE_IO_H_
