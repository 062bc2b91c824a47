#include "llmbench/protocol/openai.hpp"

#include "llmbench/core/text.hpp"
#include "llmbench/protocol/redact.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

/// @file
/// Messages of OpenAI-style error bodies (OpenAI API reference, "Error codes": `{"error":
/// {"message": ...}}`; older vLLM `{"object": "error", "message": ...}`; FastAPI `{"detail":
/// ...}`). The stream decoder lives in openai_decoder.cpp, request bodies in openai_body.cpp.

namespace llmbench::protocol {
namespace {

constexpr std::size_t kMaxErrorBodyBytes = 512;

// The message of a FastAPI validation `detail` array: the `msg` fields joined with "; ".
std::string join_detail_messages(const nlohmann::json& detail) {
  std::string out;
  for (const auto& item : detail) {
    if (item.is_object() && item.contains("msg") && item["msg"].is_string()) {
      if (!out.empty()) {
        out += "; ";
      }
      out += item["msg"].get<std::string>();
    }
  }
  return out;
}

// A JSON value as a message: strings as themselves, other values compactly serialized.
std::string value_message(const nlohmann::json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_array()) {
    std::string joined = join_detail_messages(value);
    if (!joined.empty()) {
      return joined;
    }
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The message of an error body, uncut (see error_message_from_body).
std::string extract_error_message(std::string_view body) {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    // OpenAI / new vLLM / SGLang: {"error": {"message": ...}}; some proxies: {"error": "text"}.
    if (const auto error = parsed.find("error"); error != parsed.end() && !error->is_null()) {
      if (error->is_object()) {
        if (const auto message = error->find("message");
            message != error->end() && !message->is_null()) {
          return value_message(*message);
        }
      }
      return value_message(*error);
    }
    // Old vLLM {"object": "error", "message": ...}; FastAPI {"detail": ...}.
    for (const char* key : {"message", "detail"}) {
      if (const auto value = parsed.find(key); value != parsed.end() && !value->is_null()) {
        return value_message(*value);
      }
    }
  }
  return std::string(trim(body));
}

}  // namespace

std::string error_message_from_body(std::string_view body, const Redactor& redactor) {
  return server_text(extract_error_message(body), redactor, kMaxErrorBodyBytes);
}

std::string stream_error_message(std::string_view payload) {
  std::string message = extract_error_message(payload);
  return message.empty() ? std::string("error event in stream") : message;
}

}  // namespace llmbench::protocol
