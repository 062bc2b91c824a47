#include "llmbench/protocol/detail/native_json.hpp"

#include "llmbench/core/text.hpp"
#include "llmbench/protocol/openai.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <utility>

/// @file
/// Shared pieces of the native dialects: padded simdjson parsing (simdjson requires
/// SIMDJSON_PADDING readable bytes after a document), typed field reads, and request-body
/// helpers (RFC 7396 JSON Merge Patch for `--extra-body`).

namespace llmbench::protocol::detail {
namespace {

namespace dom = simdjson::dom;

}  // namespace

std::string_view json_type_name(const dom::element& value) noexcept {
  switch (value.type()) {
    case dom::element_type::ARRAY:
      return "an array";
    case dom::element_type::OBJECT:
      return "an object";
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
      return "a number";
    case dom::element_type::STRING:
      return "a string";
    case dom::element_type::BOOL:
      return "a boolean";
    case dom::element_type::NULL_VALUE:
      return "null";
  }
  return "a value";
}

Result<Delta> NativeDecoder::decode_sse(std::string_view type, std::string_view data) {
  if (type == "error") {
    return Delta{.is_error = true, .error_message = stream_error_message(data)};
  }
  if (trim(data) == "[DONE]") {
    return Delta{.done = true};
  }
  return decode_payload(data, kEventSource, /*stream=*/true);
}

std::optional<Delta> NativeDecoder::decode_field(std::string_view /*name*/,
                                                 std::string_view /*value*/) {
  return std::nullopt;
}

Result<Delta> NativeDecoder::decode_body(std::string_view body) {
  return decode_payload(body, kBodySource, /*stream=*/false);
}

Result<dom::object> JsonPayload::parse(std::string_view data, std::string_view source) {
  const std::size_t needed = data.size() + simdjson::SIMDJSON_PADDING;
  if (needed > capacity_) {
    capacity_ = std::max(needed, 2 * capacity_);
    buffer_ = std::make_unique_for_overwrite<char[]>(capacity_);
  }
  std::memcpy(buffer_.get(), data.data(), data.size());
  std::memset(buffer_.get() + data.size(), 0, simdjson::SIMDJSON_PADDING);
  dom::element root;
  if (const auto code =
          parser_.parse(buffer_.get(), data.size(), /*realloc_if_needed=*/false).get(root)) {
    return Error{fmt::format("invalid JSON in {}", source), std::string(source),
                 locator_.locate(buffer_.get(), data.size(), code)};
  }
  dom::object obj;
  if (root.get_object().get(obj)) {
    return Error{"expected a JSON object", std::string(source), 0};
  }
  return obj;
}

void FieldReader::wrong(std::string_view path, std::string_view expected, const dom::element& got) {
  if (error.empty()) {
    error = fmt::format("'{}' must be {} or null, got {}", path, expected, json_type_name(got));
  }
}

bool FieldReader::text(const dom::element& value, std::string_view path, std::string_view& out) {
  if (value.get_string().get(out) == simdjson::SUCCESS) {
    return true;
  }
  if (!value.is_null()) {
    wrong(path, "a string", value);
  }
  return false;
}

bool FieldReader::object(const dom::element& value, std::string_view path, dom::object& out) {
  if (value.get_object().get(out) == simdjson::SUCCESS) {
    return true;
  }
  if (!value.is_null()) {
    wrong(path, "an object", value);
  }
  return false;
}

bool FieldReader::boolean(const dom::element& value, std::string_view path, bool& out) {
  if (value.get_bool().get(out) == simdjson::SUCCESS) {
    return true;
  }
  if (!value.is_null()) {
    wrong(path, "a boolean", value);
  }
  return false;
}

std::optional<std::int64_t> token_count(const dom::element& value) {
  if (value.is_null()) {
    return -1;
  }
  if (!value.is_number()) {
    return std::nullopt;
  }
  std::int64_t i = 0;
  if (value.get_int64().get(i) == simdjson::SUCCESS) {
    return i >= 0 ? i : kInvalidCount;
  }
  double d = 0;
  if (value.is_double() && value.get_double().get(d) == simdjson::SUCCESS && d >= 0 && d < 9.0e18 &&
      static_cast<double>(static_cast<std::int64_t>(d)) == d) {
    return static_cast<std::int64_t>(d);
  }
  return kInvalidCount;
}

std::int64_t FieldReader::count(const dom::element& value, std::string_view path) {
  const auto n = token_count(value);
  if (!n) {
    wrong(path, "a number", value);
    return -1;
  }
  return *n;
}

void set_error(const dom::element& value, std::string_view payload, Delta& delta) {
  delta.is_error = true;
  std::string_view text;
  dom::object obj;
  if (value.get_string().get(text) == simdjson::SUCCESS ||
      (value.get_object().get(obj) == simdjson::SUCCESS &&
       obj.at_key("message").get_string().get(text) == simdjson::SUCCESS)) {
    delta.error_message.assign(text);
  } else {
    delta.error_message.assign(payload.substr(0, std::min(payload.size(), kMaxRawErrorBytes)));
  }
}

nlohmann::ordered_json parse_extra_body(const std::string& text) {
  nlohmann::ordered_json extra;
  try {
    extra = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports `byte` as the 1-based count of characters read when it failed.
    const std::int64_t offset = e.byte > 0 ? static_cast<std::int64_t>(e.byte) - 1 : 0;
    std::string detail = e.what();
    if (const std::size_t colon = detail.find(": "); colon != std::string::npos) {
      detail.erase(0, colon + 2);
    }
    throw Exception(Error{"not valid JSON: " + detail, "--extra-body", offset});
  }
  if (!extra.is_object()) {
    throw Exception(Error{fmt::format("must be a JSON object, got a {}", extra.type_name()),
                          "--extra-body", 0});
  }
  return extra;
}

void merge_extra_body(nlohmann::ordered_json& body, const std::string& extra_body_json) {
  if (!extra_body_json.empty()) {
    body.merge_patch(parse_extra_body(extra_body_json));
  }
}

std::string dump_body(const nlohmann::ordered_json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::string> string_member(std::string_view body, std::string_view key) {
  const nlohmann::json info = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object()) {
    return std::nullopt;
  }
  const auto it = info.find(key);
  if (it == info.end() || !it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

}  // namespace llmbench::protocol::detail
