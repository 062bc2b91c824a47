#pragma once
/// @file
/// Admission control of the simulated server: `max_num_seqs` slots shared by every worker
/// thread, handed out first-come first-served (vLLM's `max_num_seqs` with FCFS scheduling).

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>

namespace llmbench::server {

/// A counting semaphore for coroutines with a strict FIFO wait queue. Thread-safe: coroutines on
/// any io_context may `acquire()`; a released slot goes to the oldest waiter, woken on its own
/// executor. Each io_context whose coroutines wait here must be run by a single thread.
class SlotPool {
 public:
  /// A held slot (RAII): released on destruction or by `release()`. Movable, not copyable.
  class Slot {
   public:
    Slot() = default;
    explicit Slot(SlotPool* pool) noexcept : pool_(pool) {}
    Slot(Slot&& other) noexcept : pool_(std::exchange(other.pool_, nullptr)) {}
    Slot& operator=(Slot&& other) noexcept {
      if (this != &other) {
        release();
        pool_ = std::exchange(other.pool_, nullptr);
      }
      return *this;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { release(); }
    /// Gives the slot back now (idempotent).
    void release() noexcept {
      if (pool_ != nullptr)
        std::exchange(pool_, nullptr)->release();
    }
    /// True while the slot is held.
    [[nodiscard]] bool held() const noexcept { return pool_ != nullptr; }

   private:
    SlotPool* pool_ = nullptr;
  };

  /// A pool of `slots` (≥ 1) slots.
  explicit SlotPool(std::int64_t slots);
  ~SlotPool();
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;

  /// Returns a slot at once if one is free and nobody waits, else waits in FIFO order. If the
  /// waiting coroutine is destroyed (server stop), its place in the queue is given up.
  boost::asio::awaitable<Slot> acquire();
  /// Stops handing slots to waiters (they stay suspended); call before tearing down the
  /// io_contexts so that releases from destroyed coroutines post nothing. Thread-safe.
  void shutdown() noexcept;

  /// Slots held now (vLLM `num_requests_running`).
  [[nodiscard]] std::int64_t running() const noexcept {
    return running_.load(std::memory_order_relaxed);
  }
  /// Coroutines waiting now (vLLM `num_requests_waiting`).
  [[nodiscard]] std::int64_t waiting() const noexcept {
    return waiting_.load(std::memory_order_relaxed);
  }

 private:
  struct Waiter {
    explicit Waiter(const boost::asio::any_io_executor& executor);
    boost::asio::steady_timer timer;  // never expires; cancel() is the wake-up
    bool granted = false;             // guarded by mu_
  };
  void release() noexcept;
  void abandon(const std::shared_ptr<Waiter>& waiter) noexcept;

  std::mutex mu_;
  std::int64_t free_;
  bool shut_down_ = false;
  std::deque<std::shared_ptr<Waiter>> queue_;
  std::atomic<std::int64_t> running_{0};
  std::atomic<std::int64_t> waiting_{0};
};

}  // namespace llmbench::server
