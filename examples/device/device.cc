// device_example: spans of work that runs on a device.
//
// A simulated device (spanprof::SimulatedDevice: a worker thread that runs
// launched work in order, like a GPU stream) executes "kernels". Launching
// returns at once, so a plain span around a launch measures only the launch
// (`kernel.launch_only`). With spanprof::DeviceHooks the span's `complete`
// hook synchronizes the device before the end timestamp, so
// `kernel.matmul` covers the kernel's completion, and its `enrich` hook
// records the device's memory counters as the span's arguments after the
// end. The device thread's own `device.execute` spans are cross-thread
// children of the launching span.
//
// Two spans show hook failures: `kernel.faulty` launches work that fails on
// the device, so its synchronize throws — the span is kept, flagged
// `hook_failed` with the message in its `hook_error` argument, and the
// summary counts it; `kernel.too_big` is refused by its `prepare` hook (not
// enough device memory), so it runs without a span and is counted as a
// failed prepare.
//
//   SPANPROF=1 build/demo/bin/device_example
#include <spanprof/device.h>
#include <spanprof/spanprof.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <thread>

#include "simulated_device.h"

namespace {

constexpr int64_t kDeviceMemory = 1 << 30;

// A "kernel": a little work on the device thread.
void Execute(const char* what, int milliseconds) {
  SPANPROF_SCOPE("device.execute", {.phase = "compute"});
  SPANPROF_ARG_STR("kernel", what);
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
}

}  // namespace

int main() {
  try {
    return spanprof::ProfileFromEnvironment("example.device", [] {
      spanprof::SetThreadName("host");
      spanprof::SimulatedDevice device;
      const auto hooks = spanprof::DeviceHooks(device);
      for (int step = 0; step < 4; ++step) {
        // Covers the kernel's completion: launch + wait, then memory.
        spanprof::Run("kernel.matmul", {.phase = "compute", .device = "sim"},
                      hooks, [&] {
                        SPANPROF_ARG("step", step);
                        device.Launch([] { Execute("matmul", 3); }, 256 << 20);
                      });
        // Measures the launch alone: the device is still busy after it.
        spanprof::Run("kernel.launch_only", {.phase = "compute"},
                      [&] { device.Launch([] { Execute("relu", 1); }); });
        device.Synchronize();
      }
      // The device reports the failure at synchronize: the hook throws.
      spanprof::Run(
          "kernel.faulty", {.phase = "compute", .device = "sim"}, hooks, [&] {
            device.Launch([] { throw std::runtime_error("illegal address"); });
          });
      // Refused before it begins: more memory than the device has.
      const int64_t wanted = 2 * kDeviceMemory;
      const auto guarded =
          spanprof::Hooks<>()
              .WithPrepare([&] { return wanted <= kDeviceMemory; })
              .WithComplete([&] { device.Synchronize(); });
      spanprof::Run("kernel.too_big", {.phase = "compute"}, guarded, [&] {
        std::fprintf(stderr, "device_example: kernel.too_big skipped\n");
      });
      return 0;
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
