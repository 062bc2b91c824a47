#pragma once
/// @file
/// Parsing of the request bodies the simulated server accepts: `POST /v1/completions` and
/// `POST /v1/chat/completions` (OpenAI API reference, "Create completion", "Create chat
/// completion"), plus the vLLM/llama.cpp extensions that matter for length control
/// (`stream_options.continuous_usage_stats`, `n_predict`).

#include "llmbench/core/error.hpp"
#include "llmbench/tokenizer/chat_template.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::server {

/// What the simulator needs from a generation request.
struct GenerationParams {
  bool chat = false;               ///< came to /v1/chat/completions
  std::string model;               ///< `model` as sent ("" when absent)
  bool stream = false;             ///< `stream`
  bool include_usage = false;      ///< `stream_options.include_usage`
  bool continuous_usage = false;   ///< `stream_options.continuous_usage_stats` (vLLM)
  std::int64_t output_tokens = 0;  ///< N: `max_tokens`, else `max_completion_tokens` (chat),
                                   ///< else `n_predict` ≥ 0 (llama.cpp), else the server default
  /// Prompt tokens: exact with a tokenizer (`parse_generation_request`), else llmbench's text
  /// estimate of the prompt text (`estimate_text_tokens`, core/text.hpp; at least 1) plus one
  /// per token id, the lengths `llmbench simulate` gives the same prompt.
  std::int64_t prompt_tokens = 1;
  /// Only with `keep_prompt`: the prompt strings (completions) or message contents (chat)
  /// concatenated in order, and the token ids of a completions prompt given as ids.
  std::string prompt_text;
  std::vector<std::uint32_t> prompt_ids;
};

/// Parses a request body. Accepted shapes: completions `prompt` = string | [string] | [int] |
/// [[int]] (token ids count one each); chat `messages` = non-empty array of objects whose
/// `content` is a string, null, or an array of parts with `text`. Integers may be JSON integers
/// or integral floats. Errors (never throws): `Error{message, source = offending parameter name
/// or "" for syntax, offset = -1}` for invalid JSON, a non-object body, a missing or mistyped
/// field, or a negative length; a field that is not in the OpenAI, vLLM or llama.cpp request
/// schema, or a field the simulator does not implement set to a value that would change the
/// answer (`n` > 1, `logprobs`, `stop`, `echo`, structured output, ...; see `kFieldRules` in
/// openai_request.cpp). Sampling knobs (temperature, top_p, seed, ...) are accepted: they pick
/// among tokens, while the simulator's text is fixed.
/// With `keep_prompt` the prompt itself is kept in `prompt_text` / `prompt_ids` (the engine
/// timing mode hashes it for prefix caching); otherwise those stay empty.
/// With `tokenizer` the prompt is counted exactly, as vLLM counts `usage.prompt_tokens`: a
/// completions text prompt is encoded with the tokenizer's special tokens (the BOS of
/// DeepSeek-V3), token ids count one each and get none added; chat counts the message contents
/// without special tokens, or with `chat_template` the whole prompt rendered from `messages`,
/// `tools` and `chat_template_kwargs` (vLLM's request fields) with a generation prompt, counted
/// without special tokens as vLLM does (a template error is an error naming "messages"; `keep`
/// then holds the rendered prompt). Text that is not valid UTF-8 is then an error naming
/// `prompt` / `messages` and the byte offset.
Result<GenerationParams> parse_generation_request(
    std::string_view body, bool chat, std::int64_t default_output_len, bool keep_prompt = false,
    const tokenizer::Tokenizer* tokenizer = nullptr,
    const tokenizer::ChatTemplate* chat_template = nullptr);

/// vLLM's context-length check: an error (source "max_tokens", or "prompt"/"messages" when the
/// prompt alone is too long) when prompt_tokens + output_tokens > `max_model_len`, worded as
/// vLLM words it ("This model's maximum context length is N tokens. However, you requested M
/// tokens (P in the messages, K in the completion)..."); nullopt when it fits. Overflow-safe for
/// any lengths >= 0 (a `max_tokens` near 2^63 is refused, not wrapped).
std::optional<Error> check_context_length(const GenerationParams& params,
                                          std::int64_t max_model_len);

}  // namespace llmbench::server
