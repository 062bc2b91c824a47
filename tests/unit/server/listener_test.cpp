#include "llmbench/http/listener.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "test_client.hpp"
#include <chrono>
#include <stdexcept>
#include <string>

namespace llmbench::http {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using server::test::TestClient;

/// A handler exercising every ResponseWriter path, chosen by the target.
net::awaitable<void> demo_handler(ServerRequest& request, ResponseWriter& writer) {
  const std::string_view target = request.target();
  if (target == "/echo") {
    co_await writer.send(bhttp::status::ok, request.body(), "text/plain");
  } else if (target == "/stream") {
    co_await writer.begin_stream();
    net::steady_timer timer(writer.executor());
    for (int i = 0; i < 3; ++i) {
      timer.expires_after(std::chrono::milliseconds(2));
      co_await timer.async_wait(net::as_tuple(net::use_awaitable));
      const std::string event = "data: " + std::to_string(i) + "\n\n";
      if (!co_await writer.write_chunk(event))
        co_return;
    }
    co_await writer.end_stream();
  } else if (target == "/unterminated") {
    co_await writer.begin_stream();
    co_await writer.write_chunk("data: a\n\n");
    // returns without end_stream(): the listener ends the chunked body
  } else if (target == "/throw") {
    throw std::runtime_error("boom");
  }
  // anything else: no response at all → the listener answers 500
}

class ListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ListenerOptions options;
    options.max_body_bytes = 1024;
    listener_ = std::make_unique<Listener>(options, demo_handler);
    port_ = listener_->start();
  }
  std::unique_ptr<Listener> listener_;
  std::uint16_t port_ = 0;
};

TEST_F(ListenerTest, CompleteResponsesAndKeepAlive) {
  TestClient client(port_);
  for (int i = 0; i < 3; ++i) {
    auto reply = client.post("/echo", "hello " + std::to_string(i));
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.body, "hello " + std::to_string(i));
    EXPECT_EQ(reply.headers["Content-Type"], "text/plain");
  }
  EXPECT_EQ(listener_->accepted_connections(), 1);
  EXPECT_EQ(listener_->open_connections(), 1);
}

TEST_F(ListenerTest, ChunkedStreaming) {
  TestClient client(port_);
  auto reply = client.stream("/stream", "{}");
  EXPECT_EQ(reply.status, 200);
  EXPECT_TRUE(reply.chunked);
  EXPECT_EQ(reply.content_type, "text/event-stream");
  ASSERT_EQ(reply.events.size(), 3u);
  EXPECT_EQ(reply.events[2].data, "2");
  auto again = client.stream("/unterminated", "{}");
  ASSERT_EQ(again.events.size(), 1u);
  EXPECT_EQ(again.events[0].data, "a");
  EXPECT_EQ(client.post("/echo", "still alive").body, "still alive");
}

TEST_F(ListenerTest, HandlerFailuresBecome500) {
  TestClient client(port_);
  EXPECT_EQ(client.post("/nothing", "").status, 500);
  EXPECT_EQ(client.post("/nothing", "").status, 500);  // keep-alive after a silent handler
  TestClient other(port_);
  EXPECT_EQ(other.post("/throw", "").status, 500);
}

TEST_F(ListenerTest, BodyLimitIs413) {
  TestClient client(port_);
  auto reply = client.post("/echo", std::string(2048, 'x'));
  EXPECT_EQ(reply.status, 413);
}

TEST_F(ListenerTest, Http10StreamIsUnframedAndCloses) {
  net::io_context ioc;
  net::ip::tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port_});
  const std::string request = "POST /stream HTTP/1.0\r\nContent-Length: 0\r\n\r\n";
  net::write(socket, net::buffer(request));
  std::string response;
  boost::system::error_code ec;
  net::read(socket, net::dynamic_buffer(response), ec);  // until the server closes
  EXPECT_EQ(ec, net::error::eof);
  EXPECT_EQ(response.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << response;
  EXPECT_EQ(response.find("Transfer-Encoding"), std::string::npos);
  EXPECT_NE(response.find("\r\n\r\ndata: 0\n\ndata: 1\n\ndata: 2\n\n"), std::string::npos)
      << response;
}

TEST_F(ListenerTest, MalformedRequestIs400) {
  net::io_context ioc;
  net::ip::tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port_});
  net::write(socket, net::buffer(std::string("GARBAGE\r\n\r\n")));
  std::string response;
  boost::system::error_code ec;
  net::read(socket, net::dynamic_buffer(response), ec);
  EXPECT_EQ(response.rfind("HTTP/1.1 400", 0), 0u) << response;
}

TEST(Listener, InvalidHostThrows) {
  ListenerOptions options;
  options.host = "not-an-address";
  Listener listener(options, demo_handler);
  EXPECT_THROW(listener.start(), std::exception);
  listener.stop();  // harmless when not started
}

}  // namespace
}  // namespace llmbench::http
