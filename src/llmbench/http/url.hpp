#pragma once
/// @file
/// The `--base-url` of a run: an absolute http or https URL (RFC 3986 §3) naming the server root
/// and an optional path prefix. Query and fragment are rejected, since every request appends its
/// own endpoint path to the prefix.

#include "llmbench/core/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace llmbench::http {

/// A parsed base URL: scheme http or https, host, port, and a path prefix without a trailing
/// slash ("" for none). An IPv6 host is stored without its brackets ("::1").
struct Url {
  bool tls = false;
  std::string host;
  std::uint16_t port = 80;
  std::string path_prefix;

  /// "scheme://host:port" (no path; IPv6 hosts in brackets), for logs and results.
  [[nodiscard]] std::string origin() const;
};

/// Parses "http://host[:port][/prefix]" or "https://..." (scheme case-insensitive, RFC 3986
/// §3.1). IPv6 hosts must be in brackets (RFC 3986 §3.2.2); the port defaults to 80 or 443.
/// Rejects user info, a query ('?'), a fragment ('#'), spaces and control characters. Returns an
/// error naming the URL and the byte offset of the problem; never throws.
Result<Url> parse_url(std::string_view text);

}  // namespace llmbench::http
