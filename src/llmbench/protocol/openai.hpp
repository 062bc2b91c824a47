#pragma once
/// @file
/// OpenAI-compatible request builders and response/stream decoders for `/v1/completions` and
/// `/v1/chat/completions` (OpenAI API reference, "Create completion" / "Create chat completion",
/// streaming objects `text_completion` and `chat.completion.chunk`), with the dialects of vLLM,
/// SGLang, llama.cpp server and the DeepSeek API.

#include "llmbench/core/chat.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/protocol/redact.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::protocol {

/// Request shape (`--backend`).
enum class Backend {
  OpenAI,      ///< "openai": /v1/completions, plain OpenAI fields
  OpenAIChat,  ///< "openai-chat": /v1/chat/completions
  Vllm,        ///< "vllm": completions + `ignore_eos`, `min_tokens`, `continuous_usage_stats`
  Sglang,      ///< "sglang": completions + `ignore_eos`, `min_tokens`
  Llamacpp,    ///< "llamacpp": completions + `ignore_eos`, `n_predict`, `timings` in responses
  Deepseek,    ///< "deepseek": official API, https, chat, `reasoning_content`
};

/// Parses a `--backend` name; throws `Exception` naming the flag and the valid names otherwise.
Backend parse_backend(std::string_view name);
/// The canonical name of a backend ("openai-chat", ...).
std::string_view to_string(Backend backend) noexcept;
/// True for backends whose default endpoint is chat completions.
bool is_chat_backend(Backend backend) noexcept;
/// "/v1/chat/completions" or "/v1/completions" for the backend.
std::string_view default_endpoint(Backend backend) noexcept;

/// What to ask the server for, independent of backend.
struct GenRequest {
  std::string model;
  bool chat = false;      ///< send `messages` to a chat endpoint, else `prompt`
  std::string prompt;     ///< completions prompt (chat: used as one user message if
                          ///< `messages` is empty)
  ChatMessages messages;  ///< chat history
  /// Completions only: when non-empty, sent as `"prompt": [id, ...]` instead of `prompt` (OpenAI
  /// "Create completion": prompt may be an array of tokens; vLLM and SGLang use the ids as given,
  /// adding no special tokens).
  std::vector<std::uint32_t> prompt_token_ids;
  std::int64_t max_tokens = -1;  ///< output length; -1 = leave to the server
  bool stream = true;
  bool include_usage = true;               ///< `stream_options.include_usage`
  bool continuous_usage = false;           ///< vLLM `stream_options.continuous_usage_stats`
  bool ignore_eos = false;                 ///< sent only to backends that support it
  std::optional<std::int64_t> min_tokens;  ///< sent only to backends that support it
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::string extra_body_json;  ///< a JSON object whose members are merged last (may override)
};

/// Serializes the JSON request body for `backend`. Invalid UTF-8 in prompts is replaced by
/// U+FFFD (a server would reject the request otherwise). Throws `Exception` if `extra_body_json` is
/// not a JSON object (naming `--extra-body` and the byte offset).
std::string build_request_body(Backend backend, const GenRequest& request);

/// A count the server sent as a number that is no token count (negative, fractional or beyond
/// int64). Larger than every plausible count, so the client's plausibility check rejects it.
inline constexpr std::int64_t kInvalidCount = std::numeric_limits<std::int64_t>::max();

/// The CLI flags set in `request` that `build_request_body` cannot send to `backend` because
/// its server does not accept the field ("--ignore-eos" for the DeepSeek API, "--min-tokens"
/// outside vLLM and SGLang, "--continuous-usage" outside vLLM), in that order; empty when every
/// requested field is sent. For the CLI to warn before a run.
std::vector<std::string_view> unhonoured_flags(Backend backend, const GenRequest& request);

/// Token usage as reported by the server (`usage` object). -1 = field absent (or null);
/// `kInvalidCount` = a number that is no count. Values are as sent: bounding them against what
/// the stream carried is the client's job (`loadgen::RecordingHandler`).
struct Usage {
  std::int64_t prompt_tokens = -1;
  std::int64_t completion_tokens = -1;
  std::int64_t reasoning_tokens = -1;  ///< `completion_tokens_details.reasoning_tokens`
  std::int64_t cached_tokens = -1;     ///< `prompt_tokens_details.cached_tokens`
};

/// What one streamed `data:` payload (or a whole non-streamed body) carried.
struct Delta {
  bool done = false;                ///< the payload was `[DONE]`
  bool has_choice = false;          ///< `choices` was non-empty
  bool role_only = false;           ///< a chat chunk with `delta.role` and no content of any kind
  std::string answer{};             ///< `choices[0].text` or `delta.content` / `message.content`
  std::string reasoning{};          ///< `reasoning_content` or `reasoning`
  std::size_t tool_call_bytes = 0;  ///< bytes of tool-call arguments/names in this chunk
  bool tool_call = false;           ///< `tool_calls` present with content
  std::string finish_reason{};      ///< non-null `finish_reason`, else empty
  std::optional<Usage> usage{};     ///< `usage` when present and not null
  bool is_error = false;            ///< an `{"error": ...}` object (inside a 200 stream or a body)
  std::string error_message{};      ///< `error.message` (or the raw text if unstructured)
  /// llama.cpp `timings` object when present (ms): prompt_ms, predicted_ms; counts prompt_n,
  /// predicted_n. -1 = absent.
  double timings_prompt_ms = -1;
  double timings_predicted_ms = -1;
  std::int64_t timings_prompt_n = -1;
  std::int64_t timings_predicted_n = -1;

  /// True when the chunk carries generated output of any channel (non-empty text or tool call).
  [[nodiscard]] bool has_output() const noexcept {
    return !answer.empty() || !reasoning.empty() || tool_call;
  }
};

/// Decodes JSON payloads with a reusable simdjson parser. Not thread-safe; one per worker thread.
class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  /// Decodes one SSE `data` payload of a completions or chat stream (`[DONE]` included). Returns
  /// an `Error` with the byte offset when the payload is not JSON or not an object, and an
  /// `Error` naming the field ("'choices[0].text' must be a string or null, got a number") when
  /// a known field has the wrong JSON type (`null` always reads as absent).
  Result<Delta> decode_event(std::string_view data);
  /// Decodes a non-streamed response body (`choices[0].text` or `choices[0].message`), with the
  /// same errors as `decode_event`.
  Result<Delta> decode_body(std::string_view body);
  /// Decodes one dispatched SSE event of type `type` (the `event:` field, "message" when absent):
  /// type "error" is an error delta whose message comes from `data` (an error object or text);
  /// any other type is decoded as `decode_event(data)`.
  Result<Delta> decode_sse(std::string_view type, std::string_view data);
  /// Decodes a non-standard SSE field line (`sse::UnknownField`): `error: {json}` (llama.cpp's
  /// server) is an error delta with the object's message; other names give `std::nullopt`.
  std::optional<Delta> decode_field(std::string_view name, std::string_view value);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Best-effort message from a non-2xx response body: `error.message` of an OpenAI error object,
/// `message`/`detail` of other JSON shapes, else the body itself; secrets removed by `redactor`
/// first, then cut to 512 bytes (`server_text`).
std::string error_message_from_body(std::string_view body, const Redactor& redactor = Redactor{});

/// The message of an in-stream error payload (`event: error` data, llama.cpp's `error:` line),
/// found as by `error_message_from_body` but neither redacted nor cut (the caller stores it
/// through `server_text`), or "error event in stream" when that is empty.
std::string stream_error_message(std::string_view payload);

}  // namespace llmbench::protocol
