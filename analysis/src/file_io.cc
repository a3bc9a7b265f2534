#include "spanprof/analysis/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace spanprof::analysis {
namespace {

// zlib counts in `uInt`; feed it at most this much per call.
constexpr size_t kZlibChunk = size_t{1} << 30;

absl::Status ErrnoError(int error, std::string_view what,
                        const std::string& path) {
  const std::string message =
      absl::StrCat(std::string(what), " ", path, ": ", std::strerror(error));
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

// Closes a file descriptor and, unless released, unlinks the temporary file.
class TempFile {
 public:
  TempFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // Closes the descriptor; returns errno on failure, 0 otherwise.
  int Close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? 0 : errno;
  }
  // The file was renamed into place: do not unlink it.
  void Release() { path_.clear(); }

 private:
  int fd_;
  std::string path_;
};

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

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

absl::StatusOr<std::string> Gunzip(std::string_view bytes,
                                   const std::string& path) {
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip header and trailer.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError(
        absl::StrCat("gzip: cannot initialise zlib for ", path));
  }
  std::string out;
  out.reserve(bytes.size() * 4);
  const unsigned char* next =
      reinterpret_cast<const unsigned char*>(bytes.data());
  size_t left = bytes.size();
  int result = Z_OK;
  char buffer[1 << 16];
  for (;;) {
    if (stream.avail_in == 0 && left > 0) {
      const size_t chunk = std::min(left, kZlibChunk);
      // zlib's API takes a non-const pointer but does not write through it.
      stream.next_in = const_cast<unsigned char*>(next);
      stream.avail_in = static_cast<uInt>(chunk);
      next += chunk;
      left -= chunk;
    }
    stream.next_out = reinterpret_cast<unsigned char*>(buffer);
    stream.avail_out = sizeof(buffer);
    result = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
    if (result == Z_STREAM_END) {
      // Concatenated gzip members (as `cat a.gz b.gz` makes) are one file.
      if (stream.avail_in == 0 && left == 0) break;
      if (inflateReset(&stream) != Z_OK) break;
      continue;
    }
    if (result == Z_BUF_ERROR && stream.avail_in == 0 && left == 0) break;
    if (result != Z_OK) break;
  }
  inflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return absl::DataLossError(absl::StrCat(
        "gzip: ", path, ": corrupt or truncated compressed data (",
        stream.msg != nullptr ? stream.msg : "unexpected end of input", ")"));
  }
  return out;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view bytes) {
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
  TempFile temp(fd, temp_path);
  if (const int error = WriteAll(temp.fd(), bytes); error != 0) {
    return ErrnoError(error, "write: cannot write", path);
  }
  if (::fsync(temp.fd()) != 0) {
    return ErrnoError(errno, "write: cannot fsync", path);
  }
  if (const int error = temp.Close(); error != 0) {
    return ErrnoError(error, "write: cannot close", path);
  }
  if (::rename(temp.path().c_str(), path.c_str()) != 0) {
    return ErrnoError(errno, "write: cannot rename the temporary file onto",
                      path);
  }
  temp.Release();
  // Make the rename itself durable; failure here does not lose the data
  // already written, so it is not reported.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "read: cannot open", path);
  std::string bytes;
  struct stat info {};
  if (::fstat(fd, &info) == 0) {
    if (S_ISDIR(info.st_mode)) {
      ::close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat("read: ", path, " is a directory, not a file"));
    }
    if (S_ISREG(info.st_mode) && info.st_size > 0) {
      bytes.reserve(static_cast<size_t>(info.st_size));
    }
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return ErrnoError(error, "read: cannot read", path);
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (IsGzip(bytes)) return Gunzip(bytes, path);
  return bytes;
}

absl::StatusOr<std::string> GzipCompress(std::string_view bytes) {
  z_stream stream{};
  // Level 1: traces are large and written at session end; speed matters more
  // than the last few percent of size. 16 + MAX_WBITS: gzip framing.
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("gzip: cannot initialise zlib");
  }
  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(std::min<size_t>(
                                       bytes.size(), kZlibChunk))) +
             64);
  size_t produced = 0;
  const unsigned char* next =
      reinterpret_cast<const unsigned char*>(bytes.data());
  size_t left = bytes.size();
  int result = Z_OK;
  for (;;) {
    if (stream.avail_in == 0 && left > 0) {
      const size_t chunk = std::min(left, kZlibChunk);
      stream.next_in = const_cast<unsigned char*>(next);
      stream.avail_in = static_cast<uInt>(chunk);
      next += chunk;
      left -= chunk;
    }
    if (produced == out.size()) out.resize(out.size() * 2);
    const size_t room = std::min(out.size() - produced, kZlibChunk);
    stream.next_out = reinterpret_cast<unsigned char*>(out.data() + produced);
    stream.avail_out = static_cast<uInt>(room);
    result = deflate(&stream, left == 0 ? Z_FINISH : Z_NO_FLUSH);
    produced += room - stream.avail_out;
    if (result == Z_STREAM_END) break;
    if (result != Z_OK && result != Z_BUF_ERROR) break;
  }
  deflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return absl::InternalError(
        absl::StrCat("gzip: compression failed (zlib error ", result, ")"));
  }
  out.resize(produced);
  return out;
}

}  // namespace spanprof::analysis
