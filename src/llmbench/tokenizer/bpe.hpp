#pragma once
/// @file
/// BPE model (internal). Byte-level form (GPT-2 alphabet tokenizers and tiktoken rank files): works
/// on the raw bytes of a pre-token; the vocabulary and the merges are converted from the GPT-2 byte
/// alphabet to byte strings once at load time. Character form (SentencePiece-style BPE, e.g. with
/// a Metaspace pre-tokenizer): starts from one symbol per character (with
/// `continuing_subword_prefix` on all but the first and `end_of_word_suffix` on the last); a
/// character missing from the vocabulary becomes its `<0xNN>` byte tokens with `byte_fallback`,
/// else the unk token (consecutive unks fused with `fuse_unk`), else is dropped
/// (HF `models/bpe/model.rs` `merge_word`).
/// Algorithm as HF tokenizers `models/bpe/word.rs` `merge_all` (without dropout): a min-heap of
/// (merge rank, position) merges the lowest-rank adjacent pair, leftmost on ties, until no
/// adjacent pair has a merge.

#include "llmbench/tokenizer/tokenizer.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmbench::tokenizer::detail {

/// Open-addressing map from a token pair (left id, right id) to (rank, merged id).
class MergeTable {
 public:
  /// Sizes the table for `n` entries.
  void reserve(std::size_t n);
  /// Inserts; returns false when the pair is already present (first occurrence wins, as HF).
  bool insert(TokenId left, TokenId right, std::uint32_t rank, TokenId merged);
  /// Number of pairs.
  [[nodiscard]] std::size_t size() const { return size_; }
  /// Approximate heap bytes held.
  [[nodiscard]] std::size_t memory_bytes() const;
  /// Looks up a pair; returns false when it has no merge.
  bool find(TokenId left, TokenId right, std::uint32_t& rank, TokenId& merged) const {
    if (slots_.empty()) {
      return false;
    }
    const std::uint64_t key = (std::uint64_t{left} << 32) | right;
    std::size_t i = hash(key) & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.key == key) {
        rank = s.rank;
        merged = s.merged;
        return true;
      }
      if (s.key == kEmpty) {
        return false;
      }
      i = (i + 1) & mask_;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  struct Slot {
    std::uint64_t key = kEmpty;
    std::uint32_t rank = 0;
    TokenId merged = 0;
  };
  static std::size_t hash(std::uint64_t key) {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 20);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

/// Transparent string hash so maps keyed by std::string accept string_view look-ups.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

/// Map from byte string to id with string_view look-up.
using BytesMap = std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>>;

/// Bounded cache from a pre-token's bytes to its ids (open addressing over arenas; cleared whole
/// when `kMaxEntries` is reached). Per scratch, so no locking.
class WordCache {
 public:
  static constexpr std::size_t kMaxEntries = 1 << 15;
  static constexpr std::size_t kMaxKeyBytes = 128;

  /// Ids cached for `key`, or nullptr; `count` gets their number.
  const TokenId* find(std::string_view key, std::size_t hash, std::size_t& count) const;
  /// Stores `ids` for `key` (clearing everything first when full).
  void insert(std::string_view key, std::size_t hash, const TokenId* ids, std::size_t count);
  /// Drops every entry.
  void clear();

 private:
  struct Slot {
    std::size_t hash = 0;
    std::uint32_t key_off = 0;
    std::uint32_t key_len = 0;  // 0: empty slot
    std::uint32_t ids_off = 0;
    std::uint32_t ids_len = 0;
  };
  static constexpr std::size_t kMinSlots = 1024;
  void grow();
  std::vector<Slot> slots_;  // size: a power of two, at least twice the entries
  std::string keys_;
  std::vector<TokenId> ids_;
  std::size_t size_ = 0;
};

/// Reusable buffers for `Bpe::encode`.
struct BpeScratch {
  struct Symbol {
    TokenId id;
    std::int32_t prev;
    std::int32_t next;
    std::uint32_t len;
  };
  struct Candidate {
    std::uint32_t rank;
    std::uint32_t pos;
    TokenId merged;
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
};

/// The loaded BPE model.
struct Bpe {
  bool byte_level = true;  ///< byte form (true) or character form (false), see the file comment
  std::array<std::int64_t, 256> byte_id{};  ///< byte form: id of each single byte, -1 when absent
  /// Character form with `byte_fallback`: id of `<0xNN>` per byte, -1 when absent.
  std::array<std::int64_t, 256> fallback_id{};
  bool byte_fallback = false;
  std::string prefix;  ///< character form: continuing_subword_prefix
  std::string suffix;  ///< character form: end_of_word_suffix
  MergeTable merges;
  /// Byte form: every vocabulary token expressible as bytes, by its bytes. Character form: every
  /// vocabulary token by its string.
  BytesMap bytes_to_id;
  bool ignore_merges = false;
  std::int64_t unk_id = -1;  ///< unk token id, -1 when none
  bool fuse_unk = false;

  /// Appends the ids of `piece` (raw bytes) to `ids`, and for each its byte length to `lens`
  /// when `lens` is not null.
  void encode(std::string_view piece, std::vector<TokenId>& ids, std::vector<std::uint32_t>* lens,
              BpeScratch& scratch) const;
  /// Approximate heap bytes held.
  [[nodiscard]] std::size_t memory_bytes() const;

 private:
  // Character form: the initial symbols of `piece`.
  void char_symbols(std::string_view piece, BpeScratch& scratch) const;
};

}  // namespace llmbench::tokenizer::detail
