#pragma once
/// @file
/// `GenRequest`: what one benchmark request asks a server for, independent of its dialect.

#include "llmbench/core/chat.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::protocol {

/// What to ask the server for, independent of backend.
struct GenRequest {
  std::string model{};
  bool chat = false;        ///< send `messages` to a chat endpoint, else `prompt`
  std::string prompt{};     ///< completions prompt (chat: used as one user message if
                            ///< `messages` is empty)
  ChatMessages messages{};  ///< chat history
  /// Completions only: when non-empty, sent as `"prompt": [id, ...]` instead of `prompt` (OpenAI
  /// "Create completion": prompt may be an array of tokens; vLLM and SGLang use the ids as given,
  /// adding no special tokens).
  std::vector<std::uint32_t> prompt_token_ids{};
  std::int64_t max_tokens = -1;  ///< output length; -1 = leave to the server
  bool stream = true;
  bool include_usage = true;               ///< `stream_options.include_usage`
  bool continuous_usage = false;           ///< vLLM `stream_options.continuous_usage_stats`
  bool ignore_eos = false;                 ///< sent only to backends that support it
  std::optional<std::int64_t> min_tokens;  ///< sent only to backends that support it
  std::optional<double> temperature;
  std::optional<double> top_p;
  /// Sampling knobs of vLLM's and SGLang's sampling parameters (`--top-k`, `--min-p`,
  /// `--repetition-penalty`; sent only where the dialect takes them) and OpenAI's two
  /// penalties (`--presence-penalty`, `--frequency-penalty`, in OpenAI's API itself).
  std::optional<std::int64_t> top_k;
  std::optional<double> min_p;
  std::optional<double> presence_penalty;
  std::optional<double> frequency_penalty;
  std::optional<double> repetition_penalty;
  std::string extra_body_json;  ///< a JSON object whose members are merged last (may override)
};

}  // namespace llmbench::protocol
