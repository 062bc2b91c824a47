#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>

namespace llmbench {

std::string Error::what() const {
  std::string out;
  if (!source.empty()) {
    out += source;
    out += ": ";
  }
  out += message;
  if (offset >= 0) {
    out += fmt::format(" (at byte {})", offset);
  }
  return out;
}

void throw_exception_from_error(const Error& error, const boost::source_location& /*loc*/) {
  throw Exception(error);
}

void assert_fail(const char* condition, const char* message, const char* file, int line) {
  std::fprintf(stderr, "llmbench: internal error: %s (%s) at %s:%d\n", message, condition, file,
               line);
  std::abort();
}

}  // namespace llmbench
