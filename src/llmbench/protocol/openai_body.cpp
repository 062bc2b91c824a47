#include "llmbench/core/error.hpp"
#include "llmbench/protocol/detail/native_json.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"
#include "llmbench/protocol/openai.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <utility>

/// @file
/// The OpenAI-compatible request body and model list, shared by every dialect in dialects/.
///
/// Field sources:
///  - OpenAI API reference, "Create completion" / "Create chat completion": `model`, `prompt`,
///    `messages`, `max_tokens`, `stream`, `stream_options.include_usage`, `temperature`, `top_p`;
///    "List models": `data[].id`.
///  - vLLM OpenAI-compatible server, "Extra parameters": `ignore_eos`, `min_tokens`,
///    `stream_options.continuous_usage_stats`.
///  - vLLM "Extra parameters" / SamplingParams and SGLang "Sampling Parameters": `top_k`, `min_p`,
///    `repetition_penalty`; OpenAI's `presence_penalty`, `frequency_penalty`.
///  - SGLang OpenAI-compatible API, sampling parameters: `ignore_eos`, `min_tokens`.
///  - llama.cpp server README, `/completion` options: `ignore_eos`, `n_predict`, `top_k`, `min_p`,
///    `repeat_penalty` (also read by its OpenAI-compatible endpoints).

namespace llmbench::protocol::detail {

std::string openai_request_body(const ExtraFields& fields, const GenRequest& request) {
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
    if (fields.n_predict) {
      body["n_predict"] = request.max_tokens;
    }
  }
  body["stream"] = request.stream;
  if (request.stream) {
    const bool continuous = request.continuous_usage && fields.continuous_usage;
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
  if (request.presence_penalty) {
    body["presence_penalty"] = *request.presence_penalty;
  }
  if (request.frequency_penalty) {
    body["frequency_penalty"] = *request.frequency_penalty;
  }
  if (fields.sampling) {
    if (request.top_k) {
      body["top_k"] = *request.top_k;
    }
    if (request.min_p) {
      body["min_p"] = *request.min_p;
    }
    if (request.repetition_penalty) {
      body[fields.repeat_penalty_name ? "repeat_penalty" : "repetition_penalty"] =
          *request.repetition_penalty;
    }
  }
  if (request.ignore_eos && fields.ignore_eos) {
    body["ignore_eos"] = true;
  }
  if (request.min_tokens && fields.min_tokens) {
    body["min_tokens"] = *request.min_tokens;
  }
  if (!request.extra_body_json.empty()) {
    nlohmann::ordered_json extra = parse_extra_body(request.extra_body_json);
    for (auto& [key, value] : extra.items()) {
      body[key] = std::move(value);
    }
  }
  return dump_body(body);
}

std::vector<std::string_view> openai_unhonoured(const ExtraFields& fields,
                                                const GenRequest& request) {
  std::vector<std::string_view> flags;
  if (request.ignore_eos && !fields.ignore_eos) {
    flags.emplace_back("--ignore-eos");
  }
  if (request.min_tokens && !fields.min_tokens) {
    flags.emplace_back("--min-tokens");
  }
  if (request.continuous_usage && request.stream && !fields.continuous_usage) {
    flags.emplace_back("--continuous-usage");
  }
  if (!fields.sampling) {
    if (request.top_k) {
      flags.emplace_back("--top-k");
    }
    if (request.min_p) {
      flags.emplace_back("--min-p");
    }
    if (request.repetition_penalty) {
      flags.emplace_back("--repetition-penalty");
    }
  }
  return flags;
}

std::optional<std::string> openai_first_model(std::string_view body) {
  const nlohmann::json list = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!list.is_object()) {
    return std::nullopt;
  }
  const auto data = list.find("data");
  if (data == list.end() || !data->is_array() || data->empty() || !(*data)[0].is_object()) {
    return std::nullopt;
  }
  const auto id = (*data)[0].find("id");
  if (id == (*data)[0].end() || !id->is_string()) {
    return std::nullopt;
  }
  return id->get<std::string>();
}

std::unique_ptr<StreamDecoder> OpenAICompatible::make_decoder() const {
  return std::make_unique<Decoder>();
}

}  // namespace llmbench::protocol::detail
