#pragma once
/// @file
/// The base of every OpenAI-compatible dialect: `/v1/models` discovery, the OpenAI request body
/// with the extra fields a server accepts, and the OpenAI stream decoder. A dialect file fills in
/// a `Spec`; a dialect with another wire format derives from `Dialect` directly.

#include "llmbench/protocol/dialect.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace llmbench::protocol::detail {

/// The request fields beyond OpenAI's that a server accepts.
struct ExtraFields {
  bool ignore_eos = false;        ///< `ignore_eos` (vLLM, SGLang, llama.cpp)
  bool min_tokens = false;        ///< `min_tokens` (vLLM, SGLang)
  bool continuous_usage = false;  ///< `stream_options.continuous_usage_stats` (vLLM)
  bool n_predict = false;         ///< `n_predict` beside `max_tokens` (llama.cpp `/completion`)
  /// `top_k`, `min_p` and the repetition penalty (vLLM and SGLang sampling parameters; llama.cpp
  /// reads the first two under these names)
  bool sampling = false;
  /// the repetition penalty under llama.cpp's name `repeat_penalty` (server README, `/completion`
  /// options) instead of vLLM's and SGLang's `repetition_penalty`
  bool repeat_penalty_name = false;
};

/// What distinguishes one OpenAI-compatible dialect.
struct Spec {
  std::string_view name{};
  std::string_view summary{};
  bool chat = false;
  ExtraFields fields{};
};

/// The OpenAI request body for `request` with the `fields` a server accepts, in the key order of
/// the OpenAI API examples (model first); `extra_body_json` merged last.
std::string openai_request_body(const ExtraFields& fields, const GenRequest& request);

/// The flags of `request` that `fields` cannot carry ("--ignore-eos", "--min-tokens",
/// "--continuous-usage", "--top-k", "--min-p", "--repetition-penalty", in that order).
std::vector<std::string_view> openai_unhonoured(const ExtraFields& fields,
                                                const GenRequest& request);

/// `data[0].id` of an OpenAI model list (`GET /v1/models`, "List models").
std::optional<std::string> openai_first_model(std::string_view body);

/// A dialect that speaks OpenAI's API with the extra fields of its `Spec`.
class OpenAICompatible : public Dialect {
 public:
  explicit OpenAICompatible(const Spec& spec) noexcept : spec_(spec) {}

  [[nodiscard]] std::string_view name() const noexcept override { return spec_.name; }
  [[nodiscard]] std::string_view summary() const noexcept override { return spec_.summary; }
  [[nodiscard]] bool chat() const noexcept override { return spec_.chat; }
  [[nodiscard]] std::string_view default_endpoint(bool /*stream*/) const noexcept override {
    return spec_.chat ? "/v1/chat/completions" : "/v1/completions";
  }
  [[nodiscard]] std::string_view models_path() const noexcept override { return "/v1/models"; }
  [[nodiscard]] std::optional<std::string> first_model(std::string_view body) const override {
    return openai_first_model(body);
  }
  [[nodiscard]] std::string request_body(const GenRequest& request) const override {
    return openai_request_body(spec_.fields, request);
  }
  [[nodiscard]] std::vector<std::string_view> unhonoured_flags(
      const GenRequest& request) const override {
    return openai_unhonoured(spec_.fields, request);
  }
  [[nodiscard]] std::unique_ptr<StreamDecoder> make_decoder() const override;

 private:
  Spec spec_;
};

}  // namespace llmbench::protocol::detail
