#pragma once
/// @file
/// `JsonErrorLocator`: the byte offset of a JSON syntax error that simdjson's DOM parser found.

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace llmbench::protocol::detail {

/// Finds where a payload rejected by `simdjson::dom::parser` is wrong. Not thread-safe; one per
/// decoder. Allocates its on-demand parser on the first use only.
class JsonErrorLocator {
 public:
  /// Byte offset of the first syntax error in the padded `json`, which the DOM parser rejected with
  /// `code`. String and UTF-8 errors come from simdjson's first stage, which keeps no position, so
  /// they are found by a scan; other errors by an on-demand pass over every value, which stops at
  /// the error. 0 when no position can be found.
  /// `json` must have `simdjson::SIMDJSON_PADDING` readable bytes after `len`.
  std::int64_t locate(const char* json, std::size_t len, simdjson::error_code code);

 private:
  std::unique_ptr<simdjson::ondemand::parser> parser_;
};

}  // namespace llmbench::protocol::detail
