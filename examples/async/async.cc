// async_example: work handed to other threads, linked back to the span that
// handed it over.
//
// Each of three requests runs `worker.complete`, which starts its work on
// another thread (std::async + spanprof::Bind) and waits for it inside the
// span, so the span's interval covers the completion. The worker's spans
// (`worker.compute` and its `worker.chunk` children) are cross-thread
// children of `worker.complete`: the trace draws a flow arrow from each
// `worker.complete` to its `worker.compute`, and the table keeps each
// thread's time on its own thread (the waiting span is not charged for the
// worker's time, and the worker's time is not subtracted from it).
//
//   SPANPROF=1 build/demo/bin/async_example
//
// writes build/spanprof-trace.json (open it in https://ui.perfetto.dev) and
// build/spanprof-summary.json.
#include <spanprof/spanprof.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

namespace {

int ComputeChunk(int request, int chunk) {
  SPANPROF_SCOPE("worker.chunk", {.phase = "compute"});
  SPANPROF_ARG("chunk", chunk);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  spanprof::Heartbeat(1);
  return request * 10 + chunk;
}

int Compute(int request) {
  spanprof::SetThreadName("worker");
  SPANPROF_SCOPE("worker.compute", {.phase = "compute"});
  int sum = 0;
  for (int chunk = 0; chunk < 3; ++chunk) sum += ComputeChunk(request, chunk);
  return sum;
}

// Starts the work on another thread and waits for it: the span ends when the
// work it handed over has completed.
int Complete(int request) {
  SPANPROF_SCOPE("worker.complete", {.phase = "request"});
  SPANPROF_ARG("request", request);
  std::future<int> result =
      std::async(std::launch::async,
                 spanprof::Bind([request] { return Compute(request); }));
  return result.get();
}

}  // namespace

int main() {
  try {
    return spanprof::ProfileFromEnvironment("example.async", [] {
      spanprof::SetThreadName("main");
      int total = 0;
      for (int request = 0; request < 3; ++request) total += Complete(request);
      return total == 99 ? 0 : 1;  // the sum of request * 10 + chunk
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
