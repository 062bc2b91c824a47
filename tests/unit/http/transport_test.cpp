// Replies seen in the wild that once confused the client (hostile servers): interim
// 1xx responses, encoded bodies, large header blocks, redirects.
#include "llmbench/http/client.hpp"

#include <gtest/gtest.h>

#include "scripted_peer.hpp"
#include <string>
#include <vector>

namespace llmbench::http::test {
namespace {

std::string json_reply(const std::string& body, const std::string& extra_fields = "") {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra_fields +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST(ClientTransport, InterimResponsesAreSkippedAndTheConnectionStaysInStep) {
  // 100 Continue and 103 Early Hints before the first answer; the second request on the same
  // connection must get its own answer, not the first one's.
  const std::string interim =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
  net::io_context ioc;
  ScriptedPeer peer(ioc,
                    {{Reply{.bytes = interim + json_reply("first")},
                      Reply{.bytes = "HTTP/1.1 103 Early Hints\r\n\r\n" + json_reply("second")},
                      Reply{.bytes = json_reply("third")}}});
  ConnectionPool pool(ioc, peer.url(), {});
  for (const std::string want : {"first", "second", "third"}) {
    SCOPED_TRACE(want);
    Collect seen;
    const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
    ASSERT_TRUE(out.has_value()) << "the client hung";
    EXPECT_EQ(out->failure, Failure::None) << out->message;
    EXPECT_EQ(out->status, 200);
    EXPECT_EQ(seen.status, 200);
    EXPECT_EQ(seen.headers, 1);  // interim responses are not reported as the answer
    EXPECT_EQ(seen.body, want);
    EXPECT_TRUE(out->body_complete);
  }
  EXPECT_EQ(pool.connections_opened(), 1U);
}

TEST(ClientTransport, UnaskedProtocolSwitchIsAProtocolError) {
  net::io_context ioc;
  ScriptedPeer peer(ioc,
                    {{Reply{.bytes = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::Protocol) << out->message;
  EXPECT_NE(out->message.find("101"), std::string::npos) << out->message;
  EXPECT_EQ(pool.idle_count(), 0U);
}

TEST(ClientTransport, EndlessInterimResponsesAreBounded) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    bytes += "HTTP/1.1 100 Continue\r\n\r\n";
  }
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = bytes + json_reply("late"), .then = Then::Stall}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::Protocol) << out->message;
  EXPECT_NE(out->message.find("interim"), std::string::npos) << out->message;
}

TEST(ClientTransport, EncodedBodyIsReportedByItsEncoding) {
  // Bytes of a gzip member header: what a server sends that compresses against the request.
  const std::string gz("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  net::io_context ioc;
  ScriptedPeer peer(
      ioc, {{Reply{.bytes = json_reply(gz, "Content-Encoding: gzip\r\n")}},
            {Reply{.bytes = "HTTP/1.1 200 OK\r\nTransfer-Encoding: br, chunked\r\n\r\na\r\n" + gz +
                            "\r\n0\r\n\r\n"}}});
  ConnectionPool pool(ioc, peer.url(), {});
  for (const std::string coding : {"gzip", "br"}) {
    SCOPED_TRACE(coding);
    Collect seen;
    const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
    ASSERT_TRUE(out.has_value()) << "the client hung";
    EXPECT_EQ(out->failure, Failure::Protocol) << out->message;
    EXPECT_EQ(out->status, 200);
    EXPECT_NE(out->message.find("encoding '" + coding + "'"), std::string::npos) << out->message;
    EXPECT_NE(out->message.find("does not decode"), std::string::npos) << out->message;
    EXPECT_EQ(seen.body, "");  // undecodable bytes are not handed over as the answer
  }
  // The client asks for the body as is (RFC 9110 §12.5.3).
  EXPECT_NE(peer.request_head(0).find("Accept-Encoding: identity\r\n"), std::string::npos)
      << peer.request_head(0);
}

// An error answer in an encoding the client does not decode keeps its status: it is a 5xx (or
// 4xx) with a message naming the encoding, not a parse failure of a 200.
TEST(ClientTransport, EncodedErrorBodyKeepsItsStatus) {
  const std::string gz("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = "HTTP/1.1 503 Service Unavailable\r\nContent-Encoding: "
                                          "gzip\r\nContent-Length: 10\r\n\r\n" +
                                          gz}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::None) << out->message;
  EXPECT_EQ(out->status, 503);
  EXPECT_NE(out->message.find("encoding 'gzip'"), std::string::npos) << out->message;
  EXPECT_EQ(seen.body, "");
}

TEST(ClientTransport, IdentityAndChunkedCodingsAreAccepted) {
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = json_reply("plain", "Content-Encoding: identity\r\n")}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::None) << out->message;
  EXPECT_EQ(seen.body, "plain");
}

/// A header field of `bytes` bytes in all.
std::string big_field(std::size_t bytes) {
  return "X-Trace: " + std::string(bytes - 11, 't') + "\r\n";
}

TEST(ClientTransport, HeaderBlocksUpTo64KiBAreRead) {
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = json_reply("ok", big_field(20'000) + big_field(30'000) +
                                                               big_field(12'000))}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::None) << out->message;
  EXPECT_EQ(seen.body, "ok");
}

TEST(ClientTransport, LargerHeaderBlockFailsNamingTheLimit) {
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = json_reply("ok", big_field(70'000))}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::Protocol) << out->message;
  EXPECT_NE(out->message.find("64 KiB limit"), std::string::npos) << out->message;
}

TEST(ClientTransport, RedirectStatusReachesTheCallerWithItsBody) {
  const std::string bytes =
      "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/v1/completions\r\n"
      "Content-Length: 5\r\n\r\nmoved";
  net::io_context ioc;
  ScriptedPeer peer(ioc, {{Reply{.bytes = bytes}, Reply{.bytes = json_reply("next")}}});
  ConnectionPool pool(ioc, peer.url(), {});
  Collect seen;
  const auto out = run_exchange(ioc, pool, post("/v1/completions"), seen);
  ASSERT_TRUE(out.has_value()) << "the client hung";
  EXPECT_EQ(out->failure, Failure::None) << out->message;
  EXPECT_EQ(out->status, 307);
  EXPECT_EQ(seen.status, 307);
  EXPECT_EQ(seen.body, "moved");
  // Not followed, and the connection stays usable.
  Collect next;
  const auto out2 = run_exchange(ioc, pool, post("/v1/completions"), next);
  ASSERT_TRUE(out2.has_value()) << "the client hung";
  EXPECT_EQ(next.body, "next");
  EXPECT_EQ(pool.connections_opened(), 1U);
}

}  // namespace
}  // namespace llmbench::http::test
