// The connections a run's pools hold and the connects that fail, counted by
// `ConnectionTally` (the client self-monitor's ports in use and connect errors).
#include "llmbench/http/connection_tally.hpp"

#include "llmbench/http/client.hpp"

#include <boost/system/error_code.hpp>
#include <gtest/gtest.h>

#include "scripted_peer.hpp"
#include <cerrno>
#include <memory>
#include <string>

namespace llmbench::http::test {
namespace {

std::string json_reply(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// A loopback port nothing listens on now (bound by an acceptor, which then closed it).
std::uint16_t closed_port(net::io_context& ioc) {
  tcp::acceptor acceptor(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

TEST(ConnectionTally, ARefusedConnectIsCountedByItsErrnoName) {
  net::io_context ioc;
  Url url = *parse_url("http://127.0.0.1:" + std::to_string(closed_port(ioc)));
  ConnectionTally tally;
  ConnectionPool pool(ioc, url, {}, &tally);
  for (int i = 0; i < 3; ++i) {
    Collect seen;
    const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
    ASSERT_TRUE(out.has_value()) << "the client hung";
    EXPECT_EQ(out->failure, Failure::Connect) << out->message;
  }
  const auto errors = tally.connect_errors();
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors.begin()->first, "ECONNREFUSED");
  EXPECT_EQ(errors.begin()->second, 3);
  EXPECT_EQ(tally.peak(), 0);  // no port was held by an open connection
  EXPECT_EQ(tally.open(), 0);
}

TEST(ConnectionTally, OpenConnectionsAreCountedUntilTheyClose) {
  net::io_context ioc;
  // Two connections at once (prewarm), then one exchange each, kept alive.
  ScriptedPeer peer(ioc, {{Reply{.bytes = json_reply("a")}}, {Reply{.bytes = json_reply("b")}}});
  ConnectionTally tally;
  auto pool = std::make_unique<ConnectionPool>(ioc, peer.url(), ClientOptions{}, &tally);
  std::optional<Outcome> warmed;
  net::co_spawn(
      ioc,
      [&]() -> net::awaitable<void> {
        warmed = co_await pool->prewarm(2);
        ioc.stop();
      },
      net::detached);
  ioc.run_for(std::chrono::seconds(5));
  ioc.restart();
  ASSERT_TRUE(warmed.has_value());
  EXPECT_EQ(warmed->failure, Failure::None) << warmed->message;
  EXPECT_EQ(tally.open(), 2);
  EXPECT_EQ(tally.peak(), 2);
  pool->cancel_all();  // closes both
  EXPECT_EQ(tally.open(), 0);
  EXPECT_EQ(tally.peak(), 2);
  EXPECT_TRUE(tally.connect_errors().empty());
  pool.reset();
  EXPECT_EQ(tally.open(), 0);  // closed ones are not uncounted twice
}

TEST(ConnectionTally, CausesAreErrnoNamesOrTheirCategory) {
  EXPECT_EQ(
      failure_cause(boost::system::error_code(ECONNREFUSED, boost::system::system_category())),
      "ECONNREFUSED");
  EXPECT_EQ(
      failure_cause(boost::system::error_code(EADDRNOTAVAIL, boost::system::system_category())),
      "EADDRNOTAVAIL");
  EXPECT_EQ(failure_cause(boost::system::error_code(100000, boost::system::system_category())),
            "errno 100000");
}

}  // namespace
}  // namespace llmbench::http::test
