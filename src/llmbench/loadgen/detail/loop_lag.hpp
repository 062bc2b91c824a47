#pragma once
/// @file
/// Event-loop lag of a loadgen worker: a timer due every `interval` on the worker's own
/// `io_context`; how late each wake-up ran against its due time is the time a ready event (a
/// chunk that arrived, a request due to be sent) waited behind the loop's other work. A client
/// whose loops lag by milliseconds adds that to every TTFT and ITL it measures
/// (docs/telemetry.md, "Client self-monitor").

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <vector>

namespace llmbench::loadgen::detail {

/// One probe per worker. `start` once from any thread; the probe runs on `ioc` until `cancel`
/// (which must run on `ioc`'s thread, e.g. posted with the other shutdown work). `lags_ms()`
/// after the loop has stopped. A wake-up later than one whole interval skips the missed ticks, so
/// one long block counts once, at its full length.
class LoopLagProbe {
 public:
  explicit LoopLagProbe(boost::asio::io_context& ioc,
                        std::chrono::milliseconds interval = std::chrono::milliseconds(20));

  void start();
  void cancel();
  /// How late each wake-up ran, ms (≥ 0), in time order.
  [[nodiscard]] const std::vector<float>& lags_ms() const noexcept { return lags_ms_; }

 private:
  void arm();

  boost::asio::steady_timer timer_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point due_{};
  bool cancelled_ = false;
  std::vector<float> lags_ms_;
};

}  // namespace llmbench::loadgen::detail
