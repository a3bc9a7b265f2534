// file_io_internal.h — streaming versions of the file_io.h writers (private to
// the analysis library).
//
// Large outputs (a trace of a million spans is ~200 MB of JSON) are rendered
// in chunks and streamed to disk, optionally through gzip, so that writing
// never holds the whole document in memory.
//
// Example:
//
//   SPANPROF_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file,
//                             OutputFile::Create("out/trace.json.gz",
//                                                /*gzip=*/true));
//   SPANPROF_RETURN_IF_ERROR(file->Write(chunk));
//   SPANPROF_RETURN_IF_ERROR(file->Commit());
#ifndef SPANPROF_ANALYSIS_SRC_IO_FILE_IO_INTERNAL_H_
#define SPANPROF_ANALYSIS_SRC_IO_FILE_IO_INTERNAL_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace spanprof::analysis::internal {

// `GzipStream` compresses incrementally into a caller-owned string.
class GzipStream {
 public:
  static absl::StatusOr<std::unique_ptr<GzipStream>> Create();
  ~GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  // Appends the compressed form of `bytes` (as far as zlib emits it) to
  // `out`; `finish` flushes everything and writes the gzip trailer.
  absl::Status Compress(std::string_view bytes, bool finish, std::string* out);

 private:
  GzipStream();
  struct State;
  std::unique_ptr<State> state_;
};

// `OutputFile` writes a file atomically: parent directories are created, the
// bytes go to a temporary file in the same directory, and `Commit()` fsyncs
// and renames it over the target. Without `Commit()` (an error, or the object
// destroyed early) the temporary file is removed and an existing target is
// left untouched. With `gzip`, the bytes are compressed on the way.
class OutputFile {
 public:
  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(
      const std::string& path, bool gzip);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  absl::Status Write(std::string_view bytes);
  absl::Status Commit();

 private:
  OutputFile(std::string path, std::string temp_path, std::string dir, int fd,
             std::unique_ptr<GzipStream> gzip);
  absl::Status WriteRaw(std::string_view bytes);

  std::string path_;
  std::string temp_path_;
  std::string dir_;
  int fd_;
  std::unique_ptr<GzipStream> gzip_;
  std::string compressed_;
  bool committed_ = false;
};

// `EndsWithGz()` is true for paths the writers compress (`*.gz`).
bool EndsWithGz(std::string_view path);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_IO_FILE_IO_INTERNAL_H_
