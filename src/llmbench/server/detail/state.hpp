#pragma once
/// @file
/// Private to the server module: state shared by the request handlers of every worker thread.

#include "llmbench/core/clock.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/http/listener.hpp"
#include "llmbench/server/detail/token_source.hpp"
#include "llmbench/server/emission_log.hpp"
#include "llmbench/server/options.hpp"
#include "llmbench/server/prometheus.hpp"

#include <boost/asio/awaitable.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

namespace llmbench::server::detail {

/// Options, derived constants, the timing model, emission log and counters. Thread-safe: the
/// constants are immutable after construction, the rest is atomic or locked.
struct ServerState {
  explicit ServerState(ServerOptions opts);

  const ServerOptions options;
  const TimeNs ttft_ns;          ///< options.ttft_ms in ns
  const TimeNs itl_ns;           ///< options.itl_ms in ns
  const std::int64_t created_s;  ///< Unix seconds at construction (/v1/models `created`)
  std::unique_ptr<EmissionLog> emission_log;  ///< null when not configured

  std::atomic<std::int64_t> next_id{0};
  std::atomic<std::int64_t> requests_total{0};
  std::atomic<std::int64_t> success_total{0};
  std::atomic<std::int64_t> rejected_total{0};
  std::atomic<std::int64_t> cancelled_total{0};
  /// Requests given each fault (index: `FaultKind` value; `llmbench:faults_injected_total`).
  std::array<std::atomic<std::int64_t>, kFaultKinds.size() + 1> faults_injected{};
  /// vLLM's per-request phase and token histograms, observed when a request finishes (both
  /// timings; token buckets up to `options.max_model_len`, as vLLM).
  RequestHistograms request_histograms{options.max_model_len};
  /// Where tokens come from (`make_timing`); made last, from the members above.
  std::unique_ptr<TimingModel> timing;
};

/// Routes one request (see server.hpp for the endpoints). Never throws.
boost::asio::awaitable<void> handle_request(ServerState& state, http::ServerRequest& request,
                                            http::ResponseWriter& writer);

/// Serves POST /v1/completions (`chat` false) or /v1/chat/completions (`chat` true) with the
/// timing model of `ServerOptions` (generation.cpp). May throw only std::bad_alloc.
boost::asio::awaitable<void> serve_generation(ServerState& state, http::ServerRequest& request,
                                              http::ResponseWriter& writer, bool chat);

/// Answers a generation request the server refuses: counts it in `rejected_total` and sends 400
/// with an OpenAI error object (`invalid_request_error`, param = `error.source`).
boost::asio::awaitable<void> reject_request(ServerState& state, http::ResponseWriter& writer,
                                            const Error& error);

}  // namespace llmbench::server::detail
