#pragma once
/// @file
/// Text and JSON the simulated server produces: its fixed token vocabulary and the OpenAI
/// response objects in vLLM's shape (OpenAI API reference "The completion object",
/// "The chat completion chunk object"; vLLM `protocol.py` `CompletionStreamResponse`,
/// `ChatCompletionStreamResponse`). Pure functions on strings, hot-path friendly: they append to
/// a caller-owned buffer and never allocate beyond its growth. Thread-safe.

#include "llmbench/core/json_string.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace llmbench::server {

/// Number of words in the vocabulary.
inline constexpr std::int64_t kVocabSize = 16;

/// The text of output token `index` (0-based position in the output): one word of a fixed
/// 16-word vocabulary, cycled in order. Words contain no JSON-special characters, and each is
/// exactly one token under the DeepSeek-V3/R1, Qwen3 and Llama-3 tokenizers, also inside the
/// running text (a leading space or punctuation starts a new pre-token), so a client counting
/// output tokens locally gets `usage.completion_tokens` (tests/unit/server/vocab_token_test.cpp).
/// Requires index ≥ 0.
std::string_view token_text(std::int64_t index) noexcept;
/// Appends the text of tokens [first, first + count) to `out`.
void append_tokens(std::string& out, std::int64_t first, std::int64_t count);

/// JSON string literals are written by `llmbench::append_json_string` (core/json_string.hpp).
using llmbench::append_json_string;

/// Per-request constants of the streamed objects.
struct StreamContext {
  bool chat = false;              ///< chat.completion.chunk vs text_completion
  bool continuous_usage = false;  ///< every chunk carries running usage (vLLM extension)
  std::int64_t prompt_tokens = 0;
  std::string prefix;  ///< `{"id":..,"object":..,"created":..,"model":..,"choices":[`
  /// `data: ` + prefix + `{"index":0,"text":"` (chat: `{"index":0,"delta":{"content":"`):
  /// everything of a content event before its text, formatted once per request.
  std::string content_head;
  /// Everything of a non-final content event after its text (`finish_reason` null) when usage is
  /// not continuous; empty with continuous usage (the tail then varies per event).
  std::string content_tail;
};

/// Builds the context: `id` e.g. "cmpl-7", `created` in Unix seconds, `model` unescaped.
StreamContext make_stream_context(bool chat, std::string_view id, std::int64_t created,
                                  std::string_view model, std::int64_t prompt_tokens,
                                  bool continuous_usage);

/// Appends one SSE event `data: {...}\n\n` carrying `text` (completions: `choices[0].text`,
/// chat: `choices[0].delta.content`); `finish_reason` is "length" if `last`, else null. With
/// continuous usage, `usage` holds `completion_tokens` (running total), else `"usage":null`.
void append_content_event(std::string& out, const StreamContext& ctx, std::string_view text,
                          bool last, std::int64_t completion_tokens);
/// Appends the chat role event: `delta: {"role":"assistant","content":""}`, finish_reason null.
void append_role_event(std::string& out, const StreamContext& ctx);
/// Appends the final usage event: `"choices":[]` and `usage` with the totals
/// (`stream_options.include_usage`). With `cached_tokens` >= 0 (the engine timing's prefix-cache
/// hit) `usage` also has vLLM's `prompt_tokens_details.cached_tokens`; with `prefill_ms` >= 0 the
/// event has llama.cpp's `timings` with `prompt_n` (prompt tokens not served from the cache) and
/// `prompt_ms` (the engine's nominal prefill time).
void append_usage_event(std::string& out, const StreamContext& ctx, std::int64_t completion_tokens,
                        std::int64_t cached_tokens = -1, double prefill_ms = -1);
/// Appends `data: [DONE]\n\n`.
void append_done_event(std::string& out);
/// Appends `{"prompt_tokens":P,"total_tokens":P+C,"completion_tokens":C}`.
void append_usage_object(std::string& out, std::int64_t prompt_tokens,
                         std::int64_t completion_tokens);

/// The whole non-streamed response body: `text_completion` (choices[0].text) or
/// `chat.completion` (choices[0].message {role, content}), finish_reason "length", with usage.
std::string format_full_response(bool chat, std::string_view id, std::int64_t created,
                                 std::string_view model, std::string_view text,
                                 std::int64_t prompt_tokens, std::int64_t completion_tokens);

/// OpenAI error body `{"error":{"message":..,"type":..,"param":..,"code":N}}`; `param` is null
/// when empty.
std::string format_error(std::string_view message, std::string_view type, std::string_view param,
                         int code);

}  // namespace llmbench::server
