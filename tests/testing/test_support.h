// Shared helpers for tests that use real files and real processes: a scratch
// directory removed at scope exit, a process runner that captures stdout,
// stderr and the exit code, and the lookup of the outside tools that some
// e2e checks need (on $PATH, or where a `scripts/install-*` script put them).
#ifndef SPANPROF_TESTS_TESTING_TEST_SUPPORT_H_
#define SPANPROF_TESTS_TESTING_TEST_SUPPORT_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

extern char** environ;

namespace spanprof::testing {

// `TempDir` is a fresh directory under $TMPDIR, removed with its contents
// when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "spanprof-test-XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const {
    return (path_ / name).string();
  }

 private:
  std::filesystem::path path_;
};

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// `OpenFifo` holds a FIFO open for reading and writing (Linux opens a FIFO
// with O_RDWR without waiting for a peer), so that a writer's open returns at
// once, and a writer that never opens the FIFO (one that replaced it) leaves
// nothing to read instead of a reader blocked forever. `Take()` returns what
// the writer put in the pipe's buffer (up to its capacity, 64 KiB).
class OpenFifo {
 public:
  explicit OpenFifo(const std::string& path)
      : fd_(open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)) {}
  ~OpenFifo() {
    if (fd_ >= 0) close(fd_);
  }
  OpenFifo(const OpenFifo&) = delete;
  OpenFifo& operator=(const OpenFifo&) = delete;

  bool ok() const { return fd_ >= 0; }
  std::string Take() {
    std::string bytes;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = read(fd_, buffer, sizeof(buffer))) > 0) {
      bytes.append(buffer, static_cast<size_t>(n));
    }
    return bytes;
  }

 private:
  int fd_;
};

struct ProcessResult {
  int exit_code = -1;   // -1 when killed by a signal
  int term_signal = 0;  // the signal that killed it, 0 when it exited
  std::string out;
  std::string err;
};

// Starts `argv` (argv[0] is a path) with the current environment plus `env`
// (a value of "\x01unset" removes the variable), in `cwd` when not empty,
// its stdout and stderr going to `out_path` and `err_path`. Returns its pid,
// or -1 when it could not be started.
inline pid_t SpawnProcess(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env,
                          const std::string& cwd, const std::string& out_path,
                          const std::string& err_path) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos)
      merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [key, value] : env) {
    if (value == "\x01unset") {
      merged.erase(key);
    } else {
      merged[key] = value;
    }
  }
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : merged)
    env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& s : args) argp.push_back(s.data());
  argp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, argp[0], &actions, nullptr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

// Waits for `pid` (from SpawnProcess) and reads what it wrote.
inline ProcessResult WaitProcess(pid_t pid, const std::string& out_path,
                                 const std::string& err_path) {
  ProcessResult result;
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  result.out = ReadText(out_path);
  result.err = ReadText(err_path);
  return result;
}

// Runs `argv` to its end (SpawnProcess's arguments).
inline ProcessResult RunProcess(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& env = {},
    const std::string& cwd = "") {
  TempDir io;
  const std::string out_path = io.File("stdout");
  const std::string err_path = io.File("stderr");
  const pid_t pid = SpawnProcess(argv, env, cwd, out_path, err_path);
  if (pid < 0) {
    ProcessResult result;
    result.err = "posix_spawn failed for " + argv[0];
    return result;
  }
  return WaitProcess(pid, out_path, err_path);
}

// True when process `pid` no longer runs: it does not exist, or it is a
// zombie waiting for whoever now holds it to reap it.
inline bool ProcessEnded(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)),
                   std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() &&
         text[paren + 2] == 'Z';
}

// Polls until `ProcessEnded(pid)` (a killed process takes a moment to go);
// false when it still runs after `limit`.
inline bool WaitForProcessEnd(
    pid_t pid, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ProcessEnded(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// The first executable called `name` on $PATH, or nullopt.
inline std::optional<std::string> FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0 &&
        !std::filesystem::is_directory(candidate)) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

// The folder where a `scripts/install-*` script put a tool's files: $`env_var`
// when it is set and not empty, else the scripts' default,
// <source>/build/`build_subdir`. (Every test target defines
// SPANPROF_TEST_SOURCE_DIR; see tests/CMakeLists.txt.)
inline std::filesystem::path ToolInstallDir(const char* env_var,
                                            const std::string& build_subdir) {
  if (const char* env = std::getenv(env_var); env && *env) {
    return std::filesystem::path(env);
  }
  return std::filesystem::path(SPANPROF_TEST_SOURCE_DIR) / "build" /
         build_subdir;
}

// True when the run is CI's (`CI=true`, as CI sets it): there a check whose
// tool or file is missing must fail, never skip unseen.
inline bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// Under a sanitizer, a child forked while another thread of the program is
// inside malloc can deadlock at its first allocation: the sanitizers'
// allocator (GCC 12's and clang 14's) takes no lock around fork(), and a
// thread that is starting allocates inside it. glibc's malloc does lock
// around fork, so programs built normally are safe. A test that forks while
// a session's threads run calls this first: it polls until every other
// thread of the process is asleep (state S in /proc/self/task/<tid>/stat),
// for at most 10 s. Without a sanitizer it does nothing, so the Release
// suite forks as soon as a program would.
inline void LetOtherThreadsSleepBeforeForkUnderSanitizers() {
#ifdef SPANPROF_TEST_SANITIZED
  const std::string self = std::to_string(gettid());
  for (int i = 0; i < 10000; ++i) {
    bool asleep = true;
    std::error_code error;
    for (const std::filesystem::directory_entry& task :
         std::filesystem::directory_iterator("/proc/self/task", error)) {
      if (task.path().filename().string() == self) continue;
      std::ifstream stat(task.path() / "stat");
      const std::string text((std::istreambuf_iterator<char>(stat)),
                             std::istreambuf_iterator<char>());
      const size_t name_end = text.rfind(')');
      if (name_end != std::string::npos && name_end + 2 < text.size() &&
          text[name_end + 2] != 'S') {
        asleep = false;
        break;
      }
    }
    if (asleep) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
#endif
}

}  // namespace spanprof::testing

// Skips the current test with `message` when a prerequisite is missing on a
// developer's machine; fails it instead under CI=true. Use in a test body or
// a void SetUp().
#define SPANPROF_SKIP_UNLESS_CI(message)                                       \
  do {                                                                         \
    if (::spanprof::testing::InCi()) {                                         \
      GTEST_FAIL() << "CI=true, so a missing prerequisite fails: " << message; \
    }                                                                          \
    GTEST_SKIP() << message;                                                   \
  } while (false)

#endif  // SPANPROF_TESTS_TESTING_TEST_SUPPORT_H_
