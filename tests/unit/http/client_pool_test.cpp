// The client pool against a scripted peer: canned exchanges cut after every byte (Boost.Beast's
// fail_count style), keep-alive reuse and the stale-connection retry.
#include "llmbench/http/client.hpp"

#include <gtest/gtest.h>

#include "scripted_peer.hpp"
#include <optional>
#include <string>
#include <vector>

namespace llmbench::http::test {
namespace {

/// A canned response: its bytes, where its header block ends, and the decoded body.
struct Canned {
  std::string name;
  std::string bytes;
  std::size_t header_end = 0;  ///< offset just past the blank line
  std::string body;            ///< what the client must hand over once the framing is removed
};

Canned content_length(std::string body) {
  std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n";
  return Canned{.name = "content_length",
                .bytes = head + body,
                .header_end = head.size(),
                .body = std::move(body)};
}

/// Chunked body (RFC 9112 §7.1) with a chunk extension and a trailer field, which carry no body
/// bytes and must be skipped.
Canned chunked() {
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string framed =
      "f\r\ndata: {\"a\":1}\n\n\r\n"
      "e;ext=1\r\ndata: [DONE]\n\n\r\n"
      "0\r\nX-Trailer: t\r\n\r\n";
  return Canned{.name = "chunked",
                .bytes = head + framed,
                .header_end = head.size(),
                .body = "data: {\"a\":1}\n\ndata: [DONE]\n\n"};
}

/// Two interim responses (RFC 9110 §15.2) before a final one: the header block that counts
/// ends after the final response's.
Canned with_interim() {
  Canned c = content_length(R"({"ok":1})");
  const std::string interim =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
  c.name = "interim_then_content_length";
  c.bytes = interim + c.bytes;
  c.header_end += interim.size();
  return c;
}

std::vector<Canned> canned_responses() {
  return {content_length(R"({"choices":[{"text":"hello"}]})"), chunked(), with_interim()};
}

/// Checks the outcome of an exchange whose response was cut after `n` of its bytes.
void expect_cut_outcome(const Canned& c, std::size_t n, const Outcome& out, const Collect& seen) {
  if (n == c.bytes.size()) {
    EXPECT_EQ(out.failure, Failure::None) << out.message;
    EXPECT_TRUE(out.body_complete);
    EXPECT_EQ(out.status, 200);
    EXPECT_EQ(seen.body, c.body);
  } else if (n < c.header_end) {
    EXPECT_EQ(out.failure, Failure::Closed) << out.message;
    EXPECT_EQ(out.status, 0);
    EXPECT_EQ(seen.headers, 0);
    EXPECT_EQ(seen.body, "");
  } else {
    EXPECT_EQ(out.failure, Failure::Closed) << out.message;
    EXPECT_EQ(out.status, 200);
    EXPECT_EQ(seen.headers, 1);
    EXPECT_FALSE(out.body_complete);
    EXPECT_TRUE(c.body.starts_with(seen.body)) << seen.body;
  }
}

TEST(ClientPool, ResponseCutAfterEveryByteOnAFreshConnection) {
  for (const Canned& c : canned_responses()) {
    for (std::size_t n = 0; n <= c.bytes.size(); ++n) {
      SCOPED_TRACE(c.name + " cut after byte " + std::to_string(n));
      net::io_context ioc;
      ScriptedPeer peer(ioc, {{Reply{.bytes = c.bytes.substr(0, n), .then = Then::Close}}});
      ConnectionPool pool(ioc, peer.url(), {});
      Collect seen;
      const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
      ASSERT_TRUE(out.has_value()) << "the client hung";
      expect_cut_outcome(c, n, *out, seen);
      // A fresh connection is never retried: the server may have acted on the request.
      EXPECT_EQ(seen.sent, 1);
      EXPECT_EQ(pool.connections_opened(), 1U);
    }
  }
}

TEST(ClientPool, ResponseCutAfterEveryByteOnAReusedConnection) {
  for (const Canned& c : canned_responses()) {
    for (std::size_t n = 0; n <= c.bytes.size(); ++n) {
      SCOPED_TRACE(c.name + " cut after byte " + std::to_string(n));
      net::io_context ioc;
      ScriptedPeer peer(ioc, {{Reply{.bytes = c.bytes},
                               Reply{.bytes = c.bytes.substr(0, n), .then = Then::Close}},
                              {Reply{.bytes = c.bytes}}});
      ConnectionPool pool(ioc, peer.url(), {});
      Collect first;
      const auto out1 = run_exchange(ioc, pool, post("/a"), first);
      ASSERT_TRUE(out1.has_value()) << "the client hung";
      ASSERT_EQ(out1->failure, Failure::None) << out1->message;
      ASSERT_EQ(pool.idle_count(), 1U);
      Collect seen;
      const auto out = run_exchange(ioc, pool, post("/b"), seen);
      ASSERT_TRUE(out.has_value()) << "the client hung";
      if (n == 0) {
        // Closed before any response byte on a kept-alive connection: retried once on a fresh
        // one (RFC 9112 §9.3.1), which answers.
        EXPECT_EQ(out->failure, Failure::None) << out->message;
        EXPECT_EQ(seen.body, c.body);
        EXPECT_EQ(seen.sent, 2);
        EXPECT_EQ(pool.connections_opened(), 2U);
        EXPECT_EQ(peer.requests(), (std::vector<std::string>{"0:/a", "0:/b", "1:/b"}));
      } else {
        expect_cut_outcome(c, n, *out, seen);
        EXPECT_EQ(seen.sent, 1);
        EXPECT_EQ(pool.connections_opened(), 1U);
      }
    }
  }
}

TEST(ClientPool, EverySplitPointOfTheResponseIsReassembled) {
  for (const Canned& c : canned_responses()) {
    SCOPED_TRACE(c.name);
    net::io_context ioc;
    ScriptedPeer peer(ioc, {{Reply{.bytes = c.bytes, .byte_by_byte = true}}});
    ConnectionPool pool(ioc, peer.url(), {});
    Collect seen;
    const auto out = run_exchange(ioc, pool, post("/x"), seen);
    ASSERT_TRUE(out.has_value()) << "the client hung";
    EXPECT_EQ(out->failure, Failure::None) << out->message;
    EXPECT_TRUE(out->body_complete);
    EXPECT_EQ(seen.body, c.body);
  }
}

TEST(ClientPool, KeepAliveConnectionCarriesTheNextRequests) {
  const Canned a = content_length("first");
  const Canned b = chunked();
  const Canned d = content_length("third");
  net::io_context ioc;
  ScriptedPeer peer(ioc,
                    {{Reply{.bytes = a.bytes}, Reply{.bytes = b.bytes}, Reply{.bytes = d.bytes}}});
  ConnectionPool pool(ioc, peer.url(), {});
  for (const Canned* c : {&a, &b, &d}) {
    Collect seen;
    const auto out = run_exchange(ioc, pool, post("/r"), seen);
    ASSERT_TRUE(out.has_value()) << "the client hung";
    EXPECT_EQ(out->failure, Failure::None) << out->message;
    EXPECT_EQ(seen.body, c->body);
    EXPECT_EQ(pool.idle_count(), 1U);
  }
  EXPECT_EQ(pool.connections_opened(), 1U);
  EXPECT_EQ(peer.accepted(), 1U);
  EXPECT_EQ(peer.requests(), (std::vector<std::string>{"0:/r", "0:/r", "0:/r"}));
}

TEST(ClientPool, IdleConnectionTheServerClosedIsReplacedBeforeSending) {
  const Canned a = content_length("first");
  const Canned b = content_length("second");
  net::io_context ioc;
  // The server answers "keep-alive" and then closes the idle connection anyway.
  ScriptedPeer peer(ioc,
                    {{Reply{.bytes = a.bytes, .then = Then::Close}}, {Reply{.bytes = b.bytes}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect first;
  ASSERT_TRUE(run_exchange(ioc, pool, post("/a"), first).has_value());
  ASSERT_EQ(pool.idle_count(), 1U);
  ASSERT_TRUE(run_until(ioc, [&] { return peer.ended() == 1; }));
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/b"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::None) << out->message;
  EXPECT_EQ(seen.body, "second");
  EXPECT_EQ(seen.sent, 1);  // the closed connection was seen as closed and not written to
  EXPECT_EQ(pool.connections_opened(), 2U);
  EXPECT_EQ(peer.requests(), (std::vector<std::string>{"0:/a", "1:/b"}));
}

/// Client options that bind connections to `sources` (`--source-address`).
ClientOptions from(std::vector<std::string> sources) {
  ClientOptions options;
  options.source_addresses = std::move(sources);
  return options;
}

TEST(ClientPool, SourceAddressesAreUsedInTurnAsThePeerSeesThem) {
  // Every reply closes its connection, so each request opens one: from 127.0.0.1, then
  // 127.0.0.2 (both loopback), then again.
  const Canned a = content_length("ok");
  net::io_context ioc;
  std::vector<ConnectionScript> scripts(
      4, ConnectionScript{Reply{.bytes = a.bytes, .then = Then::Close}});
  ScriptedPeer peer(ioc, scripts);
  ConnectionPool pool(ioc, peer.url(), from({"127.0.0.1", "127.0.0.2"}));
  for (int i = 0; i < 4; ++i) {
    Collect seen;
    const auto out = run_exchange(ioc, pool, post("/r"), seen);
    ASSERT_TRUE(out.has_value()) << "the client hung";
    EXPECT_EQ(out->failure, Failure::None) << out->message;
    ASSERT_TRUE(run_until(ioc, [&] { return peer.ended() == static_cast<std::size_t>(i + 1); }));
  }
  EXPECT_EQ(peer.peers(),
            (std::vector<std::string>{"127.0.0.1", "127.0.0.2", "127.0.0.1", "127.0.0.2"}));
}

TEST(ClientPool, ASourceAddressThatIsNotOneIsRefusedNamingTheFlag) {
  net::io_context ioc;
  try {
    ConnectionPool pool(ioc, Url{.tls = false, .host = "127.0.0.1", .port = 1, .path_prefix = ""},
                        from({"10.0.0.x"}));
    FAIL() << "no error";
  } catch (const Exception& e) {
    EXPECT_NE(std::string(e.what()).find("--source-address"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("10.0.0.x"), std::string::npos) << e.what();
  }
}

TEST(ClientPool, ASourceAddressOfAnotherFamilyIsAConnectErrorNamingIt) {
  const Canned a = content_length("ok");
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = a.bytes}}});
  // An IPv6 source for an IPv4 server: nothing to connect to from it.
  ConnectionPool pool(ioc, peer.url(), from({"::1"}));
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/r"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::Connect);
  EXPECT_NE(out->message.find("--source-address ::1"), std::string::npos) << out->message;
  EXPECT_EQ(peer.accepted(), 0U);
}

TEST(ClientPool, ConnectionCloseResponseIsNotReused) {
  const std::string bytes = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = bytes}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/a"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::None) << out->message;
  EXPECT_EQ(seen.body, "ok");
  EXPECT_EQ(pool.idle_count(), 0U);
}

TEST(ClientPool, ErrorStatusDeliversItsBody) {
  const std::string body = R"({"error":{"message":"overloaded"}})";
  const std::string bytes =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = bytes}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/a"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::None) << out->message;
  EXPECT_EQ(out->status, 503);
  EXPECT_EQ(seen.status, 503);
  EXPECT_EQ(seen.body, body);
}

/// One request whose send time is `lead` ahead, spawned on its own io_context against a peer
/// that answers it with `reply`; `accepted()` runs until the peer has its connection.
struct WaitingSend {
  net::io_context ioc;
  ScriptedPeer peer;
  ConnectionPool pool;
  Request req = post("/a");
  Collect seen;
  std::optional<Outcome> out;

  WaitingSend(const std::string& reply, std::chrono::milliseconds lead)
      : peer(ioc, {{Reply{.bytes = reply}}}), pool(ioc, peer.url(), {}) {
    req.send_at_ns =
        steady_now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(lead).count();
    net::co_spawn(ioc, pool.execute(req, seen),
                  [this](const std::exception_ptr&, Outcome o) { out = std::move(o); });
  }
  bool accepted() {
    return run_until(ioc, [&] { return peer.accepted() == 1; });
  }
  bool finished() {
    return run_until(ioc, [&] { return out.has_value(); });
  }
};

TEST(ClientPool, SendAtConnectsFirstAndWritesAtItsTime) {
  WaitingSend w(content_length("on time").bytes, std::chrono::milliseconds(500));
  // The connection is open while the request waits for its time, and nothing is written yet.
  ASSERT_TRUE(w.accepted());
  EXPECT_LT(steady_now_ns(), w.req.send_at_ns) << "connected only at the send time";
  EXPECT_EQ(w.seen.sent, 0);
  EXPECT_TRUE(w.peer.requests().empty());
  ASSERT_TRUE(w.finished());
  EXPECT_EQ(w.out->failure, Failure::None) << w.out->message;
  EXPECT_EQ(w.seen.body, "on time");
  EXPECT_EQ(w.seen.sent, 1);
  EXPECT_GE(w.seen.sent_ns, w.req.send_at_ns);
  EXPECT_EQ(w.pool.connections_opened(), 1U);
}

TEST(ClientPool, CancelWhileWaitingToSendWritesNothing) {
  WaitingSend w(content_length("never").bytes, std::chrono::milliseconds(300));
  ASSERT_TRUE(w.accepted());
  w.pool.cancel_all();
  ASSERT_TRUE(w.finished());
  EXPECT_EQ(w.out->failure, Failure::Cancelled) << w.out->message;
  EXPECT_EQ(w.seen.sent, 0);
  EXPECT_TRUE(w.peer.requests().empty());
  EXPECT_EQ(w.pool.idle_count(), 0U);
}

TEST(ClientPool, RefusedConnectionIsAConnectFailure) {
  net::io_context ioc;
  std::uint16_t port = 0;
  {
    tcp::acceptor closed(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    port = closed.local_endpoint().port();
  }  // nothing listens there now
  ConnectionPool pool(ioc, Url{.tls = false, .host = "127.0.0.1", .port = port, .path_prefix = ""},
                      {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/a"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::Connect) << out->message;
  EXPECT_NE(out->message.find("127.0.0.1"), std::string::npos) << out->message;
  EXPECT_EQ(seen.sent, 0);
}

}  // namespace
}  // namespace llmbench::http::test
