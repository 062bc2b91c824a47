/// @file
/// The "sglang-oai" and "sglang-oai-chat" dialects: SGLang's OpenAI-compatible API, completions
/// and chat (sampling parameters `ignore_eos`, `min_tokens`, `top_k`, `min_p`,
/// `repetition_penalty`), as SGLang's `bench_serving.py` names them. SGLang's own `--backend
/// sglang` is its native `/generate`, which llmbench does not speak yet: the name `sglang` is
/// accepted as `sglang-oai`, with a warning (dialect.cpp).

#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"

namespace llmbench::protocol::detail {

const Dialect& sglang_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "sglang-oai",
      .summary = "/v1/completions of SGLang; ignore_eos, min_tokens, top_k, min_p, "
                 "repetition_penalty",
      .chat = false,
      .fields = ExtraFields{.ignore_eos = true, .min_tokens = true, .sampling = true},
  });
  return kDialect;
}

const Dialect& sglang_chat_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "sglang-oai-chat",
      .summary = "/v1/chat/completions of SGLang; the fields of sglang-oai",
      .chat = true,
      .fields = ExtraFields{.ignore_eos = true, .min_tokens = true, .sampling = true},
  });
  return kDialect;
}

}  // namespace llmbench::protocol::detail
