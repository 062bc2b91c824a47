/// @file
/// The "llamacpp" dialect: llama.cpp's server (tools/server README: `/completion` options
/// `ignore_eos`, `n_predict`, also read by its OpenAI-compatible endpoints; responses carry
/// `timings`, and a failed stream ends with an `error:` field line, both decoded by `Decoder`).

#include "llmbench/protocol/detail/dialects.hpp"
#include "llmbench/protocol/detail/openai_compatible.hpp"

namespace llmbench::protocol::detail {

const Dialect& llamacpp_dialect() noexcept {
  static const OpenAICompatible kDialect(Spec{
      .name = "llamacpp",
      .summary =
          "/v1/completions; ignore_eos, n_predict, top_k, min_p, repeat_penalty; reads timings",
      .chat = false,
      .fields =
          ExtraFields{
              .ignore_eos = true, .n_predict = true, .sampling = true, .repeat_penalty_name = true},
  });
  return kDialect;
}

}  // namespace llmbench::protocol::detail
