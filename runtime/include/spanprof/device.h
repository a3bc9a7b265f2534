// spanprof/device.h — spans of work that runs on a device.
//
// Work launched on a device (a GPU stream, an accelerator queue, a worker
// pool) returns before it runs. A span around the launch alone measures the
// launch; with `DeviceHooks(device)` the span waits for the device before its
// end timestamp (`complete`) and, after it, records the device's memory
// counters as its arguments (`enrich`), so the span covers the work's
// completion. A backend provides a `DeviceAdapter`; `SimulatedDevice` is one
// with a worker thread, used by the tests and examples/device.
//
// Example:
//
//   spanprof::SimulatedDevice device;
//   spanprof::Run("kernel.matmul", {.phase = "compute", .device = "sim"},
//                 spanprof::DeviceHooks(device),
//                 [&] { device.Launch([&] { Matmul(a, b, c); }); });
#ifndef SPANPROF_DEVICE_H_
#define SPANPROF_DEVICE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

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

// `SimulatedDevice` runs launched work in order on one worker thread (named
// `device`), like a stream. `Launch` returns at once; `Synchronize` waits
// for everything launched before it. A launched function that throws puts
// the device in an error state: the next `Synchronize` throws
// `std::runtime_error` with its message, once. `Launch` may reserve device
// memory, released when the work completes.
class SimulatedDevice : public DeviceAdapter {
 public:
  SimulatedDevice();
  ~SimulatedDevice() override;
  SimulatedDevice(const SimulatedDevice&) = delete;
  SimulatedDevice& operator=(const SimulatedDevice&) = delete;

  // Queues `work`, which holds `bytes` of device memory while it runs. The
  // work runs under the caller's context (spanprof::Bind), so its spans are
  // cross-thread children of the launching span.
  void Launch(std::function<void()> work, int64_t bytes = 0);
  void Synchronize() override;
  DeviceMemory Memory() override;

 private:
  struct Item {
    std::function<void()> work;
    int64_t bytes;
  };
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  uint64_t launched_ = 0;
  uint64_t completed_ = 0;
  bool stop_ = false;
  std::string error_;
  DeviceMemory memory_;
  std::thread worker_;
};

}  // namespace spanprof

#endif  // SPANPROF_DEVICE_H_
