// run_probe: a tiny profiled program for the `spanprof run` / `spanprof ab`
// tests. Each call appends one line to a shared log,
//
//   <role> SPANPROF=<v> SPANPROF_SUMMARY_OUT=<v> SPANPROF_STREAM=<v>
//       SPANPROF_OUT=<v>
//
// so a test sees which runs happened, in which order and with which
// environment, then runs a small spanprof session. Options:
//
//   --role NAME     the first word of the log line (default "probe")
//   --log FILE      the shared log (default: none)
//   --fail-at K     the K-th call (counted in the log) exits 3 after writing
//                   a line on stderr
//   --abort-at K    the K-th call aborts (SIGABRT)
//   --interrupt-at K  the K-th call sends SIGINT to its parent and itself,
//                   as Ctrl-C in a terminal does to the foreground group
//   --stop-parent-at K  the K-th call, inside its session, starts a
//                   grandchild that blocks, writes "<own pid> <parent pid>
//                   <grandchild pid>" to the --pids file (whole, by rename),
//                   sends --stop-signal (INT, TERM or HUP; default TERM) to
//                   its parent and blocks until killed (at most 60 s, then
//                   SIGALRM ends it, so a broken test fails, not hangs)
//   --pids FILE     where --stop-parent-at writes the pids
//   --no-session    exit 0 without a spanprof session (no summary)
//   --work N        N rounds of busy work inside the span "probe.work" (a
//                   side that is slower by a large factor, for the verdict
//                   of `spanprof ab`)
//   --spawn-child   inside the session, in a span "probe.spawn", run this
//                   program again as role "child" with SPANPROF_TRACEPARENT
//                   naming that span (spanprof::SpawnWithTraceparent), and
//                   wait for it: two processes, one a child of the other's
//                   span (the merge tests; give SPANPROF_OUT a %p)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "spanprof/spanprof.h"

namespace {

struct ProbeArgs {
  std::string role = "probe";
  std::string log;
  long fail_at = 0;
  long abort_at = 0;
  long interrupt_at = 0;
  long stop_parent_at = 0;
  int stop_signal = SIGTERM;
  std::string pids;
  bool session = true;
  bool spawn_child = false;
  long work = 0;
};

ProbeArgs Parse(int argc, char** argv) {
  ProbeArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : "";
    if (word == "--role") {
      args.role = next;
      ++i;
    } else if (word == "--log") {
      args.log = next;
      ++i;
    } else if (word == "--fail-at") {
      args.fail_at = std::strtol(next, nullptr, 10);
      ++i;
    } else if (word == "--abort-at") {
      args.abort_at = std::strtol(next, nullptr, 10);
      ++i;
    } else if (word == "--interrupt-at") {
      args.interrupt_at = std::strtol(next, nullptr, 10);
      ++i;
    } else if (word == "--stop-parent-at") {
      args.stop_parent_at = std::strtol(next, nullptr, 10);
      ++i;
    } else if (word == "--stop-signal") {
      const std::string_view name = next;
      args.stop_signal = name == "INT"   ? SIGINT
                         : name == "HUP" ? SIGHUP
                                         : SIGTERM;
      ++i;
    } else if (word == "--pids") {
      args.pids = next;
      ++i;
    } else if (word == "--no-session") {
      args.session = false;
    } else if (word == "--work") {
      args.work = std::strtol(next, nullptr, 10);
      ++i;
    } else if (word == "--spawn-child") {
      args.spawn_child = true;
    }
  }
  return args;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "<unset>" : value;
}

// Appends this call's line; returns its number (1 for the first call).
long AppendToLog(const ProbeArgs& args) {
  if (args.log.empty()) return 1;
  long calls = 1;
  {
    std::ifstream in(args.log);
    std::string line;
    while (std::getline(in, line)) ++calls;
  }
  std::ofstream out(args.log, std::ios::app);
  out << args.role << " SPANPROF=" << Env("SPANPROF")
      << " SPANPROF_SUMMARY_OUT=" << Env("SPANPROF_SUMMARY_OUT")
      << " SPANPROF_STREAM=" << Env("SPANPROF_STREAM")
      << " SPANPROF_OUT=" << Env("SPANPROF_OUT") << "\n";
  return calls;
}

// Runs this program again as role "child", a child of the span
// "probe.spawn"; 0 when it ran and exited 0.
int SpawnChild(const ProbeArgs& args) {
  SPANPROF_SCOPE("probe.spawn");
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return 4;
  self[n] = '\0';
  std::vector<std::string> child = {self, "--role", "child"};
  if (!args.log.empty()) {
    child.push_back("--log");
    child.push_back(args.log);
  }
  const auto pid =
      spanprof::SpawnWithTraceparent(child, spanprof::CurrentContext());
  if (!pid.ok()) {
    std::cerr << "probe: " << pid.status() << "\n";
    return 4;
  }
  int status = 0;
  if (waitpid(*pid, &status, 0) != *pid) return 4;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 5;
}

// Starts a grandchild that blocks, records the pids, stops the parent and
// blocks: the parent must kill this process's whole group.
[[noreturn]] void StopParentAndBlock(const ProbeArgs& args) {
  SPANPROF_SCOPE("probe.blocked");
  alarm(60);
  const pid_t grandchild = fork();
  if (grandchild == 0) {
    for (;;) pause();
  }
  {
    const std::string partial = args.pids + ".partial";
    std::ofstream out(partial);
    out << getpid() << " " << getppid() << " " << grandchild << "\n";
    out.close();
    std::rename(partial.c_str(), args.pids.c_str());
  }
  kill(getppid(), args.stop_signal);
  for (;;) pause();
}

}  // namespace

int main(int argc, char** argv) {
  const ProbeArgs args = Parse(argc, argv);
  const long call = AppendToLog(args);
  std::cout << "probe stdout " << args.role << " " << call << "\n";
  std::cerr << "probe stderr " << args.role << " " << call << "\n";
  if (call == args.fail_at) {
    std::cerr << "probe: failing on purpose at call " << call << "\n";
    return 3;
  }
  if (call == args.abort_at) std::abort();
  if (call == args.interrupt_at) {
    kill(getppid(), SIGINT);
    raise(SIGINT);
  }
  if (!args.session) return 0;
  return spanprof::ProfileFromEnvironment("probe.run", [&] {
    {
      SPANPROF_SCOPE("probe.work", {.phase = "work"});
      spanprof::Heartbeat(3);
      volatile uint64_t sink = 0;
      for (long i = 0; i < args.work; ++i) {
        sink = sink + static_cast<uint64_t>(i) * 2654435761u;
      }
    }
    if (call == args.stop_parent_at) StopParentAndBlock(args);
    if (args.spawn_child) return SpawnChild(args);
    return 0;
  });
}
