#pragma once
/// @file
/// The loop the telemetry samplers share: a named thread that calls a function every interval
/// until stopped. A tick slower than the interval delays the next one instead of piling them up.

#include "llmbench/telemetry/self_monitor.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace llmbench::telemetry::detail {

/// Calls `tick` every `interval` (steady clock, first call one interval after `start`) on its
/// own thread, named `name` (`name_this_thread`), until `stop`. Not copyable; `stop` is safe to
/// call when not running.
class PeriodicThread {
 public:
  PeriodicThread() = default;
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;
  ~PeriodicThread() { stop(); }

  /// Starts the thread; the caller checks `running()` first (a second start is a logic error).
  void start(const char* name, std::chrono::milliseconds interval, std::function<void()> tick) {
    stopping_ = false;
    thread_ = std::thread([this, name, interval, tick = std::move(tick)] {
      name_this_thread(name);
      auto next = std::chrono::steady_clock::now() + interval;
      std::unique_lock lock(mutex_);
      while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
        lock.unlock();
        tick();
        lock.lock();
        next = std::max(next + interval, std::chrono::steady_clock::now());
      }
    });
  }

  /// Wakes the thread and joins it. Returns false when it was not running.
  bool stop() {
    if (!thread_.joinable())
      return false;
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    return true;
  }

  [[nodiscard]] bool running() const noexcept { return thread_.joinable(); }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace llmbench::telemetry::detail
