#pragma once
/// @file
/// The connections of a run's pools counted together (docs/telemetry.md, "Ports and connect
/// errors"): the local ports they hold now and at most, and the connects that failed, by cause.
/// One open TCP connection holds one local (ephemeral) port of its source address, from its
/// connect until its close; a port in TIME_WAIT after the client closed first is not counted.

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace boost::system {
class error_code;
}  // namespace boost::system

namespace llmbench::http {

/// The name of a connect failure's cause: the errno name for an operating-system error
/// (`ECONNREFUSED`, `EADDRNOTAVAIL`, `ETIMEDOUT`; glibc's `strerrorname_np`), else
/// "<category>:<value>" (a resolver's `netdb:1`, a TLS error's `asio.ssl:...`).
[[nodiscard]] std::string failure_cause(const boost::system::error_code& ec);

/// Counts of several pools on several threads (every member function thread-safe).
class ConnectionTally {
 public:
  /// A connection was opened (connected, and for https through its handshake).
  void opened() noexcept;
  /// A connection `opened` was closed (or destroyed).
  void closed() noexcept;
  /// A connect failed for `cause` (`failure_cause`, or a word: "timeout", "tls").
  void connect_failed(const std::string& cause);

  /// Connections open now.
  [[nodiscard]] std::int64_t open() const noexcept { return open_.load(); }
  /// The most connections open at once so far: the local ports held at the peak.
  [[nodiscard]] std::int64_t peak() const noexcept { return peak_.load(); }
  /// Failed connects so far, by cause.
  [[nodiscard]] std::map<std::string, std::int64_t> connect_errors() const;

 private:
  std::atomic<std::int64_t> open_{0};
  std::atomic<std::int64_t> peak_{0};
  mutable std::mutex mutex_;
  std::map<std::string, std::int64_t> errors_;
};

}  // namespace llmbench::http
