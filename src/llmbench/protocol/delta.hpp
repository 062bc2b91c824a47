#pragma once
/// @file
/// What a server's stream event or response body carried (`Delta`, `Usage`), and the interface
/// of a dialect's decoder (`StreamDecoder`).

#include "llmbench/core/error.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace llmbench::protocol {

/// A count the server sent as a number that is no token count (negative, fractional or beyond
/// int64). Larger than every plausible count, so the client's plausibility check rejects it.
inline constexpr std::int64_t kInvalidCount = std::numeric_limits<std::int64_t>::max();

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
  /// llama.cpp `timings.cache_n`: prompt tokens reused from the slot's cache (-1 = not sent).
  std::int64_t timings_cache_n = -1;

  /// True when the chunk carries generated output of any channel (non-empty text or tool call).
  [[nodiscard]] bool has_output() const noexcept {
    return !answer.empty() || !reasoning.empty() || tool_call;
  }
};

/// Decodes one dialect's responses. One per response: a decoder may keep what it needs of the
/// response so far (SGLang's native stream sends the whole text on every event, so its decoder
/// keeps the text already seen); not thread-safe. Never throws on input: bad input is an
/// `Error` naming the input ("stream event", "response body"), the byte offset or the field.
class StreamDecoder {
 public:
  StreamDecoder() = default;
  virtual ~StreamDecoder() = default;
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  /// Decodes one dispatched SSE event of type `type` (the `event:` field, "message" when absent)
  /// and its joined `data`.
  virtual Result<Delta> decode_sse(std::string_view type, std::string_view data) = 0;
  /// Decodes a non-standard SSE field line (`sse::UnknownField`); `std::nullopt` when the line
  /// carries nothing this dialect knows.
  virtual std::optional<Delta> decode_field(std::string_view name, std::string_view value) = 0;
  /// Decodes a whole non-streamed 2xx response body.
  virtual Result<Delta> decode_body(std::string_view body) = 0;
  /// True when a stream whose body ended cleanly is complete even without `[DONE]` or a finish
  /// reason: the server marks no end of its own (Triton's generate_stream ends the chunked body
  /// after the last response). False by default: such a stream was cut short.
  [[nodiscard]] virtual bool complete_at_body_end() const noexcept { return false; }

 protected:
  StreamDecoder(StreamDecoder&&) noexcept = default;
  StreamDecoder& operator=(StreamDecoder&&) noexcept = default;
};

}  // namespace llmbench::protocol
