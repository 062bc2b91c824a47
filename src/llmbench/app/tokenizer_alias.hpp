#pragma once
/// @file
/// `--tokenizer` given as a Hugging Face model id (what `vllm bench serve --tokenizer` users
/// pass, e.g. deepseek-ai/DeepSeek-R1): the known DeepSeek, Qwen and Llama ids map to the bundled
/// tokenizer folders of the data (`<data>/tokenizers/<name>`, see its README.md); llmbench never
/// downloads from the Hub, so any other id is an error that says which local folder to give.

#include <array>
#include <string>
#include <string_view>

namespace llmbench::app {

/// One rule: a Hugging Face id, or an id prefix when `prefix` is set (ASCII case ignored), and the
/// bundled tokenizer name it means.
struct TokenizerAlias {
  std::string_view id;
  std::string_view bundled;
  bool prefix = false;
};

/// The known ids. The DeepSeek V3/R1/V3.1 releases share one tokenizer family with per-release
/// special tokens (each has its own folder); Qwen2.5 and Qwen3 sizes share their family's
/// tokenizer; Llama 3, 3.1, 3.2 and 3.3 share the Llama 3 vocabulary and merges.
inline constexpr std::array<TokenizerAlias, 15> kTokenizerAliases{{
    {.id = "deepseek-ai/DeepSeek-V3.1", .bundled = "deepseek-v3.1", .prefix = true},
    {.id = "deepseek-ai/DeepSeek-V3", .bundled = "deepseek-v3", .prefix = true},
    {.id = "deepseek-ai/DeepSeek-R1-Distill-Qwen-",
     .bundled = "deepseek-r1-distill-qwen",
     .prefix = true},
    // The Llama distills carry Llama 3's vocabulary, not DeepSeek's.
    {.id = "deepseek-ai/DeepSeek-R1-Distill-Llama-", .bundled = "llama3", .prefix = true},
    {.id = "deepseek-ai/DeepSeek-R1", .bundled = "deepseek-r1", .prefix = true},
    {.id = "deepseek-ai/deepseek-llm-", .bundled = "deepseek-llm", .prefix = true},
    {.id = "deepseek-ai/deepseek-coder-1.3b", .bundled = "deepseek-coder", .prefix = true},
    {.id = "deepseek-ai/deepseek-coder-6.7b", .bundled = "deepseek-coder", .prefix = true},
    {.id = "deepseek-ai/deepseek-coder-33b", .bundled = "deepseek-coder", .prefix = true},
    {.id = "Qwen/Qwen2.5-", .bundled = "qwen2.5", .prefix = true},
    {.id = "Qwen/Qwen3-", .bundled = "qwen3", .prefix = true},
    {.id = "meta-llama/Meta-Llama-3-", .bundled = "llama3", .prefix = true},
    {.id = "meta-llama/Llama-3.1-", .bundled = "llama3", .prefix = true},
    {.id = "meta-llama/Llama-3.2-", .bundled = "llama3", .prefix = true},
    {.id = "meta-llama/Llama-3.3-", .bundled = "llama3", .prefix = true},
}};

/// `spec` unchanged when it is an existing path or not of the form `org/name`; the bundled name
/// of a known Hugging Face id (first matching rule of `kTokenizerAliases`); otherwise throws
/// `Exception` naming `--tokenizer`, saying that ids are not downloaded and which folder to give.
std::string resolve_tokenizer_alias(const std::string& spec);

}  // namespace llmbench::app
