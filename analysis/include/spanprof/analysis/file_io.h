// spanprof/analysis/file_io.h — whole-file reads and atomic writes.
//
// clang-format off
// Example:
//
//   std::string text = ...;
//   absl::Status s = spanprof::analysis::WriteFileAtomically("out/a.json", text);
//   absl::StatusOr<std::string> back = spanprof::analysis::ReadFile("out/a.json");
// clang-format on
#ifndef SPANPROF_ANALYSIS_FILE_IO_H_
#define SPANPROF_ANALYSIS_FILE_IO_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace spanprof::analysis {

// `kStandardOutputPath` (`-`) as an output path means standard output.
inline constexpr char kStandardOutputPath[] = "-";

// `WriteFileAtomically()` writes `bytes` where `path` points:
//   - a regular file, or nothing yet: parent directories are created, the
//     bytes go to a temporary file beside the target
//     (`.<start of name>.<pid>.<n>.tmp`, cut to fit any legal name), which is
//     fsynced and renamed over it; on error the old file (if any) is
//     untouched;
//   - a symbolic link: followed to its final target, which is written by
//     these rules (the link stays; the temporary file is made in the
//     target's directory);
//   - a character device, FIFO or Unix socket: written in place (opened for
//     writing, no temporary file, no rename; a FIFO waits for its reader);
//   - `-` (kStandardOutputPath): standard output, left open (stdio's buffer
//     is flushed first);
//   - a directory or a block device: an error.
// Messages name `path`.
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
// decompressed, and a leading UTF-8 byte order mark is skipped. Errors name
// `path`: past the limit, a ResourceExhausted error naming the limit; when
// memory runs out, "out of memory reading PATH at byte N". The one-argument
// form uses the process's default limits (`SetDefaultReadLimits()`), as
// every reader of this library does.
absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const ReadLimits& limits);

// `SetDefaultReadLimits()` sets the limits of `ReadFile(path)` for the
// whole process (the CLI sets them once from its flags, before reading).
// Not thread-safe: call it before any thread reads.
void SetDefaultReadLimits(const ReadLimits& limits);

// `CheckOutputDirectory()` checks, without creating anything, that files
// can be written in `dir` ("" is the working directory): it, or the nearest
// of its parents that exists (where the writer would create the rest), is a
// writable directory. Errors name the directory.
absl::Status CheckOutputDirectory(const std::string& dir);

// `CheckOutput()` checks, before any work and without writing, that
// `WriteFileAtomically(path)` can write: for a regular file or none yet, its
// directory (after following links) as `CheckOutputDirectory()` does; a
// device, FIFO or socket must be writable; a directory or block device is an
// error. `-` passes.
absl::Status CheckOutput(const std::string& path);

// `HasExtension()` is true when `path` ends with `extension` (".json.gz"),
// ASCII letters compared without regard to case (`T.PFTRACE` is a
// `.pftrace`): every choice of a format by name goes through it.
bool HasExtension(std::string_view path, std::string_view extension);

// `SameOutputTarget()` is true when writing to `a` would write to the file
// `b` names (or the reverse), after following links: the same existing file
// (device and inode), or else the same normalised path (`sub/../t.json` is
// `t.json`).
// `-` matches only `-`. A character device is never "the same" (a terminal
// or /dev/null keeps nothing a second write could destroy).
bool SameOutputTarget(const std::string& a, const std::string& b);

// `GzipCompress()` returns the gzip encoding of `bytes`.
// `RemoveStaleTemporaryFiles()` removes the temporary files that writers of
// `path` (`WriteFileAtomically()` and the trace and summary writers) left
// beside it when they were killed before they renamed them: the files of
// its temporary-name form whose process no longer runs. Returns how many
// it removed. A session calls it for its outputs when it starts, and
// `spanprof recover` for the outputs it writes.
size_t RemoveStaleTemporaryFiles(const std::string& path);

absl::StatusOr<std::string> GzipCompress(std::string_view bytes);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_FILE_IO_H_
