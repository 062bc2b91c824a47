/// @file
/// The "openai-chat" dialect: an OpenAI-compatible `/v1/chat/completions` server (OpenAI API
/// reference, "Create chat completion"), with `ignore_eos` as for "openai".

#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"

namespace llmbench::protocol::detail {

const Dialect& openai_chat_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "openai-chat",
      .summary =
          "/v1/chat/completions; OpenAI fields, ignore_eos, top_k, min_p, repetition_penalty",
      .chat = true,
      .fields = ExtraFields{.ignore_eos = true, .sampling = true},
  });
  return kDialect;
}

}  // namespace llmbench::protocol::detail
