// Clock selection and calibration support: invariant-TSC detection and a
// tightly bracketed (TSC, CLOCK_MONOTONIC) pair for converting ticks to ns.
#include <cpuid.h>

#include <cstdint>

#include "recorder/recorder_internal.h"

namespace spanprof::internal {

namespace {

bool DetectInvariantTsc() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 ||
      eax < 0x80000007u) {
    return false;
  }
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;  // "Invariant TSC"
#else
  return false;
#endif
}

}  // namespace

bool TscIsInvariant() noexcept {
  // cpuid traps to the hypervisor in a VM (~1 us a call): ask once.
  static const bool invariant = DetectInvariantTsc();
  return invariant;
}

ClockPair ReadClockPair() noexcept {
  // Bracket one TSC read between two monotonic reads and keep the tightest of
  // a few tries, so the pair is accurate to tens of nanoseconds.
  ClockPair best{ReadTsc(), ReadMonotonicNs()};
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 8; ++i) {
    const uint64_t before = ReadMonotonicNs();
    const uint64_t tsc = ReadTsc();
    const uint64_t after = ReadMonotonicNs();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = ClockPair{tsc, before + (after - before) / 2};
    }
  }
  return best;
}

}  // namespace spanprof::internal
