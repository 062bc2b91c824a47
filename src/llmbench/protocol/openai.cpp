#include "llmbench/protocol/openai.hpp"

#include "llmbench/protocol/redact.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

/// @file
/// Backend names, request bodies and error-body messages. The stream decoder lives in
/// openai_decoder.cpp.
///
/// Field sources:
///  - OpenAI API reference, "Create completion" / "Create chat completion": `model`, `prompt`,
///    `messages`, `max_tokens`, `stream`, `stream_options.include_usage`, `temperature`, `top_p`.
///  - vLLM OpenAI-compatible server, "Extra parameters": `ignore_eos`, `min_tokens`,
///    `stream_options.continuous_usage_stats`.
///  - SGLang OpenAI-compatible API, sampling parameters: `ignore_eos`, `min_tokens`.
///  - llama.cpp server README, `/completion` options: `ignore_eos`, `n_predict` (also read by its
///    OpenAI-compatible endpoints).

namespace llmbench::protocol {
namespace {

struct BackendName {
  std::string_view name;
  Backend backend;
};

// Canonical names first (to_string uses the first match), aliases after.
constexpr std::array<BackendName, 7> kBackendNames{{
    {"openai", Backend::OpenAI},
    {"openai-chat", Backend::OpenAIChat},
    {"vllm", Backend::Vllm},
    {"sglang", Backend::Sglang},
    {"llamacpp", Backend::Llamacpp},
    {"deepseek", Backend::Deepseek},
    {"llama.cpp", Backend::Llamacpp},
}};

constexpr std::size_t kMaxErrorBodyBytes = 512;

// Every backend but DeepSeek's official API: vLLM (both endpoints; `vllm bench serve` sends it for
// `--backend openai` and `openai-chat` too), SGLang and llama.cpp all accept `ignore_eos`.
bool sends_ignore_eos(Backend backend) noexcept {
  return backend != Backend::Deepseek;
}

bool sends_continuous_usage(Backend backend) noexcept {
  return backend == Backend::Vllm;
}

bool sends_min_tokens(Backend backend) noexcept {
  return backend == Backend::Vllm || backend == Backend::Sglang;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const std::size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) {
    return {};
  }
  const std::size_t end = text.find_last_not_of(kSpace);
  return text.substr(begin, end - begin + 1);
}

// Parses `--extra-body`; throws `Exception` with the byte offset of a syntax error.
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

}  // namespace

Backend parse_backend(std::string_view name) {
  for (const auto& entry : kBackendNames) {
    if (entry.name == name) {
      return entry.backend;
    }
  }
  throw Exception(Error{fmt::format("unknown backend '{}'; valid names: openai, openai-chat, "
                                    "vllm, sglang, llamacpp (or llama.cpp), deepseek",
                                    name),
                        "--backend", -1});
}

std::string_view to_string(Backend backend) noexcept {
  for (const auto& entry : kBackendNames) {
    if (entry.backend == backend) {
      return entry.name;
    }
  }
  return "unknown";
}

bool is_chat_backend(Backend backend) noexcept {
  return backend == Backend::OpenAIChat || backend == Backend::Deepseek;
}

std::string_view default_endpoint(Backend backend) noexcept {
  return is_chat_backend(backend) ? "/v1/chat/completions" : "/v1/completions";
}

std::string build_request_body(Backend backend, const GenRequest& request) {
  // ordered_json keeps insertion order, so logged bodies read model-first like the API examples.
  nlohmann::ordered_json body;
  body["model"] = request.model;
  if (request.chat) {
    auto messages = nlohmann::ordered_json::array();
    if (request.messages.empty()) {
      messages.push_back({{"role", "user"}, {"content", request.prompt}});
    } else {
      for (const auto& message : request.messages) {
        messages.push_back({{"role", message.role}, {"content", message.content}});
      }
    }
    body["messages"] = std::move(messages);
  } else if (!request.prompt_token_ids.empty()) {
    body["prompt"] = request.prompt_token_ids;
  } else {
    body["prompt"] = request.prompt;
  }
  if (request.max_tokens >= 0) {
    // Chat endpoints of vLLM, SGLang, llama.cpp and DeepSeek all accept `max_tokens` (OpenAI
    // deprecated it for `max_completion_tokens` on its own reasoning models only).
    body["max_tokens"] = request.max_tokens;
    if (backend == Backend::Llamacpp) {
      body["n_predict"] = request.max_tokens;
    }
  }
  body["stream"] = request.stream;
  if (request.stream) {
    const bool continuous = request.continuous_usage && sends_continuous_usage(backend);
    if (request.include_usage || continuous) {
      nlohmann::ordered_json options;
      options["include_usage"] = request.include_usage;
      if (continuous) {
        options["continuous_usage_stats"] = true;
      }
      body["stream_options"] = std::move(options);
    }
  }
  if (request.temperature) {
    body["temperature"] = *request.temperature;
  }
  if (request.top_p) {
    body["top_p"] = *request.top_p;
  }
  if (request.ignore_eos && sends_ignore_eos(backend)) {
    body["ignore_eos"] = true;
  }
  if (request.min_tokens && sends_min_tokens(backend)) {
    body["min_tokens"] = *request.min_tokens;
  }
  if (!request.extra_body_json.empty()) {
    nlohmann::ordered_json extra = parse_extra_body(request.extra_body_json);
    for (auto& [key, value] : extra.items()) {
      body[key] = std::move(value);
    }
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::string_view> unhonoured_flags(Backend backend, const GenRequest& request) {
  std::vector<std::string_view> flags;
  if (request.ignore_eos && !sends_ignore_eos(backend)) {
    flags.emplace_back("--ignore-eos");
  }
  if (request.min_tokens && !sends_min_tokens(backend)) {
    flags.emplace_back("--min-tokens");
  }
  if (request.continuous_usage && request.stream && !sends_continuous_usage(backend)) {
    flags.emplace_back("--continuous-usage");
  }
  return flags;
}

namespace {

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
