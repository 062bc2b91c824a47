/// @file
/// The "vllm" and "vllm-chat" dialects (completions and chat, as `vllm bench serve` names them):
/// vLLM's OpenAI-compatible server ("Extra parameters": `ignore_eos`,
/// `min_tokens`; `stream_options.continuous_usage_stats` for usage on every chunk).

#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"

namespace llmbench::protocol::detail {

const Dialect& vllm_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "vllm",
      .summary = "/v1/completions; ignore_eos, min_tokens, stream_options.continuous_usage_stats",
      .chat = false,
      .fields =
          ExtraFields{
              .ignore_eos = true, .min_tokens = true, .continuous_usage = true, .sampling = true},
  });
  return kDialect;
}

const Dialect& vllm_chat_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "vllm-chat",
      .summary = "/v1/chat/completions; the fields of vllm",
      .chat = true,
      .fields =
          ExtraFields{
              .ignore_eos = true, .min_tokens = true, .continuous_usage = true, .sampling = true},
  });
  return kDialect;
}

}  // namespace llmbench::protocol::detail
