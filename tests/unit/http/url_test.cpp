// --base-url parsing, as a table: what each URL gives, or the error it gets and where.
#include "llmbench/http/url.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmbench::http {
namespace {

struct Good {
  std::string text;
  bool tls = false;
  std::string host;
  std::uint16_t port = 0;
  std::string path_prefix;
  std::string origin;
};

TEST(ParseUrl, AcceptedUrls) {
  const std::vector<Good> rows = {
      {.text = "http://127.0.0.1:8000",
       .tls = false,
       .host = "127.0.0.1",
       .port = 8000,
       .path_prefix = "",
       .origin = "http://127.0.0.1:8000"},
      {.text = "http://localhost",
       .tls = false,
       .host = "localhost",
       .port = 80,
       .path_prefix = "",
       .origin = "http://localhost:80"},
      {.text = "https://api.example.com",
       .tls = true,
       .host = "api.example.com",
       .port = 443,
       .path_prefix = "",
       .origin = "https://api.example.com:443"},
      {.text = "https://api.example.com:8443/",
       .tls = true,
       .host = "api.example.com",
       .port = 8443,
       .path_prefix = "",
       .origin = "https://api.example.com:8443"},
      {.text = "HTTP://Example.com:81/Prefix",
       .tls = false,
       .host = "Example.com",
       .port = 81,
       .path_prefix = "/Prefix",
       .origin = "http://Example.com:81"},
      {.text = "http://host:8000/v1/",
       .tls = false,
       .host = "host",
       .port = 8000,
       .path_prefix = "/v1",
       .origin = "http://host:8000"},
      {.text = "http://host/a/b//",
       .tls = false,
       .host = "host",
       .port = 80,
       .path_prefix = "/a/b",
       .origin = "http://host:80"},
      {.text = "http://[::1]:8000/v1",
       .tls = false,
       .host = "::1",
       .port = 8000,
       .path_prefix = "/v1",
       .origin = "http://[::1]:8000"},
      {.text = "https://[2001:db8::7]",
       .tls = true,
       .host = "2001:db8::7",
       .port = 443,
       .path_prefix = "",
       .origin = "https://[2001:db8::7]:443"},
      {.text = "http://h:65535",
       .tls = false,
       .host = "h",
       .port = 65535,
       .path_prefix = "",
       .origin = "http://h:65535"},
      {.text = "http://h:1",
       .tls = false,
       .host = "h",
       .port = 1,
       .path_prefix = "",
       .origin = "http://h:1"},
  };
  for (const Good& row : rows) {
    SCOPED_TRACE(row.text);
    const auto url = parse_url(row.text);
    ASSERT_TRUE(url.has_value()) << url.error().what();
    EXPECT_EQ(url->tls, row.tls);
    EXPECT_EQ(url->host, row.host);
    EXPECT_EQ(url->port, row.port);
    EXPECT_EQ(url->path_prefix, row.path_prefix);
    EXPECT_EQ(url->origin(), row.origin);
  }
}

struct Bad {
  std::string text;
  std::string message_part;  ///< a phrase the error must contain
  std::int64_t offset = -1;  ///< where it points in `text`
};

TEST(ParseUrl, RejectedUrlsNameTheProblemAndWhere) {
  const std::vector<Bad> rows = {
      {.text = "", .message_part = "scheme must be http:// or https://", .offset = 0},
      {.text = "localhost:8000", .message_part = "scheme must be", .offset = 0},
      {.text = "ftp://host", .message_part = "scheme must be", .offset = 0},
      {.text = "http:/host", .message_part = "scheme must be", .offset = 0},
      {.text = "http://", .message_part = "missing host", .offset = 7},
      {.text = "http:///v1", .message_part = "missing host", .offset = 7},
      {.text = "http://:8000", .message_part = "missing host", .offset = 7},
      {.text = "http://host:", .message_part = "port must be a number in 1..65535", .offset = 12},
      {.text = "http://host:0", .message_part = "port must be", .offset = 12},
      {.text = "http://host:65536", .message_part = "port must be", .offset = 12},
      {.text = "http://host:80a/v1", .message_part = "port must be", .offset = 12},
      {.text = "http://host:-1", .message_part = "port must be", .offset = 12},
      {.text = "http://host:8000?x=1",
       .message_part = "a query ('?...') is not supported",
       .offset = 16},
      {.text = "http://host:8000/v1?api-version=2", .message_part = "query", .offset = 19},
      {.text = "http://host/v1#top", .message_part = "fragment", .offset = 14},
      {.text = "http://host/a b", .message_part = "spaces", .offset = 13},
      {.text = "http://ho\tst", .message_part = "control characters", .offset = 9},
      {.text = "http://user:pw@host", .message_part = "user info", .offset = 14},
      {.text = "http://[::1", .message_part = "unterminated '['", .offset = 7},
      {.text = "http://[::1]x", .message_part = "expected ':' after ']'", .offset = 12},
      {.text = "http://[::1]:", .message_part = "port must be", .offset = 13},
      {.text = "http://[]:80", .message_part = "brackets are only for IPv6", .offset = 7},
      {.text = "http://[host]", .message_part = "brackets are only for IPv6", .offset = 7},
      {.text = "http://::1:8000", .message_part = "IPv6 host must be in brackets", .offset = 7},
  };
  for (const Bad& row : rows) {
    SCOPED_TRACE(row.text);
    const auto url = parse_url(row.text);
    ASSERT_FALSE(url.has_value());
    EXPECT_NE(url.error().message.find(row.message_part), std::string::npos) << url.error().message;
    EXPECT_EQ(url.error().offset, row.offset) << url.error().message;
    EXPECT_EQ(url.error().source, "URL '" + row.text + "'");
  }
}

}  // namespace
}  // namespace llmbench::http
