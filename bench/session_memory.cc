// session_memory: the memory a session costs, measured as a user meets it.
//
// A program shaped like an instrumented real one (a build tool's loop: a
// request span with three children, every span with a few integer
// arguments), run under spanprof::ProfileFromEnvironment. bench/gate runs it
// twice in fresh processes, with SPANPROF unset and with SPANPROF=1 (trace,
// stream and summary into a scratch directory), and checks the growth of the
// peak RSS per span (VmHWM, which this program prints last, after the
// session has ended; a child's ru_maxrss would start from its parent's;
// `recording_peak_kib` is the same read before the session ends, and
// `end_peak_kib` the peak from then on, the high-water mark reset there):
// 2 x 32 bytes a span plus a fixed part of 16 MiB (docs/performance.md,
// "Memory as a user meets it"), with --span-ns 500: a burst outruns the
// drain thread on a busy machine, and its rings then hold what the drain
// has not written (the gate prints the burst's figures, not enforced).
//
//   session_memory [--spans N] [--args K] [--span-ns T]
//
// --spans N    spans to record (default 131,072; a multiple of 4 is exact)
// --args K     integer arguments on every span (default 3, at most 4)
// --span-ns T  the program's own time a span, at least (default 0: a burst,
//              the spans back to back). Each request of four spans works
//              until 4 x T ns after its start, on a clock read once a
//              request; a request the machine delays does not make the next
//              ones shorter, so the rate never bursts to catch up.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "proc_status.h"
#include "spanprof/spanprof.h"

namespace {

struct Args {
  int64_t spans = 131072;
  int args = 3;
  int64_t span_ns = 0;
};

bool ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && std::strcmp(argv[i], "--spans") == 0) {
      args.spans = std::strtoll(argv[++i], nullptr, 10);
    } else if (i + 1 < argc && std::strcmp(argv[i], "--args") == 0) {
      args.args = std::atoi(argv[++i]);
    } else if (i + 1 < argc && std::strcmp(argv[i], "--span-ns") == 0) {
      args.span_ns = std::strtoll(argv[++i], nullptr, 10);
    } else {
      return false;
    }
  }
  return args.spans > 0 && args.args >= 0 && args.args <= 4 &&
         args.span_ns >= 0;
}

// Up to four arguments on the innermost open span; `seed` keeps the values
// varied as a real program's are.
void AddArgs(int count, int64_t seed) {
  if (count > 0) SPANPROF_ARG("bytes", seed * 17 % 65536);
  if (count > 1) SPANPROF_ARG("items", seed % 97);
  if (count > 2) SPANPROF_ARG("depth", seed % 7);
  if (count > 3) SPANPROF_ARG("hits", seed % 3);
}

int64_t Work(int64_t seed) {
  int64_t x = seed;
  for (int i = 0; i < 8; ++i) x = x * 6364136223846793005 + 1442695040888963407;
  return x;
}

// Works until `duration` has passed since `start` (nothing when it has).
int64_t WorkUntil(std::chrono::steady_clock::time_point start,
                  std::chrono::nanoseconds duration, int64_t seed) {
  int64_t sink = 0;
  while (std::chrono::steady_clock::now() - start < duration) {
    sink += Work(seed + sink);
  }
  return sink;
}

int64_t RecordRequests(const Args& args) {
  const std::chrono::nanoseconds request_time(4 * args.span_ns);
  int64_t sink = 0;
  for (int64_t done = 0; done < args.spans; done += 4) {
    const auto start = args.span_ns > 0
                           ? std::chrono::steady_clock::now()
                           : std::chrono::steady_clock::time_point();
    SPANPROF_SCOPE("request", {.phase = "serve"});
    AddArgs(args.args, done);
    {
      SPANPROF_SCOPE("request.parse", {.phase = "parse"});
      AddArgs(args.args, done + 1);
      sink += Work(done);
    }
    {
      SPANPROF_SCOPE("request.compute", {.phase = "compute"});
      AddArgs(args.args, done + 2);
      sink += Work(done + 1);
    }
    {
      SPANPROF_SCOPE("request.write", {.phase = "write"});
      AddArgs(args.args, done + 3);
      sink += Work(done + 2);
      if (args.span_ns > 0) sink += WorkUntil(start, request_time, done);
    }
  }
  return sink;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: session_memory [--spans N (> 0)] [--args K (0-4)] "
                 "[--span-ns T (>= 0)]\n");
    return 2;
  }
  // The peak while recording, before the session ends: what the rings and
  // side buffers held (a streaming ring wakes the drain when it must grow).
  int64_t recording_peak_kib = 0;
  bool reset = false;
  const int64_t sink = spanprof::ProfileFromEnvironment("session_memory", [&] {
    const int64_t result = RecordRequests(args);
    recording_peak_kib = spanprof::bench::StatusKib("VmHWM");
    // From here on the high-water mark is the session end's alone: the
    // recording's peak depends on how soon the drain thread ran, the end's
    // on what the end keeps.
    reset = spanprof::bench::ResetPeakRss();
    return result;
  });
  const int64_t end_peak_kib = spanprof::bench::StatusKib("VmHWM");
  std::printf("session_memory: %lld spans, checksum %lld\n",
              static_cast<long long>(args.spans), static_cast<long long>(sink));
  std::printf("recording_peak_kib=%lld\n",
              static_cast<long long>(recording_peak_kib));
  if (reset) {
    std::printf("end_peak_kib=%lld\n", static_cast<long long>(end_peak_kib));
  }
  std::printf(
      "peak_rss_kib=%lld\n",
      static_cast<long long>(reset ? std::max(recording_peak_kib, end_peak_kib)
                                   : end_peak_kib));
  return 0;
}
