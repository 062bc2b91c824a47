#pragma once
// A raw TCP client for the server tests that need to see bytes as they are on the wire: slow or
// idle clients, resets, truncated bodies, interim responses (POSIX sockets, poll + recv).

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>

namespace llmbench::server::test {

/// What a read until the end saw.
struct RawReply {
  std::string bytes;       ///< everything received, headers included
  bool eof = false;        ///< the server closed its side (FIN)
  bool reset = false;      ///< the connection was reset (RST)
  bool timed_out = false;  ///< neither happened within the time given
};

/// One TCP connection to 127.0.0.1:port; closed on destruction.
class RawConnection {
 public:
  explicit RawConnection(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("connect failed");
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  /// Writes all of `data`; false if the server has gone.
  bool send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// Reads until EOF, a reset or `timeout` passes.
  RawReply read_until_closed(std::chrono::milliseconds timeout) {
    RawReply reply;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[65536];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        reply.timed_out = true;
        return reply;
      }
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
        continue;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) {
        reply.eof = true;
        return reply;
      }
      if (n < 0) {
        reply.reset = errno == ECONNRESET;
        reply.eof = !reply.reset;
        return reply;
      }
      reply.bytes.append(buf, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
};

/// The body of a chunked HTTP/1.1 message (RFC 9112 §7.1) after its head; `complete` tells
/// whether the last chunk (size 0) was seen. Stops at the first incomplete chunk.
inline std::string dechunk(std::string_view body, bool& complete) {
  std::string out;
  complete = false;
  for (;;) {
    const std::size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos)
      return out;
    const std::size_t size = std::stoul(std::string(body.substr(0, eol)), nullptr, 16);
    if (size == 0) {
      complete = true;
      return out;
    }
    if (body.size() < eol + 2 + size) {
      out.append(body.substr(eol + 2));
      return out;
    }
    out.append(body.substr(eol + 2, size));
    body.remove_prefix(std::min(body.size(), eol + 2 + size + 2));
  }
}

}  // namespace llmbench::server::test
