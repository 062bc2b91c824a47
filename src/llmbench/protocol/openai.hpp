#pragma once
/// @file
/// The OpenAI wire format shared by every dialect llmbench speaks today: the decoder of
/// `/v1/completions` and `/v1/chat/completions` streams and bodies (OpenAI API reference,
/// "Create completion" / "Create chat completion", streaming objects `text_completion` and
/// `chat.completion.chunk`, with the fields vLLM, SGLang, llama.cpp's server and the DeepSeek API
/// add), and the messages of OpenAI-style error bodies. Request bodies and backends are in
/// dialect.hpp (included here, so this header gives the whole protocol module).

#include "llmbench/protocol/delta.hpp"
#include "llmbench/protocol/dialect.hpp"
#include "llmbench/protocol/redact.hpp"
#include "llmbench/protocol/request.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace llmbench::protocol {

/// Decodes JSON payloads with a reusable simdjson parser. Not thread-safe; keeps no state between
/// calls, so one decoder may also serve many responses in turn.
class Decoder final : public StreamDecoder {
 public:
  Decoder();
  ~Decoder() override;
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
  Result<Delta> decode_body(std::string_view body) override;
  /// Decodes one dispatched SSE event of type `type` (the `event:` field, "message" when absent):
  /// type "error" is an error delta whose message comes from `data` (an error object or text);
  /// any other type is decoded as `decode_event(data)`.
  Result<Delta> decode_sse(std::string_view type, std::string_view data) override;
  /// Decodes a non-standard SSE field line (`sse::UnknownField`): `error: {json}` (llama.cpp's
  /// server) is an error delta with the object's message; other names give `std::nullopt`.
  std::optional<Delta> decode_field(std::string_view name, std::string_view value) override;

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
