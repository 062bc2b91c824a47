#pragma once
/// @file
/// Exact Hugging Face `tokenizer.json` tokenizer (byte-level BPE family: DeepSeek-V3/R1/V3.1,
/// deepseek-llm, deepseek-coder, Qwen2.5/Qwen3, R1-Distill-Qwen, Llama-3; SentencePiece-style BPE
/// with Metaspace and byte fallback, e.g. Llama-2/Mistral), and tiktoken rank files
/// (`*.tiktoken`, OpenAI cl100k/o200k style). WordPiece/Unigram models are rejected as
/// unsupported.
///
/// The pipeline follows HF tokenizers 0.23 (`tokenizers/src/tokenizer/mod.rs`) step by step:
/// 1. input must be valid UTF-8 (HF's Rust core only accepts `&str`);
/// 2. added tokens with `normalized:false` are cut out (leftmost-longest match, honouring
///    lstrip/rstrip/single_word), the remaining segments are normalized (NFC/NFD/NFKC/NFKD via
///    utf8proc, `Lowercase`, `Replace`, `Prepend`, `Strip`, `Sequence`; normalize.hpp), then
///    added tokens with `normalized:true` are cut out the same way;
/// 3. each remaining segment is pre-tokenized (`Sequence`, `Split` with an Oniguruma regex — the
///    engine HF itself uses — or a literal, all five split behaviours and `invert`, `Digits`,
///    `Whitespace`, `WhitespaceSplit`, `Punctuation`, `Metaspace`, `ByteLevel` with or without
///    the GPT-2 regex and `add_prefix_space`); every piece is the whole subject of the next
///    step, so anchors and look-ahead never see past it. The main regexes of DeepSeek-V3,
///    Qwen2/3 and Llama-3 and simple `[ranges]+` / `\p{N}{1,3}` splits run on hand-written
///    matchers (fast_split.hpp) that use Oniguruma's own Unicode tables and are tested to give
///    the same pieces; every other regex runs on Oniguruma;
/// 4. each piece is BPE-encoded (bpe.hpp: merge rank heap, lowest rank then leftmost;
///    `ignore_merges` looks the whole piece up first) on its bytes (byte-level vocabularies,
///    tiktoken) or its characters (SentencePiece-style: `byte_fallback`, `unk_token`, `fuse_unk`,
///    `continuing_subword_prefix`, `end_of_word_suffix`);
/// 5. with `add_special_tokens` the post-processor adds its tokens (`TemplateProcessing`,
///    `RobertaProcessing`, `BertProcessing`, `Sequence`, `ByteLevel`); when tokenizer_config.json
///    names a Llama tokenizer class the BOS/EOS decision comes from its `add_bos_token` /
///    `add_eos_token` (defaults true / false), as transformers' `LlamaTokenizerFast` does.
/// Decoding runs the `decoder` chain (`ByteLevel`, `Metaspace`, `ByteFallback`, `Fuse`, `Strip`,
/// `Replace`, `Sequence`; decoder.hpp).
/// Semantics and the facts behind them: docs/tokenizer.md.
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
  /// `EncodeOptions::want_offsets`. Post-processor tokens get {0, 0}. When a normalizer or a
  /// text-rewriting pre-tokenizer (Metaspace, ByteLevel `add_prefix_space`) changed a segment,
  /// every token of that segment gets the whole segment's span.
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

/// Options of `Tokenizer::load`.
struct LoadOptions {
  /// Pre-tokenizer regex for tiktoken rank files: "cl100k" (GPT-4's pattern), "o200k" (GPT-4o's)
  /// or an Oniguruma regex. Empty: "o200k" when the file name contains "o200k", else "cl100k".
  std::string tiktoken_pattern;
};

/// An immutable, loaded tokenizer. Cheap to copy (shared state).
class Tokenizer {
 public:
  /// Loads `path`: a folder holding `tokenizer.json` (+ optional `tokenizer_config.json`), or a
  /// tokenizer JSON file (a `tokenizer_config.json` beside it is read if present). Errors name the
  /// file and the JSON field (e.g. "model.merges[12]"); unsupported components say "unsupported".
  /// A file whose name ends in `.tiktoken` (or whose text does not start with '{') is read as a
  /// tiktoken rank file (see `from_tiktoken`). Invalid JSON gives the byte offset and line.
  static Result<Tokenizer> load(const std::filesystem::path& path,
                                const LoadOptions& options = LoadOptions{});

  /// Builds from the text of a tiktoken rank file: one "<base64 token bytes> <rank>" per line
  /// (tiktoken `load_tiktoken_bpe`); the rank is the id. BPE merges the adjacent pair whose
  /// concatenated bytes have the lowest rank, leftmost on ties, and a piece that is itself a
  /// token is emitted whole (tiktoken `byte_pair_encode`). `pattern` as
  /// `LoadOptions::tiktoken_pattern` ("" means "cl100k"). The file's special tokens (e.g.
  /// `<|endoftext|>`) are not part of it and are not known. Errors give `source` and the line.
  static Result<Tokenizer> from_tiktoken(std::string_view text, std::string_view pattern,
                                         std::string_view source);

  /// Builds from the text of a tokenizer.json (`config_json`: the text of tokenizer_config.json,
  /// empty when absent). `source` names the input in error messages.
  static Result<Tokenizer> from_json(std::string_view tokenizer_json, std::string_view config_json,
                                     std::string_view source);

  /// Encodes `text` (must be valid UTF-8; the error gives the byte offset of the first bad byte).
  Result<Encoding> encode(std::string_view text, const EncodeOptions& options,
                          Scratch& scratch) const;
  /// Convenience: ids only, with a temporary scratch.
  Result<std::vector<TokenId>> encode(std::string_view text, bool add_special_tokens = false) const;
  /// Encodes `texts` on `threads` threads (0: hardware concurrency; never more than the number
  /// of texts), one `Scratch` per thread; the encodings come back in input order. On failure the
  /// error of the lowest failing index is returned, its source naming it ("texts[3]") and its
  /// offset the byte offset inside that text.
  Result<std::vector<Encoding>> encode_batch(std::span<const std::string_view> texts,
                                             const EncodeOptions& options, int threads = 0) const;
  /// Number of tokens `encode` would return (no token strings or offsets are built).
  Result<std::size_t> count(std::string_view text, bool add_special_tokens, Scratch& scratch) const;

  /// Decodes ids: token strings through the file's decoder chain (ByteLevel: mapped back to bytes,
  /// then a lossy UTF-8 decode where each maximal invalid subsequence becomes U+FFFD, as Rust's
  /// `String::from_utf8_lossy`; no decoder: tokens joined with spaces, as HF).
  /// `skip_special_tokens` drops added tokens marked `special`.
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
  /// Approximate heap bytes held by the loaded tokenizer (vocabulary, maps, merge table).
  [[nodiscard]] std::size_t memory_bytes() const;

  /// Implementation detail (defined in tokenizer.cpp).
  struct Impl;
  /// The implementation's state.
  [[nodiscard]] const Impl& impl() const { return *impl_; }

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

/// Incremental decoding of a token stream (e.g. SSE deltas): `step` takes one id at a time and
/// returns only text that later ids cannot change, holding back an incomplete UTF-8 sequence
/// (and, with byte-fallback decoders, an incomplete `<0xNN>` run). The concatenation of every
/// `step` result and the final `flush` equals `Tokenizer::decode` of all ids. With the plain
/// ByteLevel decoder this costs O(token length) per id; with other decoder chains each id
/// re-decodes the small window since the last emitted text (as HF's `DecodeStream`).
/// Holds a copy of the tokenizer (shared state); not thread-safe.
class StreamDecoder {
 public:
  /// Decodes for `tokenizer`; `skip_special_tokens` as in `Tokenizer::decode`.
  explicit StreamDecoder(Tokenizer tokenizer, bool skip_special_tokens = false);
  /// Feeds one id; returns the newly complete text (often empty). Fails on an id outside the
  /// vocabulary (offset: the number of ids fed before it).
  Result<std::string> step(TokenId id);
  /// Returns everything still held back (an incomplete sequence decodes to U+FFFD, as `decode`)
  /// and starts over.
  std::string flush();

 private:
  Tokenizer tokenizer_;
  bool skip_special_;
  bool bytes_mode_;              // plain ByteLevel decoder: work on raw bytes
  std::string pending_;          // bytes_mode_: bytes not yet emitted
  std::vector<TokenId> window_;  // other decoders: context ids + pending ids
  std::size_t context_ = 0;      // leading ids of window_ already emitted
  std::string context_text_;     // decode of those
  std::size_t fed_ = 0;
};

}  // namespace llmbench::tokenizer
