// spanprof/device.h — spans of work that runs on a device.
//
// Work launched on a device (a GPU stream, an accelerator queue, a worker
// pool) returns before it runs. A span around the launch alone measures the
// launch; with `DeviceHooks(device)` the span waits for the device before its
// end timestamp (`complete`) and, after it, records the device's memory
// counters as its arguments (`enrich`), so the span covers the work's
// completion. A backend provides a `DeviceAdapter` (examples/device has one
// that runs work on a worker thread, `SimulatedDevice`).
//
// clang-format off
// Example:
//
//   class GpuStream : public spanprof::DeviceAdapter {  // the backend's
//    public:
//     void Synchronize() override { /* wait for the stream */ }
//     spanprof::DeviceMemory Memory() override { return {}; }
//   };
//   GpuStream stream;
//   spanprof::Run("kernel.matmul", {.phase = "compute", .device = "gpu0"},
//                 spanprof::DeviceHooks(stream),
//                 [&] { /* launch the kernel on the stream */ });
// clang-format on
#ifndef SPANPROF_DEVICE_H_
#define SPANPROF_DEVICE_H_

#include <cstdint>

#include "spanprof/span.h"

namespace spanprof {

// `DeviceMemory` is a device's memory use, in bytes.
struct DeviceMemory {
  int64_t bytes_in_use = 0;
  int64_t peak_bytes = 0;
};

// `DeviceAdapter` is what a backend provides for the spans of its work.
class DeviceAdapter {
 public:
  virtual ~DeviceAdapter() = default;
  // Blocks until the work queued so far has completed. Throws when the
  // device reports an error (the span is then flagged `hook_failed`).
  virtual void Synchronize() = 0;
  // The device's memory counters now.
  virtual DeviceMemory Memory() = 0;
};

// `DeviceHooks(device)` are the hooks of a span of device work: `complete`
// synchronizes `device` (its time belongs to the span); `enrich` records
// `device_bytes_in_use` and `device_peak_bytes` as the span's arguments.
// `device` must outlive the span.
inline auto DeviceHooks(DeviceAdapter& device) {
  return Hooks<>()
      .WithComplete([&device] { device.Synchronize(); })
      .WithEnrich([&device] {
        const DeviceMemory memory = device.Memory();
        SPANPROF_ARG("device_bytes_in_use", memory.bytes_in_use);
        SPANPROF_ARG("device_peak_bytes", memory.peak_bytes);
      });
}

}  // namespace spanprof

#endif  // SPANPROF_DEVICE_H_
