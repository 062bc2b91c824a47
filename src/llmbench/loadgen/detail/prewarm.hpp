#pragma once
/// @file
/// Connections opened ahead of a closed loop (docs/architecture.md, the run's life, step 4):
/// the cap's keep-alive connections, opened before the clock starts so that no request pays for
/// setup, and not one more. An idle extra connection holds a thread of a thread-per-connection
/// server: llama-server's HTTP pool keeps a connection's thread for its 5 s keep-alive wait, so
/// one connection per client thread (16 on a 16-core host) at concurrency 2 held 14 of its 15
/// threads, and each new request waited for another's stream to end.

#include "llmbench/http/client.hpp"

#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::loadgen::detail {

/// How many of `want` connections each of `workers` event loops opens: want / workers, and one
/// more for the first want % workers, where the dispatcher's least-loaded choice (the lowest
/// index among equals) sends a closed loop's jobs. Sums to `want` (0 when `want` ≤ 0).
std::vector<std::size_t> prewarm_shares(std::int64_t want, std::size_t workers);

/// One worker's event loop and its connection pool.
struct PrewarmTarget {
  boost::asio::io_context& ioc;  ///< running on its own thread
  http::ConnectionPool& pool;    ///< used only on `ioc`'s thread
};

/// Opens `prewarm_shares(want, targets.size())` connections on each target's loop and waits for
/// all of them. Returns why some could not be opened ("" when every one was).
std::string prewarm(const std::vector<PrewarmTarget>& targets, std::int64_t want);

}  // namespace llmbench::loadgen::detail
