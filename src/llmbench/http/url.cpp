#include "llmbench/http/url.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace llmbench::http {

std::string Url::origin() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", tls ? "https" : "http", v6 ? "[" : "", host, v6 ? "]" : "",
                     port);
}

namespace {

/// Case-insensitive prefix test for the scheme (RFC 3986 §3.1: schemes are case-insensitive).
bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char want, char got) {
           return std::tolower(static_cast<unsigned char>(got)) == want;
         });
}

/// Port digits only, 1..65535. `digits` may be empty (then it is an error too).
bool parse_port(std::string_view digits, std::uint16_t& port) {
  unsigned value = 0;
  const char* first = digits.data();
  const char* last = first + digits.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (digits.empty() || ec != std::errc() || ptr != last || value == 0 || value > 65535) {
    return false;
  }
  port = static_cast<std::uint16_t>(value);
  return true;
}

}  // namespace

Result<Url> parse_url(std::string_view text) {
  const auto fail = [&](std::string msg, std::size_t at) -> Result<Url> {
    return Error{std::move(msg), fmt::format("URL '{}'", text), static_cast<std::int64_t>(at)};
  };
  Url url;
  std::size_t pos = 0;
  if (starts_with_nocase(text, "http://")) {
    pos = 7;
  } else if (starts_with_nocase(text, "https://")) {
    url.tls = true;
    url.port = 443;
    pos = 8;
  } else {
    return fail("scheme must be http:// or https:// (e.g. http://127.0.0.1:8000)", 0);
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if (ch <= 0x20 || ch == 0x7f) {
      return fail("spaces and control characters are not allowed", i);
    }
    if (ch == '?') {
      return fail(
          "a query ('?...') is not supported: give the server root and an optional path prefix "
          "only (request parameters go in --extra-body or --header)",
          i);
    }
    if (ch == '#') {
      return fail("a fragment ('#...') is not allowed in --base-url", i);
    }
  }
  const std::size_t authority_end = std::min(text.find('/', pos), text.size());
  const std::string_view authority = text.substr(pos, authority_end - pos);
  if (authority.empty()) {
    return fail("missing host", pos);
  }
  if (const auto at = authority.find('@'); at != std::string_view::npos) {
    return fail("user info in URLs is not supported; use --header or --api-key", pos + at);
  }
  std::size_t port_at = std::string_view::npos;  // offset of the ':' before the port, if any
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return fail("unterminated '[' in IPv6 host", pos);
    }
    url.host = std::string(authority.substr(1, close - 1));
    if (url.host.find(':') == std::string::npos) {
      return fail("brackets are only for IPv6 addresses", pos);
    }
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        return fail("expected ':' after ']'", pos + close + 1);
      }
      port_at = close + 1;
    }
  } else {
    const auto colon = authority.find(':');
    if (colon != std::string_view::npos && authority.find(':', colon + 1) != std::string::npos) {
      return fail("an IPv6 host must be in brackets (e.g. http://[::1]:8000)", pos);
    }
    url.host = std::string(authority.substr(0, colon));
    port_at = colon;
  }
  if (url.host.empty()) {
    return fail("missing host", pos);
  }
  if (port_at != std::string_view::npos && !parse_port(authority.substr(port_at + 1), url.port)) {
    return fail("port must be a number in 1..65535", pos + port_at + 1);
  }
  std::string_view path = text.substr(authority_end);
  while (!path.empty() && path.back() == '/') {
    path.remove_suffix(1);
  }
  url.path_prefix = std::string(path);
  return url;
}

}  // namespace llmbench::http
