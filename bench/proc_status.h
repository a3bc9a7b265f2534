// The process's memory figures from /proc, for the programs and tests that
// measure memory (bench/session_end.cc, the long-capture slow tests).
#ifndef SPANPROF_BENCH_PROC_STATUS_H_
#define SPANPROF_BENCH_PROC_STATUS_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace spanprof::bench {

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); -1 when absent.
inline int64_t StatusKib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const size_t length = std::strlen(field);
  while (std::getline(status, line)) {
    if (line.compare(0, length, field) == 0 && line.size() > length &&
        line[length] == ':') {
      return std::strtoll(line.c_str() + length + 1, nullptr, 10);
    }
  }
  return -1;
}

// Resets the peak-RSS high-water mark (VmHWM; Linux >= 4.0), so that a peak
// read later belongs to what ran since. False when the kernel refuses.
inline bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

}  // namespace spanprof::bench

#endif  // SPANPROF_BENCH_PROC_STATUS_H_
