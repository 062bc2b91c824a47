#include "llmbench/http/listener.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/thread_name.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <exception>
#include <optional>
#include <sys/socket.h>
#include <thread>
#include <utility>
#include <vector>

namespace llmbench::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

/// Completion token for "give me the error code, never throw".
constexpr auto kTuple = net::as_tuple(net::use_awaitable);

/// Completion handler of every `co_spawn`: logs an escaped exception (docs/architecture.md
/// "Conventions the code relies on": coroutines).
void log_exception(const char* what, const std::exception_ptr& ep) noexcept {
  if (!ep)
    return;
  try {
    std::rethrow_exception(ep);
  } catch (const std::exception& e) {
    log::error("http listener: {} failed: {}", what, e.what());
  } catch (...) {
    log::error("http listener: {} failed with an unknown exception", what);
  }
}

/// Status line of a response, e.g. "HTTP/1.1 200 OK\r\n".
void append_status_line(std::string& out, unsigned version, bhttp::status status) {
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(static_cast<unsigned>(status));
  out += ' ';
  out += bhttp::obsolete_reason(status);
  out += "\r\n";
}

/// True for errors that just mean "the peer went away" (not worth a log line).
bool is_disconnect(const boost::system::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == net::error::eof ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::error::operation_aborted || ec == net::error::bad_descriptor ||
         ec == bhttp::error::partial_message;
}

/// Decrements a counter at the end of a connection (the accept loop incremented it, so a burst
/// of accepts sees every connection it already let in).
class CountGuard {
 public:
  explicit CountGuard(std::atomic<std::int64_t>& counter) noexcept : counter_(counter) {}
  ~CountGuard() { counter_.fetch_sub(1, std::memory_order_relaxed); }
  CountGuard(const CountGuard&) = delete;
  CountGuard& operator=(const CountGuard&) = delete;

 private:
  std::atomic<std::int64_t>& counter_;
};

/// A condition that may recur many times a second (accept failing at the descriptor limit,
/// connections refused at the cap): logged at most once per second, with how often it happened
/// since the last line. One thread only.
class Throttled {
 public:
  /// Counts one occurrence; returns the count to log (> 0) when a line is due, else 0.
  std::int64_t note() noexcept {
    ++count_;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(1))
      return 0;
    last_ = now;
    return std::exchange(count_, 0);
  }

 private:
  std::chrono::steady_clock::time_point last_{};
  std::int64_t count_ = 0;
};

/// Cancels a socket's pending operations when a deadline passes (what Beast's
/// `tcp_stream::expires_after` does, for the plain socket the session uses). The timer's
/// handler holds only a shared state, so it is safe to run after the session ended.
class Watchdog {
 public:
  explicit Watchdog(tcp::socket& socket)
      : timer_(socket.get_executor()), state_(std::make_shared<State>()) {
    state_->socket = &socket;
  }
  ~Watchdog() { state_->socket = nullptr; }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Starts a deadline `limit` from now (none when zero) and clears `fired()`.
  void arm(std::chrono::milliseconds limit) {
    state_->fired = false;
    state_->armed = limit.count() > 0;
    if (!state_->armed)
      return;
    const std::uint64_t epoch = ++state_->epoch;
    timer_.expires_after(limit);
    timer_.async_wait([state = state_, epoch](const boost::system::error_code& ec) {
      if (ec || !state->armed || state->epoch != epoch || state->socket == nullptr)
        return;  // cancelled, or a deadline that was already lifted
      state->fired = true;
      boost::system::error_code ignored;
      state->socket->cancel(ignored);
    });
  }
  /// Lifts the deadline.
  void disarm() noexcept {
    state_->armed = false;
    try {
      timer_.cancel();
    } catch (const boost::system::system_error&) {  // the timer cannot be cancelled: it then fires
    }                                               // with `armed` false, which does nothing
  }
  /// True when the last deadline passed before `disarm`.
  [[nodiscard]] bool fired() const noexcept { return state_->fired; }

 private:
  struct State {
    tcp::socket* socket = nullptr;
    std::uint64_t epoch = 0;
    bool armed = false;
    bool fired = false;
  };
  net::steady_timer timer_;
  std::shared_ptr<State> state_;
};

/// Small OpenAI-style error body for protocol-level failures the handler never sees.
std::string error_body(std::string_view message, unsigned code) {
  return "{\"error\":{\"message\":\"" + std::string(message) +
         "\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":" + std::to_string(code) +
         "}}";
}

}  // namespace

// ---- ResponseWriter ----

net::awaitable<bool> ResponseWriter::send(ServerResponse response) {
  if (state_ != State::Idle)
    co_return false;
  response.version(version_);
  response.keep_alive(keep_alive_);
  if (response.find(bhttp::field::server) == response.end()) {
    response.set(bhttp::field::server, "llmbench");
  }
  response.prepare_payload();
  auto [ec, n] = co_await bhttp::async_write(socket_, response, kTuple);
  (void)n;
  state_ = ec ? State::Failed : State::Done;
  co_return !ec;
}

net::awaitable<bool> ResponseWriter::send(bhttp::status status, std::string body,
                                          std::string_view content_type) {
  ServerResponse response{status, version_};
  response.set(bhttp::field::content_type, content_type);
  response.body() = std::move(body);
  co_return co_await send(std::move(response));
}

net::awaitable<bool> ResponseWriter::begin_stream(bhttp::status status,
                                                  std::string_view content_type) {
  if (state_ != State::Idle)
    co_return false;
  // HTTP/1.0 has no chunked coding (RFC 9112 §7.1 is HTTP/1.1 only): the body is delimited by
  // closing the connection instead.
  if (version_ < 11)
    keep_alive_ = false;
  std::string head;
  head.reserve(192);
  append_status_line(head, version_, status);
  head += "Server: llmbench\r\nContent-Type: ";
  head += content_type;
  head += "\r\nCache-Control: no-cache\r\n";
  if (version_ >= 11)
    head += "Transfer-Encoding: chunked\r\n";
  if (!keep_alive_)
    head += "Connection: close\r\n";
  head += "\r\n";
  auto [ec, n] = co_await net::async_write(socket_, net::buffer(head), kTuple);
  (void)n;
  state_ = ec ? State::Failed : State::Streaming;
  co_return !ec;
}

net::awaitable<bool> ResponseWriter::peer_closed() {
  auto [ec] = co_await socket_.async_wait(tcp::socket::wait_read, kTuple);
  if (ec == net::error::operation_aborted)
    co_return false;
  if (ec)
    co_return true;
  // Readable: EOF (recv returns 0) or an error means the peer is gone; data is a pipelined
  // request, left in the socket for the session to read.
  char byte = 0;
  const ssize_t n = ::recv(socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  co_return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

net::awaitable<bool> ResponseWriter::send_interim(std::string_view head) {
  if (state_ != State::Idle)
    co_return false;
  auto [ec, n] = co_await net::async_write(socket_, net::buffer(head.data(), head.size()), kTuple);
  (void)n;
  if (ec)
    state_ = State::Failed;
  co_return !ec;
}

void ResponseWriter::close_now(bool reset) noexcept {
  boost::system::error_code ignored;
  if (reset) {
    // SO_LINGER on with a zero timeout: close() discards unsent data and sends an RST.
    socket_.set_option(net::socket_base::linger(true, 0), ignored);
  } else {
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
  }
  socket_.close(ignored);
  state_ = State::Failed;
}

net::awaitable<bool> ResponseWriter::write_chunk(std::string_view data) {
  if (state_ != State::Streaming)
    co_return false;
  if (data.empty())
    co_return true;
  co_return co_await write_framed(data, false);
}

net::awaitable<bool> ResponseWriter::end_stream(std::string_view final_data) {
  if (state_ != State::Streaming)
    co_return false;
  if (final_data.empty() && version_ < 11) {
    state_ = State::Done;
    co_return true;
  }
  const bool ok = co_await write_framed(final_data, true);
  if (ok)
    state_ = State::Done;
  co_return ok;
}

net::awaitable<bool> ResponseWriter::write_framed(std::string_view data, bool last) {
  // chunk = chunk-size CRLF chunk-data CRLF; last-chunk = "0" CRLF, then the final CRLF of an
  // empty trailer section (RFC 9112 §7.1). Sizes are hex. HTTP/1.0: the data unframed.
  std::array<char, 20> size_line{};
  char* end = size_line.data();
  std::string_view tail;
  if (version_ >= 11) {
    if (!data.empty()) {
      end = std::to_chars(size_line.data(), size_line.data() + 16, data.size(), 16).ptr;
      *end++ = '\r';
      *end++ = '\n';
    }
    tail = data.empty() ? std::string_view(last ? "0\r\n\r\n" : "")
           : last       ? std::string_view("\r\n0\r\n\r\n", 7)
                        : std::string_view("\r\n", 2);
  }
  std::array<net::const_buffer, 3> buffers{
      net::buffer(size_line.data(), static_cast<std::size_t>(end - size_line.data())),
      net::buffer(data.data(), data.size()), net::buffer(tail.data(), tail.size())};
  const std::size_t total = net::buffer_size(buffers);
  // Fast path: one non-blocking sendmsg right here (the socket is in non-blocking mode, see
  // run_session); the coroutine suspends only if the socket buffer is full. This saves the
  // scheduler round trip of an asynchronous write per chunk.
  boost::system::error_code ec;
  std::size_t written = socket_.write_some(buffers, ec);
  if (ec == net::error::would_block || ec == net::error::try_again) {
    ec.clear();
    written = 0;
  }
  if (!ec && written < total) {
    // Partial write: the rest goes out asynchronously (skip the bytes already sent).
    std::size_t skip = written;
    std::array<net::const_buffer, 3> rest{};
    std::size_t count = 0;
    for (const auto& b : buffers) {
      if (skip >= b.size()) {
        skip -= b.size();
        continue;
      }
      rest[count++] = b + skip;
      skip = 0;
    }
    std::tie(ec, std::ignore) = co_await net::async_write(socket_, rest, kTuple);
  }
  if (ec)
    state_ = State::Failed;
  co_return !ec;
}

// ---- Listener ----

namespace {

/// One worker thread with its own io_context (concurrency hint 1: a single thread runs it).
struct Worker {
  net::io_context ioc{1};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> guard;
  std::thread thread;
};

/// What the accept loop and the sessions share.
struct Shared {
  std::vector<std::unique_ptr<Worker>> workers;
  std::optional<tcp::acceptor> acceptor;  // runs on workers[0]
  std::atomic<std::int64_t> open{0};
  std::atomic<std::int64_t> accepted{0};
  std::atomic<std::int64_t> refused{0};
};

}  // namespace

struct Listener::Impl {
  Shared shared;
  bool running = false;
};

namespace {

/// One keep-alive connection: read a request, run the handler, repeat.
net::awaitable<void> run_session(tcp::socket socket, std::atomic<std::int64_t>& open,
                                 const ListenerOptions& options, const Handler& handler) {
  CountGuard count(open);
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);  // each SSE chunk leaves at once
  socket.non_blocking(true, ignored);  // ResponseWriter writes chunks without suspending
  beast::flat_buffer buffer;
  Watchdog watchdog(socket);
  for (;;) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(options.max_body_bytes);
    parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
    if (buffer.size() == 0) {
      // Keep-alive wait for the next request's first byte.
      watchdog.arm(options.idle_timeout);
      auto [wec] = co_await socket.async_wait(tcp::socket::wait_read, kTuple);
      watchdog.disarm();
      if (wec)
        break;  // idle too long, or the connection failed
    }
    watchdog.arm(options.header_timeout);
    auto [ec, n] = co_await bhttp::async_read_header(socket, buffer, parser, kTuple);
    watchdog.disarm();
    if (!ec && parser.get()[bhttp::field::expect] == "100-continue") {
      // RFC 9110 §10.1.1: a client waiting for 100 (curl does for large bodies) needs it first.
      std::tie(ec, std::ignore) = co_await net::async_write(
          socket, net::buffer("HTTP/1.1 100 Continue\r\n\r\n", 25), kTuple);
    }
    if (!ec && !parser.is_done()) {
      watchdog.arm(options.body_timeout);
      std::tie(ec, n) = co_await bhttp::async_read(socket, buffer, parser, kTuple);
      watchdog.disarm();
    }
    if (ec && watchdog.fired()) {
      log::debug("http listener: closing a connection whose request did not arrive in time");
      break;
    }
    if (ec) {
      ResponseWriter writer(socket, 11, false);
      if (ec == bhttp::error::body_limit) {
        co_await writer.send(bhttp::status::payload_too_large,
                             error_body("request body too large", 413));
      } else if (ec == bhttp::error::header_limit) {
        co_await writer.send(bhttp::status::request_header_fields_too_large,
                             error_body("request header too large", 431));
      } else if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
                 !is_disconnect(ec)) {
        co_await writer.send(bhttp::status::bad_request,
                             error_body("malformed HTTP request: " + ec.message(), 400));
      } else if (!is_disconnect(ec)) {
        log::debug("http listener: read failed: {}", ec.message());
      }
      break;
    }
    ServerRequest request = parser.release();
    ResponseWriter writer(socket, request.version(), request.keep_alive());
    bool threw = false;
    try {
      co_await handler(request, writer);
    } catch (const std::exception& e) {
      threw = true;
      log::error("http listener: handler for {} threw: {}", std::string_view(request.target()),
                 e.what());
    } catch (...) {
      threw = true;
      log::error("http listener: handler threw a non-standard exception");
    }
    if (writer.state() == ResponseWriter::State::Idle) {
      writer.set_keep_alive(!threw);
      // Built outside the co_await expression: GCC 12 double-destroys temporaries of a
      // conditional operator inside co_await.
      std::string body = error_body(threw ? "internal error" : "handler sent no response", 500);
      co_await writer.send(bhttp::status::internal_server_error, std::move(body));
    } else if (writer.state() == ResponseWriter::State::Streaming) {
      if (threw)
        break;  // the body is incomplete: closing tells the client so
      co_await writer.end_stream();
    }
    if (writer.failed() || !writer.keep_alive())
      break;
  }
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.close(ignored);
}

/// Answers a connection beyond the cap: 503 with `Connection: close`, then waits briefly for
/// the client's EOF before closing, so that closing with its request unread does not turn into
/// an RST that destroys the answer before the client reads it.
net::awaitable<void> refuse_connection(tcp::socket socket, std::int64_t cap) {
  const std::string body =
      error_body("connection limit reached (" + std::to_string(cap) + " open)", 503);
  std::string head =
      "HTTP/1.1 503 Service Unavailable\r\nServer: llmbench\r\nContent-Type: "
      "application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  auto [ec, n] = co_await net::async_write(socket, net::buffer(head), kTuple);
  (void)n;
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  if (!ec) {
    Watchdog watchdog(socket);
    watchdog.arm(std::chrono::milliseconds(200));
    std::array<char, 4096> sink{};
    for (;;) {
      auto [rec, rn] = co_await socket.async_read_some(net::buffer(sink), kTuple);
      (void)rn;
      if (rec)
        break;
    }
  }
  socket.close(ignored);
}

/// Accepts on workers[0] and hands each socket to the next worker (round robin).
net::awaitable<void> run_accept_loop(Shared& shared, const ListenerOptions& options,
                                     const Handler& handler) {
  std::size_t next = 0;
  Throttled accept_failures;
  Throttled refusals;
  for (;;) {
    auto& worker = *shared.workers[next++ % shared.workers.size()];
    auto [ec, socket] = co_await shared.acceptor->async_accept(worker.ioc, kTuple);
    if (ec) {
      if (ec == net::error::operation_aborted || !shared.acceptor->is_open())
        co_return;
      // E.g. EMFILE: back off briefly instead of spinning, and log once a second at most.
      if (const std::int64_t n = accept_failures.note(); n > 0)
        log::warn("http listener: accept failed: {} ({} time(s) since the last report)",
                  ec.message(), n);
      net::steady_timer pause(co_await net::this_coro::executor, std::chrono::milliseconds(20));
      co_await pause.async_wait(kTuple);
      continue;
    }
    shared.accepted.fetch_add(1, std::memory_order_relaxed);
    if (options.max_connections > 0 &&
        shared.open.load(std::memory_order_relaxed) >= options.max_connections) {
      shared.refused.fetch_add(1, std::memory_order_relaxed);
      if (const std::int64_t n = refusals.note(); n > 0) {
        log::warn(
            "http listener: {} connections open (the cap): refused {} connection(s) since "
            "the last report",
            options.max_connections, n);
      }
      net::co_spawn(worker.ioc, refuse_connection(std::move(socket), options.max_connections),
                    [](const std::exception_ptr& ep) { log_exception("refusal", ep); });
      continue;
    }
    shared.open.fetch_add(1, std::memory_order_relaxed);
    net::co_spawn(worker.ioc,
                  run_session(tcp::socket(std::move(socket)), shared.open, options, handler),
                  [](const std::exception_ptr& ep) { log_exception("session", ep); });
  }
}

tcp::endpoint resolve_endpoint(const std::string& host, std::uint16_t port) {
  const std::string literal = host == "localhost" ? std::string("127.0.0.1") : host;
  boost::system::error_code ec;
  auto address = net::ip::make_address(literal, ec);
  if (ec) {
    throw Exception(
        Error{"invalid listen address '" + host + "' (need an IPv4/IPv6 literal)", "--host", -1});
  }
  return {address, port};
}

}  // namespace

Listener::Listener(ListenerOptions options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {}

Listener::~Listener() {
  stop();
}

std::uint16_t Listener::start() {
  if (impl_)
    throw Exception("http listener: start() called twice");
  if (options_.threads < 1) {
    throw Exception(Error{"worker threads must be >= 1, got " + std::to_string(options_.threads),
                          "--threads", -1});
  }
  if (!handler_)
    throw Exception("http listener: no handler");
  const tcp::endpoint endpoint = resolve_endpoint(options_.host, options_.port);
  auto impl = std::make_unique<Impl>();
  Shared& shared = impl->shared;
  for (int i = 0; i < options_.threads; ++i) shared.workers.push_back(std::make_unique<Worker>());

  const std::string where = options_.host + ":" + std::to_string(options_.port);
  boost::system::error_code ec;
  auto& acceptor = shared.acceptor.emplace(shared.workers[0]->ioc);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec)
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec)
    acceptor.bind(endpoint, ec);
  if (!ec)
    acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw Exception(Error{"cannot listen on " + where + ": " + ec.message(), "--port", -1});
  port_ = acceptor.local_endpoint(ec).port();
  if (ec)
    throw Exception(Error{"cannot read bound port of " + where + ": " + ec.message(), "", -1});

  net::co_spawn(shared.workers[0]->ioc, run_accept_loop(shared, options_, handler_),
                [](const std::exception_ptr& ep) { log_exception("accept loop", ep); });
  for (std::size_t i = 0; i < shared.workers.size(); ++i) {
    auto& worker = *shared.workers[i];
    worker.guard.emplace(worker.ioc.get_executor());
    worker.thread = std::thread([&worker, i] {
      set_thread_name("llmb-http-" + std::to_string(i));
      for (;;) {
        try {
          worker.ioc.run();
          return;
        } catch (const std::exception& e) {
          log::error("http listener: worker {} caught: {}", i, e.what());
        }
      }
    });
  }
  impl->running = true;
  impl_ = std::move(impl);
  return port_;
}

void Listener::stop() {
  if (!impl_ || !impl_->running)
    return;
  for (auto& worker : impl_->shared.workers) worker->ioc.stop();
  for (auto& worker : impl_->shared.workers) {
    if (worker->thread.joinable())
      worker->thread.join();
  }
  // No thread runs any more: close the acceptor, then destroy the io_contexts, which destroys
  // every pending coroutine (sessions and handlers) and closes their sockets.
  boost::system::error_code ignored;
  if (impl_->shared.acceptor)
    impl_->shared.acceptor->close(ignored);
  impl_->shared.acceptor.reset();
  for (auto& worker : impl_->shared.workers) worker->guard.reset();
  impl_->shared.workers.clear();
  impl_->running = false;
}

std::int64_t Listener::open_connections() const noexcept {
  return impl_ ? impl_->shared.open.load(std::memory_order_relaxed) : 0;
}

std::int64_t Listener::accepted_connections() const noexcept {
  return impl_ ? impl_->shared.accepted.load(std::memory_order_relaxed) : 0;
}

std::int64_t Listener::refused_connections() const noexcept {
  return impl_ ? impl_->shared.refused.load(std::memory_order_relaxed) : 0;
}

}  // namespace llmbench::http
