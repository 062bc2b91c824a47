#pragma once
// A tiny blocking HTTP/1.1 client for the server tests (Beast sync API). It records when each
// SSE event arrived, on the same steady clock the server's emission log uses.

#include "llmbench/core/clock.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llmbench::server::test {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

/// A whole response.
struct Reply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
};

/// One SSE event (`data:` payload without the prefix) and when its last byte was parsed.
struct Event {
  TimeNs t_ns = 0;
  std::string data;
};

/// A streamed response: status, Content-Type and the events in order.
struct StreamReply {
  int status = 0;
  std::string content_type;
  bool chunked = false;
  TimeNs sent_ns = 0;
  std::vector<Event> events;
};

/// One keep-alive connection to 127.0.0.1:port. Throws boost::system::system_error on I/O errors.
class TestClient {
 public:
  explicit TestClient(std::uint16_t port) : socket_(ioc_) {
    socket_.connect({net::ip::make_address("127.0.0.1"), port});
  }

  Reply request(bhttp::verb verb, const std::string& target, const std::string& body = {},
                const std::map<std::string, std::string>& headers = {}) {
    write(verb, target, body, headers);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1 << 26);
    bhttp::read(socket_, buffer_, parser);
    Reply reply;
    reply.status = static_cast<int>(parser.get().result_int());
    reply.body = parser.get().body();
    for (const auto& field : parser.get()) {
      reply.headers[std::string(field.name_string())] = std::string(field.value());
    }
    return reply;
  }

  Reply post(const std::string& target, const std::string& body) {
    return request(bhttp::verb::post, target, body);
  }

  /// POSTs `body` and reads a chunked SSE response; `stop_after` > 0 returns after that many
  /// events without reading the rest (the caller then closes the connection).
  StreamReply stream(const std::string& target, const std::string& body,
                     const std::map<std::string, std::string>& headers = {},
                     std::size_t stop_after = 0) {
    StreamReply reply;
    reply.sent_ns = steady_now_ns();
    write(bhttp::verb::post, target, body, headers);
    bhttp::response_parser<bhttp::empty_body> parser;
    bhttp::read_header(socket_, buffer_, parser);
    reply.status = static_cast<int>(parser.get().result_int());
    reply.content_type = std::string(parser.get()[bhttp::field::content_type]);
    reply.chunked = parser.get().chunked();
    std::string pending;
    auto on_body = [&](std::uint64_t, std::string_view data, boost::system::error_code&) {
      pending.append(data);
      const TimeNs now = steady_now_ns();
      for (std::size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
        std::string event = pending.substr(0, end);
        pending.erase(0, end + 2);
        if (event.rfind("data: ", 0) == 0)
          event.erase(0, 6);
        reply.events.push_back({now, std::move(event)});
      }
      return data.size();
    };
    parser.on_chunk_body(on_body);
    while (!parser.is_done()) {
      bhttp::read_some(socket_, buffer_, parser);
      if (stop_after > 0 && reply.events.size() >= stop_after)
        break;
    }
    return reply;
  }

  /// Sends a POST and reads nothing (a client that leaves before the answer).
  void send_only(const std::string& target, const std::string& body) {
    write(bhttp::verb::post, target, body, {});
  }

  void close() {
    boost::system::error_code ec;
    socket_.shutdown(net::ip::tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

 private:
  void write(bhttp::verb verb, const std::string& target, const std::string& body,
             const std::map<std::string, std::string>& headers) {
    bhttp::request<bhttp::string_body> req{verb, target, 11};
    req.set(bhttp::field::host, "127.0.0.1");
    for (const auto& [name, value] : headers) req.set(name, value);
    if (!body.empty()) {
      req.set(bhttp::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    bhttp::write(socket_, req);
  }

  net::io_context ioc_;
  net::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace llmbench::server::test
