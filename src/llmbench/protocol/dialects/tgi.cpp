/// @file
/// The "tgi" dialect: Hugging Face Text Generation Inference, `POST /generate_stream` (streams)
/// and `POST /generate` (whole bodies), as in TGI's OpenAPI document (router/src/lib.rs:
/// `GenerateRequest`, `GenerateParameters`, `StreamResponse`, `StreamDetails`, `Details`,
/// `ErrorResponse`) and vLLM's `bench serve --backend tgi`.
///
/// Request: `{"inputs": prompt, "parameters": {...}, "stream": bool}` with `max_new_tokens`,
/// `temperature`, `top_p`, `top_k`, `repetition_penalty`, `frequency_penalty`, `details: true`
/// (for the finish reason and output count) and `decoder_input_details: false` (TGI rejects it
/// on streams, and on whole bodies it would list every prompt token). TGI validates strictly, so
/// values it would reject are sent as their meaning: temperature 0 as `do_sample: false` (greedy)
/// without `temperature`, top_p of 1 or more and top_k of 0 or less (no cut) left out. TGI has
/// no `ignore_eos`, `min_tokens`, `min_p` or `presence_penalty`: those flags are reported
/// unhonoured (`--continuous-usage` is not: `index` counts the tokens on every event). It takes
/// text only (no token-id prompts).
///
/// Stream: SSE `data:{"index": n, "token": {"id", "text", "logprob", "special"},
/// "generated_text": null, "details": null}` per token (`index` counts the tokens so far, 1
/// first); the last event carries `generated_text` and `details` {`finish_reason` "length" |
/// "eos_token" | "stop_sequence", `generated_tokens`, `input_length` (newer TGI)}. No `[DONE]`.
/// A special token's text (the EOS token) is not output text, but it is a generated token.
/// A failure is `data:{"error": "...", "error_type": "..."}`.
///
/// Prompt tokens: TGI reports them only as `details.input_length` (newer versions) or, with
/// `decoder_input_details`, as the length of `details.prefill`; without either the record keeps
/// the workload's own count (`input_tokens_local`).
///
/// Model discovery: `GET /info`, `model_id`.

#include "llmbench/core/text.hpp"
#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/native_json.hpp"
#include "llmbench/protocol/openai.hpp"

#include <fmt/core.h>

#include <memory>
#include <string>

namespace llmbench::protocol::detail {
namespace {

namespace dom = simdjson::dom;

class TgiDecoder final : public NativeDecoder {
 private:
  Result<Delta> decode_payload(std::string_view data, std::string_view source,
                               bool stream) override {
    auto root = payload_.parse(data, source);
    if (!root) {
      return root.error();
    }
    Delta delta;
    FieldReader read;
    Usage usage;
    bool has_usage = false;
    std::string_view error_type;
    for (const auto field : *root) {
      const std::string_view key = field.key;
      if (key == "error") {
        if (!field.value.is_null()) {
          set_error(field.value, data, delta);
        }
      } else if (key == "error_type") {
        read.text(field.value, "error_type", error_type);
      } else if (key == "index" && stream) {
        usage.completion_tokens = read.count(field.value, "index");
        has_usage = usage.completion_tokens >= 0;
      } else if (key == "token" && stream) {
        dom::object token;
        if (read.object(field.value, "token", token)) {
          decode_token(token, read, delta);
        }
      } else if (key == "generated_text" && !stream) {
        std::string_view text;
        if (read.text(field.value, "generated_text", text)) {
          delta.answer.assign(text);
          delta.has_choice = true;
        }
      } else if (key == "details") {
        dom::object details;
        if (read.object(field.value, "details", details)) {
          decode_details(details, read, delta, usage);
          has_usage = true;
        }
      }
    }
    if (delta.is_error) {
      if (!error_type.empty()) {
        delta.error_message += fmt::format(" (error_type {})", error_type);
      }
      return delta;
    }
    if (!read.error.empty()) {
      return Error{std::move(read.error), std::string(source), -1};
    }
    if (has_usage) {
      delta.usage = usage;
    }
    return delta;
  }

  static void decode_token(const dom::object& token, FieldReader& read, Delta& delta) {
    delta.has_choice = true;  // a generated token, whether or not it has text
    std::string_view text;
    bool special = false;
    for (const auto field : token) {
      const std::string_view key = field.key;
      if (key == "text") {
        read.text(field.value, "token.text", text);
      } else if (key == "special") {
        read.boolean(field.value, "token.special", special);
      }
    }
    if (!special) {
      delta.answer.assign(text);
    }
  }

  static void decode_details(const dom::object& details, FieldReader& read, Delta& delta,
                             Usage& usage) {
    for (const auto field : details) {
      const std::string_view key = field.key;
      std::string_view text;
      if (key == "finish_reason") {
        if (read.text(field.value, "details.finish_reason", text)) {
          delta.finish_reason.assign(text);
        }
      } else if (key == "generated_tokens") {
        usage.completion_tokens = read.count(field.value, "details.generated_tokens");
      } else if (key == "input_length" || key == "prompt_tokens") {
        usage.prompt_tokens = read.count(field.value, "details.input_length");
      } else if (key == "prefill") {
        dom::array prefill;
        if (field.value.get_array().get(prefill) == simdjson::SUCCESS && prefill.size() > 0 &&
            usage.prompt_tokens < 0) {
          usage.prompt_tokens = static_cast<std::int64_t>(prefill.size());
        }
      }
    }
  }
};

class Tgi final : public Dialect {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return "tgi"; }
  [[nodiscard]] std::string_view summary() const noexcept override {
    return "Hugging Face TGI's /generate_stream (/generate without streaming); parameters "
           "max_new_tokens, temperature, top_p, top_k, repetition_penalty; no ignore_eos or "
           "min_tokens";
  }
  [[nodiscard]] bool chat() const noexcept override { return false; }
  [[nodiscard]] std::string_view default_endpoint(bool stream) const noexcept override {
    return stream ? "/generate_stream" : "/generate";
  }
  [[nodiscard]] std::string_view models_path() const noexcept override { return "/info"; }
  [[nodiscard]] std::optional<std::string> first_model(std::string_view body) const override {
    return string_member(body, "model_id");
  }
  [[nodiscard]] std::string request_body(const GenRequest& request) const override {
    if (request.prompt.empty() && !request.prompt_token_ids.empty()) {
      throw Exception(
          Error{"tgi takes text prompts only, not token ids (use "
                "--random-prompt-kind text)",
                "--backend", -1});
    }
    nlohmann::ordered_json body;
    body["inputs"] = request.prompt;
    nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
    if (request.max_tokens >= 0) {
      parameters["max_new_tokens"] = request.max_tokens;
    }
    if (request.temperature) {
      if (*request.temperature > 0) {
        parameters["temperature"] = *request.temperature;
      } else {
        parameters["do_sample"] = false;  // TGI requires temperature > 0; 0 means greedy
      }
    }
    if (request.top_p && *request.top_p < 1) {
      parameters["top_p"] = *request.top_p;  // TGI requires 0 < top_p < 1
    }
    if (request.top_k && *request.top_k > 0) {
      parameters["top_k"] = *request.top_k;  // TGI requires top_k > 0
    }
    if (request.repetition_penalty) {
      parameters["repetition_penalty"] = *request.repetition_penalty;
    }
    if (request.frequency_penalty) {
      parameters["frequency_penalty"] = *request.frequency_penalty;
    }
    parameters["details"] = true;
    parameters["decoder_input_details"] = false;
    body["parameters"] = std::move(parameters);
    body["stream"] = request.stream;
    merge_extra_body(body, request.extra_body_json);
    return dump_body(body);
  }
  [[nodiscard]] std::vector<std::string_view> unhonoured_flags(
      const GenRequest& request) const override {
    std::vector<std::string_view> flags;
    if (request.ignore_eos) {
      flags.emplace_back("--ignore-eos");
    }
    if (request.min_tokens) {
      flags.emplace_back("--min-tokens");
    }
    if (request.min_p) {
      flags.emplace_back("--min-p");
    }
    if (request.presence_penalty) {
      flags.emplace_back("--presence-penalty");
    }
    return flags;
  }
  [[nodiscard]] std::unique_ptr<StreamDecoder> make_decoder() const override {
    return std::make_unique<TgiDecoder>();
  }
};

}  // namespace

const Dialect& tgi_dialect() noexcept {
  static const Tgi kDialect;
  return kDialect;
}

}  // namespace llmbench::protocol::detail
