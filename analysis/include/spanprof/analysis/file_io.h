// spanprof/analysis/file_io.h — whole-file reads and atomic writes.
//
// Example:
//
//   absl::Status s = spanprof::analysis::WriteFileAtomically("out/a.json",
//   text);
#ifndef SPANPROF_ANALYSIS_FILE_IO_H_
#define SPANPROF_ANALYSIS_FILE_IO_H_

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

// `ReadFile()` reads a whole file; a file starting with the gzip magic is
// decompressed. Errors name `path`.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// `GzipCompress()` returns the gzip encoding of `bytes`.
absl::StatusOr<std::string> GzipCompress(std::string_view bytes);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_FILE_IO_H_
