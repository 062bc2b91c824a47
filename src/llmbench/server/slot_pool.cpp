#include "llmbench/server/slot_pool.hpp"

#include "llmbench/core/error.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace llmbench::server {

namespace net = boost::asio;

SlotPool::Waiter::Waiter(const net::any_io_executor& executor) : timer(executor) {
  timer.expires_at(net::steady_timer::time_point::max());
}

SlotPool::SlotPool(std::int64_t slots) : free_(slots) {
  LLMBENCH_ASSERT(slots >= 1, "SlotPool needs at least one slot");
}

SlotPool::~SlotPool() = default;

net::awaitable<SlotPool::Slot> SlotPool::acquire() {
  auto executor = co_await net::this_coro::executor;
  std::shared_ptr<Waiter> waiter;
  {
    std::lock_guard lock(mu_);
    if (free_ > 0 && queue_.empty()) {
      --free_;
      running_.fetch_add(1, std::memory_order_relaxed);
      co_return Slot(this);
    }
    waiter = std::make_shared<Waiter>(executor);
    queue_.push_back(waiter);
    waiting_.fetch_add(1, std::memory_order_relaxed);
  }
  // If this coroutine is destroyed while suspended below (server stop), give the place up.
  struct AbandonGuard {
    SlotPool* pool;
    std::shared_ptr<Waiter>* waiter;
    bool armed = true;
    ~AbandonGuard() {
      if (armed)
        pool->abandon(*waiter);
    }
  } guard{this, &waiter};
  // The wake-up is posted to this executor, so it cannot run before the wait below starts (one
  // thread per io_context): no lost wake-ups.
  co_await waiter->timer.async_wait(net::as_tuple(net::use_awaitable));
  guard.armed = false;
  {
    std::lock_guard lock(mu_);
    LLMBENCH_ASSERT(waiter->granted, "SlotPool waiter woken without a slot");
  }
  co_return Slot(this);
}

void SlotPool::release() noexcept {
  std::shared_ptr<Waiter> next;
  {
    std::lock_guard lock(mu_);
    if (!queue_.empty() && !shut_down_) {
      // Hand the slot straight to the oldest waiter (running_ stays the same).
      next = std::move(queue_.front());
      queue_.pop_front();
      next->granted = true;
      waiting_.fetch_sub(1, std::memory_order_relaxed);
    } else {
      ++free_;
      running_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  if (next) {
    auto& timer = next->timer;
    net::post(timer.get_executor(), [waiter = std::move(next)] { waiter->timer.cancel(); });
  }
}

void SlotPool::abandon(const std::shared_ptr<Waiter>& waiter) noexcept {
  bool granted = false;
  {
    std::lock_guard lock(mu_);
    granted = waiter->granted;
    if (!granted) {
      auto it = std::find(queue_.begin(), queue_.end(), waiter);
      if (it != queue_.end()) {
        queue_.erase(it);
        waiting_.fetch_sub(1, std::memory_order_relaxed);
      }
    }
  }
  if (granted)
    release();  // the slot was on its way to us: pass it on
}

void SlotPool::shutdown() noexcept {
  std::lock_guard lock(mu_);
  shut_down_ = true;
}

}  // namespace llmbench::server
