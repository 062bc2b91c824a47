#include "llmbench/server/openai_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

namespace llmbench::server {
namespace {

constexpr std::array<std::string_view, kVocabSize> kVocab = {
    " the", " model", " serves", " tokens", " at",      " a",    " steady", " pace",
    ",",    " and",   " data",   " flows",  " through", " each", " layer",  "."};

}  // namespace

std::string_view token_text(std::int64_t index) noexcept {
  return kVocab[static_cast<std::size_t>(index % kVocabSize)];
}

void append_tokens(std::string& out, std::int64_t first, std::int64_t count) {
  for (std::int64_t i = first; i < first + count; ++i) out += token_text(i);
}

StreamContext make_stream_context(bool chat, std::string_view id, std::int64_t created,
                                  std::string_view model, std::int64_t prompt_tokens,
                                  bool continuous_usage) {
  StreamContext ctx;
  ctx.chat = chat;
  ctx.continuous_usage = continuous_usage;
  ctx.prompt_tokens = prompt_tokens;
  ctx.prefix = "{\"id\":";
  append_json_string(ctx.prefix, id);
  ctx.prefix += chat ? ",\"object\":\"chat.completion.chunk\"" : ",\"object\":\"text_completion\"";
  fmt::format_to(std::back_inserter(ctx.prefix), ",\"created\":{},\"model\":", created);
  append_json_string(ctx.prefix, model);
  ctx.prefix += ",\"choices\":[";
  ctx.content_head = "data: ";
  ctx.content_head += ctx.prefix;
  ctx.content_head += chat ? "{\"index\":0,\"delta\":{\"content\":\"" : "{\"index\":0,\"text\":\"";
  if (!continuous_usage) {
    ctx.content_tail = chat ? "\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n"
                            : "\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}],"
                              "\"usage\":null}\n\n";
  }
  return ctx;
}

void append_usage_object(std::string& out, std::int64_t prompt_tokens,
                         std::int64_t completion_tokens) {
  fmt::format_to(std::back_inserter(out),
                 "{{\"prompt_tokens\":{},\"total_tokens\":{},\"completion_tokens\":{}}}",
                 prompt_tokens, prompt_tokens + completion_tokens, completion_tokens);
}

namespace {

void append_event_tail(std::string& out, const StreamContext& ctx, std::int64_t completion_tokens) {
  out += "],\"usage\":";
  if (ctx.continuous_usage) {
    append_usage_object(out, ctx.prompt_tokens, completion_tokens);
  } else {
    out += "null";
  }
  out += "}\n\n";
}

}  // namespace

void append_content_event(std::string& out, const StreamContext& ctx, std::string_view text,
                          bool last, std::int64_t completion_tokens) {
  // Vocabulary words need no escaping (see token_text), so the text is copied as is.
  out += ctx.content_head;
  out += text;
  if (!last && !ctx.content_tail.empty()) {
    out += ctx.content_tail;  // the common case: three appends per event
    return;
  }
  out += ctx.chat ? "\"},\"logprobs\":null,\"finish_reason\":"
                  : "\",\"logprobs\":null,\"finish_reason\":";
  out += last ? "\"length\"" : "null";
  out += ctx.chat ? "}" : ",\"stop_reason\":null}";
  append_event_tail(out, ctx, completion_tokens);
}

void append_role_event(std::string& out, const StreamContext& ctx) {
  out += "data: ";
  out += ctx.prefix;
  out +=
      "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
      "\"finish_reason\":null}";
  append_event_tail(out, ctx, 0);
}

void append_usage_event(std::string& out, const StreamContext& ctx, std::int64_t completion_tokens,
                        std::int64_t cached_tokens, double prefill_ms) {
  out += "data: ";
  out += ctx.prefix;
  out += "],\"usage\":";
  append_usage_object(out, ctx.prompt_tokens, completion_tokens);
  if (cached_tokens >= 0) {
    // vLLM's `prompt_tokens_details` (with --enable-prompt-tokens-details), inside `usage`.
    out.pop_back();
    fmt::format_to(std::back_inserter(out), ",\"prompt_tokens_details\":{{\"cached_tokens\":{}}}}}",
                   cached_tokens);
  }
  if (prefill_ms >= 0) {
    // llama.cpp's `timings` names: prompt_n (tokens prefilled) and prompt_ms.
    fmt::format_to(std::back_inserter(out), ",\"timings\":{{\"prompt_n\":{},\"prompt_ms\":{}}}",
                   ctx.prompt_tokens - std::max<std::int64_t>(0, cached_tokens), prefill_ms);
  }
  out += "}\n\n";
}

void append_done_event(std::string& out) {
  out += "data: [DONE]\n\n";
}

std::string format_full_response(bool chat, std::string_view id, std::int64_t created,
                                 std::string_view model, std::string_view text,
                                 std::int64_t prompt_tokens, std::int64_t completion_tokens) {
  std::string out;
  out.reserve(text.size() + 320);
  out += "{\"id\":";
  append_json_string(out, id);
  out += chat ? ",\"object\":\"chat.completion\"" : ",\"object\":\"text_completion\"";
  fmt::format_to(std::back_inserter(out), ",\"created\":{},\"model\":", created);
  append_json_string(out, model);
  if (chat) {
    out += ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":";
    append_json_string(out, text);
    out += "},\"logprobs\":null,\"finish_reason\":\"length\"}]";
  } else {
    out += ",\"choices\":[{\"index\":0,\"text\":";
    append_json_string(out, text);
    out += ",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}]";
  }
  out += ",\"usage\":";
  append_usage_object(out, prompt_tokens, completion_tokens);
  out += '}';
  return out;
}

std::string format_error(std::string_view message, std::string_view type, std::string_view param,
                         int code) {
  std::string out = "{\"error\":{\"message\":";
  append_json_string(out, message);
  out += ",\"type\":";
  append_json_string(out, type);
  out += ",\"param\":";
  if (param.empty()) {
    out += "null";
  } else {
    append_json_string(out, param);
  }
  fmt::format_to(std::back_inserter(out), ",\"code\":{}}}}}", code);
  return out;
}

}  // namespace llmbench::server
