// simulated_device.h — a device for the example: launched work runs in order
// on one worker thread, like a GPU stream (spanprof/device.h's adapter).
#ifndef SPANPROF_EXAMPLES_DEVICE_SIMULATED_DEVICE_H_
#define SPANPROF_EXAMPLES_DEVICE_SIMULATED_DEVICE_H_

#include <spanprof/device.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace spanprof {

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

#endif  // SPANPROF_EXAMPLES_DEVICE_SIMULATED_DEVICE_H_
