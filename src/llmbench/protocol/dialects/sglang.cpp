/// @file
/// The "sglang" dialect: SGLang's OpenAI-compatible API (sampling parameters `ignore_eos`,
/// `min_tokens`). Still completions-based; SGLang's native `/generate` would be a dialect of its
/// own (its own request body and decoder).

#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"

namespace llmbench::protocol::detail {

const Dialect& sglang_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "sglang",
      .summary = "/v1/completions; ignore_eos, min_tokens",
      .chat = false,
      .fields = ExtraFields{.ignore_eos = true, .min_tokens = true},
  });
  return kDialect;
}

}  // namespace llmbench::protocol::detail
