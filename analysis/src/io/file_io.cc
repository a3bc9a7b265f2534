#include "spanprof/analysis/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "io/file_io_internal.h"
#include "status_macros.h"

namespace spanprof::analysis {
namespace {

// zlib counts in `uInt`; feed it at most this much per call.
constexpr size_t kZlibChunk = size_t{1} << 30;

absl::Status ErrnoError(int error, std::string_view what,
                        const std::string& path) {
  const std::string message =
      // strerror's buffer is only overwritten by another strerror call for an
      // unknown error number; these are errno values of the calls just made.
      absl::StrCat(std::string(what), " ", path, ": ",
                   std::strerror(error));  // NOLINT(concurrency-mt-unsafe)
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

int WriteAll(int fd, std::string_view bytes) {
  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const size_t chunk = std::min<size_t>(left, size_t{1} << 30);
    const ssize_t written = ::write(fd, data, chunk);
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  return 0;
}

// Hands zlib the next chunk of input (at most kZlibChunk bytes, its avail_in
// is 32 bits) once it has consumed the previous one.
void FeedInput(z_stream& stream, const unsigned char*& next, size_t& left) {
  if (stream.avail_in != 0 || left == 0) return;
  const size_t chunk = std::min(left, kZlibChunk);
  // zlib's API takes a non-const pointer but does not write through it.
  stream.next_in = const_cast<unsigned char*>(next);
  stream.avail_in = static_cast<uInt>(chunk);
  next += chunk;
  left -= chunk;
}

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

absl::Status OutOfMemory(const std::string& path, size_t at) {
  return absl::ResourceExhaustedError(
      absl::StrCat("out of memory reading ", path, " at byte ", at));
}

// The limit on what a read may produce (ReadLimits): the flag's value, or
// the default rule for this kind of input.
uint64_t GzipLimit(const ReadLimits& limits, size_t compressed) {
  if (limits.max_input_bytes != 0) return limits.max_input_bytes;
  const uint64_t ratio = kGzipExpansionLimit * uint64_t{compressed};
  return std::min(ratio, kDefaultMaxInputBytes);
}

absl::Status OverLimit(const std::string& path, uint64_t limit,
                       const ReadLimits& limits, std::string_view rule) {
  return absl::ResourceExhaustedError(
      absl::StrCat("read: ", path, ": more than ", limit, " bytes",
                   limits.max_input_bytes != 0
                       ? std::string(" (--max-input-bytes)")
                       : absl::StrCat(" (", std::string(rule),
                                      "; --max-input-bytes raises it)")));
}

absl::StatusOr<std::string> Gunzip(std::string_view bytes,
                                   const std::string& path,
                                   const ReadLimits& limits) {
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip header and trailer.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(
        absl::StrCat("gzip: cannot initialise zlib for ", path));
  }
  const uint64_t limit = GzipLimit(limits, bytes.size());
  std::string out;
  const unsigned char* next =
      reinterpret_cast<const unsigned char*>(bytes.data());
  size_t left = bytes.size();
  int result = Z_OK;
  char buffer[1 << 16];
  try {
    out.reserve(std::min<uint64_t>(bytes.size() * uint64_t{4}, limit));
    for (;;) {
      FeedInput(stream, next, left);
      stream.next_out = reinterpret_cast<unsigned char*>(buffer);
      stream.avail_out = sizeof(buffer);
      result = inflate(&stream, Z_NO_FLUSH);
      const size_t produced = sizeof(buffer) - stream.avail_out;
      if (out.size() + produced > limit) {
        inflateEnd(&stream);
        return OverLimit(path, limit, limits,
                         "decompressed: 64 times the compressed size, at "
                         "most 16 GiB");
      }
      out.append(buffer, produced);
      if (result == Z_STREAM_END) {
        // Concatenated gzip members (as `cat a.gz b.gz` makes) are one file.
        if (stream.avail_in == 0 && left == 0) break;
        if (inflateReset(&stream) != Z_OK) break;
        continue;
      }
      if (result == Z_BUF_ERROR && stream.avail_in == 0 && left == 0) break;
      if (result != Z_OK) break;
    }
  } catch (const std::bad_alloc&) {
    inflateEnd(&stream);
    return OutOfMemory(path, out.size());
  }
  inflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return absl::DataLossError(absl::StrCat(
        "gzip: ", path, ": corrupt or truncated compressed data (",
        stream.msg != nullptr ? stream.msg : "unexpected end of input", ")"));
  }
  return out;
}

// Reads `fd` to its end into `*bytes`, at most `limit` bytes.
absl::Status ReadAll(int fd, const std::string& path, uint64_t limit,
                     const ReadLimits& limits, std::string* bytes) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "read: cannot read", path);
    }
    if (n == 0) return absl::OkStatus();
    if (bytes->size() + static_cast<size_t>(n) > limit) {
      return OverLimit(path, limit, limits,
                       "not a regular file: at most 16 GiB");
    }
    try {
      bytes->append(buffer, static_cast<size_t>(n));
    } catch (const std::bad_alloc&) {
      return OutOfMemory(path, bytes->size());
    }
  }
}

ReadLimits& DefaultReadLimits() {
  static ReadLimits limits;
  return limits;
}

}  // namespace

namespace internal {

bool EndsWithGz(std::string_view path) {
  return path.size() >= 3 && path.substr(path.size() - 3) == ".gz";
}

struct GzipStream::State {
  z_stream stream{};
  bool initialised = false;
};

GzipStream::GzipStream() : state_(std::make_unique<State>()) {}

GzipStream::~GzipStream() {
  if (state_->initialised) deflateEnd(&state_->stream);
}

absl::StatusOr<std::unique_ptr<GzipStream>> GzipStream::Create() {
  std::unique_ptr<GzipStream> gzip(new GzipStream());
  // Level 1: traces are large and written at session end; speed matters more
  // than the last few percent of size. 16 + MAX_WBITS: gzip framing.
  if (deflateInit2(&gzip->state_->stream, Z_BEST_SPEED, Z_DEFLATED,
                   16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("gzip: cannot initialise zlib");
  }
  gzip->state_->initialised = true;
  return gzip;
}

absl::Status GzipStream::Compress(std::string_view bytes, bool finish,
                                  std::string* out) {
  z_stream& stream = state_->stream;
  const unsigned char* next =
      reinterpret_cast<const unsigned char*>(bytes.data());
  size_t left = bytes.size();
  for (;;) {
    FeedInput(stream, next, left);
    const size_t produced = out->size();
    const size_t room = std::max<size_t>(
        size_t{64} * 1024, std::min<size_t>(stream.avail_in / 2, kZlibChunk));
    out->resize(produced + room);
    stream.next_out = reinterpret_cast<unsigned char*>(out->data() + produced);
    stream.avail_out = static_cast<uInt>(room);
    const bool last_input = left == 0;
    const int result =
        deflate(&stream, finish && last_input ? Z_FINISH : Z_NO_FLUSH);
    out->resize(produced + room - stream.avail_out);
    if (result == Z_STREAM_END) return absl::OkStatus();
    if (result != Z_OK && result != Z_BUF_ERROR) {
      return absl::InternalError(
          absl::StrCat("gzip: compression failed (zlib error ", result, ")"));
    }
    // Without `finish`, stop once zlib has taken all input and has no more
    // output ready; with it, go on until Z_STREAM_END.
    if (!finish && last_input && stream.avail_in == 0 &&
        stream.avail_out != 0) {
      return absl::OkStatus();
    }
  }
}

OutputFile::OutputFile(std::string path, std::string temp_path, std::string dir,
                       int fd, std::unique_ptr<GzipStream> gzip)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      dir_(std::move(dir)),
      fd_(fd),
      gzip_(std::move(gzip)) {}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(
    const std::string& path, bool gzip) {
  if (path.empty()) {
    return absl::InvalidArgumentError("write: empty output path");
  }
  const std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path();
  if (!dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) {
      return ErrnoError(error.value(), "write: cannot create the directory of",
                        path);
    }
  } else {
    dir = ".";
  }
  std::unique_ptr<GzipStream> compressor;
  if (gzip) {
    SPANPROF_ASSIGN_OR_RETURN(compressor, GzipStream::Create());
  }

  // A unique name in the same directory, so that rename() is atomic. The
  // file is created with 0666 and the process umask, like a plain open().
  static std::atomic<uint64_t> counter{0};
  const std::string stem =
      (dir / ("." + target.filename().string() + ".tmp.")).string();
  int fd = -1;
  std::string temp_path;
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp_path = absl::StrCat(stem, ::getpid(), ".",
                             counter.fetch_add(1, std::memory_order_relaxed));
    fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                0666);
    if (fd >= 0 || errno != EEXIST) break;
  }
  if (fd < 0) {
    return ErrnoError(errno, "write: cannot create a temporary file for", path);
  }
  return std::unique_ptr<OutputFile>(new OutputFile(
      path, std::move(temp_path), dir.string(), fd, std::move(compressor)));
}

absl::Status OutputFile::WriteRaw(std::string_view bytes) {
  if (const int error = WriteAll(fd_, bytes); error != 0) {
    return ErrnoError(error, "write: cannot write", path_);
  }
  return absl::OkStatus();
}

absl::Status OutputFile::Write(std::string_view bytes) {
  if (committed_ || fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("write: ", path_, " is already closed"));
  }
  if (gzip_ == nullptr) return WriteRaw(bytes);
  compressed_.clear();
  SPANPROF_RETURN_IF_ERROR(gzip_->Compress(bytes, false, &compressed_));
  return WriteRaw(compressed_);
}

absl::Status OutputFile::Commit() {
  if (committed_ || fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("write: ", path_, " is already closed"));
  }
  if (gzip_ != nullptr) {
    compressed_.clear();
    SPANPROF_RETURN_IF_ERROR(gzip_->Compress({}, true, &compressed_));
    SPANPROF_RETURN_IF_ERROR(WriteRaw(compressed_));
  }
  if (::fsync(fd_) != 0) return ErrnoError(errno, "write: cannot fsync", path_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return ErrnoError(errno, "write: cannot close", path_);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return ErrnoError(errno, "write: cannot rename the temporary file onto",
                      path_);
  }
  committed_ = true;
  // Make the rename itself durable; failure here does not lose the data
  // already written, so it is not reported.
  const int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return absl::OkStatus();
}

}  // namespace internal

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes) {
  SPANPROF_ASSIGN_OR_RETURN(std::unique_ptr<internal::OutputFile> file,
                            internal::OutputFile::Create(path, false));
  SPANPROF_RETURN_IF_ERROR(file->Write(bytes));
  return file->Commit();
}

void SetDefaultReadLimits(const ReadLimits& limits) {
  DefaultReadLimits() = limits;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return ReadFile(path, DefaultReadLimits());
}

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const ReadLimits& limits) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "read: cannot open", path);
  std::string bytes;
  // A regular file is bounded by its size; anything else (a device, a
  // FIFO) may never end.
  uint64_t limit = limits.max_input_bytes != 0 ? limits.max_input_bytes
                                               : kDefaultMaxInputBytes;
  struct stat info {};
  if (::fstat(fd, &info) == 0) {
    if (S_ISDIR(info.st_mode)) {
      ::close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat("read: ", path, " is a directory, not a file"));
    }
    if (S_ISREG(info.st_mode) && limits.max_input_bytes == 0) {
      limit = std::numeric_limits<uint64_t>::max();
    }
    if (S_ISREG(info.st_mode) && info.st_size > 0) {
      try {
        bytes.reserve(
            std::min<uint64_t>(static_cast<uint64_t>(info.st_size), limit));
      } catch (const std::bad_alloc&) {
        ::close(fd);
        return OutOfMemory(path, 0);
      }
    }
  }
  const absl::Status read = ReadAll(fd, path, limit, limits, &bytes);
  ::close(fd);
  SPANPROF_RETURN_IF_ERROR(read);
  if (IsGzip(bytes)) return Gunzip(bytes, path, limits);
  return bytes;
}

absl::StatusOr<std::string> GzipCompress(std::string_view bytes) {
  SPANPROF_ASSIGN_OR_RETURN(std::unique_ptr<internal::GzipStream> gzip,
                            internal::GzipStream::Create());
  std::string out;
  out.reserve(bytes.size() / 4 + 64);
  SPANPROF_RETURN_IF_ERROR(gzip->Compress(bytes, true, &out));
  return out;
}

}  // namespace spanprof::analysis
