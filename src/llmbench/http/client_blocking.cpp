// The blocking exchanges of `client.hpp` (`fetch_blocking`, `post_blocking`): one request on a
// private io_context and a one-connection pool, for the setup calls before a run (model list,
// server info, cache flush), never for measured requests.
#include "llmbench/http/client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace llmbench::http {

namespace net = boost::asio;

namespace {
class CollectBody final : public ResponseHandler {
 public:
  void on_sent(TimeNs /*now_ns*/) override {}
  void on_headers(int /*status*/, TimeNs /*now_ns*/) override {}
  void on_body(std::string_view bytes, TimeNs /*now_ns*/) override { body.append(bytes); }
  std::string body;
};
}  // namespace

namespace {

/// One exchange of `req` on a private io_context: (status, body). Throws `Exception` on
/// transport failure, naming the URL.
std::pair<int, std::string> exchange_blocking(const Url& url, const Request& req,
                                              const ClientOptions& options,
                                              std::chrono::milliseconds timeout) {
  net::io_context ioc;
  ClientOptions o = options;
  o.connect_timeout = std::min(o.connect_timeout, timeout);
  o.total_timeout = timeout;
  o.first_byte_timeout = timeout;
  o.idle_timeout = timeout;
  o.max_error_body_bytes = 1U << 20U;
  ConnectionPool pool(ioc, url, o);
  CollectBody handler;
  Outcome outcome;
  std::exception_ptr error;
  net::co_spawn(ioc, pool.execute(req, handler), [&](std::exception_ptr e, Outcome o2) {
    error = std::move(e);
    outcome = std::move(o2);
  });
  ioc.run();
  if (error) {
    std::rethrow_exception(error);
  }
  if (outcome.failure != Failure::None) {
    throw Exception(Error{outcome.message, url.origin() + req.target, -1});
  }
  return {outcome.status, std::move(handler.body)};
}

}  // namespace

std::pair<int, std::string> fetch_blocking(const Url& url, const std::string& target,
                                           const ClientOptions& options,
                                           std::chrono::milliseconds timeout) {
  Request req;
  req.method = "GET";
  req.target = target;
  req.accept = "application/json";
  return exchange_blocking(url, req, options, timeout);
}

std::pair<int, std::string> post_blocking(const Url& url, const std::string& target,
                                          const std::string& body, const ClientOptions& options,
                                          std::chrono::milliseconds timeout) {
  Request req;
  req.target = target;
  req.body = body;
  return exchange_blocking(url, req, options, timeout);
}

}  // namespace llmbench::http
