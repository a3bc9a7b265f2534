// service_example: a long-running program, and what spanprof keeps of it when
// it does not end normally.
//
// Two worker threads handle "requests" (parse, query, render: a few
// microseconds of work each) until the program is stopped. Run it, then press
// Ctrl-C:
//
//   SPANPROF=1 build/demo/bin/service_example
//
// The session ends normally on SIGINT (the table is printed, the trace and
// summary are written with end_reason "signal:SIGINT"), then the program
// ends as Ctrl-C ends it (exit status 130 in the shell). Killed instead
// (kill -9, the OOM killer) or crashed (--crash segv|stack|abort|terminate), it
// leaves its stream, build/spanprof-trace.json.stream, which
//
//   spanprof recover build/spanprof-trace.json.stream
//
// turns into the trace and the summary (end_reason "lost" or "crash:...").
//
//   service_example [--requests N] [--work-ns NS] [--crash MODE]
//                   [--crash-after N] [--ready-file PATH]
//                   [--progress-file PATH]
//   --requests N        requests per worker, then end normally (default 0:
//                       until stopped)
//   --work-ns NS        busy work in each leaf span (default 2000)
//   --crash MODE        segv, stack (overflow), abort, terminate or exit:
//                       worker 0 does it
//                       after --crash-after requests (default 1000)
//   --ready-file PATH   written once each worker has handled a request
//   --progress-file P   8 bytes a worker: requests finished, updated as they
//                       finish (a file other processes may map to watch)
#include <fcntl.h>
#include <spanprof/spanprof.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  uint64_t requests = 0;
  uint64_t work_ns = 2000;
  std::string crash;
  uint64_t crash_after = 1000;
  std::string ready_file;
  std::string progress_file;
};

constexpr int kWorkers = 2;

void Work(uint64_t ns) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
  spanprof::Heartbeat(1);
}

// Recurses until the stack runs out (a SIGSEGV with no stack left for an
// ordinary handler). The frame's buffer keeps the compiler from turning the
// recursion into a loop.
int Overflow(int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth == INT32_MAX) return frame[0];
  return Overflow(depth + 1) + frame[0];
}

void Crash(const std::string& mode) {
  if (mode == "stack") {
    std::printf("%d\n", Overflow(0));
  } else if (mode == "segv") {
    volatile int* nowhere = nullptr;
    *nowhere = 1;  // NOLINT: the crash this example exists to show
  } else if (mode == "abort") {
    std::abort();
  } else if (mode == "terminate") {
    std::terminate();
  } else if (mode == "exit") {
    std::exit(3);
  }
}

// One request: three phases under one span, with the request's number.
void Handle(uint64_t request, const Options& options) {
  SPANPROF_SCOPE("request.handle", {.phase = "serve"});
  SPANPROF_ARG("request", static_cast<int64_t>(request));
  spanprof::Run("request.parse", {.phase = "parse"},
                [&] { Work(options.work_ns); });
  spanprof::Run("db.query", {.phase = "query"}, [&] { Work(options.work_ns); });
  spanprof::Run("response.render", {.phase = "render"},
                [&] { Work(options.work_ns); });
}

std::atomic<int> g_ready{0};

void Worker(int index, const Options& options, uint64_t* progress) {
  spanprof::SetThreadName(index == 0 ? "worker-0" : "worker-1");
  for (uint64_t request = 0;
       options.requests == 0 || request < options.requests; ++request) {
    if (index == 0 && !options.crash.empty() &&
        request == options.crash_after) {
      Crash(options.crash);
    }
    Handle(request, options);
    if (progress != nullptr) {
      std::atomic_ref<uint64_t>(progress[index])
          .store(request + 1, std::memory_order_release);
    }
    if (request == 0 && g_ready.fetch_add(1) + 1 == kWorkers &&
        !options.ready_file.empty()) {
      std::ofstream(options.ready_file) << getpid() << "\n";
    }
  }
}

uint64_t* MapProgress(const std::string& path) {
  if (path.empty()) return nullptr;
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, kWorkers * sizeof(uint64_t)) != 0) return nullptr;
  void* p = mmap(nullptr, kWorkers * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                 MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? nullptr : static_cast<uint64_t*>(p);
}

bool Parse(int argc, char** argv, Options* options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--requests") {
      options->requests = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--work-ns") {
      options->work_ns = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--crash") {
      options->crash = value;
    } else if (flag == "--crash-after") {
      options->crash_after = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--ready-file") {
      options->ready_file = value;
    } else if (flag == "--progress-file") {
      options->progress_file = value;
    } else {
      return false;
    }
  }
  return argc % 2 == 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!Parse(argc, argv, &options)) {
    std::fprintf(stderr, "usage: see the comment at the top of service.cc\n");
    return 2;
  }
  uint64_t* progress = MapProgress(options.progress_file);
  try {
    return spanprof::ProfileFromEnvironment("service.run", [&] {
      spanprof::SetThreadName("main");
      std::vector<std::thread> workers;
      for (int i = 0; i < kWorkers; ++i) {
        workers.emplace_back(spanprof::Bind(
            [i, &options, progress] { Worker(i, options, progress); }));
      }
      for (std::thread& worker : workers) worker.join();
      return 0;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
