#include "llmbench/app/tokenizers.hpp"

#include "llmbench/app/tokenizer_alias.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/tokenizer/resolve.hpp"

#include <fmt/core.h>

#include <array>
#include <filesystem>
#include <openssl/evp.h>

namespace llmbench::app {

namespace {

/// The SHA-256 of the file at `path` as 64 lowercase hex digits (FIPS 180-4, through OpenSSL's
/// EVP digest API); "" when the file cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path) {
  auto bytes = read_file(path);
  if (!bytes)
    return {};
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes->data(), bytes->size(), digest.data(), &length, EVP_sha256(), nullptr) != 1)
    return {};
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest.at(i));
  return hex;
}

}  // namespace

std::shared_ptr<const tokenizer::Tokenizer> load_tokenizer(const std::string& given) {
  if (given.empty())
    return nullptr;
  auto resolved = tokenizer::load_tokenizer(resolve_tokenizer_alias(given));
  if (!resolved)
    throw Exception(Error{resolved.error().what(), "--tokenizer", -1});
  const tokenizer::Tokenizer& tok = resolved->tokenizer;
  std::string prefix;
  for (const auto id : tok.special_prefix()) {
    prefix += fmt::format("{}id {} {}", prefix.empty() ? "" : ", ", id, tok.id_to_token(id));
  }
  log::info("tokenizer {} ({} tokens); completions prompt lengths include its special prefix: {}",
            resolved->path.string(), tok.vocab_size(), prefix.empty() ? "none" : prefix);
  return std::make_shared<const tokenizer::Tokenizer>(std::move(resolved->tokenizer));
}

std::shared_ptr<const tokenizer::ChatTemplate> load_chat_template(const std::string& given) {
  if (given.empty())
    return nullptr;
  // The same lookup as `load_tokenizer`: a Hugging Face id names the bundled folder for the
  // template as it does for the tokenizer.
  auto path = tokenizer::resolve_tokenizer(resolve_tokenizer_alias(given));
  if (!path)
    throw Exception(Error{path.error().what(), "--tokenizer", -1});
  auto loaded = tokenizer::load_chat_template(*path);
  if (!loaded)
    throw Exception(Error{loaded.error().what(), "--tokenizer", -1});
  if (!loaded->has_value())
    return nullptr;
  log::info("chat template {}: chat prompt lengths count the rendered prompt", (*loaded)->name());
  return std::make_shared<const tokenizer::ChatTemplate>(std::move(**loaded));
}

nlohmann::json tokenizer_json(const std::string& given) {
  if (given.empty())
    return nullptr;
  nlohmann::json j{{"given", given}};
  if (auto path = tokenizer::resolve_tokenizer(resolve_tokenizer_alias(given))) {
    j["file"] = path->string();
    j["sha256"] = sha256_file_hex(*path);
  }
  return j;
}

}  // namespace llmbench::app
