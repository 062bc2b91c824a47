#pragma once
/// @file
/// Error values and the Result type used across llmbench (docs/architecture.md "Conventions the
/// code relies on": errors).

#include <boost/system/result.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace llmbench {

/// An error with human-readable context. `offset` is the byte offset in the input where a parser
/// stopped (-1 when not applicable); `source` names the input (file name, flag, field).
struct Error {
  std::string message;
  std::string source;
  std::int64_t offset = -1;

  /// "source: message (at byte N)" with the empty parts left out.
  [[nodiscard]] std::string what() const;
};

/// Thrown for configuration, command-line and start-up failures only (bad flag, unreadable
/// dataset, port in use). Caught once in `cli::run`, which exits with code 2. Never thrown on the
/// request hot path: per-request failures are stored in `RequestRecord::error_kind` instead.
class Exception : public std::runtime_error {
 public:
  explicit Exception(const Error& error) : std::runtime_error(error.what()), error_(error) {}
  explicit Exception(const std::string& message) : Exception(Error{message, {}, -1}) {}
  /// The structured error behind the message.
  [[nodiscard]] const Error& error() const noexcept { return error_; }

 private:
  Error error_;
};

/// A value or an `Error`; parsers return this and never throw on bad input.
template <class T>
using Result = boost::system::result<T, Error>;

/// ADL hook that lets `Result<T>::value()` throw `llmbench::Exception` on an error.
[[noreturn]] void throw_exception_from_error(const Error& error, const boost::source_location& loc);

/// Aborts with `message`, file and line; used by `LLMBENCH_ASSERT` for broken invariants (also in
/// release builds).
[[noreturn]] void assert_fail(const char* condition, const char* message, const char* file,
                              int line);

}  // namespace llmbench

/// Checks an internal invariant; on failure prints the condition and message, then aborts.
#define LLMBENCH_ASSERT(cond, msg)                               \
  do {                                                           \
    if (!(cond)) {                                               \
      ::llmbench::assert_fail(#cond, (msg), __FILE__, __LINE__); \
    }                                                            \
  } while (false)
