#include "llmbench/loadgen/detail/loop_lag.hpp"

#include <boost/asio/post.hpp>

namespace llmbench::loadgen::detail {

LoopLagProbe::LoopLagProbe(boost::asio::io_context& ioc, std::chrono::milliseconds interval)
    : timer_(ioc), interval_(interval) {}

void LoopLagProbe::start() {
  boost::asio::post(timer_.get_executor(), [this] {
    due_ = std::chrono::steady_clock::now() + interval_;
    arm();
  });
}

void LoopLagProbe::cancel() {
  cancelled_ = true;
  timer_.cancel();
}

void LoopLagProbe::arm() {
  if (cancelled_)
    return;
  timer_.expires_at(due_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || cancelled_)
      return;
    const auto now = std::chrono::steady_clock::now();
    lags_ms_.push_back(std::chrono::duration<float, std::milli>(now - due_).count());
    due_ += interval_;
    if (due_ <= now)
      due_ = now + interval_;
    arm();
  });
}

}  // namespace llmbench::loadgen::detail
