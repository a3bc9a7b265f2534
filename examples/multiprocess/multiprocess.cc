// multiprocess_example: a coordinator and three worker processes on one
// trace.
//
// The coordinator starts three copies of itself as workers, each from its
// own `coordinator.spawn` span, with that span's W3C `traceparent` in the
// worker's environment (spanprof::SpawnWithTraceparent sets
// SPANPROF_TRACEPARENT). Each worker's session adopts the coordinator's trace
// id and its root span becomes a child of the span that started it. Every
// process writes its own capture: the output paths carry `%p`, the pid.
//
//   SPANPROF=1 build/demo/bin/multiprocess_example
//   cd build/multiprocess
//   ../bin/spanprof merge trace-*.json -o merged.pftrace
//   ../bin/spanprof export otlp trace-*.json -o otlp.json
//
// The merged trace opens in https://ui.perfetto.dev as four processes with a
// flow arrow from each `coordinator.spawn` to its worker's `worker.run`; the
// OTLP file is one trace for an OpenTelemetry backend (docs/distributed.md).
// When SPANPROF_OUT / SPANPROF_SUMMARY_OUT are unset, the coordinator sets
// them to build/multiprocess/{trace,summary}-%p.json before its session, and
// the workers inherit them. Workers name their process worker-<n> and print
// no table.
#include <spanprof/spanprof.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kWorkers = 3;

// A shard of a worker's job: the span covers a little real work.
int64_t ProcessShard(int worker, int shard) {
  SPANPROF_SCOPE("worker.shard", {.phase = "compute"});
  const int64_t items = 1000 * (worker + 1);
  SPANPROF_ARG("items", items);
  int64_t sum = 0;
  for (int64_t i = 0; i < items * 200; ++i) sum += (i ^ shard) & 7;
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return sum;
}

int RunWorker(int worker) {
  absl::StatusOr<spanprof::Config> config = spanprof::ConfigFromEnvironment();
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(config.status().message()).c_str());
    return 2;
  }
  config->recording.process_name = "worker-" + std::to_string(worker);
  config->quiet = true;  // the coordinator's table is the one to read
  return spanprof::Profile(*config, "worker.run", [worker] {
    spanprof::SetThreadName("worker");
    {
      SPANPROF_SCOPE("worker.load", {.phase = "io"});
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    int64_t total = 0;
    for (int shard = 0; shard < 4; ++shard)
      total += ProcessShard(worker, shard);
    return total > 0 ? 0 : 1;
  });
}

// This program's own path, to start copies of it.
std::string SelfPath() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "";
}

int RunCoordinator() {
  // Each process needs its own output files: default to paths with %p.
  // NOLINTBEGIN(concurrency-mt-unsafe): no other thread exists yet.
  setenv("SPANPROF_OUT", "build/multiprocess/trace-%p.json", 0);
  setenv("SPANPROF_SUMMARY_OUT", "build/multiprocess/summary-%p.json", 0);
  setenv("SPANPROF_PROCESS_NAME", "coordinator", 0);
  // NOLINTEND(concurrency-mt-unsafe)
  return spanprof::ProfileFromEnvironment("coordinator.run", [] {
    spanprof::SetThreadName("coordinator");
    const std::string self = SelfPath();
    std::vector<int> pids;
    for (int w = 1; w <= kWorkers; ++w) {
      SPANPROF_SCOPE("coordinator.spawn", {.phase = "control"});
      SPANPROF_ARG("worker", w);
      absl::StatusOr<int> pid = spanprof::SpawnWithTraceparent(
          {self, "--worker", std::to_string(w)}, spanprof::CurrentContext());
      if (!pid.ok()) {
        std::fprintf(stderr, "%s\n",
                     std::string(pid.status().message()).c_str());
        return 1;
      }
      pids.push_back(*pid);
    }
    SPANPROF_SCOPE("coordinator.wait", {.phase = "control"});
    int failures = 0;
    for (int pid : pids) {
      int status = 0;
      if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
          WEXITSTATUS(status) != 0) {
        ++failures;
      }
    }
    return failures == 0 ? 0 : 1;
  });
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::string(argv[1]) == "--worker") {
      return RunWorker(std::atoi(argv[2]));
    }
    if (argc != 1) {
      std::fprintf(stderr, "usage: %s   (starts its own workers)\n", argv[0]);
      return 2;
    }
    return RunCoordinator();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
