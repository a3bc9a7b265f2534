// session_end_report: what ending a large capture costs, phase by phase.
//
// Records N spans (default 10,000,000) of a nested workload under a cap that
// keeps them all, then ends the session the way spanprof::Profile does:
// StopRecording (collect), Summarize (analyse), WriteTrace and WriteSummary.
// Prints wall and CPU time per phase, the ring memory, and the process's RSS
// and peak RSS, so docs/performance.md can quote them.
//
//   session_end_report [--spans N] [--out DIR] [--format json|pftrace]
//                      [--sizes] [--check] [--max-ring-ratio R]
//                      [--no-read-back]
//
// --sizes gives every forward span (a third of them) an integer argument,
// as the scaling method asks of interesting spans.
//
// --format picks the trace format (default json: trace.json; pftrace:
// Perfetto's protobuf trace, trace.pftrace). After the memory figures are
// taken, the trace is read back with ReadTrace and that read is timed too,
// so docs/performance.md can put both formats side by side.
//
// --check exits 1 unless the memory growth from the start of the session to
// the peak stays within 2x the recorder's memory (the ring memory forecast
// by PredictedMemoryBytes for the cap), the bound docs/performance.md gives.
// Memory, not time, is checked: times on a shared machine are reported, never
// asserted.
//
// --max-ring-ratio R exits 1 unless that growth stays within R times the
// ring memory the session actually used (at most 2x: bench/gate runs
// `--spans 10000000 --format pftrace --max-ring-ratio 2 --no-read-back`).
// The last line, `result: ...`, gives the figures as key=value pairs for
// the gate.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

#include "proc_status.h"
#include "runtime/src/recorder/ring_memory.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"
#include "workload.h"

namespace {

using spanprof::bench::ResetPeakRss;
using spanprof::bench::StatusKib;

double WallSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Mib(int64_t kib) { return static_cast<double>(kib) / 1024.0; }

int Usage(const char* message) {
  std::fprintf(stderr,
               "session_end_report: %s\n"
               "usage: session_end_report [--spans N] [--out DIR] "
               "[--format json|pftrace] [--sizes] [--check] "
               "[--max-ring-ratio R] [--no-read-back]\n",
               message);
  return 2;
}

// The command line.
struct Args {
  int64_t spans = 10'000'000;
  std::string out_dir;
  std::string format = "json";
  bool check = false;
  double max_ring_ratio = 0;  // 0: not checked
  bool read_back = true;
  bool sizes = false;       // an argument on every forward span
  bool remove_out = false;  // out_dir is a temporary directory
};

// Parses the command line; returns an exit code when it is not usable.
std::optional<int> ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--spans" && i + 1 < argc) {
      char* end = nullptr;
      args.spans = std::strtoll(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0' || args.spans <= 0) {
        return Usage("--spans: expected a positive integer");
      }
    } else if (arg == "--out" && i + 1 < argc) {
      args.out_dir = argv[++i];
    } else if (arg == "--format" && i + 1 < argc) {
      args.format = argv[++i];
      if (args.format != "json" && args.format != "pftrace") {
        return Usage("--format: expected json or pftrace");
      }
    } else if (arg == "--check") {
      args.check = true;
    } else if (arg == "--sizes") {
      args.sizes = true;
    } else if (arg == "--max-ring-ratio" && i + 1 < argc) {
      char* end = nullptr;
      args.max_ring_ratio = std::strtod(argv[++i], &end);
      if (end == nullptr || *end != '\0' || !(args.max_ring_ratio > 0)) {
        return Usage("--max-ring-ratio: expected a positive number");
      }
    } else if (arg == "--no-read-back") {
      args.read_back = false;
    } else {
      return Usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  if (args.out_dir.empty()) {
    char pattern[] = "/tmp/spanprof-session-end-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return Usage("--out: mkdtemp failed");
    args.out_dir = pattern;
    args.remove_out = true;
  }
  return std::nullopt;
}

// One phase of the session end, timed.
struct Phase {
  const char* name;
  double wall = 0;
  double cpu = 0;
  int64_t peak_kib = 0;  // the process's peak RSS when the phase ended
};

template <typename Fn>
void Timed(Phase& phase, Fn&& fn) {
  const double wall = WallSeconds();
  const double cpu = CpuSeconds();
  fn();
  phase.cpu = CpuSeconds() - cpu;
  phase.wall = WallSeconds() - wall;
  phase.peak_kib = StatusKib("VmHWM");
}

// Memory figures of the run, in KiB (RSS) and bytes (ring).
struct Memory {
  uint64_t predicted = 0;  // PredictedMemoryBytes for the cap
  uint64_t ring_bytes = 0;
  bool peak_reset = false;
  int64_t rss_start = 0;
  int64_t rss_recorded = 0;
  int64_t rss_end = 0;
  int64_t peak = 0;
  double growth_kib() const { return static_cast<double>(peak - rss_start); }
  // The growth over the ring memory used (0 when no ring was used).
  double ring_ratio() const {
    return ring_bytes == 0
               ? 0.0
               : growth_kib() * 1024.0 / static_cast<double>(ring_bytes);
  }
};

// What the session end produced.
struct SessionEnd {
  Phase phases[4] = {{"collect (StopRecording)"},
                     {"analyse (Summarize)"},
                     {"write trace (WriteTrace)"},
                     {"write summary (WriteSummary)"}};
  spanprof::Capture capture;
  bool ok = true;  // both outputs written
  std::string trace_path;
  uintmax_t trace_bytes = 0;
};

// Ends the session as spanprof::Profile does, phase by phase.
void EndSession(const Args& args, SessionEnd& end) {
  spanprof::analysis::Summary summary;
  end.trace_path = args.out_dir + "/trace." + args.format;
  const std::string& trace_path = end.trace_path;
  const std::string& out_dir = args.out_dir;
  const std::string summary_path = out_dir + "/summary.json";
  Timed(end.phases[0], [&] { end.capture = spanprof::StopRecording(); });
  Timed(end.phases[1],
        [&] { summary = spanprof::analysis::Summarize(end.capture); });
  Timed(end.phases[2], [&] {
    end.ok &= spanprof::analysis::WriteTrace(end.capture, trace_path).ok();
  });
  Timed(end.phases[3], [&] {
    end.ok &= spanprof::analysis::WriteSummary(summary, summary_path).ok();
  });
  std::error_code ignored;
  end.trace_bytes = std::filesystem::file_size(trace_path, ignored);
}

void PrintReport(int64_t spans, double recorded_wall, const SessionEnd& end,
                 const Memory& memory) {
  std::printf("session_end_report: %lld spans recorded in %.2f s, %zu kept\n",
              static_cast<long long>(spans), recorded_wall,
              end.capture.spans.size());
  double total_wall = 0;
  double total_cpu = 0;
  for (const Phase& phase : end.phases) {
    std::printf(
        "  %-30s %7.3f s wall  %7.3f s CPU  %6.1f M spans/s  peak %.1f MiB\n",
        phase.name, phase.wall, phase.cpu,
        static_cast<double>(end.capture.spans.size()) / phase.cpu / 1e6,
        Mib(phase.peak_kib));
    total_wall += phase.wall;
    total_cpu += phase.cpu;
  }
  std::printf("  %-30s %7.3f s wall  %7.3f s CPU\n", "session end, in all",
              total_wall, total_cpu);
  std::printf("  trace: %.1f MB (%.0f MB/s of CPU)\n",
              static_cast<double>(end.trace_bytes) / 1e6,
              static_cast<double>(end.trace_bytes) / end.phases[2].cpu / 1e6);
  const double growth_kib = memory.growth_kib();
  std::printf(
      "  memory: ring %.1f MiB used (%.1f B/span), forecast %.1f MiB;\n"
      "          RSS %.1f MiB at start, %.1f after recording, %.1f at the "
      "end;\n"
      "          peak %.1f MiB%s: growth %.1f MiB = %.2fx the forecast, "
      "%.2fx the ring used\n",
      static_cast<double>(memory.ring_bytes) / 1048576.0,
      static_cast<double>(memory.ring_bytes) / static_cast<double>(spans),
      static_cast<double>(memory.predicted) / 1048576.0, Mib(memory.rss_start),
      Mib(memory.rss_recorded), Mib(memory.rss_end), Mib(memory.peak),
      memory.peak_reset ? "" : " (process peak: could not reset it)",
      growth_kib / 1024.0,
      growth_kib * 1024.0 / static_cast<double>(memory.predicted),
      memory.ring_ratio());
}

// The figures bench/gate reads, on one line.
void PrintResult(const SessionEnd& end, const Memory& memory) {
  double wall = 0;
  double cpu = 0;
  for (const Phase& phase : end.phases) {
    wall += phase.wall;
    cpu += phase.cpu;
  }
  const auto spans = static_cast<double>(end.capture.spans.size());
  std::printf(
      "result: spans=%.0f ring_ratio=%.4f growth_bytes_per_span=%.2f "
      "end_spans_per_cpu_s=%.0f end_spans_per_wall_s=%.0f\n",
      spans, memory.ring_ratio(),
      spans == 0 ? 0.0 : memory.growth_kib() * 1024.0 / spans,
      cpu > 0 ? spans / cpu : 0.0, wall > 0 ? spans / wall : 0.0);
}

// Reads the trace back (after the memory figures, so its memory is not
// charged to the session end) and prints the rate.
void ReportReadBack(SessionEnd& end) {
  Phase read{"read trace back (ReadTrace)"};
  absl::StatusOr<spanprof::Capture> back;
  Timed(read, [&] { back = spanprof::analysis::ReadTrace(end.trace_path); });
  if (!back.ok() || back->spans.size() != end.capture.spans.size()) {
    std::fprintf(
        stderr, "session_end_report: reading the trace back: %s\n",
        back.ok() ? "span count differs" : back.status().ToString().c_str());
    end.ok = false;
    return;
  }
  std::printf(
      "  %-30s %7.3f s wall  %7.3f s CPU  %6.1f M spans/s  %.1f B/span\n",
      read.name, read.wall, read.cpu,
      static_cast<double>(back->spans.size()) / read.cpu / 1e6,
      static_cast<double>(end.trace_bytes) /
          static_cast<double>(back->spans.size()));
}

// The exit code: 1 when an output failed, spans were lost, or (with --check)
// memory grew past 2x the forecast.
int Verdict(const Args& args, const SessionEnd& end, const Memory& memory) {
  if (!end.ok) {
    std::fprintf(stderr, "session_end_report: writing the outputs failed\n");
    return 1;
  }
  if (end.capture.spans.size() != static_cast<size_t>(args.spans)) {
    std::fprintf(stderr, "session_end_report: kept %zu of %lld spans\n",
                 end.capture.spans.size(), static_cast<long long>(args.spans));
    return 1;
  }
  const double growth_kib = memory.growth_kib();
  const double ring_ratio = memory.ring_ratio();
  if (args.max_ring_ratio > 0 && ring_ratio > args.max_ring_ratio) {
    std::fprintf(stderr,
                 "session_end_report: FAIL: memory grew by %.1f MiB, %.2fx "
                 "the ring memory used (%.1f MiB); --max-ring-ratio is %.2f\n",
                 growth_kib / 1024.0, ring_ratio,
                 static_cast<double>(memory.ring_bytes) / 1048576.0,
                 args.max_ring_ratio);
    return 1;
  }
  if (args.check &&
      growth_kib * 1024.0 > 2.0 * static_cast<double>(memory.predicted)) {
    std::fprintf(stderr,
                 "session_end_report: FAIL: memory grew by %.1f MiB, more "
                 "than 2x the recorder's forecast (%.1f MiB)\n",
                 growth_kib / 1024.0,
                 static_cast<double>(memory.predicted) / 1048576.0);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (const std::optional<int> code = ParseArgs(argc, argv, args)) {
    return *code;
  }
  spanprof::RecordingOptions options;
  options.max_events = static_cast<uint64_t>(args.spans) + 1024;
  Memory memory;
  memory.predicted =
      spanprof::PredictedMemoryBytes(options.max_events, options.overflow);
  const uint64_t ring_before = spanprof::internal::RingBytesAllocated();
  memory.peak_reset = ResetPeakRss();
  memory.rss_start = StatusKib("VmRSS");

  const double record_wall = WallSeconds();
  if (!spanprof::bench::StartAndRecordWorkload(
          args.spans, spanprof::bench::Beats::kEveryStep,
          args.sizes ? spanprof::bench::Sizes::kOnForward
                     : spanprof::bench::Sizes::kNone)) {
    std::fprintf(stderr, "session_end_report: StartRecording failed\n");
    return 1;
  }
  const double recorded_wall = WallSeconds() - record_wall;
  memory.rss_recorded = StatusKib("VmRSS");
  memory.ring_bytes = spanprof::internal::RingBytesAllocated() - ring_before;

  SessionEnd end;
  EndSession(args, end);
  memory.rss_end = StatusKib("VmRSS");
  memory.peak = StatusKib("VmHWM");

  PrintReport(args.spans, recorded_wall, end, memory);
  if (args.read_back) ReportReadBack(end);
  PrintResult(end, memory);
  std::error_code ignored;
  if (args.remove_out) std::filesystem::remove_all(args.out_dir, ignored);
  return Verdict(args, end, memory);
}
