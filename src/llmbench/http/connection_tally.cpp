#include "llmbench/http/connection_tally.hpp"

#include <boost/system/error_code.hpp>
#include <fmt/core.h>

#include <cstring>

namespace llmbench::http {

std::string failure_cause(const boost::system::error_code& ec) {
  if (ec.category() == boost::system::system_category() ||
      ec.category() == boost::system::generic_category()) {
    // glibc 2.32+: the errno's name, null for a value it does not know.
    if (const char* name = ::strerrorname_np(ec.value()))
      return name;
    return fmt::format("errno {}", ec.value());
  }
  return fmt::format("{}:{}", ec.category().name(), ec.value());
}

void ConnectionTally::opened() noexcept {
  const std::int64_t now = open_.fetch_add(1) + 1;
  std::int64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

void ConnectionTally::closed() noexcept {
  open_.fetch_sub(1);
}

void ConnectionTally::connect_failed(const std::string& cause) {
  const std::lock_guard lock(mutex_);
  ++errors_[cause];
}

std::map<std::string, std::int64_t> ConnectionTally::connect_errors() const {
  const std::lock_guard lock(mutex_);
  return errors_;
}

}  // namespace llmbench::http
