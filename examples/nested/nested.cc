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
//
// How real programs often end: `--exit-inside-span` leaves through exit()
// inside the last forward pass, and `--finish-session` calls
// spanprof::FinishSession() there first. Either way the session ends
// normally: the spans open then are closed at that moment, flagged
// open_at_exit, and the summary stays complete.
//
// How an argument gets lost: `--drop-arg` also loads a log on a thread of
// its own, whose `bytes` argument is set before its span opens (as ninja's
// log loading once did). No span is open on that thread then, so the
// argument has nothing to attach to: the table names it ("dropped 1
// argument: bytes before log.load [activity=load] (no open span)"), and the
// summary's `drops` lists it.
#include <spanprof/spanprof.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>

namespace {

void LoadInput(int step) {
  SPANPROF_SCOPE("input.load", {.phase = "input", .activity = "load"});
  SPANPROF_ARG("step", step);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  spanprof::Heartbeat(2);
}

// The argument comes one line too early: no span is open on this thread yet.
void LoadLog() {
  SPANPROF_ARG("bytes", 4096);
  SPANPROF_SCOPE("log.load", {.activity = "load"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

enum class Ending { kReturn, kExit, kFinishThenExit };

void Forward(bool last, Ending ending) {
  SPANPROF_SCOPE("model.forward",
                 {.phase = "forward", .module = "encoder.block"});
  std::this_thread::sleep_for(std::chrono::milliseconds(4));
  spanprof::Heartbeat(2);
  if (!last || ending == Ending::kReturn) return;
  if (ending == Ending::kFinishThenExit) spanprof::FinishSession();
  std::exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  Ending ending = Ending::kReturn;
  bool drop_arg = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--drop-arg") {
      drop_arg = true;
    } else if (arg == "--exit-inside-span") {
      ending = Ending::kExit;
    } else if (arg == "--finish-session") {
      ending = Ending::kFinishThenExit;
    } else {
      std::fprintf(stderr,
                   "usage: nested_example [--drop-arg] "
                   "[--exit-inside-span | --finish-session]\n");
      return 2;
    }
  }
  try {
    return spanprof::ProfileFromEnvironment("example.nested-spans", [=] {
      spanprof::SetThreadName("main");
      if (drop_arg) std::thread(LoadLog).join();
      for (int step = 0; step < 3; ++step) {
        LoadInput(step);
        Forward(step == 2, ending);
        spanprof::Heartbeat(90);  // work done in the root span itself
      }
      return 0;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
