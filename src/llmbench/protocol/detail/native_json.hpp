#pragma once
/// @file
/// What the dialects with their own wire format (dialects/sglang_native.cpp, tgi.cpp,
/// trtllm.cpp) share, and the OpenAI decoder with them (`json_type_name`, the source names): a
/// padded simdjson parser that reports where a payload is not JSON, readers of typed fields that
/// name the field when its type is wrong, the message of an in-stream error value, and request-body
/// helpers (`--extra-body` as a JSON merge patch).

#include "llmbench/core/error.hpp"
#include "llmbench/protocol/delta.hpp"
#include "llmbench/protocol/detail/json_error.hpp"

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace llmbench::protocol::detail {

/// The input names of decoder errors (every decoder: openai_decoder.cpp and the native ones).
inline constexpr std::string_view kEventSource = "stream event";
inline constexpr std::string_view kBodySource = "response body";

/// An unstructured in-stream error is kept up to this size (every decoder).
inline constexpr std::size_t kMaxRawErrorBytes = std::size_t{1} << 16;

/// The JSON type of `value` as shape errors name it: "an array", "an object", "a number",
/// "a string", "a boolean", "null".
std::string_view json_type_name(const simdjson::dom::element& value) noexcept;

/// Parses JSON payloads into simdjson DOM objects with a reusable, padded buffer. Not
/// thread-safe; one per decoder. An object it returns lives until the next `parse`.
class JsonPayload {
 public:
  /// The object `data` holds. Errors name `source` ("stream event", "response body"): "invalid
  /// JSON in <source>" with the byte offset of the syntax error, or "expected a JSON object"
  /// (offset 0) for another JSON value.
  Result<simdjson::dom::object> parse(std::string_view data, std::string_view source);

 private:
  simdjson::dom::parser parser_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  JsonErrorLocator locator_;
};

/// A JSON token count: -1 for null, `kInvalidCount` for a number that is no count (negative,
/// fractional, beyond int64), nullopt for any other type (the caller reports it as a shape
/// error). Shared by `FieldReader::count` and the OpenAI decoder's reader.
std::optional<std::int64_t> token_count(const simdjson::dom::element& value);

/// Reads typed fields of one payload and keeps the first shape error: a field of the wrong JSON
/// type is an error naming the field ("'meta_info.completion_tokens' must be a number or null,
/// got a string"); `null` always reads as absent.
struct FieldReader {
  std::string error{};  ///< empty while every field read had the expected type

  /// A string field: true with `out` set; false for null or (with an error) another type.
  bool text(const simdjson::dom::element& value, std::string_view path, std::string_view& out);
  /// An object field (same rules).
  bool object(const simdjson::dom::element& value, std::string_view path,
              simdjson::dom::object& out);
  /// A boolean field (same rules).
  bool boolean(const simdjson::dom::element& value, std::string_view path, bool& out);
  /// A token count: -1 for null, `kInvalidCount` for a number that is no count (negative,
  /// fractional, beyond int64); another type is an error (and -1).
  std::int64_t count(const simdjson::dom::element& value, std::string_view path);

 private:
  void wrong(std::string_view path, std::string_view expected, const simdjson::dom::element& got);
};

/// The front end the native dialects share: an SSE event of type `error` is an in-stream error,
/// `[DONE]` ends the stream, no other SSE field carries output, and every other event and a
/// whole body are one JSON object that `decode_payload` reads. Not thread-safe; one per
/// response.
class NativeDecoder : public StreamDecoder {
 public:
  Result<Delta> decode_sse(std::string_view type, std::string_view data) final;
  std::optional<Delta> decode_field(std::string_view name, std::string_view value) final;
  Result<Delta> decode_body(std::string_view body) final;

 protected:
  /// The delta of one JSON payload: an SSE event's data (`stream` true, `source`
  /// `kEventSource`) or a whole body (`stream` false, `kBodySource`).
  virtual Result<Delta> decode_payload(std::string_view data, std::string_view source,
                                       bool stream) = 0;
  JsonPayload payload_;  ///< the parser `decode_payload` uses
};

/// Marks `delta` as an in-stream error whose message is `value`: a string as itself, an object's
/// `message` string, else the raw `payload` (cut to 64 KiB; the client redacts and cuts it again
/// when it stores it).
void set_error(const simdjson::dom::element& value, std::string_view payload, Delta& delta);

/// Parses `--extra-body`: throws `Exception` naming `--extra-body` and the byte offset of a
/// syntax error, or offset 0 when the text is JSON but not an object.
nlohmann::ordered_json parse_extra_body(const std::string& text);

/// Applies `--extra-body` to `body` as a JSON merge patch (RFC 7396): members of nested objects
/// merge (`{"sampling_params": {"stop": ["\n"]}}` adds one sampling parameter), `null` removes
/// a member, any other value replaces it. Throws `Exception` naming `--extra-body` and the byte
/// offset when `extra_body_json` is not a JSON object; does nothing when it is empty.
void merge_extra_body(nlohmann::ordered_json& body, const std::string& extra_body_json);

/// The JSON text of a request body (compact; invalid UTF-8 replaced by U+FFFD).
std::string dump_body(const nlohmann::ordered_json& body);

/// The first string member `key` of a JSON object `body` (a model-info answer such as SGLang's
/// `/get_model_info` or TGI's `/info`); `std::nullopt` for anything else. Never throws.
std::optional<std::string> string_member(std::string_view body, std::string_view key);

}  // namespace llmbench::protocol::detail
