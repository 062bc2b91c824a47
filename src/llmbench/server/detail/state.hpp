#pragma once
/// @file
/// Private to the server module: state shared by the request handlers of every worker thread.

#include "llmbench/core/clock.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/http/listener.hpp"
#include "llmbench/server/emission_log.hpp"
#include "llmbench/server/options.hpp"
#include "llmbench/server/prometheus.hpp"
#include "llmbench/server/realtime_engine.hpp"
#include "llmbench/server/slot_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

namespace llmbench::server::detail {

/// Options, derived constants, admission pool, emission log and counters. Thread-safe: the
/// constants are immutable after construction, the rest is atomic or locked.
struct ServerState {
  explicit ServerState(ServerOptions opts);

  const ServerOptions options;
  const TimeNs ttft_ns;                    ///< options.ttft_ms in ns
  const TimeNs itl_ns;                     ///< options.itl_ms in ns
  const std::int64_t created_s;            ///< Unix seconds at construction (/v1/models `created`)
  SlotPool pool;                           ///< fixed timing: admission slots
  std::unique_ptr<RealtimeEngine> engine;  ///< engine timing: the engine (else null)
  std::unique_ptr<EmissionLog> emission_log;  ///< null when not configured

  std::atomic<std::int64_t> next_id{0};
  std::atomic<std::int64_t> requests_total{0};
  std::atomic<std::int64_t> success_total{0};
  std::atomic<std::int64_t> rejected_total{0};
  std::atomic<std::int64_t> cancelled_total{0};
  std::atomic<std::int64_t> prompt_tokens_total{0};
  std::atomic<std::int64_t> generation_tokens_total{0};
  /// vLLM's per-request phase and token histograms, observed when a request finishes (both
  /// timings; token buckets up to `options.max_model_len`, as vLLM).
  RequestHistograms request_histograms{options.max_model_len};
};

/// Routes one request (see server.hpp for the endpoints). Never throws.
boost::asio::awaitable<void> handle_request(ServerState& state, http::ServerRequest& request,
                                            http::ResponseWriter& writer);

/// Serves POST /v1/completions (`chat` false) or /v1/chat/completions (`chat` true) with the
/// timing model of `ServerOptions` (dispatches to `serve_engine_generation` with engine timing).
/// May throw only std::bad_alloc.
boost::asio::awaitable<void> serve_generation(ServerState& state, http::ServerRequest& request,
                                              http::ResponseWriter& writer, bool chat);

/// Answers a generation request the server refuses: counts it in `rejected_total` and sends 400
/// with an OpenAI error object (`invalid_request_error`, param = `error.source`).
boost::asio::awaitable<void> reject_request(ServerState& state, http::ResponseWriter& writer,
                                            const Error& error);

/// The same endpoints with `Timing::Engine`: the request joins the engine, its tokens stream
/// as the engine's steps emit them.
boost::asio::awaitable<void> serve_engine_generation(ServerState& state,
                                                     http::ServerRequest& request,
                                                     http::ResponseWriter& writer, bool chat);

}  // namespace llmbench::server::detail
