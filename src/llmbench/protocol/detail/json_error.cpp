#include "llmbench/protocol/detail/json_error.hpp"

#include "llmbench/core/utf8.hpp"

#include <string_view>
#include <utility>

/// @file
/// Positions of JSON syntax errors (RFC 8259) that simdjson's DOM parser reports without one.

namespace llmbench::protocol::detail {
namespace {

namespace ondemand = simdjson::ondemand;

// For string errors found by simdjson's first stage: the first control character inside a string,
// else the opening quote of a string that never closes; the size when neither exists.
std::size_t first_string_error(std::string_view text) {
  bool in_string = false;
  std::size_t string_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string) {
      if (c == '"') {
        in_string = true;
        string_start = i;
      }
    } else if (c == '\\') {
      ++i;  // skip the escaped character
    } else if (c == '"') {
      in_string = false;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      return i;
    }
  }
  return in_string ? string_start : text.size();
}

// Visits every value of an on-demand value so that the first syntax error surfaces.
/// Nesting deeper than this is reported as `DEPTH_ERROR` at the point reached: the walk recurses
/// once per level, and a server can send megabytes of `[` (a stack overflow the protocol_decoder
/// fuzz target found; docs/reliability.md).
constexpr int kMaxWalkDepth = 512;

simdjson::error_code walk(ondemand::value value, int depth = 0) {
  if (depth > kMaxWalkDepth) {
    return simdjson::DEPTH_ERROR;
  }
  ondemand::json_type type{};
  if (auto error = value.type().get(type)) {
    return error;
  }
  switch (type) {
    case ondemand::json_type::object: {
      ondemand::object obj;
      if (auto error = value.get_object().get(obj)) {
        return error;
      }
      for (auto field_result : obj) {
        ondemand::field field;
        std::string_view key;
        if (auto error = std::move(field_result).get(field)) {
          return error;
        }
        if (auto error = field.unescaped_key().get(key)) {
          return error;
        }
        if (auto error = walk(field.value(), depth + 1)) {
          return error;
        }
      }
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::array: {
      ondemand::array arr;
      if (auto error = value.get_array().get(arr)) {
        return error;
      }
      for (auto element : arr) {
        if (auto error = element.error()) {
          return error;
        }
        if (auto error = walk(element.value_unsafe(), depth + 1)) {
          return error;
        }
      }
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::string:
      return value.get_string().error();
    case ondemand::json_type::number:
      return value.get_number().error();
    case ondemand::json_type::boolean:
      return value.get_bool().error();
    case ondemand::json_type::null:
      return value.is_null().error();
  }
  return simdjson::TAPE_ERROR;
}

}  // namespace

std::int64_t JsonErrorLocator::locate(const char* json, std::size_t len,
                                      simdjson::error_code code) {
  const std::string_view text(json, len);
  if (code == simdjson::UTF8_ERROR) {
    const std::size_t at = utf8_first_invalid(text);
    return at < len ? static_cast<std::int64_t>(at) : 0;
  }
  if (code == simdjson::UNCLOSED_STRING || code == simdjson::UNESCAPED_CHARS) {
    const std::size_t at = first_string_error(text);
    return at < len ? static_cast<std::int64_t>(at) : 0;
  }
  if (!parser_) {
    parser_ = std::make_unique<ondemand::parser>();
  }
  ondemand::document doc;
  if (parser_->iterate(json, len, len + simdjson::SIMDJSON_PADDING).get(doc)) {
    return 0;
  }
  ondemand::json_type type{};
  simdjson::error_code error = doc.type().get(type);
  if (!error) {
    if (type == ondemand::json_type::object || type == ondemand::json_type::array) {
      ondemand::value root;
      error = doc.get_value().get(root);
      if (!error) {
        error = walk(root);
      }
    } else if (type == ondemand::json_type::string) {
      error = doc.get_string().error();
    } else if (type == ondemand::json_type::number) {
      error = doc.get_number().error();
    } else if (type == ondemand::json_type::boolean) {
      error = doc.get_bool().error();
    } else {
      error = doc.is_null().error();
    }
  }
  const char* where = nullptr;
  if (doc.current_location().get(where) != simdjson::SUCCESS) {
    // Past the last token: the text ended before the value did (or trailing content).
    return error ? static_cast<std::int64_t>(len) : 0;
  }
  return static_cast<std::int64_t>(where - json);
}

}  // namespace llmbench::protocol::detail
