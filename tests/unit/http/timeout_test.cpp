// Each of the four client timeouts against a peer that goes silent at the matching point. The
// settings are tiny; the tests assert which timeout fired, never how long it took.
#include "llmbench/http/client.hpp"

#include <gtest/gtest.h>

#include "scripted_peer.hpp"
#include <string>
#include <sys/socket.h>
#include <vector>

namespace llmbench::http::test {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kTiny{20};
constexpr milliseconds kLong{600'000};

const std::string kHeadersAndOneChunk =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5\r\nhello\r\n";

ClientOptions options(milliseconds connect, milliseconds first_byte, milliseconds idle,
                      milliseconds total) {
  ClientOptions o;
  o.insecure = true;
  o.connect_timeout = connect;
  o.first_byte_timeout = first_byte;
  o.idle_timeout = idle;
  o.total_timeout = total;
  return o;
}

/// Runs one request against `script` and checks that it timed out in `phase`; `seen` gets what
/// the handler saw.
Outcome expect_timeout(const ConnectionScript& script, bool tls, const ClientOptions& o,
                       TimeoutPhase phase, Collect& seen) {
  net::io_context ioc;
  ScriptedPeer peer(ioc, {script});
  ConnectionPool pool(ioc, peer.url(tls), o);
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  EXPECT_TRUE(out.has_value()) << "the client hung";
  const Outcome outcome = out.value_or(Outcome{});
  EXPECT_EQ(outcome.failure, Failure::Timeout) << outcome.message;
  EXPECT_EQ(outcome.timeout, phase) << outcome.message;
  const std::string name(timeout_phase_name(phase));
  EXPECT_TRUE(outcome.message.starts_with(name + " timeout")) << outcome.message;
  EXPECT_LE(seen.sent, 1);  // a timed-out request is never retried
  return outcome;
}

TEST(ClientTimeouts, ConnectTimeoutCoversTheTlsHandshake) {
  // The peer accepts the TCP connection but never answers the TLS ClientHello.
  Collect seen;
  const Outcome out =
      expect_timeout({Reply{.bytes = "", .then = Then::Stall, .read_request = false}}, true,
                     options(kTiny, kLong, kLong, kLong), TimeoutPhase::Connect, seen);
  EXPECT_EQ(seen.sent, 0);
}

TEST(ClientTimeouts, ConnectTimeoutWhenTheServerDoesNotAccept) {
  // A listener whose accept queue is full: Linux drops further SYNs (tcp_conn_request), so the
  // TCP connect itself never completes.
  net::io_context ioc;
  tcp::acceptor full(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0), true);
  full.listen(0);
  std::vector<tcp::socket> fillers;
  for (int i = 0; i < 4; ++i) {
    fillers.emplace_back(ioc);
    fillers.back().open(tcp::v4());
    fillers.back().non_blocking(true);
    // The raw call: Asio's blocking connect would wait out the kernel's SYN retries.
    const auto ep = full.local_endpoint();
    (void)::connect(fillers.back().native_handle(), ep.data(),
                    static_cast<socklen_t>(ep.size()));  // queued or in progress
  }
  ConnectionPool pool(ioc,
                      Url{.tls = false,
                          .host = "127.0.0.1",
                          .port = full.local_endpoint().port(),
                          .path_prefix = ""},
                      options(kTiny, kLong, kLong, kLong));
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::Timeout) << out->message;
  EXPECT_EQ(out->timeout, TimeoutPhase::Connect) << out->message;
  EXPECT_EQ(seen.sent, 0);
}

TEST(ClientTimeouts, FirstByteTimeoutWhenNoHeadersCome) {
  Collect seen;
  const Outcome out =
      expect_timeout({Reply{.bytes = "", .then = Then::Stall}}, false,
                     options(kLong, kTiny, kLong, kLong), TimeoutPhase::FirstByte, seen);
  EXPECT_EQ(seen.sent, 1);
  EXPECT_EQ(seen.headers, 0);
  EXPECT_EQ(out.status, 0);
}

TEST(ClientTimeouts, IdleTimeoutWhenTheStreamGoesSilent) {
  Collect seen;
  const Outcome out =
      expect_timeout({Reply{.bytes = kHeadersAndOneChunk, .then = Then::Stall}}, false,
                     options(kLong, kLong, kTiny, kLong), TimeoutPhase::Idle, seen);
  EXPECT_EQ(out.status, 200);
  EXPECT_EQ(seen.body, "hello");
  EXPECT_FALSE(out.body_complete);
}

TEST(ClientTimeouts, TotalTimeoutBeforeTheHeaders) {
  Collect seen;
  const Outcome out =
      expect_timeout({Reply{.bytes = "", .then = Then::Stall}}, false,
                     options(kLong, kLong, kLong, kTiny), TimeoutPhase::Total, seen);
  EXPECT_EQ(seen.headers, 0);
}

TEST(ClientTimeouts, TotalTimeoutWhileReadingTheBody) {
  Collect seen;
  const Outcome out =
      expect_timeout({Reply{.bytes = kHeadersAndOneChunk, .then = Then::Stall}}, false,
                     options(kLong, kLong, kLong, kTiny), TimeoutPhase::Total, seen);
  EXPECT_EQ(out.status, 200);
  EXPECT_EQ(seen.body, "hello");
}

TEST(ClientTimeouts, PhaseNamesFollowTheFlags) {
  EXPECT_EQ(timeout_phase_name(TimeoutPhase::Connect), "connect");
  EXPECT_EQ(timeout_phase_name(TimeoutPhase::FirstByte), "first-byte");
  EXPECT_EQ(timeout_phase_name(TimeoutPhase::Idle), "idle");
  EXPECT_EQ(timeout_phase_name(TimeoutPhase::Total), "total");
}

}  // namespace
}  // namespace llmbench::http::test
