// The loadgen workers' event-loop lag probe (loadgen/detail/loop_lag.hpp): a loop blocked by one
// long handler shows that block as one late wake-up of about its length; an idle loop shows none.

#include "llmbench/loadgen/detail/loop_lag.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

namespace llmbench::loadgen::detail {
namespace {

using std::chrono::milliseconds;

/// Runs `ioc` with the probe for `run_for`, after posting `block` of busy time at 50 ms.
std::vector<float> probe(milliseconds run_for, milliseconds block) {
  boost::asio::io_context ioc{1};
  LoopLagProbe lag(ioc, milliseconds(10));
  lag.start();
  boost::asio::steady_timer blocker(ioc, milliseconds(50));
  blocker.async_wait([block](const boost::system::error_code&) {
    if (block.count() > 0)
      std::this_thread::sleep_for(block);  // a handler that holds the loop
  });
  boost::asio::steady_timer end(ioc, run_for);
  end.async_wait([&lag](const boost::system::error_code&) { lag.cancel(); });
  ioc.run();  // returns once the probe is cancelled: nothing else is pending
  return lag.lags_ms();
}

TEST(LoopLagProbe, ABlockedLoopShowsTheBlockOnce) {
  const auto lags = probe(milliseconds(300), milliseconds(120));
  ASSERT_FALSE(lags.empty());
  const float worst = *std::max_element(lags.begin(), lags.end());
  EXPECT_GE(worst, 100.0F);  // the wake-up due during the block ran after it
  // The ticks missed during the block are skipped, not replayed as a burst of late wake-ups.
  const auto late = std::count_if(lags.begin(), lags.end(), [](float l) { return l >= 50.0F; });
  EXPECT_LE(late, 3);  // not ~7 (one per missed tick); a loaded host may add one or two
  EXPECT_TRUE(std::all_of(lags.begin(), lags.end(), [](float l) { return l >= 0.0F; }));
}

TEST(LoopLagProbe, CancelEndsTheLoopAndKeepsTheSamples) {
  const auto lags = probe(milliseconds(120), milliseconds(0));
  // About 12 wake-ups at 10 ms; at least a few even on a loaded host.
  EXPECT_GE(lags.size(), 3U);
  EXPECT_LE(lags.size(), 13U);
}

}  // namespace
}  // namespace llmbench::loadgen::detail
