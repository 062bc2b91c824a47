#pragma once
/// @file
/// Exact Hugging Face `tokenizer.json` tokenizer (byte-level BPE family: DeepSeek-V3/R1/V3.1,
/// deepseek-llm, deepseek-coder, Qwen2.5/Qwen3, R1-Distill-Qwen, Llama-3).
///
/// The pipeline follows HF tokenizers 0.23 (`tokenizers/src/tokenizer/mod.rs`) step by step:
/// 1. input must be valid UTF-8 (HF's Rust core only accepts `&str`);
/// 2. added tokens with `normalized:false` are cut out (leftmost-longest match, honouring
///    lstrip/rstrip/single_word), the remaining segments are normalized (NFC/NFD/NFKC/NFKD via
///    utf8proc, `Sequence`), then added tokens with `normalized:true` are cut out the same way;
/// 3. each remaining segment is pre-tokenized (`Sequence`, `Split` with an Oniguruma regex — the
///    engine HF itself uses — or a literal, all five split behaviours and `invert`, `Digits`,
///    `ByteLevel` with or without the GPT-2 regex); every piece is the whole subject of the next
///    step, so anchors and look-ahead never see past it. The main regexes of DeepSeek-V3,
///    Qwen2/3 and Llama-3 and simple `[ranges]+` / `\p{N}{1,3}` splits run on hand-written
///    matchers (fast_split.hpp) that use Oniguruma's own Unicode tables and are tested to give
///    the same pieces; every other regex runs on Oniguruma;
/// 4. each piece is BPE-encoded on its UTF-8 bytes (merge rank heap, lowest rank then leftmost;
///    `ignore_merges` looks the whole piece up first);
/// 5. with `add_special_tokens` the post-processor adds its tokens (`TemplateProcessing`,
///    `RobertaProcessing`, `BertProcessing`, `Sequence`, `ByteLevel`); when tokenizer_config.json
///    names a Llama tokenizer class the BOS/EOS decision comes from its `add_bos_token` /
///    `add_eos_token` (defaults true / false), as transformers' `LlamaTokenizerFast` does.
/// Semantics and the facts behind them: ../shared/data/tokenizers/SEMANTICS.md.
///
/// A `Tokenizer` is immutable after loading and may be shared by threads; per-call working memory
/// lives in a `Scratch`, one per thread (llama.cpp habit).

#include "llmbench/core/error.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::tokenizer {

/// A token id (index into the tokenizer's vocabulary including added tokens).
using TokenId = std::uint32_t;

/// Result of one `encode` call.
struct Encoding {
  std::vector<TokenId> ids;  ///< token ids, post-processor tokens included
  /// Token strings as HF reports them (byte-level alphabet, e.g. "Ġthe"; added tokens verbatim);
  /// filled only when `EncodeOptions::want_tokens`.
  std::vector<std::string> tokens;
  /// [begin, end) byte offsets into the input text per token; filled only when
  /// `EncodeOptions::want_offsets`. Post-processor tokens get {0, 0}. When a normalizer changed a
  /// segment, every token of that segment gets the whole segment's span.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
};

/// Options of one `encode` call.
struct EncodeOptions {
  bool add_special_tokens = false;  ///< run the post-processor (BOS etc.), as HF/transformers
  bool want_tokens = false;         ///< fill `Encoding::tokens`
  bool want_offsets = false;        ///< fill `Encoding::offsets`
};

/// Per-thread working memory for `Tokenizer::encode` (regex match regions, a word cache). Reusing
/// one across calls avoids allocation and keeps the cache warm. Not thread-safe; not tied to one
/// tokenizer (the cache is cleared when used with a different one).
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Scratch(Scratch&&) noexcept;
  Scratch& operator=(Scratch&&) noexcept;

  /// Implementation detail (defined in tokenizer.cpp).
  struct State;
  /// The implementation's state.
  [[nodiscard]] State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

/// An immutable, loaded tokenizer. Cheap to copy (shared state).
class Tokenizer {
 public:
  /// Loads `path`: a folder holding `tokenizer.json` (+ optional `tokenizer_config.json`), or a
  /// tokenizer JSON file (a `tokenizer_config.json` beside it is read if present). Errors name the
  /// file and the JSON field (e.g. "model.merges[12]"); unsupported components say "unsupported".
  static Result<Tokenizer> load(const std::filesystem::path& path);

  /// Builds from the text of a tokenizer.json (`config_json`: the text of tokenizer_config.json,
  /// empty when absent). `source` names the input in error messages.
  static Result<Tokenizer> from_json(std::string_view tokenizer_json, std::string_view config_json,
                                     std::string_view source);

  /// Encodes `text` (must be valid UTF-8; the error gives the byte offset of the first bad byte).
  Result<Encoding> encode(std::string_view text, const EncodeOptions& options,
                          Scratch& scratch) const;
  /// Convenience: ids only, with a temporary scratch.
  Result<std::vector<TokenId>> encode(std::string_view text, bool add_special_tokens = false) const;
  /// Number of tokens `encode` would return (no token strings or offsets are built).
  Result<std::size_t> count(std::string_view text, bool add_special_tokens, Scratch& scratch) const;

  /// Decodes ids with the ByteLevel decoder: token strings mapped back to bytes, then a lossy
  /// UTF-8 decode (each maximal invalid subsequence becomes U+FFFD, as Rust's
  /// `String::from_utf8_lossy`). `skip_special_tokens` drops added tokens marked `special`.
  /// Fails on an id outside the vocabulary (the error gives its index in `ids`).
  Result<std::string> decode(std::span<const TokenId> ids, bool skip_special_tokens = false) const;

  /// Token string of `id` (byte-level form), or empty when out of range.
  [[nodiscard]] std::string_view id_to_token(TokenId id) const;
  /// Id of a token string (vocabulary or added token), or -1.
  [[nodiscard]] std::int64_t token_to_id(std::string_view token) const;
  /// One past the highest id (vocabulary and added tokens).
  [[nodiscard]] std::size_t vocab_size() const;
  /// Ids added before the text with `add_special_tokens` (e.g. {0} for DeepSeek-V3 via
  /// transformers' BOS rule); lets callers report the BOS handling they used.
  [[nodiscard]] std::span<const TokenId> special_prefix() const;
  /// Ids added after the text with `add_special_tokens`.
  [[nodiscard]] std::span<const TokenId> special_suffix() const;

  /// Implementation detail (defined in tokenizer.cpp).
  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace llmbench::tokenizer
