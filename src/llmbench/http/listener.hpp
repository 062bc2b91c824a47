#pragma once
/// @file
/// Server side of the http module: an HTTP/1.1 listener on Boost.Beast/Asio with C++20
/// coroutines. One acceptor (on worker 0) hands accepted sockets round-robin to N worker threads,
/// each running its own `io_context`, so a connection and everything its handler does (timers,
/// writes) stay on one thread. Connections are keep-alive (RFC 9112 §9.3); a handler either sends
/// one complete response or streams a chunked one (RFC 9112 §7.1, `Transfer-Encoding: chunked`),
/// typically Server-Sent Events (`text/event-stream`, WHATWG HTML §9.2).
///
/// Usage:
/// @code
///   http::Listener listener({.port = 0, .threads = 2},
///       [](http::ServerRequest& req, http::ResponseWriter& w) -> net::awaitable<void> {
///         if (req.target() == "/health") { co_await w.send(http::status::ok, "{}"); co_return; }
///         co_await w.begin_stream();
///         net::steady_timer t(w.executor());
///         for (int i = 0; i < 3; ++i) {
///           t.expires_after(10ms); co_await t.async_wait(net::as_tuple(net::use_awaitable));
///           if (!co_await w.write_chunk("data: x\n\n")) co_return;  // client gone
///         }
///         co_await w.end_stream();
///       });
///   std::uint16_t port = listener.start();
///   ...
///   listener.stop();
/// @endcode

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace llmbench::http {

/// A parsed request with its whole body in memory (Beast `request<string_body>`).
using ServerRequest = boost::beast::http::request<boost::beast::http::string_body>;
/// A complete response (Beast `response<string_body>`); `ResponseWriter::send` fills in version,
/// keep-alive and Content-Length.
using ServerResponse = boost::beast::http::response<boost::beast::http::string_body>;

/// Listener configuration. Plain values; validated by `Listener::start()`.
struct ListenerOptions {
  std::string host = "127.0.0.1";  ///< address to bind (IPv4 or IPv6 literal); loopback default
  std::uint16_t port = 0;          ///< TCP port; 0 = any free port (see `Listener::port()`)
  int threads = 1;                 ///< worker threads (≥ 1), each with its own io_context
  std::size_t max_body_bytes = std::size_t{64} << 20;    ///< larger bodies get 413
  std::size_t max_header_bytes = std::size_t{64} << 10;  ///< larger header blocks get 431
  /// A keep-alive connection waiting this long for the first byte of its next request is
  /// closed (uvicorn's `--timeout-keep-alive`). Zero = no limit.
  std::chrono::milliseconds idle_timeout{0};
  /// From a request's first byte to the end of its headers (slowloris defence). Zero = none.
  std::chrono::milliseconds header_timeout{0};
  /// Reading a request's body once the headers are in. Zero = no limit.
  std::chrono::milliseconds body_timeout{0};
  /// Connections open at once at most; one more is answered `503` with `Connection: close` and
  /// closed at once. Zero = no cap.
  std::int64_t max_connections = 0;
};

/// The response side of one request, handed to a `Handler`. Not thread-safe: use it only from the
/// handler's coroutine (which runs on the connection's worker thread, `executor()`). Lives until
/// the handler's coroutine completes; do not keep references to it after that.
///
/// Protocol: call exactly one of `send()` (complete response) or `begin_stream()` followed by any
/// number of `write_chunk()` and one `end_stream()`. Every call returns `false` (and does nothing
/// more) once a write has failed, e.g. because the client disconnected; handlers should then stop
/// their work and return. If the handler returns without responding, the listener sends
/// 500; if it returns mid-stream without `end_stream()`, the listener terminates the chunked body
/// (or closes the connection if it failed).
class ResponseWriter {
 public:
  /// Where the exchange stands.
  enum class State { Idle, Streaming, Done, Failed };

  /// Made by the listener for each request; `socket` must outlive the writer.
  ResponseWriter(boost::asio::ip::tcp::socket& socket, unsigned version, bool keep_alive) noexcept
      : socket_(socket), version_(version), keep_alive_(keep_alive) {}
  ResponseWriter(const ResponseWriter&) = delete;
  ResponseWriter& operator=(const ResponseWriter&) = delete;

  /// Sends a complete response: sets its HTTP version, keep-alive and Content-Length (from the
  /// body). Returns true when the whole response was written.
  boost::asio::awaitable<bool> send(ServerResponse response);
  /// Convenience: a complete response with `status`, `body` and `Content-Type: content_type`.
  boost::asio::awaitable<bool> send(boost::beast::http::status status, std::string body,
                                    std::string_view content_type = "application/json");

  /// Writes the status line and headers of a chunked response (`Transfer-Encoding: chunked`,
  /// `Cache-Control: no-cache`). For an HTTP/1.0 client the body is sent unframed and the
  /// connection closed at the end instead. Returns true on success.
  boost::asio::awaitable<bool> begin_stream(
      boost::beast::http::status status = boost::beast::http::status::ok,
      std::string_view content_type = "text/event-stream");
  /// Writes `data` as one chunk: one non-blocking `sendmsg` made at once, without suspending the
  /// coroutine unless the socket buffer is full (then the rest is written asynchronously);
  /// TCP_NODELAY is set, so it leaves at once. Empty `data` is skipped, since a zero-size chunk
  /// would end the body. Returns false if the stream is not open or the write failed (client gone).
  boost::asio::awaitable<bool> write_chunk(std::string_view data);
  /// Writes `final_data` (if non-empty) as a chunk together with the last chunk (`0\r\n\r\n`)
  /// in one system call and ends the response. Returns true on success.
  boost::asio::awaitable<bool> end_stream(std::string_view final_data = {});

  /// Completes when the peer closes its side of the connection (EOF or a socket error): true.
  /// Completes with false when instead bytes arrive (a pipelined next request; they stay unread)
  /// or when the wait is cancelled. For a handler that works a long time before it writes (a
  /// non-streamed generation) to notice a client that left, as vLLM aborts such requests.
  boost::asio::awaitable<bool> peer_closed();
  /// The executor of the connection's worker thread (for timers in the handler).
  [[nodiscard]] boost::asio::any_io_executor executor() const { return socket_.get_executor(); }
  /// Current state.
  [[nodiscard]] State state() const noexcept { return state_; }
  /// True once a write failed (the client is most likely gone).
  [[nodiscard]] bool failed() const noexcept { return state_ == State::Failed; }
  /// Whether the connection will be kept open after this response.
  [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }
  /// Asks to close the connection after this response (sets `Connection: close` if not sent yet).
  void set_keep_alive(bool keep_alive) noexcept { keep_alive_ = keep_alive_ && keep_alive; }
  /// Writes `head` (a complete interim response, e.g. "HTTP/1.1 100 Continue\r\n\r\n", RFC 9110
  /// §15.2) before the real response; only while nothing else was sent. For fault injection.
  boost::asio::awaitable<bool> send_interim(std::string_view head);
  /// Ends the connection at once, mid-response: with `reset` by an RST (SO_LINGER 0), else by a
  /// FIN after what was written. Later calls return false. For fault injection.
  void close_now(bool reset) noexcept;

 private:
  boost::asio::awaitable<bool> write_framed(std::string_view data, bool last);

  boost::asio::ip::tcp::socket& socket_;
  unsigned version_;
  bool keep_alive_;
  State state_ = State::Idle;
};

/// A request handler: a coroutine run on the connection's worker thread, one request at a time
/// per connection. It must not throw (an escaped exception is logged and answered with 500 or a
/// closed connection). Called concurrently from several worker threads when `threads > 1`.
using Handler = std::function<boost::asio::awaitable<void>(ServerRequest&, ResponseWriter&)>;

/// An HTTP/1.1 server: acceptor plus worker threads. Thread-safe for `start`/`stop`/`port` from
/// any single controlling thread; `stop()` is called by the destructor.
class Listener {
 public:
  /// Stores the options and the handler; nothing is opened until `start()`.
  Listener(ListenerOptions options, Handler handler);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  /// Binds and listens on `host:port`, starts the worker threads and returns the bound port.
  /// Throws `llmbench::Exception` naming the address if the host is invalid, `threads < 1`, or
  /// bind/listen fails (e.g. port in use). Calling it twice throws.
  std::uint16_t start();
  /// Stops accepting, stops the workers (pending handler coroutines are destroyed, which runs
  /// their destructors on the calling thread after the workers have joined), closes every
  /// connection and joins the threads. Idempotent; must not be called from a handler.
  void stop();

  /// The bound port (0 before `start()`).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// Connections currently open (relaxed atomic; for statistics).
  [[nodiscard]] std::int64_t open_connections() const noexcept;
  /// Connections accepted since `start()`.
  [[nodiscard]] std::int64_t accepted_connections() const noexcept;
  /// Connections answered 503 and closed because `max_connections` were open.
  [[nodiscard]] std::int64_t refused_connections() const noexcept;

 private:
  struct Impl;
  ListenerOptions options_;
  Handler handler_;
  std::uint16_t port_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmbench::http
