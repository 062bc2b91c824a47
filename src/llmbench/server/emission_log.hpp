#pragma once
/// @file
/// The server's ground truth for timing tests: when each output chunk was written to the socket.

#include "llmbench/core/clock.hpp"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::server {

/// One output-carrying chunk: absolute steady-clock time (`steady_now_ns()`, CLOCK_MONOTONIC)
/// taken right before the write, and the number of tokens in it.
using Emission = std::pair<TimeNs, std::int64_t>;

/// Appends one JSON line per finished request:
/// `{"request_id":"<X-Request-Id or empty>","id":"cmpl-7","arrival_ns":N,"admit_ns":N,
///   "chunks":[[t_ns,tokens],...]}` — times are absolute steady-clock nanoseconds, so a client
/// process on the same machine can compare them with its own `steady_now_ns()`. Thread-safe
/// (one mutex-guarded write per line, flushed per line so a killed server loses nothing).
class EmissionLog {
 public:
  /// Opens `path` for appending. Throws `llmbench::Exception` naming the path if it cannot.
  explicit EmissionLog(const std::string& path);
  ~EmissionLog();
  EmissionLog(const EmissionLog&) = delete;
  EmissionLog& operator=(const EmissionLog&) = delete;

  /// Writes one line. Errors after opening are reported once to the log and then ignored.
  void append(std::string_view request_id, std::string_view id, TimeNs arrival_ns, TimeNs admit_ns,
              const std::vector<Emission>& chunks);
  /// Flushes buffered output (also done per line and on destruction).
  void flush();

 private:
  std::mutex mu_;
  std::FILE* file_ = nullptr;
  bool reported_error_ = false;
};

}  // namespace llmbench::server
