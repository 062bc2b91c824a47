#include "llmbench/http/client.hpp"

#include "llmbench/core/build_info.hpp"
#include "llmbench/core/name_table.hpp"
#include "llmbench/http/connection_tally.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <exception>
#include <limits>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <optional>
#include <sys/socket.h>
#include <unordered_set>

namespace llmbench::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
constexpr auto kNoThrow = net::as_tuple(net::use_awaitable);

// ---- timeouts ----

namespace {
/// The name of each `TimeoutPhase` used in messages (the flag's stem).
constexpr auto kTimeoutPhaseNames = make_name_table<TimeoutPhase>({
    {TimeoutPhase::None, ""},
    {TimeoutPhase::Connect, "connect"},
    {TimeoutPhase::FirstByte, "first-byte"},
    {TimeoutPhase::Idle, "idle"},
    {TimeoutPhase::Total, "total"},
});
}  // namespace

std::string_view timeout_phase_name(TimeoutPhase phase) noexcept {
  return kTimeoutPhaseNames.name(phase);
}

// ---- connections ----

namespace {

/// Largest response header block accepted (Beast's default is 8 KiB; proxies and gateways may
/// add cookies and tracing fields well beyond that).
constexpr std::uint32_t kMaxHeaderBytes = 64 * 1024;
/// Interim responses tolerated before the final one (RFC 9110 §15.2 sets no limit; this bounds a
/// server that never answers).
constexpr int kMaxInterimResponses = 16;

struct Connection {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  // Read buffer for the parser. Bounded: headers must fit, body bytes pass through to `body`.
  beast::flat_buffer buffer{kMaxHeaderBytes + 16 * 1024};
  // Decoded body bytes land here (buffer_body), then go to the handler.
  std::array<char, 16 * 1024> body{};

  // Where this connection is counted from its open to its close; null while it is not.
  ConnectionTally* tally = nullptr;

  Connection() = default;
  ~Connection() { uncount(); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  Connection(Connection&&) = delete;
  Connection& operator=(Connection&&) = delete;

  beast::tcp_stream& lowest() const { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  void close() {
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().socket().close(ignored);
    uncount();
  }
  void uncount() noexcept {
    if (tally != nullptr)
      tally->closed();
    tally = nullptr;
  }
};

/// The first content or transfer coding of `res` that the client does not remove, or "" when the
/// body arrives as sent (identity) or only chunked (RFC 9110 §8.4, RFC 9112 §6.1). SSE and JSON
/// decoding need the bytes as the server produced them.
std::string unsupported_coding(const bhttp::response_header<>& res) {
  const auto first_other = [](std::string_view list, std::string_view allowed) -> std::string {
    while (!list.empty()) {
      const auto comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) {
        item.remove_prefix(1);
      }
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) {
        item.remove_suffix(1);
      }
      if (!item.empty() && !beast::iequals(item, allowed)) {
        return std::string(item);
      }
    }
    return {};
  };
  std::string coding = first_other(res[bhttp::field::content_encoding], "identity");
  if (coding.empty()) {
    coding = first_other(res[bhttp::field::transfer_encoding], "chunked");
  }
  return coding;
}

Failure classify(const beast::error_code& ec) {
  if (ec == beast::error::timeout) {
    return Failure::Timeout;
  }
  if (ec == net::error::operation_aborted) {
    return Failure::Cancelled;
  }
  if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
      ec == net::error::eof || ec == net::error::connection_reset ||
      ec == net::error::broken_pipe || ec == ssl::error::stream_truncated) {
    return Failure::Closed;
  }
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_version).category()) {
    return Failure::Protocol;
  }
  return Failure::Io;
}

/// True when an idle connection can no longer carry a request: the peer closed it (a
/// non-blocking peek reads EOF) or sent something unasked (an error, a TLS close_notify).
bool peer_closed(Connection& c) {
  char byte = 0;
  const auto n = ::recv(c.lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
}

std::chrono::steady_clock::duration until(TimeNs deadline_ns, std::chrono::milliseconds cap) {
  const auto left = std::chrono::nanoseconds(deadline_ns - steady_now_ns());
  return std::min<std::chrono::steady_clock::duration>(
      cap, std::max<std::chrono::steady_clock::duration>(left, std::chrono::nanoseconds(0)));
}

/// The outcome of a timer that fired: `phase` names the timeout, `limit` its setting, `during`
/// what the client was waiting for.
Outcome timed_out(TimeoutPhase phase, std::chrono::milliseconds limit, std::string_view during) {
  return Outcome{.failure = Failure::Timeout,
                 .message = fmt::format("{} timeout ({} ms) reached {}", timeout_phase_name(phase),
                                        limit.count(), during),
                 .timeout = phase};
}

}  // namespace

struct ConnectionPool::Impl {
  net::io_context& ioc;
  Url url;
  ClientOptions options;
  std::unique_ptr<ssl::context> ssl_ctx;
  tcp::resolver resolver;
  tcp::resolver::results_type endpoints;
  bool resolved = false;
  std::vector<std::unique_ptr<Connection>> idle;
  std::unordered_set<Connection*> busy;
  std::uint64_t opened = 0;
  std::uint64_t generation = 0;  // bumped by cancel_all so late finishers don't park connections
  std::vector<net::ip::address> sources;  // options.source_addresses, parsed
  std::size_t next_source = 0;            // the source address of the next connection
  ConnectionTally* tally;                 // null: not counted

  Impl(net::io_context& io, Url u, ClientOptions o, ConnectionTally* t)
      : ioc(io), url(std::move(u)), options(std::move(o)), resolver(io), tally(t) {
    for (const auto& text : options.source_addresses) {
      beast::error_code ec;
      sources.push_back(net::ip::make_address(text, ec));
      if (ec) {
        throw Exception(
            Error{fmt::format("not an IP address: \"{}\"", text), "--source-address", -1});
      }
    }
    if (url.tls) {
      ssl_ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
      if (options.insecure) {
        ssl_ctx->set_verify_mode(ssl::verify_none);
      } else {
        beast::error_code ec;
        if (options.ca_cert_file.empty()) {
          ssl_ctx->set_default_verify_paths(ec);
        } else {
          ssl_ctx->load_verify_file(options.ca_cert_file, ec);
        }
        if (ec) {
          throw Exception(Error{fmt::format("cannot load CA certificates: {}", ec.message()),
                                options.ca_cert_file.empty()
                                    ? std::string("the system's certificate store")
                                    : fmt::format("--ca-cert '{}'", options.ca_cert_file),
                                -1});
        }
        ssl_ctx->set_verify_mode(ssl::verify_peer);
      }
    }
  }

  net::awaitable<std::unique_ptr<Connection>> connect(Outcome& out) {
    if (!resolved) {
      auto [ec, results] =
          co_await resolver.async_resolve(url.host, std::to_string(url.port), kNoThrow);
      if (ec) {
        out = {.failure = Failure::Connect,
               .message = fmt::format("resolve {}: {}", url.origin(), ec.message())};
        count_failure(failure_cause(ec));
        co_return nullptr;
      }
      endpoints = std::move(results);
      resolved = true;
    }
    auto c = std::make_unique<Connection>();
    // Beast reads max(512, capacity - size) bytes at a time; without room reserved up front the
    // parser drains the buffer after each read and it never grows, so a stream would cost one
    // recvmsg (and one epoll wakeup) per ~512 bytes.
    c->buffer.reserve(16 * 1024);
    if (url.tls) {
      c->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc, *ssl_ctx);
    } else {
      c->plain = std::make_unique<beast::tcp_stream>(ioc);
    }
    auto& low = c->lowest();
    low.expires_after(options.connect_timeout);
    beast::error_code ec;
    if (sources.empty()) {
      ec = std::get<0>(co_await low.async_connect(endpoints, kNoThrow));
    } else if (!co_await connect_from(low, ec, out)) {
      co_return nullptr;
    }
    if (ec == beast::error::timeout) {
      out = timed_out(TimeoutPhase::Connect, options.connect_timeout,
                      fmt::format("connecting to {}", url.origin()));
      count_failure("timeout");
      co_return nullptr;
    }
    if (ec) {
      out = {.failure = Failure::Connect,
             .message = fmt::format("connect {}: {}", url.origin(), ec.message())};
      count_failure(failure_cause(ec));
      co_return nullptr;
    }
    beast::error_code ignored;
    low.socket().set_option(tcp::no_delay(true), ignored);
    if (c->tls && !co_await handshake(*c->tls, out)) {
      count_failure(out.failure == Failure::Timeout ? "timeout" : "tls");
      co_return nullptr;
    }
    ++opened;
    if (tally != nullptr) {
      tally->opened();
      c->tally = tally;
    }
    co_return c;
  }

  void count_failure(const std::string& cause) const {
    if (tally != nullptr)
      tally->connect_failed(cause);
  }

  /// Connects `low` from the next of `sources` (bound before connecting, port 0: the kernel
  /// picks a free port of that address) to the first resolved endpoint of its family, the
  /// connect's result in `ec`. False when it could not try (no such endpoint, a failed bind):
  /// `out` says why.
  net::awaitable<bool> connect_from(beast::tcp_stream& low, beast::error_code& ec, Outcome& out) {
    const net::ip::address source = sources[next_source++ % sources.size()];
    for (const auto& entry : endpoints) {
      const tcp::endpoint target = entry.endpoint();
      if (target.address().is_v4() != source.is_v4())
        continue;
      beast::error_code setup;
      auto& socket = low.socket();
      socket.open(target.protocol(), setup);
      if (!setup)
        socket.bind(tcp::endpoint(source, 0), setup);
      if (setup) {
        out = {.failure = Failure::Connect,
               .message = fmt::format("bind to --source-address {}: {}", source.to_string(),
                                      setup.message())};
        count_failure(failure_cause(setup));
        co_return false;
      }
      ec = std::get<0>(co_await low.async_connect(target, kNoThrow));
      co_return true;
    }
    out = {.failure = Failure::Connect,
           .message = fmt::format("--source-address {}: {} resolves to no address of its family",
                                  source.to_string(), url.origin())};
    count_failure("EAFNOSUPPORT");
    co_return false;
  }

  /// TLS client handshake on a connected stream: SNI (RFC 6066 §3, host names only, never an IP
  /// literal) and, unless `insecure`, the peer's name or address checked against its
  /// certificate (RFC 6125, by OpenSSL's X509_VERIFY_PARAM). On failure `out` says why, and for
  /// an untrusted certificate what to do about it.
  net::awaitable<bool> handshake(beast::ssl_stream<beast::tcp_stream>& tls, Outcome& out) {
    SSL* ssl_handle = tls.native_handle();
    beast::error_code not_ip;
    net::ip::make_address(url.host, not_ip);
    // SSL_set_tlsext_host_name is a macro with an old-style cast; call the function it wraps.
    if (not_ip && SSL_ctrl(ssl_handle, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                           const_cast<char*>(url.host.c_str())) != 1) {
      out = {.failure = Failure::Connect,
             .message = fmt::format("TLS SNI for {} failed", url.host)};
      co_return false;
    }
    if (!options.insecure) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
      const int set = not_ip ? X509_VERIFY_PARAM_set1_host(param, url.host.c_str(), 0)
                             : X509_VERIFY_PARAM_set1_ip_asc(param, url.host.c_str());
      if (set != 1) {
        out = {.failure = Failure::Connect,
               .message = fmt::format("TLS: cannot check certificates for host {}", url.host)};
        co_return false;
      }
    }
    auto [ec] = co_await tls.async_handshake(ssl::stream_base::client, kNoThrow);
    if (ec == beast::error::timeout) {
      out = timed_out(TimeoutPhase::Connect, options.connect_timeout,
                      fmt::format("in the TLS handshake with {}", url.origin()));
      co_return false;
    }
    if (ec) {
      const long verify = SSL_get_verify_result(ssl_handle);
      out = {.failure = Failure::Connect,
             .message =
                 verify != X509_V_OK && !options.insecure
                     ? fmt::format(
                           "TLS handshake with {}: the server's certificate is not trusted ({}); "
                           "pass --ca-cert FILE with the certificate that signed it, or "
                           "--insecure to skip verification",
                           url.origin(), X509_verify_cert_error_string(verify))
                     : fmt::format("TLS handshake with {}: {}", url.origin(), ec.message())};
      co_return false;
    }
    co_return true;
  }

  bhttp::request<bhttp::string_body> make_request(const Request& r) const {
    bhttp::request<bhttp::string_body> req;
    req.method(bhttp::string_to_verb(r.method));
    req.target(r.target);
    req.version(11);
    req.keep_alive(true);
    const bool default_port = url.port == (url.tls ? 443 : 80);
    req.set(bhttp::field::host, default_port ? url.host : fmt::format("{}:{}", url.host, url.port));
    req.set(bhttp::field::user_agent, fmt::format("llmbench/{}", build_info::version()));
    req.set(bhttp::field::accept, r.accept);
    // Bodies are read as sent: compressed ones could not be parsed as SSE or JSON.
    req.set(bhttp::field::accept_encoding, "identity");
    for (const auto& [k, v] : options.headers) {
      req.set(k, v);
    }
    for (const auto& [k, v] : r.headers) {
      req.set(k, v);
    }
    if (!r.body.empty() || r.method == "POST") {
      req.set(bhttp::field::content_type, r.content_type);
      req.body() = r.body;
      req.prepare_payload();
    }
    return req;
  }

  /// A timeout before the response headers: the total one if its deadline has passed, else the
  /// first-byte one.
  Outcome waiting_timeout(TimeNs deadline, std::string_view during) const {
    return steady_now_ns() >= deadline
               ? timed_out(TimeoutPhase::Total, options.total_timeout, during)
               : timed_out(TimeoutPhase::FirstByte, options.first_byte_timeout, during);
  }

  /// Reads response headers into a new `parser` until a final (non-1xx) status. Interim
  /// responses (100 Continue, 103 Early Hints; RFC 9110 §15.2) have no body and precede the
  /// final response on the same connection, so they are dropped; taking one for the answer would
  /// leave the real answer to be read as the next request's. 101 (a protocol switch nobody
  /// asked for) is a protocol error. On success `out.status` is the final status.
  template <class Stream>
  net::awaitable<Outcome> read_final_header(
      Stream& stream, Connection& c,
      std::optional<bhttp::response_parser<bhttp::buffer_body>>& parser, TimeNs deadline,
      bool& nothing_received) {
    Outcome out;
    for (int interim = 0;; ++interim) {
      parser.emplace();
      parser->header_limit(kMaxHeaderBytes);
      parser->body_limit(std::numeric_limits<std::uint64_t>::max());
      auto [hec, hn] = co_await bhttp::async_read_header(stream, c.buffer, *parser, kNoThrow);
      if (hec == beast::error::timeout) {
        nothing_received = false;  // the request may be in progress on the server: never retried
        co_return waiting_timeout(deadline, "waiting for the response headers");
      }
      if (hec) {
        // Beast consumes the status line before the header block is whole, so the buffer alone
        // does not tell whether a response had begun.
        nothing_received = nothing_received && !parser->got_some() && c.buffer.size() == 0;
        out.failure = classify(hec);
        out.message = hec == bhttp::error::header_limit || hec == bhttp::error::buffer_overflow
                          ? fmt::format("the response header block is over the {} KiB limit",
                                        kMaxHeaderBytes / 1024)
                          : fmt::format("reading response headers: {}", hec.message());
        co_return out;
      }
      nothing_received = false;
      const int status = static_cast<int>(parser->get().result_int());
      if (status >= 200) {
        out.status = status;
        co_return out;
      }
      if (status == 101 || interim + 1 >= kMaxInterimResponses) {
        out.failure = Failure::Protocol;
        out.message =
            status == 101
                ? std::string("HTTP 101 Switching Protocols, but no upgrade was asked for")
                : fmt::format("more than {} interim (1xx) responses before the answer",
                              kMaxInterimResponses);
        co_return out;
      }
    }
  }

  /// One request/response on an open connection. `nothing_received` is set when the failure
  /// happened before any response byte (so a retry on a fresh connection is safe).
  template <class Stream>
  net::awaitable<Outcome> exchange(Stream& stream, Connection& c,
                                   const bhttp::request<bhttp::string_body>& req,
                                   ResponseHandler& handler, TimeNs deadline,
                                   bool& nothing_received, bool& reusable) {
    Outcome out;
    auto& low = beast::get_lowest_layer(stream);
    nothing_received = true;
    reusable = false;
    low.expires_after(until(deadline, options.first_byte_timeout));
    handler.on_sent(steady_now_ns());
    auto [wec, wn] = co_await bhttp::async_write(stream, req, kNoThrow);
    if (wec == beast::error::timeout) {
      co_return waiting_timeout(deadline, "writing the request");
    }
    if (wec) {
      out.failure = classify(wec);
      out.message = fmt::format("write: {}", wec.message());
      co_return out;
    }
    std::optional<bhttp::response_parser<bhttp::buffer_body>> parser;
    out = co_await read_final_header(stream, c, parser, deadline, nothing_received);
    if (out.failure != Failure::None) {
      co_return out;
    }
    handler.on_headers(out.status, steady_now_ns());
    const bool error_status = out.status < 200 || out.status >= 300;
    if (auto coding = unsupported_coding(parser->get()); !coding.empty()) {
      // An error answer keeps its status (the body is only its explanation): the caller counts
      // it by status, with this message, and the body is not read (nor the connection reused).
      out.failure = error_status ? Failure::None : Failure::Protocol;
      out.message = fmt::format(
          "the HTTP {} response body uses the encoding '{}', which llmbench does not decode "
          "(it asks for Accept-Encoding: identity)",
          out.status, coding);
      co_return out;
    }
    std::size_t delivered = 0;
    while (!parser->is_done()) {
      parser->get().body().data = c.body.data();
      parser->get().body().size = c.body.size();
      low.expires_after(until(deadline, options.idle_timeout));
      auto [rec, rn] = co_await bhttp::async_read_some(stream, c.buffer, *parser, kNoThrow);
      const std::size_t got = c.body.size() - parser->get().body().size;
      if (got > 0) {
        handler.on_body(std::string_view(c.body.data(), got), steady_now_ns());
        delivered += got;
      }
      if (rec == beast::error::timeout) {
        const bool total = steady_now_ns() >= deadline;
        out = timed_out(total ? TimeoutPhase::Total : TimeoutPhase::Idle,
                        total ? options.total_timeout : options.idle_timeout,
                        total ? "while reading the body" : "between body reads");
        out.status = static_cast<int>(parser->get().result_int());
        co_return out;
      }
      if (rec && rec != bhttp::error::need_buffer) {
        out.failure = classify(rec);
        out.message = fmt::format("reading body: {}", rec.message());
        co_return out;
      }
      if (handler.want_stop() || (error_status && delivered >= options.max_error_body_bytes)) {
        co_return out;  // stopped early: body not complete, connection not reusable
      }
    }
    out.body_complete = true;
    reusable = parser->get().keep_alive();
    co_return out;
  }

  /// Waits on the pool's thread until steady-clock `t_ns`, holding `c` (taken for the request)
  /// among the busy connections so that `cancel_all` closes it meanwhile. Returns the connection
  /// to write on: `c`, or a new one when the server closed an idle `c` during the wait (then
  /// `from_idle` turns false); null with `out` set when the pool was cancelled or the new
  /// connection failed.
  net::awaitable<std::unique_ptr<Connection>> wait_to_send(std::unique_ptr<Connection> c,
                                                           TimeNs t_ns, bool& from_idle,
                                                           Outcome& out) {
    const std::uint64_t gen = generation;
    busy.insert(c.get());
    net::steady_timer timer(ioc);
    timer.expires_at(steady_time_point(t_ns));
    co_await timer.async_wait(kNoThrow);
    busy.erase(c.get());
    if (gen != generation) {
      c->close();
      out = {.failure = Failure::Cancelled, .message = "cancelled before it was sent"};
      co_return nullptr;
    }
    if (from_idle && peer_closed(*c)) {
      c->close();
      from_idle = false;
      co_return co_await connect(out);
    }
    co_return c;
  }

  net::awaitable<Outcome> execute(const Request& request, ResponseHandler& handler) {
    const TimeNs deadline =
        std::max(steady_now_ns(), request.send_at_ns) +
        std::chrono::duration_cast<std::chrono::nanoseconds>(options.total_timeout).count();
    const auto req = make_request(request);
    for (int attempt = 0;; ++attempt) {
      Outcome out;
      std::unique_ptr<Connection> c;
      // The retry always takes a fresh connection: other idle ones may be just as stale.
      while (attempt == 0 && !idle.empty() && !c) {
        c = std::move(idle.back());
        idle.pop_back();
        if (peer_closed(*c)) {
          c->close();
          c.reset();
        }
      }
      bool from_idle = c != nullptr;
      if (!c) {
        c = co_await connect(out);
        if (!c) {
          co_return out;
        }
      }
      if (attempt == 0 && request.send_at_ns > steady_now_ns()) {
        c = co_await wait_to_send(std::move(c), request.send_at_ns, from_idle, out);
        if (!c) {
          co_return out;
        }
      }
      const std::uint64_t gen = generation;
      busy.insert(c.get());
      bool nothing_received = false;
      bool reusable = false;
      if (c->tls) {
        out = co_await exchange(*c->tls, *c, req, handler, deadline, nothing_received, reusable);
      } else {
        out = co_await exchange(*c->plain, *c, req, handler, deadline, nothing_received, reusable);
      }
      busy.erase(c.get());
      if (gen != generation && out.failure != Failure::None) {
        out.failure = Failure::Cancelled;
      }
      if (out.failure == Failure::None && out.body_complete && reusable && gen == generation) {
        c->buffer.clear();
        idle.push_back(std::move(c));
        co_return out;
      }
      c->close();
      // An idle connection (kept alive or opened ahead of the run) that the server closed
      // meanwhile fails before any response byte: not the request's fault, so retry once on a
      // fresh connection (RFC 9112 §9.3.1). llama.cpp's server, for one, closes the connection
      // after every streamed response although it answers "Keep-Alive".
      if (out.failure == Failure::Closed && from_idle && nothing_received && attempt == 0) {
        continue;
      }
      co_return out;
    }
  }
};

ConnectionPool::ConnectionPool(net::io_context& ioc, Url url, ClientOptions options,
                               ConnectionTally* tally)
    : impl_(std::make_unique<Impl>(ioc, std::move(url), std::move(options), tally)) {}
ConnectionPool::~ConnectionPool() = default;

net::awaitable<Outcome> ConnectionPool::execute(const Request& request, ResponseHandler& handler) {
  return impl_->execute(request, handler);
}

net::awaitable<Outcome> ConnectionPool::prewarm(std::size_t count) {
  Outcome out;
  while (impl_->idle.size() < count) {
    auto c = co_await impl_->connect(out);
    if (!c) {
      co_return out;
    }
    impl_->idle.push_back(std::move(c));
  }
  co_return out;
}

void ConnectionPool::cancel_all() {
  ++impl_->generation;
  for (auto& c : impl_->idle) {
    c->close();
  }
  impl_->idle.clear();
  for (Connection* c : impl_->busy) {
    beast::error_code ignored;
    c->lowest().socket().cancel(ignored);
    c->close();
  }
}

std::uint64_t ConnectionPool::connections_opened() const noexcept {
  return impl_->opened;
}
std::size_t ConnectionPool::idle_count() const noexcept {
  return impl_->idle.size();
}

void check_client_options(const Url& url, const ClientOptions& options) {
  net::io_context ioc;
  const ConnectionPool pool(ioc, url, options);
}

}  // namespace llmbench::http
