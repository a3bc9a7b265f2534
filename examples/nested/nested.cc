// nested_example: the smallest real capture.
//
// Three steps, each loading input (~2 ms) and running a forward pass (~4 ms),
// inside one root span. Run it with profiling on:
//
//   SPANPROF=1 build/demo/bin/nested_example
//
// and it prints a table with 7 events in 3 rows, and writes
// build/spanprof-trace.json (open it in https://ui.perfetto.dev) and
// build/spanprof-summary.json.
#include <spanprof/spanprof.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace {

void LoadInput(int step) {
  SPANPROF_SCOPE("input.load", {.phase = "input", .activity = "load"});
  SPANPROF_ARG("step", step);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  spanprof::Heartbeat(2);
}

void Forward() {
  SPANPROF_SCOPE("model.forward",
                 {.phase = "forward", .module = "encoder.block"});
  std::this_thread::sleep_for(std::chrono::milliseconds(4));
  spanprof::Heartbeat(2);
}

}  // namespace

int main() {
  try {
    return spanprof::ProfileFromEnvironment("example.nested-spans", [] {
      spanprof::SetThreadName("main");
      for (int step = 0; step < 3; ++step) {
        LoadInput(step);
        Forward();
        spanprof::Heartbeat(90);  // work done in the root span itself
      }
      return 0;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
