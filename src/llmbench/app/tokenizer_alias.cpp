#include "llmbench/app/tokenizer_alias.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace llmbench::app {

namespace {

bool iequal_prefix(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

/// `org/name`: exactly one '/', neither part empty, no leading '.', '/' or '~' (paths).
bool looks_like_hub_id(std::string_view spec) {
  const auto slash = spec.find('/');
  return slash != std::string_view::npos && slash > 0 && slash + 1 < spec.size() &&
         spec.find('/', slash + 1) == std::string_view::npos && spec.front() != '.' &&
         spec.front() != '~';
}

}  // namespace

std::string resolve_tokenizer_alias(const std::string& spec) {
  std::error_code ec;
  if (!looks_like_hub_id(spec) || std::filesystem::exists(spec, ec))
    return spec;
  for (const auto& rule : kTokenizerAliases) {
    const bool match = rule.prefix ? iequal_prefix(spec, rule.id)
                                   : spec.size() == rule.id.size() && iequal_prefix(spec, rule.id);
    if (match)
      return std::string(rule.bundled);
  }
  throw Exception(Error{
      fmt::format("'{}' looks like a Hugging Face model id, and llmbench does not download from "
                  "the Hub: fetch its tokenizer.json into a folder (e.g. huggingface-cli download "
                  "{} tokenizer.json tokenizer_config.json --local-dir DIR) and give --tokenizer "
                  "DIR. Known ids map to the bundled tokenizers: DeepSeek V3, V3.1, R1, "
                  "R1-Distill-Qwen, deepseek-llm, deepseek-coder, Qwen2.5, Qwen3, Llama 3.x",
                  spec, spec),
      "--tokenizer", -1});
}

}  // namespace llmbench::app
