/// @file
/// The "sglang" dialect: SGLang's native `POST /generate` (SGLang docs, "Sampling Parameters"
/// and "Native APIs"; `GenerateReqInput` in sglang/srt/managers/io_struct.py), the API SGLang's
/// own `bench_serving --backend sglang` measures.
///
/// Request: `{"text": prompt}` or `{"input_ids": [...]}` for token-id prompts, `sampling_params`
/// {`max_new_tokens`, `temperature`, `top_p`, `top_k`, `min_p`, `presence_penalty`,
/// `frequency_penalty`, `repetition_penalty`, `ignore_eos`, `min_new_tokens`} and `stream`.
/// The body names no model (`/generate` serves the one loaded model).
///
/// Stream: SSE `data: {"text": ..., "meta_info": {...}}` events, then `data: [DONE]`. By default
/// `text` is the whole text so far (server flag `--incremental-streaming-output` makes it the
/// new part only), so the decoder keeps the text already seen and reports only what each event
/// adds. `meta_info` carries `prompt_tokens`, `completion_tokens` (so far, on every event),
/// `cached_tokens` and `finish_reason`: null until the end, then `{"type": "length" | "stop" |
/// "abort", ...}`; "abort" (with `message`) is a failed request. An `{"error": {"message"}}`
/// event is an error in the stream. Non-stream: one object of the same shape.
///
/// Model discovery: `GET /v1/models` (`data[0].id`, the served model name), which every SGLang
/// server with its OpenAI API answers, so that runs of "sglang" and "sglang-oai" against one
/// server record the same model name. SGLang's `/get_model_info` gives the model path instead.

#include "llmbench/core/text.hpp"
#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/native_json.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"
#include "llmbench/protocol/openai.hpp"

#include <memory>
#include <string>

namespace llmbench::protocol::detail {
namespace {

namespace dom = simdjson::dom;

class SglangDecoder final : public NativeDecoder {
 private:
  Result<Delta> decode_payload(std::string_view data, std::string_view source,
                               bool stream) override {
    auto root = payload_.parse(data, source);
    if (!root) {
      return root.error();
    }
    Delta delta;
    FieldReader read;
    std::string_view text;
    bool has_text = false;
    for (const auto field : *root) {
      const std::string_view key = field.key;
      if (key == "error") {
        if (!field.value.is_null()) {
          set_error(field.value, data, delta);
        }
      } else if (key == "text") {
        has_text = read.text(field.value, "text", text);
      } else if (key == "meta_info") {
        dom::object meta;
        if (read.object(field.value, "meta_info", meta)) {
          decode_meta(meta, read, delta);
        }
      }
    }
    if (delta.is_error) {
      return delta;  // an error explains itself, whatever else the event holds
    }
    if (!read.error.empty()) {
      return Error{std::move(read.error), std::string(source), -1};
    }
    if (has_text) {
      delta.has_choice = true;  // one generation step, even when it added no text
      delta.answer = stream ? advance(text) : std::string(text);
    }
    return delta;
  }

  static void decode_meta(const dom::object& meta, FieldReader& read, Delta& delta) {
    Usage usage;
    for (const auto field : meta) {
      const std::string_view key = field.key;
      if (key == "prompt_tokens") {
        usage.prompt_tokens = read.count(field.value, "meta_info.prompt_tokens");
      } else if (key == "completion_tokens") {
        usage.completion_tokens = read.count(field.value, "meta_info.completion_tokens");
      } else if (key == "cached_tokens") {
        usage.cached_tokens = read.count(field.value, "meta_info.cached_tokens");
      } else if (key == "finish_reason") {
        decode_finish(field.value, read, delta);
      }
    }
    delta.usage = usage;
  }

  // `{"type": "length", "length": 16}`, `{"type": "stop", "matched": ...}` or `{"type":
  // "abort", "message": ...}`; a plain string is taken as the type.
  static void decode_finish(const dom::element& value, FieldReader& read, Delta& delta) {
    std::string_view type;
    dom::object finish;
    if (value.get_string().get(type) == simdjson::SUCCESS) {
      delta.finish_reason.assign(type);
      return;
    }
    if (!read.object(value, "meta_info.finish_reason", finish)) {
      return;
    }
    dom::element type_value;
    if (finish.at_key("type").get(type_value) == simdjson::SUCCESS &&
        read.text(type_value, "meta_info.finish_reason.type", type)) {
      delta.finish_reason.assign(type);
    }
    if (type == "abort") {
      delta.is_error = true;
      std::string_view message;
      delta.error_message =
          finish.at_key("message").get_string().get(message) == simdjson::SUCCESS
              ? std::string(message)
              : std::string("the server aborted the request (finish_reason abort)");
    }
  }

  // The part of the whole text `text` that this event adds. A text that does not extend the one
  // seen is either the end trimmed (a stop string removed at the end: it adds nothing) or the
  // sign of a server that streams only new text (`--incremental-streaming-output`), after
  // which every event's text is taken as new.
  std::string advance(std::string_view text) {
    if (incremental_) {
      return std::string(text);
    }
    if (text.starts_with(seen_)) {
      std::string added(text.substr(seen_.size()));
      seen_.assign(text);
      return added;
    }
    if (std::string_view(seen_).starts_with(text)) {
      seen_.assign(text);
      return {};
    }
    incremental_ = true;
    return std::string(text);
  }

  JsonPayload payload_;
  std::string seen_;  // the whole text of this response so far
  bool incremental_ = false;
};

class SglangNative final : public Dialect {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return "sglang"; }
  [[nodiscard]] std::string_view summary() const noexcept override {
    return "SGLang's native /generate; sampling_params with ignore_eos, min_new_tokens, top_k, "
           "min_p, repetition_penalty; usage from meta_info (as SGLang's bench_serving "
           "--backend sglang)";
  }
  [[nodiscard]] bool chat() const noexcept override { return false; }
  [[nodiscard]] std::string_view default_endpoint(bool /*stream*/) const noexcept override {
    return "/generate";
  }
  [[nodiscard]] std::string_view models_path() const noexcept override { return "/v1/models"; }
  [[nodiscard]] std::optional<std::string> first_model(std::string_view body) const override {
    return openai_first_model(body);
  }
  [[nodiscard]] std::string request_body(const GenRequest& request) const override {
    nlohmann::ordered_json body;
    if (!request.prompt_token_ids.empty()) {
      body["input_ids"] = request.prompt_token_ids;
    } else {
      body["text"] = request.prompt;
    }
    nlohmann::ordered_json sampling = nlohmann::ordered_json::object();
    if (request.max_tokens >= 0) {
      sampling["max_new_tokens"] = request.max_tokens;
    }
    if (request.temperature) {
      sampling["temperature"] = *request.temperature;
    }
    if (request.top_p) {
      sampling["top_p"] = *request.top_p;
    }
    if (request.top_k) {
      sampling["top_k"] = *request.top_k;
    }
    if (request.min_p) {
      sampling["min_p"] = *request.min_p;
    }
    if (request.presence_penalty) {
      sampling["presence_penalty"] = *request.presence_penalty;
    }
    if (request.frequency_penalty) {
      sampling["frequency_penalty"] = *request.frequency_penalty;
    }
    if (request.repetition_penalty) {
      sampling["repetition_penalty"] = *request.repetition_penalty;
    }
    if (request.ignore_eos) {
      sampling["ignore_eos"] = true;
    }
    if (request.min_tokens) {
      sampling["min_new_tokens"] = *request.min_tokens;
    }
    body["sampling_params"] = std::move(sampling);
    body["stream"] = request.stream;
    merge_extra_body(body, request.extra_body_json);
    return dump_body(body);
  }
  [[nodiscard]] std::vector<std::string_view> unhonoured_flags(
      const GenRequest& /*request*/) const override {
    // Every flag has its field; usage comes on every event anyway (--continuous-usage).
    return {};
  }
  [[nodiscard]] std::unique_ptr<StreamDecoder> make_decoder() const override {
    return std::make_unique<SglangDecoder>();
  }
};

}  // namespace

const Dialect& sglang_native_dialect() noexcept {
  static const SglangNative kDialect;
  return kDialect;
}

}  // namespace llmbench::protocol::detail
