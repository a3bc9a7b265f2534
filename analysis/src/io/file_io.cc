#include "spanprof/analysis/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
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
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

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

bool EndsWithGz(std::string_view path) { return HasExtension(path, ".gz"); }

namespace {

// Longest file name most file systems allow (NAME_MAX).
constexpr size_t kMaxNameBytes = 255;
// Symbolic links followed before giving up (the kernel's own limit).
constexpr int kMaxLinkHops = 40;

// `.<start of name>.<pid>.<n>.tmp`, cut to fit kMaxNameBytes whatever the
// length of the target's own name.
std::string TempName(const std::string& name, uint64_t serial) {
  const std::string tail = absl::StrCat(".", ::getpid(), ".", serial, ".tmp");
  const size_t room = kMaxNameBytes - 1 - tail.size();
  return absl::StrCat(".", name.substr(0, std::min(name.size(), room)), tail);
}

// Whether `entry` is a temporary name of `name` (TempName's form) made by a
// process that no longer runs; its pid in `*pid`.
bool IsStaleTempName(const std::string& entry, const std::string& name) {
  if (entry.size() < 8 || entry[0] != '.' ||
      entry.compare(entry.size() - 4, 4, ".tmp") != 0) {
    return false;
  }
  // `.<start of name>.<pid>.<n>.tmp`: two numbers before ".tmp".
  const std::string_view body(entry.data() + 1, entry.size() - 5);
  const size_t serial_dot = body.rfind('.');
  if (serial_dot == std::string_view::npos || serial_dot == 0) return false;
  const size_t pid_dot = body.rfind('.', serial_dot - 1);
  if (pid_dot == std::string_view::npos) return false;
  const std::string_view prefix = body.substr(0, pid_dot);
  const std::string_view pid_text =
      body.substr(pid_dot + 1, serial_dot - pid_dot - 1);
  const std::string_view serial = body.substr(serial_dot + 1);
  const auto digits = [](std::string_view t) {
    return !t.empty() && t.size() <= 19 &&
           std::all_of(t.begin(), t.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(pid_text) || !digits(serial) || prefix.empty() ||
      name.compare(0, prefix.size(), prefix) != 0) {
    return false;
  }
  const auto pid = static_cast<pid_t>(std::stoll(std::string(pid_text)));
  return pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

// A connected stream socket to the Unix socket at `path`, or -1 with errno.
int ConnectUnixSocket(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // sockaddr_un is passed as the generic sockaddr, as the API requires.
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address),
                sizeof(address)) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

// A new temporary file beside `file` (parent directories created), so that
// the final rename() is atomic. Created with 0666 and the process umask, like
// a plain open().
absl::StatusOr<OutputFile::Opened> OpenTemporary(const std::string& path,
                                                 const std::string& file) {
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path target(file);
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
  OutputFile::Opened opened;
  opened.target.kind = OutputFile::TargetKind::kAtomic;
  opened.target.file = file;
  opened.target.dir = dir.string();
  for (int attempt = 0; attempt < 100; ++attempt) {
    opened.target.temp_path =
        (dir / TempName(target.filename().string(),
                        counter.fetch_add(1, std::memory_order_relaxed)))
            .string();
    opened.fd = ::open(opened.target.temp_path.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (opened.fd >= 0 || errno != EEXIST) break;
  }
  if (opened.fd < 0) {
    return ErrnoError(errno, "write: cannot create a temporary file for", path);
  }
  return opened;
}

// Opens what is at `file` (no link) for writing where it is.
absl::StatusOr<OutputFile::Opened> OpenInPlace(const std::string& path,
                                               const std::string& file,
                                               mode_t mode) {
  if (S_ISDIR(mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("write: ", path, " is a directory, not a file"));
  }
  if (S_ISBLK(mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "write: ", path, " is a block device; spanprof does not write one"));
  }
  OutputFile::Opened opened;
  opened.target.kind = OutputFile::TargetKind::kInPlace;
  opened.target.file = file;
  opened.fd = S_ISSOCK(mode)
                  ? ConnectUnixSocket(file)
                  : ::open(file.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (opened.fd < 0) return ErrnoError(errno, "write: cannot open", path);
  return opened;
}

}  // namespace

absl::StatusOr<std::string> ResolveLinks(const std::string& path) {
  std::filesystem::path current(path);
  for (int hop = 0; hop < kMaxLinkHops; ++hop) {
    struct stat info {};
    if (::lstat(current.c_str(), &info) != 0) {
      // Nothing there yet (or a parent that is a file, which creating the
      // directories then reports).
      if (errno == ENOENT || errno == ENOTDIR) return current.string();
      return ErrnoError(errno, "write: cannot inspect", path);
    }
    if (!S_ISLNK(info.st_mode)) return current.string();
    std::error_code error;
    const std::filesystem::path link =
        std::filesystem::read_symlink(current, error);
    if (error) {
      return ErrnoError(error.value(), "write: cannot read the link", path);
    }
    current = link.is_absolute() ? link : current.parent_path() / link;
  }
  return ErrnoError(ELOOP, "write: cannot resolve", path);
}

absl::StatusOr<OutputFile::Opened> OutputFile::OpenTarget(
    const std::string& path) {
  if (path == kStandardOutputPath) {
    // Whatever the program already put in stdio's buffer comes first.
    std::fflush(stdout);
    Opened opened;
    opened.target.kind = TargetKind::kStdout;
    opened.fd = STDOUT_FILENO;
    return opened;
  }
  // What the kernel reaches through every link, kernel-made ones such as
  // /dev/stdout -> /proc/self/fd/1 -> pipe:[...] included: anything but a
  // regular file is opened through the path itself.
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    return OpenInPlace(path, path, info.st_mode);
  }
  SPANPROF_ASSIGN_OR_RETURN(const std::string file, ResolveLinks(path));
  if (::lstat(file.c_str(), &info) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      return ErrnoError(errno, "write: cannot inspect", path);
    }
    return OpenTemporary(path, file);
  }
  if (S_ISREG(info.st_mode)) return OpenTemporary(path, file);
  return OpenInPlace(path, file, info.st_mode);
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

OutputFile::OutputFile(std::string path, Target target, int fd,
                       std::unique_ptr<GzipStream> gzip)
    : path_(std::move(path)),
      target_(std::move(target)),
      fd_(fd),
      gzip_(std::move(gzip)) {}

OutputFile::~OutputFile() {
  if (fd_ >= 0 && target_.kind != TargetKind::kStdout) ::close(fd_);
  if (!committed_ && target_.kind == TargetKind::kAtomic) {
    ::unlink(target_.temp_path.c_str());
  }
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(
    const std::string& path, bool gzip) {
  if (path.empty()) {
    return absl::InvalidArgumentError("write: empty output path");
  }
  std::unique_ptr<GzipStream> compressor;
  if (gzip) {
    SPANPROF_ASSIGN_OR_RETURN(compressor, GzipStream::Create());
  }
  SPANPROF_ASSIGN_OR_RETURN(Opened opened, OpenTarget(path));
  return std::unique_ptr<OutputFile>(new OutputFile(
      path, std::move(opened.target), opened.fd, std::move(compressor)));
}

absl::Status OutputFile::WriteRaw(std::string_view bytes) {
  if (const int error = WriteAll(fd_, bytes); error != 0) {
    return ErrnoError(error, "write: cannot write", path_);
  }
  written_ += bytes.size();
  // The commit's fsync waits until the disk holds every byte: for a trace
  // of a hundred MB that was 45-52 ms on this project's machines, a tenth
  // of a 5 M-span session end. Each 8 MiB written is handed to the disk
  // at once instead (started, not waited for), so that the fsync waits for
  // the last few MiB only. An error here is the fsync's to report.
  constexpr uint64_t kFlushBytes = uint64_t{8} << 20;
  if (target_.kind == TargetKind::kAtomic &&
      written_ - flushed_ >= kFlushBytes) {
    ::sync_file_range(fd_, static_cast<off_t>(flushed_),
                      static_cast<off_t>(written_ - flushed_),
                      SYNC_FILE_RANGE_WRITE);
    flushed_ = written_;
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
  const int fd = fd_;
  fd_ = -1;
  if (target_.kind == TargetKind::kStdout) {
    committed_ = true;  // standard output stays open for the caller
    return absl::OkStatus();
  }
  if (target_.kind == TargetKind::kInPlace) {
    // A device, FIFO or socket: nothing to fsync or rename.
    committed_ = true;
    if (::close(fd) != 0)
      return ErrnoError(errno, "write: cannot close", path_);
    return absl::OkStatus();
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    return ErrnoError(error, "write: cannot fsync", path_);
  }
  if (::close(fd) != 0) return ErrnoError(errno, "write: cannot close", path_);
  if (::rename(target_.temp_path.c_str(), target_.file.c_str()) != 0) {
    return ErrnoError(errno, "write: cannot rename the temporary file onto",
                      path_);
  }
  committed_ = true;
  // Make the rename itself durable; failure here does not lose the data
  // already written, so it is not reported.
  const int dir_fd =
      ::open(target_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
  if (IsGzip(bytes)) {
    SPANPROF_ASSIGN_OR_RETURN(bytes, Gunzip(bytes, path, limits));
  }
  // A UTF-8 byte order mark, as some editors write, is not part of the JSON.
  if (bytes.starts_with(kUtf8Bom)) bytes.erase(0, kUtf8Bom.size());
  return bytes;
}

absl::Status CheckOutputDirectory(const std::string& dir) {
  // The directory itself, or the nearest of its parents that exists: the
  // writer creates the rest there.
  std::filesystem::path where = dir.empty() ? "." : dir;
  struct stat info {};
  while (::stat(where.c_str(), &info) != 0) {
    // ENOTDIR: a parent is a file; the loop stops there and names it.
    if (errno != ENOENT && errno != ENOTDIR) {
      return ErrnoError(errno, "cannot inspect", dir);
    }
    const std::filesystem::path parent = where.parent_path();
    if (parent.empty() || parent == where) {
      where = ".";
      break;
    }
    where = parent;
  }
  if (::stat(where.c_str(), &info) == 0 && !S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create the directory ", dir, ": ", where.string(),
                     " is not a directory"));
  }
  if (::access(where.c_str(), W_OK | X_OK) != 0) {
    return ErrnoError(errno,
                      where == dir
                          ? "cannot write in the directory"
                          : "cannot create the directory " + dir + " in",
                      where.string());
  }
  return absl::OkStatus();
}

absl::Status CheckOutput(const std::string& path) {
  if (path == kStandardOutputPath) return absl::OkStatus();
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode)) {
    SPANPROF_ASSIGN_OR_RETURN(const std::string file,
                              internal::ResolveLinks(path));
    return CheckOutputDirectory(
        std::filesystem::path(file).parent_path().string());
  }
  if (S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is a directory, not a file"));
  }
  if (S_ISBLK(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is a block device; spanprof does not write one"));
  }
  if (::access(path.c_str(), W_OK) != 0) {
    return ErrnoError(errno, "cannot write", path);
  }
  return absl::OkStatus();
}

bool HasExtension(std::string_view path, std::string_view extension) {
  if (path.size() < extension.size()) return false;
  const std::string_view end = path.substr(path.size() - extension.size());
  for (size_t i = 0; i < end.size(); ++i) {
    const auto lower = [](char c) {
      return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    };
    if (lower(end[i]) != lower(extension[i])) return false;
  }
  return true;
}

bool SameOutputTarget(const std::string& a, const std::string& b) {
  if (a == kStandardOutputPath || b == kStandardOutputPath) return a == b;
  struct stat info_a {};
  struct stat info_b {};
  if (::stat(a.c_str(), &info_a) == 0 && ::stat(b.c_str(), &info_b) == 0) {
    // A character device (a terminal, /dev/null) keeps nothing that a
    // second write could destroy.
    return info_a.st_dev == info_b.st_dev && info_a.st_ino == info_b.st_ino &&
           !S_ISCHR(info_a.st_mode);
  }
  // One does not exist (yet): `x/../t.json` with no `x` still writes
  // `t.json`, as the writer creates `x` first; a dangling link writes its
  // target.
  const absl::StatusOr<std::string> resolved_a = internal::ResolveLinks(a);
  const absl::StatusOr<std::string> resolved_b = internal::ResolveLinks(b);
  const std::string file_a = resolved_a.ok() ? *resolved_a : a;
  const std::string file_b = resolved_b.ok() ? *resolved_b : b;
  const auto normal = [](const std::string& file) {
    std::error_code error;
    const std::filesystem::path absolute =
        std::filesystem::absolute(file, error).lexically_normal();
    std::filesystem::path path =
        std::filesystem::weakly_canonical(absolute, error);
    return error ? absolute : path;
  };
  return normal(file_a) == normal(file_b);
}

size_t RemoveStaleTemporaryFiles(const std::string& path) {
  if (path.empty() || path == kStandardOutputPath) return 0;
  const std::filesystem::path target(path);
  const std::string name = target.filename().string();
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : ".";
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  size_t removed = 0;
  for (; !error && it != std::filesystem::directory_iterator();
       it.increment(error)) {
    const std::string entry = it->path().filename().string();
    if (it->is_regular_file(error) && internal::IsStaleTempName(entry, name) &&
        ::unlink(it->path().c_str()) == 0) {
      ++removed;
    }
  }
  return removed;
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
