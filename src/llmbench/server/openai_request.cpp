#include "llmbench/server/openai_request.hpp"

#include "llmbench/core/text.hpp"

#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <string>

namespace llmbench::server {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

/// One DOM parser per thread: reuses its buffers across requests (simdjson "parser reuse").
simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

Error field_error(std::string_view param, std::string_view what) {
  // fmt rather than `"'" + std::string(...)`: GCC 12 -O2 reports a false -Wrestrict there.
  return Error{fmt::format("'{}' {}", param, what), std::string(param), -1};
}

/// The member `key` of `object`, or nullopt if absent or JSON null.
std::optional<element> member(const simdjson::dom::object& object, std::string_view key) {
  element value;
  if (object.at_key(key).get(value) != simdjson::SUCCESS)
    return std::nullopt;
  if (value.type() == element_type::NULL_VALUE)
    return std::nullopt;
  return value;
}

/// An integer from INT64/UINT64 or an integral DOUBLE; nullopt otherwise.
std::optional<std::int64_t> as_integer(const element& value) {
  switch (value.type()) {
    case element_type::INT64:
      return value.get_int64().value_unsafe();
    case element_type::UINT64: {
      const std::uint64_t u = value.get_uint64().value_unsafe();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::nullopt;
      }
      return static_cast<std::int64_t>(u);
    }
    case element_type::DOUBLE: {
      const double d = value.get_double().value_unsafe();
      if (std::floor(d) != d || std::fabs(d) > 9e15)
        return std::nullopt;
      return static_cast<std::int64_t>(d);
    }
    default:
      return std::nullopt;
  }
}

Result<bool> optional_bool(const simdjson::dom::object& object, std::string_view key,
                           std::string_view param) {
  auto value = member(object, key);
  if (!value)
    return false;
  if (value->type() != element_type::BOOL)
    return field_error(param, "must be a boolean");
  return value->get_bool().value_unsafe();
}

/// Length field: nullopt if absent; error if not a non-negative integer.
Result<std::optional<std::int64_t>> optional_length(const simdjson::dom::object& object,
                                                    std::string_view key) {
  auto value = member(object, key);
  if (!value)
    return std::optional<std::int64_t>{};
  auto n = as_integer(*value);
  if (!n)
    return field_error(key, "must be an integer");
  if (*n < 0 && key != "n_predict")
    return field_error(key, "must be >= 0");
  return std::optional<std::int64_t>{*n};
}

/// Exact token count of `text` (`Tokenizer::count` on a per-thread scratch); invalid UTF-8 is
/// an error naming `field` and the byte offset.
Result<std::int64_t> count_tokens(const tokenizer::Tokenizer& tok, std::string_view text,
                                  bool add_special_tokens, std::string_view field) {
  thread_local tokenizer::Scratch scratch;
  auto n = tok.count(text, add_special_tokens, scratch);
  if (!n) {
    return Error{std::string(field) + ": " + n.error().message, std::string(field),
                 n.error().offset};
  }
  return static_cast<std::int64_t>(*n);
}

/// An error when token id number `index` of a prompt is negative, or (with a tokenizer) not
/// below its vocabulary size, as vLLM rejects out-of-vocabulary ids; nullopt when it is fine.
std::optional<Error> check_token_id(std::int64_t id, const tokenizer::Tokenizer* tok,
                                    std::int64_t index) {
  if (id < 0)
    return field_error("prompt", fmt::format("token id {} (#{}) must be >= 0", id, index));
  if (tok != nullptr && static_cast<std::uint64_t>(id) >= tok->vocab_size()) {
    return field_error(
        "prompt", fmt::format("token id {} (#{}) is outside the vocabulary (0 to {})", id, index,
                              tok->vocab_size() - 1));
  }
  return std::nullopt;
}

/// Prompt tokens of a completions `prompt`: with `tok` counted exactly, else llmbench's one
/// text-token estimate (`TextTokenEstimate`, core/text.hpp: the rule `workload` and `simulate`
/// use) of the text items together, at least 1, plus one per token id; `keep` (optional) collects
/// the text and ids.
Result<std::int64_t> prompt_tokens_of(const element& prompt, GenerationParams* keep,
                                      const tokenizer::Tokenizer* tok) {
  if (prompt.type() == element_type::STRING) {
    const std::string_view text = prompt.get_string().value_unsafe();
    if (keep != nullptr)
      keep->prompt_text.assign(text);
    if (tok != nullptr && keep != nullptr) {
      // The prefix cache keys on the real token ids, as vLLM's does (trace replay's hash-id
      // blocks then hit exactly as the trace says).
      auto ids = tok->encode(text, true);
      if (!ids) {
        return Error{"prompt: " + ids.error().message, "prompt", ids.error().offset};
      }
      keep->prompt_ids.assign(ids->begin(), ids->end());
      return static_cast<std::int64_t>(ids->size());
    }
    if (tok != nullptr)
      return count_tokens(*tok, text, true, "prompt");
    return std::max<std::int64_t>(1, estimate_text_tokens(text));
  }
  if (prompt.type() != element_type::ARRAY) {
    return field_error("prompt", "must be a string or an array");
  }
  TextTokenEstimate estimate;  // without a tokenizer: of the text items together
  std::int64_t ids = 0;
  std::int64_t strings = 0;
  std::int64_t counted = 0;  // with a tokenizer: tokens of the text items
  unsigned kinds = 0;        // 1: strings, 2: token ids, 4: id arrays (one kind per prompt)
  const simdjson::dom::array items = prompt.get_array().value_unsafe();
  if (items.size() == 0)
    return field_error("prompt", "must not be empty");
  for (element item : items) {
    kinds |= item.type() == element_type::STRING  ? 1U
             : item.type() == element_type::ARRAY ? 4U
                                                  : 2U;
    if ((kinds & (kinds - 1)) != 0) {
      return field_error("prompt",
                         "must be a string, or an array of strings, of token ids or of token-id "
                         "arrays, not a mix (OpenAI completions `prompt`)");
    }
    if (item.type() == element_type::STRING) {
      ++strings;
      const std::string_view text = item.get_string().value_unsafe();
      estimate.add(text);
      if (keep != nullptr)
        keep->prompt_text.append(text);
      if (tok != nullptr) {
        auto n = count_tokens(*tok, text, true, "prompt");
        if (!n)
          return n.error();
        counted += *n;
      }
    } else if (auto item_id = as_integer(item)) {
      if (auto bad = check_token_id(*item_id, tok, ids))
        return *bad;
      ++ids;
      if (keep != nullptr)
        keep->prompt_ids.push_back(static_cast<std::uint32_t>(*item_id));
    } else if (item.type() == element_type::ARRAY) {
      const simdjson::dom::array ids_array = item.get_array().value_unsafe();
      for (element id : ids_array) {
        auto value = as_integer(id);
        if (!value)
          return field_error("prompt", "token id lists must hold integers");
        if (auto bad = check_token_id(*value, tok, ids))
          return *bad;
        ++ids;
        if (keep != nullptr)
          keep->prompt_ids.push_back(static_cast<std::uint32_t>(*value));
      }
    } else {
      return field_error("prompt", "array items must be strings, token ids or id arrays");
    }
  }
  if (strings == 0 && ids == 0)
    return field_error("prompt", "token id arrays must not be empty");
  if (tok != nullptr)
    return ids + counted;
  // Like a string prompt, strings count at least one token (an empty one still gets the BOS).
  return ids + (strings > 0 ? std::max<std::int64_t>(1, estimate.value()) : 0);
}

/// Prompt tokens of chat `messages`: the contents of every message, counted exactly with `tok`
/// (no special tokens), else by the text-token estimate; at least 1. `keep` (optional) collects
/// the contents.
Result<std::int64_t> messages_tokens_of(const element& messages, GenerationParams* keep,
                                        const tokenizer::Tokenizer* tok) {
  simdjson::dom::array array;
  if (messages.get(array) != simdjson::SUCCESS) {
    return field_error("messages", "must be an array");
  }
  if (array.size() == 0)
    return field_error("messages", "must not be empty");
  TextTokenEstimate estimate;  // without a tokenizer: of the contents together
  std::size_t index = 0;
  std::int64_t counted = 0;  // with a tokenizer: tokens of the contents
  const auto count_content = [&](std::string_view text) -> Result<std::int64_t> {
    estimate.add(text);
    if (keep != nullptr)
      keep->prompt_text.append(text);
    if (tok == nullptr)
      return std::int64_t{0};
    auto n = count_tokens(*tok, text, false, "messages");
    if (n)
      counted += *n;
    return n;
  };
  for (element message : array) {
    simdjson::dom::object object;
    const std::string where = "messages[" + std::to_string(index++) + "]";
    if (message.get(object) != simdjson::SUCCESS)
      return field_error(where, "must be an object");
    auto content = member(object, "content");
    if (!content)
      continue;  // e.g. an assistant message with tool_calls only
    if (content->type() == element_type::STRING) {
      if (auto n = count_content(content->get_string().value_unsafe()); !n)
        return n.error();
    } else if (content->type() == element_type::ARRAY) {
      const simdjson::dom::array parts = content->get_array().value_unsafe();
      for (element part : parts) {
        std::string_view text;
        if (part["text"].get(text) == simdjson::SUCCESS) {
          if (auto n = count_content(text); !n)
            return n.error();
        }
      }
    } else {
      return field_error(where + ".content", "must be a string or an array of parts");
    }
  }
  return std::max<std::int64_t>(1, tok != nullptr ? counted : estimate.value());
}

// ---- fields the simulator does not implement ----

/// True for the value that leaves the answer as the simulator makes it (one choice, no
/// logprobs, plain text).
bool is_one(const element& v) {
  const auto n = as_integer(v);
  return n && *n == 1;
}
bool is_false_or_zero(const element& v) {
  if (v.type() == element_type::BOOL)
    return !v.get_bool().value_unsafe();
  const auto n = as_integer(v);
  return n && *n == 0;
}
bool is_false(const element& v) {
  return v.type() == element_type::BOOL && !v.get_bool().value_unsafe();
}
bool is_empty(const element& v) {
  if (v.type() == element_type::STRING)
    return v.get_string().value_unsafe().empty();
  return v.type() == element_type::ARRAY && v.get_array().value_unsafe().size() == 0;
}
bool is_auto_or_none(const element& v) {
  std::string_view text;
  return v.get(text) == simdjson::SUCCESS && (text == "auto" || text == "none");
}
bool is_text_format(const element& v) {
  std::string_view type;
  return v["type"].get(type) == simdjson::SUCCESS && type == "text";
}
bool never(const element&) {
  return false;
}

/// How the simulator treats a request field it does not read itself.
struct FieldRule {
  std::string_view name;
  /// Null: the field cannot change the simulated answer (sampling knobs pick among tokens, but
  /// the simulator's text is fixed and always runs to the output length), so it is accepted.
  /// Otherwise only values for which this returns true are accepted; others are a 400, since
  /// honouring them (more choices, logprobs, stop strings, structured output) is not
  /// implemented and dropping them silently would give an answer the client did not ask for.
  bool (*neutral)(const element&) = nullptr;
  std::string_view accepted;  ///< the accepted values, for the message
};

/// Fields of the OpenAI completions and chat APIs (OpenAI API reference), vLLM's sampling
/// extensions (`vllm/entrypoints/openai/protocol.py`) and llama.cpp's (`tools/server/README.md`)
/// besides those `parse_generation_request` reads. Any other field is a 400, as the OpenAI API
/// answers "Unrecognized request argument supplied".
constexpr FieldRule kFieldRules[] = {
    {.name = "temperature", .neutral = nullptr, .accepted = ""},
    {.name = "top_p", .neutral = nullptr, .accepted = ""},
    {.name = "top_k", .neutral = nullptr, .accepted = ""},
    {.name = "min_p", .neutral = nullptr, .accepted = ""},
    {.name = "typical_p", .neutral = nullptr, .accepted = ""},
    {.name = "seed", .neutral = nullptr, .accepted = ""},
    {.name = "presence_penalty", .neutral = nullptr, .accepted = ""},
    {.name = "frequency_penalty", .neutral = nullptr, .accepted = ""},
    {.name = "repetition_penalty", .neutral = nullptr, .accepted = ""},
    {.name = "repeat_penalty", .neutral = nullptr, .accepted = ""},
    {.name = "length_penalty", .neutral = nullptr, .accepted = ""},
    {.name = "logit_bias", .neutral = nullptr, .accepted = ""},
    {.name = "user", .neutral = nullptr, .accepted = ""},
    {.name = "ignore_eos", .neutral = nullptr, .accepted = ""},
    {.name = "min_tokens", .neutral = nullptr, .accepted = ""},
    {.name = "stop_token_ids", .neutral = nullptr, .accepted = ""},
    {.name = "skip_special_tokens", .neutral = nullptr, .accepted = ""},
    {.name = "spaces_between_special_tokens", .neutral = nullptr, .accepted = ""},
    {.name = "include_stop_str_in_output", .neutral = nullptr, .accepted = ""},
    {.name = "cache_prompt", .neutral = nullptr, .accepted = ""},
    {.name = "chat_template_kwargs", .neutral = nullptr, .accepted = ""},
    {.name = "add_generation_prompt", .neutral = nullptr, .accepted = ""},
    {.name = "add_special_tokens", .neutral = nullptr, .accepted = ""},
    {.name = "priority", .neutral = nullptr, .accepted = ""},
    {.name = "request_id", .neutral = nullptr, .accepted = ""},
    {.name = "metadata", .neutral = nullptr, .accepted = ""},
    {.name = "store", .neutral = nullptr, .accepted = ""},
    {.name = "parallel_tool_calls", .neutral = nullptr, .accepted = ""},
    {.name = "reasoning_effort", .neutral = nullptr, .accepted = ""},
    {.name = "service_tier", .neutral = nullptr, .accepted = ""},
    {.name = "tools", .neutral = nullptr, .accepted = ""},
    {.name = "max_completion_tokens",
     .neutral = nullptr,
     .accepted = ""},  // read for chat; a completions request may carry it
    {.name = "n", .neutral = is_one, .accepted = "1"},
    {.name = "best_of", .neutral = is_one, .accepted = "1"},
    {.name = "echo", .neutral = is_false, .accepted = "false"},
    {.name = "logprobs", .neutral = is_false, .accepted = "false or null"},
    {.name = "top_logprobs", .neutral = is_false_or_zero, .accepted = "0 or null"},
    {.name = "n_probs", .neutral = is_false_or_zero, .accepted = "0"},
    {.name = "prompt_logprobs", .neutral = never, .accepted = "null"},
    {.name = "suffix", .neutral = is_empty, .accepted = "\"\" or null"},
    {.name = "stop", .neutral = is_empty, .accepted = "[] or null"},
    {.name = "tool_choice", .neutral = is_auto_or_none, .accepted = "\"auto\", \"none\" or null"},
    {.name = "response_format", .neutral = is_text_format, .accepted = "{\"type\":\"text\"}"},
    {.name = "continue_final_message", .neutral = is_false, .accepted = "false"},
    {.name = "guided_json", .neutral = never, .accepted = "null"},
    {.name = "guided_regex", .neutral = never, .accepted = "null"},
    {.name = "guided_choice", .neutral = never, .accepted = "null"},
    {.name = "guided_grammar", .neutral = never, .accepted = "null"},
    {.name = "structured_outputs", .neutral = never, .accepted = "null"},
};

/// The fields `parse_generation_request` reads itself.
constexpr std::string_view kReadFields[] = {
    "model",          "prompt",     "messages",  "stream",
    "stream_options", "max_tokens", "n_predict", "max_completion_tokens"};

/// An error for the first field that is unknown or set to a value the simulator does not
/// implement; nullopt when every field is fine.
std::optional<Error> check_fields(const simdjson::dom::object& object) {
  for (const auto field : object) {
    const std::string_view key = field.key;
    if (std::find(std::begin(kReadFields), std::end(kReadFields), key) != std::end(kReadFields))
      continue;
    const auto rule = std::find_if(std::begin(kFieldRules), std::end(kFieldRules),
                                   [&](const FieldRule& r) { return r.name == key; });
    if (rule == std::end(kFieldRules)) {
      return field_error(key,
                         "is not a request field the simulated server knows (OpenAI: "
                         "\"Unrecognized request argument supplied\")");
    }
    if (rule->neutral == nullptr || field.value.type() == element_type::NULL_VALUE)
      continue;
    if (!rule->neutral(field.value)) {
      return field_error(key, fmt::format("is not implemented by the simulated server (accepted: "
                                          "{})",
                                          rule->accepted));
    }
  }
  return std::nullopt;
}

}  // namespace

Result<GenerationParams> parse_generation_request(std::string_view body, bool chat,
                                                  std::int64_t default_output_len, bool keep_prompt,
                                                  const tokenizer::Tokenizer* tokenizer) {
  element root;
  if (auto err = thread_parser().parse(body.data(), body.size(), true).get(root); err) {
    return Error{std::string("request body is not valid JSON: ") + simdjson::error_message(err), "",
                 -1};
  }
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) {
    return Error{"request body must be a JSON object", "", -1};
  }
  GenerationParams params;
  params.chat = chat;

  if (auto model = member(object, "model")) {
    if (model->type() != element_type::STRING)
      return field_error("model", "must be a string");
    params.model = model->get_string().value_unsafe();
  }
  if (auto unsupported = check_fields(object))
    return *unsupported;
  const std::string_view input_key = chat ? "messages" : "prompt";
  auto input = member(object, input_key);
  if (!input)
    return field_error(input_key, "is required");
  GenerationParams* keep = keep_prompt ? &params : nullptr;
  auto prompt_tokens = chat ? messages_tokens_of(*input, keep, tokenizer)
                            : prompt_tokens_of(*input, keep, tokenizer);
  if (!prompt_tokens)
    return prompt_tokens.error();
  params.prompt_tokens = *prompt_tokens;

  auto stream = optional_bool(object, "stream", "stream");
  if (!stream)
    return stream.error();
  params.stream = *stream;
  if (auto options = member(object, "stream_options")) {
    simdjson::dom::object stream_options;
    if (options->get(stream_options) != simdjson::SUCCESS) {
      return field_error("stream_options", "must be an object");
    }
    auto include = optional_bool(stream_options, "include_usage", "stream_options.include_usage");
    if (!include)
      return include.error();
    auto continuous = optional_bool(stream_options, "continuous_usage_stats",
                                    "stream_options.continuous_usage_stats");
    if (!continuous)
      return continuous.error();
    params.include_usage = *include;
    params.continuous_usage = *continuous;
  }

  // Output length: the first of these that is set wins.
  params.output_tokens = default_output_len;
  for (std::string_view key : {"max_tokens", "max_completion_tokens", "n_predict"}) {
    if (key == "max_completion_tokens" && !chat)
      continue;
    auto length = optional_length(object, key);
    if (!length)
      return length.error();
    if (!*length)
      continue;
    // llama.cpp: n_predict = -1 means "until EOS"; the simulator uses its default then.
    if (**length >= 0)
      params.output_tokens = **length;
    break;
  }
  return params;
}

std::optional<Error> check_context_length(const GenerationParams& params,
                                          std::int64_t max_model_len) {
  // Each side is checked alone first: a sum near 2^63 would overflow (a request may ask for
  // any max_tokens up to INT64_MAX).
  const std::int64_t prompt = params.prompt_tokens;
  const std::int64_t output = params.output_tokens;
  if (prompt <= max_model_len && output <= max_model_len - prompt)
    return std::nullopt;
  // Both are >= 0 and < 2^63, so their sum is exact in 64 unsigned bits.
  const std::uint64_t total =
      static_cast<std::uint64_t>(prompt) + static_cast<std::uint64_t>(output);
  const char* input = params.chat ? "messages" : "prompt";
  return Error{
      fmt::format("This model's maximum context length is {} tokens. However, you "
                  "requested {} tokens ({} in the {}, {} in the completion). Please "
                  "reduce the length of the {} or completion.",
                  max_model_len, total, params.prompt_tokens, params.chat ? "messages" : "prompt",
                  params.output_tokens, params.chat ? "messages" : "prompt"),
      params.prompt_tokens > max_model_len ? input : "max_tokens", -1};
}

}  // namespace llmbench::server
