// stream_sessions: what a streaming session costs a program, as a user meets
// it: a fresh process, the public API, millions of spans, wall time.
//
// It times three sessions in a row (Profile(), the stream on by default),
// each recording --spans plain spans, and before each a loop of two clock
// reads in the same shape (the clock floor: the fastest of the three), and
// prints one `result:` line:
//
//   floor_ns               wall ns per iteration of the floor loop
//   s1_ratio s2_ratio s3_ratio
//                          each session's wall ns per span / floor_ns
//   steady_faults          the recording thread's minor page faults over the
//                          second half of the first session's loop (0: it
//                          touched no memory it had not touched before)
//   drain_ns_per_span      the drain thread's CPU per span (schedstat)
//   end_spans_per_s        spans per second of the first session's end
//                          (stop, read back, analyse, write .pftrace and
//                          summary), wall time
//   end_growth_b_per_span  peak RSS growth during that end per span
//   session_growth_b_per_span
//                          peak RSS growth of the whole first session per
//                          span (recording and end)
//
// bench/gate runs it twice, with SPANPROF_STREAM unset and =off (the
// in-memory rings), and checks the ratios and the memory against each other.
//
// --sizes gives every third span an integer argument (a size, as the
// scaling method asks of interesting spans), to measure the end with
// arguments: its ratios to the floor then include the argument's cost.
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "spanprof/spanprof.h"

namespace {

using Clock = std::chrono::steady_clock;

inline void Barrier() { asm volatile("" ::: "memory"); }

int64_t ElapsedNs(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                              since)
      .count();
}

double FloorNs(uint64_t iterations) {
  const Clock::time_point start = Clock::now();
  for (uint64_t i = 0; i < iterations; ++i) {
    uint64_t begin = __rdtsc();
    asm volatile("" : "+r"(begin)::"memory");
    uint64_t end = __rdtsc();
    asm volatile("" : "+r"(end)::"memory");
  }
  return static_cast<double>(ElapsedNs(start)) /
         static_cast<double>(iterations);
}

long ThreadMinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// A /proc/self/status field in KiB (VmRSS, VmHWM).
int64_t StatusKib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::atoll(line.c_str() + key.size());
  }
  return -1;
}

// Resets VmHWM to the current RSS (Linux: "5" to clear_refs).
void ResetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
}

// CPU ns the thread named `name` of this process has run, 0 when none.
int64_t ThreadCpuNs(const char* name) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  int64_t ns = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + entry->d_name;
    std::ifstream comm(base + "/comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name != name) continue;
    std::ifstream schedstat(base + "/schedstat");
    int64_t run = 0;
    schedstat >> run;
    ns += run;
  }
  closedir(dir);
  return ns;
}

struct SessionFigures {
  double ns_per_span = 0;
  long steady_faults = 0;
  int64_t drain_ns = 0;
  int64_t end_ns = 0;
  int64_t end_growth_kib = 0;
  int64_t session_growth_kib = 0;
};

SessionFigures RunSession(const std::string& dir, int index, uint64_t spans,
                          bool sizes) {
  spanprof::Config config = spanprof::ConfigFromEnvironment().value();
  config.trace_path = dir + "/s" + std::to_string(index) + ".pftrace";
  config.summary_path = dir + "/s" + std::to_string(index) + ".summary.json";
  config.enabled = true;
  config.report = "off";
  config.recording.max_events = spans + 16;
  SessionFigures f;
  const int64_t rss_before = StatusKib("VmRSS");
  ResetPeakRss();
  Clock::time_point body_end;
  int64_t rss_end = 0;
  spanprof::Profile(config, "bench.root", [&] {
    const Clock::time_point start = Clock::now();
    long faults_half = 0;
    for (uint64_t i = 0; i < spans; ++i) {
      if (i == spans / 2) faults_half = ThreadMinorFaults();
      SPANPROF_SCOPE("bench.span");
      if (sizes && i % 3 == 0) SPANPROF_ARG("size", static_cast<int64_t>(i));
      Barrier();
    }
    f.ns_per_span =
        static_cast<double>(ElapsedNs(start)) / static_cast<double>(spans);
    f.steady_faults = ThreadMinorFaults() - faults_half;
    f.drain_ns = ThreadCpuNs("spanprof-drain");
    f.session_growth_kib = StatusKib("VmHWM") - rss_before;
    rss_end = StatusKib("VmRSS");
    ResetPeakRss();
    body_end = Clock::now();
  });
  f.end_ns = ElapsedNs(body_end);
  f.end_growth_kib = StatusKib("VmHWM") - rss_end;
  f.session_growth_kib =
      std::max(f.session_growth_kib, StatusKib("VmHWM") - rss_before);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t spans = 5'000'000;
  std::string dir = "/tmp";
  bool sizes = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--sizes") == 0) {
      sizes = true;
    } else if (std::strcmp(argv[i], "--spans") == 0 && has_value) {
      spans = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--dir") == 0 && has_value) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: stream_sessions [--spans N] [--dir DIR] "
                   "[--sizes]\n");
      return 2;
    }
  }
  // The floor loop runs before each session; its fastest run is the floor
  // (noise on a shared machine only adds).
  double floor_ns = 0;
  SessionFigures s[3];
  for (int k = 0; k < 3; ++k) {
    const double floor_k = FloorNs(spans);
    floor_ns = k == 0 ? floor_k : std::min(floor_ns, floor_k);
    s[k] = RunSession(dir, k + 1, spans, sizes);
  }
  const auto per_span = [spans](double total) {
    return total / static_cast<double>(spans);
  };
  std::printf(
      "result: floor_ns=%.3f s1_ratio=%.3f s2_ratio=%.3f s3_ratio=%.3f "
      "steady_faults=%ld drain_ns_per_span=%.3f end_spans_per_s=%.0f "
      "end_growth_b_per_span=%.2f session_growth_b_per_span=%.2f\n",
      floor_ns, s[0].ns_per_span / floor_ns, s[1].ns_per_span / floor_ns,
      s[2].ns_per_span / floor_ns, s[0].steady_faults,
      per_span(static_cast<double>(s[0].drain_ns)),
      static_cast<double>(spans) * 1e9 / static_cast<double>(s[0].end_ns),
      per_span(static_cast<double>(s[0].end_growth_kib) * 1024.0),
      per_span(static_cast<double>(s[0].session_growth_kib) * 1024.0));
  return 0;
}
