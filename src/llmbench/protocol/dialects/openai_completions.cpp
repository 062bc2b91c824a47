/// @file
/// The "openai" dialect: an OpenAI-compatible `/v1/completions` server (OpenAI API reference,
/// "Create completion"). `ignore_eos` is sent too, as `vllm bench serve` does for this backend:
/// the servers this name is used for (vLLM, SGLang, llama.cpp) accept it.

#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"

namespace llmbench::protocol::detail {

const Dialect& openai_completions_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "openai",
      .summary =
          "/v1/completions; OpenAI fields, ignore_eos, top_k, min_p, repetition_penalty (as vllm "
          "bench serve --backend openai)",
      .chat = false,
      .fields = ExtraFields{.ignore_eos = true, .sampling = true},
  });
  return kDialect;
}

}  // namespace llmbench::protocol::detail
