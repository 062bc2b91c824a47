#pragma once
// Test support: drive a real-time engine directly (no HTTP) and collect its stream events.

#include "llmbench/core/clock.hpp"
#include "llmbench/server/realtime_engine.hpp"
#include "llmbench/sim/engine_spec.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace llmbench::server::testing {

/// DeepSeek-R1 TP8 on H200 with a small KV cache (2,000 blocks of 64) and a 512-token step
/// budget (a 700-token prompt is prefilled in two chunks); invariants checked every step.
/// `window_ms`: the engine's admission window. Profiles from the repository's data/.
inline EngineSettings r1_settings(double window_ms) {
  const std::string data = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";
  sim::EngineOverrides o;
  o.num_gpu_blocks_override = 2000;
  o.max_num_seqs = 64;
  o.max_num_batched_tokens = 512;
  EngineSettings e{.spec = sim::load_engine_spec(data, o), .admission_window_ms = window_ms};
  e.spec.engine.check_invariants = true;
  return e;
}

/// Submits one request per (prompt tokens, output tokens) pair to the started `engine`, all
/// arriving at `t0` (steady-clock ns), collects each request's events until its `finished`
/// event (polling for at most 10 s), then stops the engine. Returns the events per request, in
/// submission order; a request that did not finish in time has no `finished` event.
inline std::vector<std::vector<StreamEvent>> collect_engine_events(
    RealtimeEngine& engine, const std::vector<std::pair<std::int64_t, std::int64_t>>& lengths,
    TimeNs t0) {
  boost::asio::io_context ioc;
  std::vector<std::vector<StreamEvent>> got(lengths.size());
  std::size_t done = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    auto stream = std::make_shared<TokenStream>(ioc.get_executor());
    engine.submit(EngineRequest{lengths[i].first, lengths[i].second, {}, t0, stream});
    boost::asio::co_spawn(
        ioc,
        [stream, &got, &done, i]() -> boost::asio::awaitable<void> {
          std::vector<StreamEvent> events;
          while (true) {
            co_await stream->wait();
            stream->take(events);
            for (const auto& e : events) {
              got[i].push_back(e);
              if (e.finished) {
                ++done;
                co_return;
              }
            }
          }
        },
        boost::asio::detached);
  }
  auto guard = boost::asio::make_work_guard(ioc);
  std::thread runner([&] { ioc.run(); });
  for (int i = 0; i < 1000 && done < lengths.size(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  guard.reset();
  engine.stop();
  ioc.stop();
  runner.join();
  return got;
}

/// Requests of `events` whose last event is `finished`.
inline std::size_t finished_requests(const std::vector<std::vector<StreamEvent>>& events) {
  std::size_t n = 0;
  for (const auto& e : events) n += !e.empty() && e.back().finished ? 1 : 0;
  return n;
}

}  // namespace llmbench::server::testing
