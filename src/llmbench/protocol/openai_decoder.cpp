/// @file
/// `Decoder`: simdjson DOM decoding of OpenAI-compatible stream events and response bodies.
///
/// Shapes handled (OpenAI API reference "The chat completion chunk object" and "The completion
/// object", plus the server dialects):
///  - completions: `choices[i].text`; chat: `choices[i].delta` (stream) or `choices[i].message`
///    (body) with `content`, `reasoning_content` (vLLM, SGLang, DeepSeek API),
///    `reasoning` (newer vLLM, OpenRouter) and `tool_calls[].function.{name,arguments}`.
///  - Only the choice with `"index": 0` (or the first one without an `index` field) is decoded;
///    chunks that carry other choices only (requests with n > 1) report `has_choice` and no output.
///  - `usage` anywhere at the top level, `null` meaning absent; `cached_tokens` falls back to the
///    DeepSeek API's `prompt_cache_hit_tokens`.
///  - errors inside a 200 stream: `{"error": {...}}` (OpenAI, SGLang, newer vLLM) or
///    `{"object": "error", "message": ...}` (older vLLM).
///  - llama.cpp `timings` (server README, "/completion" response `timings`).
///
/// The decoder copies each payload into a reusable buffer with SIMDJSON_PADDING spare bytes, as
/// `dom::parser::parse(buf, len, false)` requires, so steady-state decoding does not allocate
/// beyond the strings of the returned `Delta`.

#include "llmbench/core/text.hpp"
#include "llmbench/protocol/detail/json_error.hpp"
#include "llmbench/protocol/detail/native_json.hpp"
#include "llmbench/protocol/openai.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

namespace llmbench::protocol {
namespace {

namespace dom = simdjson::dom;

using detail::json_type_name;
using detail::kBodySource;
using detail::kEventSource;
// An unstructured in-stream error is kept up to this size; the client redacts it and then cuts it
// to what it stores (protocol::server_text), so a secret is never cut before it is found.
using detail::kMaxRawErrorBytes;

enum class Mode { kEvent, kBody };

// ---- shape checks ----
// A field of the wrong JSON type is an error naming the field's path ("choices[0].text"); `null`
// always reads as absent (SGLang serializes every field, with nulls).

/// Where a field sits, as "a[index].b.c"; formatted only when a shape error is reported, so
/// decoding a well-formed chunk builds no strings. The messages are put together without fmt on
/// purpose: fmt's header-only code, instantiated here, used up GCC's inlining budget for this
/// file (`--param inline-unit-growth`), which left `std::string::assign` and simdjson's field
/// iteration as calls on every event, 70 instructions more per event (callgrind;
/// docs/performance.md, "Against the previous round").
struct Path {
  std::string_view a{};
  std::int64_t index = -1;  ///< -1 = no subscript
  std::string_view b{};
  std::string_view c{};

  [[nodiscard]] std::string str() const {
    std::string out(a);
    if (index >= 0) {
      out += '[';
      out += std::to_string(index);
      out += ']';
    }
    for (const std::string_view part : {b, c}) {
      if (!part.empty()) {
        out += '.';
        out += part;
      }
    }
    return out;
  }
};

/// What one decode call collects: the delta, and the first shape error found.
struct Ctx {
  Mode mode;
  Delta& delta;
  std::string error;  // empty while the object has the expected shape

  void wrong(const Path& path, std::string_view expected, const dom::element& got) {
    if (error.empty()) {
      error = "'" + path.str() + "' must be ";
      error += expected;
      error += " or null, got ";
      error += json_type_name(got);
    }
  }
  /// A string field: true and `out` set when a string; null is absent; anything else an error.
  bool text(const dom::element& value, const Path& path, std::string_view& out) {
    if (value.get_string().get(out) == simdjson::SUCCESS) {
      return true;
    }
    if (!value.is_null()) {
      wrong(path, "a string", value);
    }
    return false;
  }
  /// An object field (same rules).
  bool object(const dom::element& value, const Path& path, dom::object& out) {
    if (value.get_object().get(out) == simdjson::SUCCESS) {
      return true;
    }
    if (!value.is_null()) {
      wrong(path, "an object", value);
    }
    return false;
  }
  /// An array field (same rules).
  bool array(const dom::element& value, const Path& path, dom::array& out) {
    if (value.get_array().get(out) == simdjson::SUCCESS) {
      return true;
    }
    if (!value.is_null()) {
      wrong(path, "an array", value);
    }
    return false;
  }
  /// A token count: -1 when null, `kInvalidCount` for a number that is no count (negative,
  /// fractional, beyond int64); any other type is an error.
  std::int64_t count(const dom::element& value, const Path& path) {
    const auto n = detail::token_count(value);
    if (!n) {
      wrong(path, "a number", value);
      return -1;
    }
    return *n;
  }
};

// A string value, or false for null, absent or non-string values.
bool get_string(const dom::element& value, std::string_view& out) {
  return value.get_string().get(out) == simdjson::SUCCESS;
}

// An integer index; -1 for anything else.
std::int64_t get_index(const dom::element& value) {
  std::int64_t i = 0;
  return value.get_int64().get(i) == simdjson::SUCCESS ? i : -1;
}

// A duration in ms from llama.cpp `timings`: finite, in [0, 1e9] (11.6 days); -1 otherwise.
double get_ms(const dom::element& value) {
  constexpr double kMaxMs = 1e9;
  double d = 0;
  return value.get_double().get(d) == simdjson::SUCCESS && d >= 0 && d <= kMaxMs ? d : -1.0;
}

// `obj[key]` when present and not null.
bool find(const dom::object& obj, std::string_view key, dom::element& out) {
  return obj.at_key(key).get(out) == simdjson::SUCCESS && !out.is_null();
}

Usage decode_usage(const dom::object& obj, Ctx& ctx) {
  Usage usage;
  std::int64_t cache_hit = -1;
  for (const auto field : obj) {
    const std::string_view key = field.key;
    if (key == "prompt_tokens") {
      usage.prompt_tokens = ctx.count(field.value, {.a = "usage.prompt_tokens"});
    } else if (key == "completion_tokens") {
      usage.completion_tokens = ctx.count(field.value, {.a = "usage.completion_tokens"});
    } else if (key == "completion_tokens_details" || key == "prompt_tokens_details") {
      dom::object details;
      if (field.value.get_object().get(details) != simdjson::SUCCESS) {
        continue;  // null or malformed details count as absent
      }
      dom::element count;
      if (key == "completion_tokens_details" && find(details, "reasoning_tokens", count)) {
        usage.reasoning_tokens =
            ctx.count(count, {.a = "usage.completion_tokens_details.reasoning_tokens"});
      } else if (key == "prompt_tokens_details" && find(details, "cached_tokens", count)) {
        usage.cached_tokens = ctx.count(count, {.a = "usage.prompt_tokens_details.cached_tokens"});
      }
    } else if (key == "prompt_cache_hit_tokens") {
      cache_hit = ctx.count(field.value, {.a = "usage.prompt_cache_hit_tokens"});
    }
  }
  if (usage.cached_tokens < 0) {
    usage.cached_tokens = cache_hit;
  }
  return usage;
}

void decode_timings(const dom::object& obj, Ctx& ctx) {
  Delta& delta = ctx.delta;
  for (const auto field : obj) {
    const std::string_view key = field.key;
    if (key == "prompt_n") {
      delta.timings_prompt_n = ctx.count(field.value, {.a = "timings.prompt_n"});
    } else if (key == "prompt_ms") {
      delta.timings_prompt_ms = get_ms(field.value);
    } else if (key == "predicted_n") {
      delta.timings_predicted_n = ctx.count(field.value, {.a = "timings.predicted_n"});
    } else if (key == "predicted_ms") {
      delta.timings_predicted_ms = get_ms(field.value);
    } else if (key == "cache_n") {
      delta.timings_cache_n = ctx.count(field.value, {.a = "timings.cache_n"});
    }
  }
}

// `tool_calls[]`: counts the bytes of `function.name` and `function.arguments`.
void decode_tool_calls(const dom::array& calls, Delta& delta) {
  for (const auto call : calls) {
    delta.tool_call = true;
    dom::object call_obj;
    dom::object function;
    if (call.get_object().get(call_obj) != simdjson::SUCCESS ||
        call_obj.at_key("function").get_object().get(function) != simdjson::SUCCESS) {
      continue;
    }
    dom::element part;
    std::string_view text;
    for (const std::string_view key : {"name", "arguments"}) {
      if (find(function, key, part) && get_string(part, text)) {
        delta.tool_call_bytes += text.size();
      }
    }
  }
}

// `delta` (stream) or `message` (body) of a chat choice at `at` ("choices[i].delta").
void decode_message(const dom::object& message, const Path& at, Ctx& ctx) {
  const auto path = [&](std::string_view key) {
    return Path{.a = at.a, .index = at.index, .b = at.b, .c = key};
  };
  Delta& delta = ctx.delta;
  bool has_role = false;
  std::string_view text;
  for (const auto field : message) {
    const std::string_view key = field.key;
    if (key == "content") {
      if (ctx.text(field.value, path(key), text)) {
        delta.answer.assign(text);
      }
    } else if (key == "reasoning_content" || key == "reasoning") {
      // Some servers send both names with the same text; keep the first non-empty one.
      if (ctx.text(field.value, path(key), text) && delta.reasoning.empty()) {
        delta.reasoning.assign(text);
      }
    } else if (key == "tool_calls") {
      dom::array calls;
      if (ctx.array(field.value, path(key), calls)) {
        decode_tool_calls(calls, delta);
      }
    } else if (key == "role") {
      has_role = field.value.is_string();
    }
  }
  delta.role_only = ctx.mode == Mode::kEvent && has_role && !delta.has_output();
}

// Out of line on purpose: inlined into `Impl::decode` (GCC 12, -O3), its growth left simdjson's
// field iteration and the key comparisons as calls there, about 265 instructions more per event
// (callgrind; docs/performance.md, "Client: SSE parsing and timestamping").
[[gnu::noinline]] void decode_choice(const dom::object& choice, std::int64_t i, Ctx& ctx) {
  const auto path = [&](std::string_view key) {
    return Path{.a = "choices", .index = i, .b = key};
  };
  std::string_view text;
  for (const auto field : choice) {
    const std::string_view key = field.key;
    if (key == "text") {
      if (ctx.text(field.value, path(key), text)) {
        ctx.delta.answer.assign(text);
      }
    } else if (key == "delta" || key == "message") {
      dom::object message;
      if (ctx.object(field.value, path(key), message)) {
        decode_message(message, path(key), ctx);
      }
    } else if (key == "finish_reason") {
      if (ctx.text(field.value, path(key), text)) {
        ctx.delta.finish_reason.assign(text);
      }
    }
  }
}

// Picks the choice with index 0 (or the first without an index) out of `choices`.
void decode_choices(const dom::array& choices, Ctx& ctx) {
  std::int64_t i = 0;
  for (const auto choice : choices) {
    ctx.delta.has_choice = true;
    dom::object obj;
    if (choice.get_object().get(obj) != simdjson::SUCCESS) {
      ctx.wrong({.a = "choices", .index = i}, "an object", choice);
      return;
    }
    dom::element index;
    if (find(obj, "index", index) && get_index(index) != 0) {
      ++i;
      continue;
    }
    decode_choice(obj, i, ctx);
    return;
  }
}

// The message of an error object: `message` when a string, else the raw payload cut short.
void set_error(const dom::element* message, std::string_view raw, Delta& delta) {
  delta.is_error = true;
  std::string_view text;
  if (message != nullptr && get_string(*message, text)) {
    delta.error_message.assign(text);
  } else {
    delta.error_message.assign(raw.substr(0, std::min(raw.size(), kMaxRawErrorBytes)));
  }
}

void decode_object(const dom::object& root, std::string_view raw, Ctx& ctx) {
  Delta& delta = ctx.delta;
  bool object_is_error = false;
  dom::element top_message;
  bool has_top_message = false;
  for (const auto field : root) {
    const std::string_view key = field.key;
    if (key == "choices") {
      dom::array choices;
      if (ctx.array(field.value, {.a = "choices"}, choices)) {
        decode_choices(choices, ctx);
      }
    } else if (key == "usage") {
      dom::object usage;
      if (ctx.object(field.value, {.a = "usage"}, usage)) {
        delta.usage = decode_usage(usage, ctx);
      }
    } else if (key == "timings") {
      dom::object timings;
      if (field.value.get_object().get(timings) == simdjson::SUCCESS) {
        decode_timings(timings, ctx);
      }
    } else if (key == "error") {
      if (field.value.is_null()) {
        continue;
      }
      dom::object error;
      dom::element message;
      if (field.value.get_object().get(error) == simdjson::SUCCESS) {
        set_error(find(error, "message", message) ? &message : nullptr, raw, delta);
      } else {
        set_error(&field.value, raw, delta);  // {"error": "text"}
      }
    } else if (key == "object") {
      std::string_view type;
      object_is_error = get_string(field.value, type) && type == "error";
    } else if (key == "message") {
      top_message = field.value;
      has_top_message = true;
    }
  }
  if (object_is_error && !delta.is_error) {
    set_error(has_top_message ? &top_message : nullptr, raw, delta);
  }
}

}  // namespace

struct Decoder::Impl {
  dom::parser parser;
  std::unique_ptr<char[]> buffer;
  std::size_t capacity = 0;
  detail::JsonErrorLocator locator;

  // Copies `data` into the padded buffer and returns it.
  const char* pad(std::string_view data) {
    const std::size_t needed = data.size() + simdjson::SIMDJSON_PADDING;
    if (needed > capacity) {
      capacity = std::max(needed, 2 * capacity);
      buffer = std::make_unique_for_overwrite<char[]>(capacity);
    }
    std::memcpy(buffer.get(), data.data(), data.size());
    std::memset(buffer.get() + data.size(), 0, simdjson::SIMDJSON_PADDING);
    return buffer.get();
  }

  // Every path returns the one named `out`, so the delta is built where the caller keeps the
  // result (NRVO) instead of being moved into a `Result` once per stream event.
  Result<Delta> decode(std::string_view data, Mode mode) {
    Result<Delta> out{boost::system::in_place_value};
    Delta& delta = *out;
    if (mode == Mode::kEvent && trim(data) == "[DONE]") {
      delta.done = true;
      return out;
    }
    const std::string_view source = mode == Mode::kEvent ? kEventSource : kBodySource;
    const char* json = pad(data);
    dom::element root;
    dom::object obj;
    if (const auto code = parser.parse(json, data.size(), /*realloc_if_needed=*/false).get(root)) {
      out = Error{
          mode == Mode::kEvent ? "invalid JSON in stream event" : "invalid JSON in response body",
          std::string(source), locator.locate(json, data.size(), code)};
    } else if (root.get_object().get(obj)) {
      out = Error{"expected a JSON object", std::string(source), 0};
    } else {
      Ctx ctx{.mode = mode, .delta = delta, .error = {}};
      decode_object(obj, data, ctx);
      if (!ctx.error.empty() && !delta.is_error) {
        // An error object explains itself even if other fields are odd; otherwise the shape
        // wins.
        out = Error{std::move(ctx.error), std::string(source), -1};
      }
    }
    return out;
  }
};

Decoder::Decoder() : impl_(std::make_unique<Impl>()) {}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

Result<Delta> Decoder::decode_event(std::string_view data) {
  return impl_->decode(data, Mode::kEvent);
}

Result<Delta> Decoder::decode_body(std::string_view body) {
  return impl_->decode(body, Mode::kBody);
}

Result<Delta> Decoder::decode_sse(std::string_view type, std::string_view data) {
  if (type == "error") {
    // `event: error` (the SSE convention for a server-side failure, e.g. Anthropic-style streams
    // and some OpenAI-compatible proxies): the data is an error object or plain text.
    return Delta{.is_error = true, .error_message = stream_error_message(data)};
  }
  return impl_->decode(data, Mode::kEvent);
}

std::optional<Delta> Decoder::decode_field(std::string_view name, std::string_view value) {
  if (name != "error") {
    return std::nullopt;  // other non-standard fields carry nothing llmbench measures
  }
  // llama.cpp server (tools/server, `server_sent_event(sink, "error", ...)`) ends a failed
  // stream with `error: {"code":..,"message":..,"type":..}` and then `data: [DONE]`, in HTTP 200.
  return Delta{.is_error = true, .error_message = stream_error_message(value)};
}

}  // namespace llmbench::protocol
