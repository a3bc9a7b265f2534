// SimulatedDevice: a stream of work on one worker thread.
#include "simulated_device.h"

#include <spanprof/context.h>

#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace spanprof {

SimulatedDevice::SimulatedDevice() : worker_([this] { Loop(); }) {}

SimulatedDevice::~SimulatedDevice() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void SimulatedDevice::Launch(std::function<void()> work, int64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Item{Bind(std::move(work)), bytes});
    ++launched_;
  }
  cv_.notify_all();
}

void SimulatedDevice::Synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = launched_;
  cv_.wait(lock, [&] { return completed_ >= target; });
  if (!error_.empty()) {
    std::string error = std::move(error_);
    error_.clear();
    throw std::runtime_error(error);
  }
}

DeviceMemory SimulatedDevice::Memory() {
  std::lock_guard<std::mutex> lock(mu_);
  return memory_;
}

void SimulatedDevice::Loop() {
  SetThreadName("device");
  while (true) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      memory_.bytes_in_use += item.bytes;
      if (memory_.bytes_in_use > memory_.peak_bytes) {
        memory_.peak_bytes = memory_.bytes_in_use;
      }
    }
    std::string error;
    try {
      item.work();
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "device work threw a non-std::exception";
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      memory_.bytes_in_use -= item.bytes;
      if (!error.empty() && error_.empty()) error_ = std::move(error);
      ++completed_;
    }
    cv_.notify_all();
  }
}

}  // namespace spanprof
