#pragma once
/// @file
/// Test support for the client pool: an in-process HTTP peer on 127.0.0.1 that follows a script
/// (accept, read a request, write canned bytes, then keep the connection, close it or go silent),
/// and a runner that drives one `ConnectionPool::execute` on the same io_context with a guard
/// against hangs. Boost.Beast's `test::fail_count` idea (fail at step n, for every n) is applied
/// by the tests: they cut a canned response after every byte.

#include "llmbench/http/client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::http::test {

namespace net = boost::asio;
using tcp = net::ip::tcp;

/// What the peer does once a reply's bytes are written.
enum class Then : std::uint8_t {
  KeepOpen,  ///< go on with the next reply of the script (or close when there is none)
  Close,     ///< close the connection (FIN; the request was read, so no reset)
  Stall,     ///< write nothing more; read and discard until the client closes
};

/// One step of a connection's script.
struct Reply {
  std::string bytes;  ///< written after the request has been read
  Then then = Then::KeepOpen;
  bool read_request = true;   ///< false: do not read a request first (e.g. stall a TLS handshake)
  bool byte_by_byte = false;  ///< one write per byte, so the client sees every split point
};

/// The replies of one accepted connection, in order; when they run out the peer closes it.
using ConnectionScript = std::vector<Reply>;

/// A peer that serves the i-th accepted connection with the i-th script (connections beyond the
/// scripts are closed at once). With `tls`, each connection does the server TLS handshake first.
/// Single-threaded: runs on the io_context given, as does the client under test. Keep it alive
/// until that io_context has run (its accept loop starts there and uses the peer).
class ScriptedPeer {
 public:
  ScriptedPeer(net::io_context& ioc, std::vector<ConnectionScript> scripts,
               net::ssl::context* tls = nullptr)
      : ioc_(ioc), scripts_(scripts.begin(), scripts.end()), tls_(tls), acceptor_(ioc) {
    const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(ep.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen();
    net::co_spawn(ioc_, accept_loop(), net::detached);
  }
  ScriptedPeer(const ScriptedPeer&) = delete;
  ScriptedPeer& operator=(const ScriptedPeer&) = delete;
  ScriptedPeer(ScriptedPeer&&) = delete;
  ScriptedPeer& operator=(ScriptedPeer&&) = delete;
  ~ScriptedPeer() { stop(); }

  /// The port it listens on (127.0.0.1).
  [[nodiscard]] std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  /// `http://127.0.0.1:port` (or https with `tls`).
  [[nodiscard]] Url url(bool tls = false) const {
    return Url{.tls = tls, .host = "127.0.0.1", .port = port(), .path_prefix = ""};
  }
  /// Connections accepted so far.
  [[nodiscard]] std::size_t accepted() const { return accepted_; }
  /// The address each accepted connection came from, in order.
  [[nodiscard]] const std::vector<std::string>& peers() const { return peers_; }
  /// Connections whose script has ended (the peer closed them or the client did).
  [[nodiscard]] std::size_t ended() const { return *ended_; }
  /// Targets of the requests read so far, in arrival order, as "conn#:target".
  [[nodiscard]] std::vector<std::string> requests() const {
    std::vector<std::string> targets;
    for (std::size_t i = 0; i < requests_->size(); i += 2) {
      targets.push_back((*requests_)[i]);
    }
    return targets;
  }
  /// The header block of the i-th request read (request line and fields).
  [[nodiscard]] const std::string& request_head(std::size_t i) const {
    return requests_->at(2 * i + 1);
  }
  /// Stops accepting; connections in progress end when the client closes them.
  void stop() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  }

 private:
  net::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(net::as_tuple(net::use_awaitable));
      if (ec) {
        co_return;
      }
      const std::size_t id = accepted_++;
      boost::system::error_code peer_ec;
      const auto peer = socket.remote_endpoint(peer_ec);
      peers_.push_back(peer_ec ? std::string() : peer.address().to_string());
      ConnectionScript script;
      if (!scripts_.empty()) {
        script = std::move(scripts_.front());
        scripts_.pop_front();
      }
      if (tls_ != nullptr) {
        net::co_spawn(ioc_, serve_tls(std::move(socket), std::move(script), id),
                      [ended = ended_](const std::exception_ptr&) { ++*ended; });
      } else {
        net::co_spawn(ioc_, serve_plain(std::move(socket), std::move(script), id, requests_),
                      [ended = ended_](const std::exception_ptr&) { ++*ended; });
      }
    }
  }

  net::awaitable<void> serve_tls(tcp::socket socket, ConnectionScript script, std::size_t id) {
    boost::beast::ssl_stream<tcp::socket> stream(std::move(socket), *tls_);
    auto [ec] = co_await stream.async_handshake(net::ssl::stream_base::server,
                                                net::as_tuple(net::use_awaitable));
    if (!ec) {
      co_await serve_stream(stream, std::move(script), id, requests_);
    }
  }

  /// Runs one connection's script. `requests` (target, then header block, per request) is shared
  /// so a session that outlives the peer object still has somewhere to write.
  template <class Stream>
  static net::awaitable<void> serve_stream(Stream& stream, ConnectionScript script, std::size_t id,
                                           std::shared_ptr<std::vector<std::string>> requests) {
    namespace bhttp = boost::beast::http;
    constexpr auto kNoThrow = net::as_tuple(net::use_awaitable);
    boost::beast::flat_buffer buffer;
    for (const Reply& reply : script) {
      if (reply.read_request) {
        bhttp::request<bhttp::string_body> req;
        auto [ec, n] = co_await bhttp::async_read(stream, buffer, req, kNoThrow);
        if (ec) {
          co_return;
        }
        requests->push_back(std::to_string(id) + ":" + std::string(req.target()));
        std::ostringstream head;
        head << req.base();
        requests->push_back(head.str());
      }
      const std::size_t step =
          reply.byte_by_byte ? 1 : std::max<std::size_t>(reply.bytes.size(), 1);
      for (std::size_t at = 0; at < reply.bytes.size(); at += step) {
        const std::size_t len = std::min(step, reply.bytes.size() - at);
        auto [ec, n] =
            co_await net::async_write(stream, net::buffer(reply.bytes.data() + at, len), kNoThrow);
        if (ec) {
          co_return;
        }
      }
      if (reply.then == Then::Close) {
        co_return;
      }
      if (reply.then == Then::Stall) {
        std::array<char, 4096> sink{};
        for (;;) {
          auto [ec, n] = co_await stream.async_read_some(net::buffer(sink), kNoThrow);
          if (ec) {
            co_return;
          }
        }
      }
    }
  }
  static net::awaitable<void> serve_plain(tcp::socket socket, ConnectionScript script,
                                          std::size_t id,
                                          std::shared_ptr<std::vector<std::string>> requests) {
    co_await serve_stream(socket, std::move(script), id, std::move(requests));
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
  }

  net::io_context& ioc_;
  std::deque<ConnectionScript> scripts_;
  net::ssl::context* tls_;
  tcp::acceptor acceptor_;
  std::size_t accepted_ = 0;
  std::vector<std::string> peers_;
  std::shared_ptr<std::vector<std::string>> requests_ =
      std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::size_t> ended_ = std::make_shared<std::size_t>(0);
};

/// Collects what the pool hands to a `ResponseHandler`.
class Collect final : public ResponseHandler {
 public:
  void on_sent(TimeNs now_ns) override {
    ++sent;
    sent_ns = now_ns;
  }
  void on_headers(int status_code, TimeNs /*now_ns*/) override {
    ++headers;
    status = status_code;
  }
  void on_body(std::string_view bytes, TimeNs /*now_ns*/) override { body.append(bytes); }

  int sent = 0;         ///< on_sent calls (one per attempt)
  TimeNs sent_ns = -1;  ///< steady-clock time of the last on_sent
  int headers = 0;      ///< on_headers calls
  int status = 0;       ///< last status given to on_headers
  std::string body;
};

/// Runs `pool.execute(request)` on `ioc` (where the peer runs too) until it completes; returns
/// nullopt if it has not completed after `guard` (a hang: the caller fails the test). The guard
/// is far above any timeout the tests set, so it never decides an outcome. After a hang the
/// pool is cancelled and drained so that no coroutine outlives `handler`.
inline std::optional<Outcome> run_exchange(net::io_context& ioc, ConnectionPool& pool,
                                           const Request& request, ResponseHandler& handler,
                                           std::chrono::seconds guard = std::chrono::seconds(20)) {
  struct State {
    std::optional<Outcome> result;
    std::exception_ptr error;
  };
  auto state = std::make_shared<State>();
  net::co_spawn(ioc, pool.execute(request, handler), [state](std::exception_ptr e, Outcome o) {
    state->error = std::move(e);
    state->result = std::move(o);
  });
  const auto run_until = [&](std::chrono::steady_clock::time_point until) {
    while (!state->result && std::chrono::steady_clock::now() < until) {
      if (ioc.stopped()) {
        ioc.restart();
      }
      ioc.run_one_for(std::chrono::milliseconds(100));
    }
  };
  run_until(std::chrono::steady_clock::now() + guard);
  if (!state->result) {
    pool.cancel_all();
    run_until(std::chrono::steady_clock::now() + std::chrono::seconds(5));
    LLMBENCH_ASSERT(state->result.has_value(), "a cancelled exchange never completed");
    return std::nullopt;
  }
  if (state->error) {
    std::rethrow_exception(state->error);
  }
  return state->result;
}

/// Runs `ioc` until `done()` holds or `guard` passes; returns `done()`.
template <class Pred>
bool run_until(net::io_context& ioc, Pred done,
               std::chrono::seconds guard = std::chrono::seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + guard;
  while (!done() && std::chrono::steady_clock::now() < until) {
    if (ioc.stopped()) {
      ioc.restart();
    }
    ioc.run_one_for(std::chrono::milliseconds(100));
  }
  return done();
}

/// A POST to `target` with a small JSON body, as the load generator sends.
inline Request post(std::string target) {
  return Request{.method = "POST",
                 .target = std::move(target),
                 .body = R"({"prompt":"hi"})",
                 .content_type = "application/json",
                 .accept = "text/event-stream",
                 .headers = {}};
}

}  // namespace llmbench::http::test
