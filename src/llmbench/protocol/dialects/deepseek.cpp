/// @file
/// The "deepseek" dialect: the official DeepSeek API (api-docs.deepseek.com, "Create Chat
/// Completion"; chat only, `reasoning_content` for the reasoner, `prompt_cache_hit_tokens`). It
/// accepts none of the extra fields.

#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"

namespace llmbench::protocol::detail {

const Dialect& deepseek_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "deepseek",
      .summary = "/v1/chat/completions of the DeepSeek API (https); no ignore_eos or min_tokens",
      .chat = true,
      .fields = ExtraFields{},
  });
  return kDialect;
}

}  // namespace llmbench::protocol::detail
