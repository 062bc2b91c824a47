#pragma once
/// @file
/// The built-in simulated OpenAI-compatible server (`llmbench serve`, and the default target of
/// `llmbench run`). It answers like vLLM's OpenAI front end with a plain, exactly predictable
/// timing model (see `ServerOptions`), so it doubles as a test target with known timing.
///
/// Endpoints:
/// - `GET /health` → 200 `{"status":"ok"}`
/// - `GET /v1/models` → OpenAI list object with one model (id, object "model", created,
///   owned_by "llmbench", root, parent, max_model_len, permission)
/// - `POST /v1/completions`, `POST /v1/chat/completions` → streamed (`"stream": true`, SSE with
///   `data: [DONE]`) or whole responses; 400 with an OpenAI error object on bad input
/// - `GET /metrics` → Prometheus text exposition with vLLM's metric names
/// - other paths → 404; a known path with the wrong method → 405
///
/// Emission log (`ServerOptions::emission_log_path`): see `EmissionLog`.
///
/// Calling it from the CLI (`llmbench serve --port-file F`):
/// @code
///   return llmbench::server::run_blocking(options, [&](std::uint16_t port) {
///     if (!port_file.empty()) llmbench::server::write_port_file(port_file, port);
///   });
/// @endcode

#include "llmbench/server/options.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace llmbench::http {
class Listener;
}

namespace llmbench::server {

namespace detail {
struct ServerState;
}

/// A snapshot of the server's counters (each read with a relaxed atomic load).
struct ServerStats {
  std::int64_t running = 0;                  ///< requests holding a slot now
  std::int64_t waiting = 0;                  ///< requests queued for a slot now
  std::int64_t requests_total = 0;           ///< valid generation requests received
  std::int64_t success_total = 0;            ///< generation requests completed
  std::int64_t rejected_total = 0;           ///< generation requests answered with 400
  std::int64_t cancelled_total = 0;          ///< generation requests whose client went away
  std::int64_t prompt_tokens_total = 0;      ///< estimated prompt tokens of admitted requests
  std::int64_t generation_tokens_total = 0;  ///< output tokens written
  std::int64_t open_connections = 0;         ///< TCP connections open now
  std::int64_t refused_connections = 0;      ///< answered 503 at `max_connections`
};

/// The simulated server. `start()`/`stop()` from one controlling thread; `stats()` and `port()`
/// from any thread. Requests are served on `ServerOptions::threads` worker threads.
class Server {
 public:
  /// Validates `options` (throws `llmbench::Exception` naming the field; see `validate`).
  explicit Server(ServerOptions options);
  /// Stops the server if running.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Opens the emission log (if configured), binds, starts the workers and returns the bound
  /// port. Throws `llmbench::Exception` if the log cannot be opened or the address cannot be
  /// bound (e.g. port in use). A server can be started once.
  std::uint16_t start();
  /// Stops accepting, drops in-flight requests (their connections are closed), joins the
  /// workers and flushes the emission log. Idempotent.
  void stop();

  /// Bound port (0 before `start()`).
  [[nodiscard]] std::uint16_t port() const noexcept;
  /// Current counters.
  [[nodiscard]] ServerStats stats() const noexcept;
  /// The validated options.
  [[nodiscard]] const ServerOptions& options() const noexcept;

 private:
  std::unique_ptr<detail::ServerState> state_;
  std::unique_ptr<http::Listener> listener_;  // destroyed first: its coroutines use state_
};

/// True when `host` (an address literal or "localhost") can be reached only from this machine
/// (127.0.0.0/8, ::1); `Server::start` warns for any other listen address, 0.0.0.0 included.
[[nodiscard]] bool is_loopback_host(std::string_view host) noexcept;

/// Writes "<port>\n" to `path` atomically (a temporary file beside it, then rename), so a process
/// polling for the file never reads a partial number. Throws `llmbench::Exception` naming the
/// path on failure.
void write_port_file(const std::string& path, std::uint16_t port);

/// Raises the soft RLIMIT_NOFILE to the hard limit (10,000 concurrent streams need as many
/// descriptors). Returns the new soft limit; never throws.
std::int64_t raise_open_file_limit() noexcept;

/// Runs a server until SIGINT or SIGTERM: blocks both signals in the calling thread (worker
/// threads inherit the mask), raises the descriptor limit, starts the server, calls
/// `on_ready(port)` once listening (e.g. to write a port file; an exception from it stops the
/// server and propagates), then waits in `sigwait`, stops the server and restores the signal
/// mask. Call it from the main thread before other threads exist, so no other thread receives
/// the signals. Returns the signal number that ended it. Throws `llmbench::Exception` on bad
/// options or a failed start.
int run_blocking(const ServerOptions& options,
                 const std::function<void(std::uint16_t port)>& on_ready);

}  // namespace llmbench::server
