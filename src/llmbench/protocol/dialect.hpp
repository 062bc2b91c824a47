#pragma once
/// @file
/// Server dialects (`--backend`): what one kind of server expects and sends. A dialect names its
/// default endpoint and model discovery, builds request bodies, says which requested fields it
/// cannot send, and makes the decoder of its streams and bodies. Each dialect lives in its own
/// file under dialects/; the registry (one constexpr table in dialect.cpp) maps names to them and
/// drives `parse_backend`, the "valid names" message and the CLI help. Adding a dialect is one
/// file under dialects/, one `Backend` enumerator and one row of that table.

#include "llmbench/protocol/delta.hpp"
#include "llmbench/protocol/request.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::protocol {

/// The dialects llmbench speaks (`--backend`); names and files in the registry (dialect.cpp).
enum class Backend {
  OpenAI,        ///< "openai": /v1/completions, OpenAI fields + `ignore_eos`
  OpenAIChat,    ///< "openai-chat": /v1/chat/completions, OpenAI fields + `ignore_eos`
  Vllm,          ///< "vllm": completions + `ignore_eos`, `min_tokens`, `continuous_usage_stats`
  Sglang,        ///< "sglang-oai": SGLang's completions + `ignore_eos`, `min_tokens`
  Llamacpp,      ///< "llamacpp": completions + `ignore_eos`, `n_predict`, `timings` in responses
  Deepseek,      ///< "deepseek": official API, https, chat, `reasoning_content`
  VllmChat,      ///< "vllm-chat": chat with the fields of "vllm"
  SglangChat,    ///< "sglang-oai-chat": chat with the fields of "sglang-oai"
  SglangNative,  ///< "sglang": SGLang's native /generate (`sampling_params`, cumulative `text`)
  Tgi,           ///< "tgi": Hugging Face TGI's /generate_stream (`inputs`, `parameters`)
  TrtLlm,        ///< "trt-llm": Triton TensorRT-LLM's v2/models/{model}/generate_stream
};

/// One server dialect. Implementations are stateless singletons (`dialect(Backend)`), safe to
/// use from any thread.
class Dialect {
 public:
  Dialect() = default;
  virtual ~Dialect() = default;
  Dialect(const Dialect&) = delete;
  Dialect& operator=(const Dialect&) = delete;
  Dialect(Dialect&&) = delete;
  Dialect& operator=(Dialect&&) = delete;

  /// The canonical `--backend` name ("openai-chat").
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// One line for the CLI help: endpoint and the fields beyond OpenAI's.
  [[nodiscard]] virtual std::string_view summary() const noexcept = 0;
  /// True when the default endpoint takes `messages` (chat), false when it takes `prompt`.
  [[nodiscard]] virtual bool chat() const noexcept = 0;
  /// The path requests go to when `--endpoint` is not given ("/v1/completions"), for streamed
  /// (`stream`) or whole-body requests (TGI's /generate_stream and /generate). It may hold
  /// `{model}`, which `expand_endpoint` replaces once the model is known (Triton's
  /// "/v2/models/{model}/generate_stream").
  [[nodiscard]] virtual std::string_view default_endpoint(bool stream) const noexcept = 0;
  /// The path that lists the served models (GET), "" when the server has none.
  [[nodiscard]] virtual std::string_view models_path() const noexcept = 0;
  /// The model to use when `--model` is not given, from the body of `models_path`;
  /// `std::nullopt` when the body names none. Never throws on input.
  [[nodiscard]] virtual std::optional<std::string> first_model(std::string_view body) const = 0;
  /// The JSON request body for `request`. Throws `Exception` naming `--extra-body` and the byte
  /// offset when `request.extra_body_json` is not a JSON object, and naming `--backend` when the
  /// request is one the server cannot take (token-id prompts to a text-only server).
  [[nodiscard]] virtual std::string request_body(const GenRequest& request) const = 0;
  /// The CLI flags set in `request` that this dialect's server does not accept, so that
  /// `request_body` leaves them out; empty when every requested field is sent.
  [[nodiscard]] virtual std::vector<std::string_view> unhonoured_flags(
      const GenRequest& request) const = 0;
  /// A new decoder for one response of this dialect (a decoder may keep state of its response:
  /// `StreamDecoder`).
  [[nodiscard]] virtual std::unique_ptr<StreamDecoder> make_decoder() const = 0;
};

/// The dialect of `backend`.
const Dialect& dialect(Backend backend) noexcept;

/// Parses a `--backend` name (canonical or alias, case-sensitive); throws `Exception` naming the
/// flag and the valid names otherwise.
Backend parse_backend(std::string_view name);
/// The canonical name of a backend ("openai-chat", ...).
std::string_view to_string(Backend backend) noexcept;
/// The valid `--backend` names, as in the error message: "openai, openai-chat, vllm, ...,
/// llamacpp (or llama.cpp), deepseek, sglang, tgi, trt-llm (or tensorrt-llm, triton)".
std::string backend_names();
/// A warning for a `--backend` name that means something else in SGLang's or vLLM's benchmark;
/// "" for every other name (today every name means what it means there).
std::string backend_name_note(std::string_view name);
/// One line per dialect, "name: summary", for the CLI help of `--backend`.
std::string backend_help();

/// True for backends whose default endpoint is chat completions (`Dialect::chat`).
bool is_chat_backend(Backend backend) noexcept;
/// The backend's default endpoint for streamed or whole-body requests
/// (`Dialect::default_endpoint`), perhaps with `{model}` in it (`expand_endpoint`).
std::string_view default_endpoint(Backend backend, bool stream = true) noexcept;
/// `endpoint` with every `{model}` replaced by `model`, percent-encoded as one URL path segment
/// (RFC 3986 §3.3: unreserved characters as they are, every other byte as %XX); unchanged when
/// it holds no `{model}`.
std::string expand_endpoint(std::string_view endpoint, std::string_view model);
/// Serializes the JSON request body for `backend` (`Dialect::request_body`). Invalid UTF-8 in
/// prompts is replaced by U+FFFD (a server would reject the request otherwise). Throws
/// `Exception` if `extra_body_json` is not a JSON object (naming `--extra-body` and the offset).
std::string build_request_body(Backend backend, const GenRequest& request);
/// The CLI flags set in `request` that `build_request_body` cannot send to `backend` because
/// its server does not accept the field ("--ignore-eos" for the DeepSeek API, "--min-tokens"
/// outside vLLM and SGLang, "--continuous-usage" outside vLLM), in that order; empty when every
/// requested field is sent. For the CLI to warn before a run (`Dialect::unhonoured_flags`).
std::vector<std::string_view> unhonoured_flags(Backend backend, const GenRequest& request);

}  // namespace llmbench::protocol
