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

// `OutputFile` writes an output where its path points, by the rules of
// `WriteFileAtomically()` (file_io.h): a regular file (or none yet) is
// written atomically — parent directories are created, the bytes go to a
// temporary file in the target's directory, and `Commit()` fsyncs and
// renames it over the target; without `Commit()` (an error, or the object
// destroyed early) the temporary file is removed and an existing target is
// left untouched. A symbolic link is followed to its final target (the link
// stays). A character device, FIFO or socket is written in place, and `-`
// is standard output (left open). With `gzip`, the bytes are compressed on
// the way.
class OutputFile {
 public:
  enum class TargetKind { kAtomic, kInPlace, kStdout };
  // Where the bytes go.
  struct Target {
    TargetKind kind = TargetKind::kAtomic;
    std::string file;       // the final target, links resolved
    std::string temp_path;  // kAtomic: the temporary file
    std::string dir;        // kAtomic: the directory holding both
  };
  struct Opened {
    Target target;
    int fd = -1;
  };

  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(
      const std::string& path, bool gzip);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  absl::Status Write(std::string_view bytes);
  absl::Status Commit();

 private:
  OutputFile(std::string path, Target target, int fd,
             std::unique_ptr<GzipStream> gzip);
  static absl::StatusOr<Opened> OpenTarget(const std::string& path);
  absl::Status WriteRaw(std::string_view bytes);

  std::string path_;
  Target target_;
  int fd_;
  std::unique_ptr<GzipStream> gzip_;
  std::string compressed_;
  bool committed_ = false;
  // kAtomic: bytes written, and how many of them were handed to the disk
  // ahead of the commit's fsync.
  uint64_t written_ = 0;
  uint64_t flushed_ = 0;
};

// `ResolveLinks()` follows symbolic links at `path` (not in its directories)
// to the final target, which may not exist yet.
absl::StatusOr<std::string> ResolveLinks(const std::string& path);

// `EndsWithGz()` is true for paths the writers compress (`*.gz`, any case).
bool EndsWithGz(std::string_view path);

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_IO_FILE_IO_INTERNAL_H_
