/// @file
/// The "trt-llm" dialect (aliases "tensorrt-llm", "triton"): Triton Inference Server's generate
/// extension (`POST v2/models/{model}/generate_stream` and `.../generate`; Triton docs,
/// protocol/extension_generate.md) in front of tensorrtllm_backend's `ensemble` model (its
/// inputs in all_models/inflight_batcher_llm/ensemble/config.pbtxt), as vLLM's `bench serve
/// --backend tensorrt-llm` and GenAI-Perf send it.
///
/// Request: the JSON keys are the ensemble's input tensors: `text_input`, `max_tokens`,
/// `bad_words` and `stop_words` (empty strings, as GenAI-Perf sends), `stream`, `temperature`,
/// `top_p`, `top_k` (left out when 0 or less: no cut, and the tensor is unsigned),
/// `repetition_penalty`, `presence_penalty`, `frequency_penalty`, `min_length`, and
/// `exclude_input_in_output: true` so that no response echoes the prompt (where the model has no
/// such input, Triton takes the key as a request parameter). `--min-tokens N` is `min_length`;
/// `--ignore-eos` is `min_length` = `max_tokens` (TensorRT-LLM has no ignore-EOS switch, and a
/// minimum length of the whole output keeps EOS from ending it early, as GenAI-Perf's
/// deterministic output length does). `--min-p` is unhonoured. Text prompts only.
///
/// Stream: SSE `data: {"model_name", "model_version", "sequence_end", "sequence_id",
/// "sequence_start", "text_output"}` per decoding step, `text_output` being that step's new text;
/// Triton sends no `[DONE]` and no finish reason, so a body that ends cleanly completes the
/// stream (`complete_at_body_end`). A failure is `data: {"error": "..."}`. No token counts: output
/// tokens come from the local tokenizer (`--tokenizer`), else one per event.
///
/// Model: the model is part of the path (`{model}` in the default endpoint, filled in once the
/// model is known). Triton lists models only through a POST (`v2/repository/index`), so model
/// discovery GETs the server metadata `GET /v2` (its answer is recorded); when `--model` is not
/// given the model is tensorrtllm_backend's `ensemble`.

#include "llmbench/core/text.hpp"
#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/native_json.hpp"
#include "llmbench/protocol/openai.hpp"

#include <memory>
#include <string>

namespace llmbench::protocol::detail {
namespace {

class TrtLlmDecoder final : public NativeDecoder {
 public:
  [[nodiscard]] bool complete_at_body_end() const noexcept override { return true; }

 private:
  Result<Delta> decode_payload(std::string_view data, std::string_view source,
                               bool /*stream*/) override {
    auto root = payload_.parse(data, source);
    if (!root) {
      return root.error();
    }
    Delta delta;
    FieldReader read;
    for (const auto field : *root) {
      const std::string_view key = field.key;
      if (key == "error") {
        if (!field.value.is_null()) {
          set_error(field.value, data, delta);
        }
      } else if (key == "text_output") {
        std::string_view text;
        if (read.text(field.value, "text_output", text)) {
          delta.answer.assign(text);
          delta.has_choice = true;
        }
      }
    }
    if (!delta.is_error && !read.error.empty()) {
      return Error{std::move(read.error), std::string(source), -1};
    }
    return delta;
  }
};

class TrtLlm final : public Dialect {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return "trt-llm"; }
  [[nodiscard]] std::string_view summary() const noexcept override {
    return "Triton TensorRT-LLM's /v2/models/{model}/generate_stream (model default ensemble); "
           "text_input, max_tokens, min_length (--min-tokens, --ignore-eos), top_k; output "
           "tokens from --tokenizer";
  }
  [[nodiscard]] bool chat() const noexcept override { return false; }
  [[nodiscard]] std::string_view default_endpoint(bool stream) const noexcept override {
    return stream ? "/v2/models/{model}/generate_stream" : "/v2/models/{model}/generate";
  }
  [[nodiscard]] std::string_view models_path() const noexcept override { return "/v2"; }
  [[nodiscard]] std::optional<std::string> first_model(std::string_view body) const override {
    // A Triton server metadata object ({"name": "triton", "version": ...}) names no model.
    if (string_member(body, "name")) {
      return std::string("ensemble");
    }
    return std::nullopt;
  }
  [[nodiscard]] std::string request_body(const GenRequest& request) const override {
    if (request.prompt.empty() && !request.prompt_token_ids.empty()) {
      throw Exception(
          Error{"trt-llm takes text prompts only, not token ids (use "
                "--random-prompt-kind text)",
                "--backend", -1});
    }
    nlohmann::ordered_json body;
    body["text_input"] = request.prompt;
    if (request.max_tokens >= 0) {
      body["max_tokens"] = request.max_tokens;
    }
    body["bad_words"] = "";
    body["stop_words"] = "";
    body["stream"] = request.stream;
    body["exclude_input_in_output"] = true;
    if (request.temperature) {
      body["temperature"] = *request.temperature;
    }
    if (request.top_p) {
      body["top_p"] = *request.top_p;
    }
    if (request.top_k && *request.top_k > 0) {
      body["top_k"] = *request.top_k;
    }
    if (request.repetition_penalty) {
      body["repetition_penalty"] = *request.repetition_penalty;
    }
    if (request.presence_penalty) {
      body["presence_penalty"] = *request.presence_penalty;
    }
    if (request.frequency_penalty) {
      body["frequency_penalty"] = *request.frequency_penalty;
    }
    if (request.ignore_eos && request.max_tokens >= 0) {
      body["min_length"] = request.max_tokens;
    } else if (request.min_tokens) {
      body["min_length"] = *request.min_tokens;
    }
    merge_extra_body(body, request.extra_body_json);
    return dump_body(body);
  }
  [[nodiscard]] std::vector<std::string_view> unhonoured_flags(
      const GenRequest& request) const override {
    std::vector<std::string_view> flags;
    if (request.continuous_usage && request.stream) {
      flags.emplace_back("--continuous-usage");
    }
    if (request.min_p) {
      flags.emplace_back("--min-p");
    }
    return flags;
  }
  [[nodiscard]] std::unique_ptr<StreamDecoder> make_decoder() const override {
    return std::make_unique<TrtLlmDecoder>();
  }
};

}  // namespace

const Dialect& trtllm_dialect() noexcept {
  static const TrtLlm kDialect;
  return kDialect;
}

}  // namespace llmbench::protocol::detail
