#pragma once
/// @file
/// Asynchronous HTTP/1.1 client on Boost.Beast/Asio with keep-alive connection pools, for one
/// worker thread each (wrk2's per-thread event loops; docs/architecture.md "Conventions the code
/// relies on": workers). Bodies may be content-length or chunked (RFC 9112 §7.1); body bytes are
/// handed to the caller as they are read, with the steady-clock time of the read, so streamed (SSE)
/// responses can be timed per piece. Interim 1xx responses are skipped (RFC 9110 §15.2); header
/// blocks may be up to 64 KiB; a body with a content or transfer coding other than chunked is a
/// `Failure::Protocol` naming it (the client asks for `Accept-Encoding: identity`). Tests:
/// tests/unit/http/ (a scripted peer).

#include "llmbench/core/clock.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/http/url.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::http {

class ConnectionTally;

/// One extra request header.
using Header = std::pair<std::string, std::string>;

/// Client settings shared by all pools of a run.
struct ClientOptions {
  bool insecure = false;  ///< https: skip certificate and host-name verification (`--insecure`)
  /// https: PEM file of the certificates to trust instead of the system's (`--ca-cert`), e.g. a
  /// self-signed server's own certificate. Empty: the system store. Unreadable: the pool's
  /// constructor throws `Exception` naming the file.
  std::string ca_cert_file;
  std::vector<Header> headers{};  ///< sent with every request (`--header K:V`); may hold secrets,
                                  ///< so never logged
  std::chrono::milliseconds connect_timeout{10'000};      ///< TCP + TLS handshake
  std::chrono::milliseconds first_byte_timeout{600'000};  ///< request written → response headers
  std::chrono::milliseconds idle_timeout{300'000};        ///< max silence between body reads
  std::chrono::milliseconds total_timeout{3'600'000};     ///< whole exchange
  std::size_t max_error_body_bytes = 64 * 1024;  ///< non-2xx bodies are kept up to this size
  /// `--source-address A,B,...`: local IP addresses the pool's connections are bound to before
  /// they connect, in turn, so one host opens more connections to one server than the
  /// ephemeral ports of one address allow (about 28,000 each). Empty: the kernel chooses.
  std::vector<std::string> source_addresses{};
};

/// How an exchange ended at the transport level. HTTP status codes are not failures here.
enum class Failure : std::uint8_t {
  None,
  Connect,    ///< resolve, TCP connect or TLS handshake failed (not a timeout)
  Timeout,    ///< one of the ClientOptions timeouts fired
  Closed,     ///< the peer closed the connection before the response was complete
  Io,         ///< another read/write error
  Protocol,   ///< malformed HTTP response
  Cancelled,  ///< `ConnectionPool::cancel_all` was called
};

/// Which of the four `ClientOptions` timeouts fired (with `Failure::Timeout`).
enum class TimeoutPhase : std::uint8_t {
  None,
  Connect,    ///< `connect_timeout`: TCP connect or TLS handshake
  FirstByte,  ///< `first_byte_timeout`: request written, no response headers yet
  Idle,       ///< `idle_timeout`: silence between body reads
  Total,      ///< `total_timeout`: the whole exchange
};

/// The flag-style name of a phase ("connect", "first-byte", "idle", "total"; "" for None).
[[nodiscard]] std::string_view timeout_phase_name(TimeoutPhase phase) noexcept;

/// Outcome of one exchange.
struct Outcome {
  Failure failure = Failure::None;
  std::string message;         ///< empty on success (for a non-2xx status whose body was not
                               ///< read, what kept it unread: its encoding)
  int status = 0;              ///< HTTP status, 0 if no headers were received
  bool body_complete = false;  ///< the body ended as framed (last chunk / content-length reached)
  TimeoutPhase timeout = TimeoutPhase::None;  ///< set with `Failure::Timeout`
};

/// One request to send. `target` is the full path (with the URL's prefix already applied).
struct Request {
  std::string method = "POST";
  std::string target;
  std::string body;
  std::string content_type = "application/json";
  std::string accept = "text/event-stream";
  std::vector<Header> headers;  ///< per-request headers (e.g. X-Request-Id)
  /// Steady-clock time (`steady_now_ns()`, ns) before which the request is not written: the pool
  /// takes an idle connection (or opens one) first and then waits, so that connecting is not
  /// part of the send time. 0, or a time already past: written at once.
  TimeNs send_at_ns = 0;
};

/// Receives the events of one exchange, on the pool's thread, in this order: `on_sent` (each
/// attempt; a retry on a fresh connection calls it again), `on_headers` once, `on_body` zero or
/// more times. Times are absolute steady-clock ns (`steady_now_ns()`).
class ResponseHandler {
 public:
  ResponseHandler() = default;
  virtual ~ResponseHandler() = default;
  ResponseHandler(const ResponseHandler&) = delete;
  ResponseHandler& operator=(const ResponseHandler&) = delete;
  ResponseHandler(ResponseHandler&&) = delete;
  ResponseHandler& operator=(ResponseHandler&&) = delete;

  /// Right before the request's first byte is written.
  virtual void on_sent(TimeNs now_ns) = 0;
  /// Status line and headers received.
  virtual void on_headers(int status, TimeNs now_ns) = 0;
  /// Decoded body bytes (chunk framing removed) as read from the socket. For non-2xx responses
  /// the body is delivered too (capped at `max_error_body_bytes`).
  virtual void on_body(std::string_view bytes, TimeNs now_ns) = 0;
  /// Polled after each body read: return true to stop reading and close the connection (e.g.
  /// after `[DONE]` when the body framing would keep it open). Default: never.
  virtual bool want_stop() { return false; }
};

/// Keep-alive connections to one origin, used from one thread (its io_context). Not thread-safe.
/// Connections are created on demand, so the pool grows to the thread's in-flight peak and then
/// stops connecting ("sized to the load"); `prewarm` opens them before measurement starts.
class ConnectionPool {
 public:
  /// `ioc` must outlive the pool; `options` and `url` are copied. Throws `Exception` when
  /// `options.ca_cert_file` cannot be loaded. `tally`, when given (it must outlive the pool),
  /// counts the pool's open connections and failed connects with other pools'.
  ConnectionPool(boost::asio::io_context& ioc, Url url, ClientOptions options,
                 ConnectionTally* tally = nullptr);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;
  ConnectionPool(ConnectionPool&&) = delete;
  ConnectionPool& operator=(ConnectionPool&&) = delete;

  /// Sends `request` and streams the response into `handler`. Reuses an idle connection when
  /// there is one; if a reused connection turns out closed before any response byte, retries
  /// once on a new connection. Never throws for network errors: they are in the `Outcome`.
  boost::asio::awaitable<Outcome> execute(const Request& request, ResponseHandler& handler);

  /// Opens up to `count` idle connections now (errors returned, pool keeps what succeeded).
  boost::asio::awaitable<Outcome> prewarm(std::size_t count);

  /// Closes every connection, idle or busy; busy exchanges end with `Failure::Cancelled`.
  void cancel_all();

  /// Connections opened so far (a count that stays flat under steady load shows reuse).
  [[nodiscard]] std::uint64_t connections_opened() const noexcept;
  /// Idle connections kept now.
  [[nodiscard]] std::size_t idle_count() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Makes what a `ConnectionPool` for `url` would make before connecting (for https, the TLS
/// context with the CA certificates of `options`), so that a bad `--ca-cert` fails once, before a
/// run, instead of in every worker. Throws `Exception` as the pool's constructor does.
void check_client_options(const Url& url, const ClientOptions& options);

/// Convenience for setup paths (not the hot path): runs one GET on a private io_context and
/// returns (status, body). Throws `Exception` on transport failure, naming the URL.
std::pair<int, std::string> fetch_blocking(const Url& url, const std::string& target,
                                           const ClientOptions& options,
                                           std::chrono::milliseconds timeout);

/// As `fetch_blocking`, a POST of the JSON `body` (a probe request before a run), the whole
/// response collected (a stream included) within `timeout`.
std::pair<int, std::string> post_blocking(const Url& url, const std::string& target,
                                          const std::string& body, const ClientOptions& options,
                                          std::chrono::milliseconds timeout);

}  // namespace llmbench::http
