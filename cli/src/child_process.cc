#include "child_process.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace spanprof::cli::internal {
namespace {

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// A file descriptor closed at scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

absl::StatusOr<int> OpenOutput(const std::string& path) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat(path, ": cannot create: ", ErrnoText(errno)));
  }
  return fd;
}

// The parent's environment without the variables `env` sets, then `env`.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    bool replaced = false;
    for (const auto& [key, value] : env) replaced |= key == name;
    if (!replaced) out.emplace_back(text);
  }
  for (const auto& [key, value] : env)
    out.push_back(absl::StrCat(key, "=", value));
  return out;
}

// Pointers into `words` with a terminating null, as exec wants them.
std::vector<char*> CArray(std::vector<std::string>& words) {
  std::vector<char*> out;
  out.reserve(words.size() + 1);
  for (std::string& word : words) out.push_back(word.data());
  out.push_back(nullptr);
  return out;
}

absl::StatusOr<pid_t> Spawn(const ChildSpec& spec, int out_fd, int err_fd,
                            const sigset_t& child_mask) {
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> envp = ChildEnvironment(spec.env);
  std::vector<char*> c_argv = CArray(argv);
  std::vector<char*> c_envp = CArray(envp);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  // A process group of its own (so one kill reaches everything the program
  // started), and the signal mask the caller had before `StopSignals`.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setsigmask(&attributes, &child_mask);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, c_argv[0], &actions, &attributes,
                                 c_argv.data(), c_envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", spec.argv[0], ": ", ErrnoText(error)));
  }
  return pid;
}

absl::StatusOr<int> Wait(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(absl::StrCat("waitpid: ", ErrnoText(errno)));
    }
  }
  return status;
}

// Waits for `pid` to end or for a stop signal; on a stop signal kills the
// child's whole group (before reaping the child, so that the group id cannot
// have been reused) and then reaps it. The signals are blocked, so one that
// arrives between two checks stays pending for `sigwaitinfo`.
absl::StatusOr<int> WaitOrStop(pid_t pid, StopSignals& stop) {
  for (;;) {
    int status = 0;
    const pid_t reaped = waitpid(pid, &status, WNOHANG);
    if (reaped == pid) return status;
    if (reaped < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("waitpid: ", ErrnoText(errno)));
    }
    siginfo_t info = {};
    const int signal = sigwaitinfo(&stop.waited(), &info);
    if (signal > 0 && signal != SIGCHLD) {
      stop.Record(signal);
      break;
    }
  }
  kill(-pid, SIGKILL);
  return Wait(pid);
}

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

bool IsStopSignal(int signal) {
  return std::ranges::any_of(kStopSignals,
                             [signal](int stop) { return stop == signal; });
}

}  // namespace

StopSignals::StopSignals() {
  sigemptyset(&waited_);
  sigaddset(&waited_, SIGCHLD);
  // A signal the caller was started with ignored (nohup, a background job)
  // stays ignored: blocking it would queue it for sigwaitinfo instead.
  for (const int signal : kStopSignals) {
    struct sigaction current = {};
    if (sigaction(signal, nullptr, &current) == 0 &&
        current.sa_handler == SIG_IGN) {
      continue;
    }
    sigaddset(&waited_, signal);
  }
  pthread_sigmask(SIG_BLOCK, &waited_, &original_);
}

StopSignals::~StopSignals() {
  pthread_sigmask(SIG_SETMASK, &original_, nullptr);
}

int StopSignals::Poll() {
  sigset_t stops = waited_;
  sigdelset(&stops, SIGCHLD);
  const timespec now = {0, 0};
  siginfo_t info = {};
  for (int signal = sigtimedwait(&stops, &info, &now); signal > 0;
       signal = sigtimedwait(&stops, &info, &now)) {
    Record(signal);
  }
  return received_;
}

void StopSignals::Record(int signal) {
  if (received_ == 0 && IsStopSignal(signal)) received_ = signal;
}

absl::StatusOr<ChildExit> RunChild(const ChildSpec& spec, StopSignals& stop) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return absl::InvalidArgumentError("no program to run");
  }
  if (stop.Poll() != 0) return ChildExit{.stopped_by = stop.received()};
  absl::StatusOr<int> out_fd = OpenOutput(spec.stdout_path);
  if (!out_fd.ok()) return out_fd.status();
  const Fd out(*out_fd);
  absl::StatusOr<int> err_fd = OpenOutput(spec.stderr_path);
  if (!err_fd.ok()) return err_fd.status();
  const Fd err(*err_fd);

  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<pid_t> pid =
      Spawn(spec, out.get(), err.get(), stop.original());
  if (!pid.ok()) return pid.status();
  absl::StatusOr<int> status = WaitOrStop(*pid, stop);
  if (!status.ok()) return status.status();
  const std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;

  ChildExit exit;
  exit.seconds = elapsed.count();
  // A stop signal that came with the child's end (Ctrl-C reaches both when
  // the child puts itself in the foreground group) stops the caller too.
  exit.stopped_by = stop.Poll();
  if (WIFSIGNALED(*status)) {
    exit.signaled = true;
    exit.code = WTERMSIG(*status);
  } else {
    exit.code = WEXITSTATUS(*status);
  }
  return exit;
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  if (abbrev == nullptr) return absl::StrCat("signal ", signal);
  return absl::StrCat("SIG", abbrev);
}

std::string Describe(const ChildExit& exit) {
  if (!exit.signaled) return absl::StrCat("exited with status ", exit.code);
  const char* abbrev = sigabbrev_np(exit.code);
  const char* description = sigdescr_np(exit.code);
  if (abbrev == nullptr || description == nullptr) {
    return absl::StrCat("was killed by signal ", exit.code);
  }
  return absl::StrCat("was killed by signal ", exit.code, " (SIG", abbrev, ", ",
                      description, ")");
}

std::string ShellQuote(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& word : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !word.empty() &&
                       word.find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                           "TUVWXYZ0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += word;
      continue;
    }
    out += '\'';
    for (const char c : word) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace spanprof::cli::internal
