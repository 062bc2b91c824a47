#include "llmbench/tokenizer/tokenizer.hpp"

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/impl.hpp"

#include <fmt/core.h>

namespace llmbench::tokenizer {
namespace {

// Appends tokens of one encode call; knows what the caller asked for.
class Emitter {
 public:
  Emitter(const Tokenizer::Impl& impl, const EncodeOptions& options, Encoding& out)
      : impl_(impl), options_(options), out_(out) {}

  void push(TokenId id, std::uint32_t b, std::uint32_t e) {
    out_.ids.push_back(id);
    if (options_.want_tokens) {
      out_.tokens.push_back(id < impl_.id_to_token.size() ? impl_.id_to_token[id] : std::string());
    }
    if (options_.want_offsets) {
      out_.offsets.emplace_back(b, e);
    }
  }
  [[nodiscard]] bool want_offsets() const { return options_.want_offsets; }

 private:
  const Tokenizer::Impl& impl_;
  const EncodeOptions& options_;
  Encoding& out_;
};

// Pre-tokenizes and BPE-encodes one text segment `input`. `identity` says whether `input` is
// the input itself starting at byte `base` (else every token gets the span [base, base_end)).
// `at_start`: the segment begins the input.
void encode_plain(const Tokenizer::Impl& impl, std::string_view input, bool identity, bool at_start,
                  std::uint32_t base, std::uint32_t base_end, Scratch::State& s, Emitter& emit) {
  const std::string_view text =
      detail::pre_tokenize(impl.pre_steps, input, at_start, s.pre, s.pieces);
  identity = identity && text.data() == input.data();
  std::vector<TokenId>& ids = s.piece_ids;
  for (const detail::Span piece : s.pieces) {
    const std::string_view bytes = text.substr(piece.b, piece.e - piece.b);
    if (!emit.want_offsets()) {
      const bool cacheable = bytes.size() <= detail::WordCache::kMaxKeyBytes;
      const std::size_t hash = cacheable ? std::hash<std::string_view>{}(bytes) : 0;
      std::size_t count = 0;
      if (const TokenId* hit = cacheable ? s.cache.find(bytes, hash, count) : nullptr) {
        for (std::size_t k = 0; k < count; ++k) {
          emit.push(hit[k], 0, 0);
        }
        continue;
      }
      ids.clear();
      impl.bpe.encode(bytes, ids, nullptr, s.bpe);
      for (const TokenId id : ids) {
        emit.push(id, 0, 0);
      }
      if (cacheable) {
        s.cache.insert(bytes, hash, ids.data(), ids.size());
      }
      continue;
    }
    ids.clear();
    s.lens.clear();
    impl.bpe.encode(bytes, ids, &s.lens, s.bpe);
    std::uint32_t at = base + piece.b;
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (identity) {
        emit.push(ids[k], at, at + s.lens[k]);
        at += s.lens[k];
      } else {
        emit.push(ids[k], base, base_end);
      }
    }
  }
}

}  // namespace

Scratch::Scratch() : state_(std::make_unique<State>()) {}
Scratch::~Scratch() = default;
Scratch::Scratch(Scratch&&) noexcept = default;
Scratch& Scratch::operator=(Scratch&&) noexcept = default;

Result<Encoding> Tokenizer::encode(std::string_view text, const EncodeOptions& options,
                                   Scratch& scratch) const {
  if (const std::size_t bad = utf8_first_invalid(text); bad < text.size()) {
    return Error{fmt::format("invalid UTF-8 (byte 0x{:02X})",
                             static_cast<unsigned>(static_cast<unsigned char>(text[bad]))),
                 "text", static_cast<std::int64_t>(bad)};
  }
  if (text.size() > 0xFFFFFFF0u) {
    return Error{"text longer than 4 GiB", "text", -1};
  }
  const Impl& impl = *impl_;
  Scratch::State& s = scratch.state();
  if (s.owner != impl_.get()) {
    s.cache.clear();
    s.owner = impl_.get();
  }
  Encoding out;
  out.ids.reserve(text.size() / 3 + 8);
  Emitter emit(impl, options, out);
  if (options.add_special_tokens) {
    for (const TokenId id : impl.prefix) {
      emit.push(id, 0, 0);
    }
  }
  s.raw_segments.clear();
  if (impl.raw_matcher.empty()) {
    s.raw_segments.push_back({-1, 0, static_cast<std::uint32_t>(text.size())});
  } else {
    impl.raw_matcher.split(text, impl.added, s.raw_segments);
  }
  for (const detail::Segment seg : s.raw_segments) {
    if (seg.id >= 0) {
      emit.push(static_cast<TokenId>(seg.id), seg.b, seg.e);
      continue;
    }
    const std::string_view sub = text.substr(seg.b, seg.e - seg.b);
    std::string_view work = sub;
    bool identity = true;
    if (!impl.normalizers.empty()) {
      detail::apply_normalizers(impl.normalizers, sub, s.normalized, s.pre);
      identity = s.normalized == sub;
      work = identity ? sub : std::string_view(s.normalized);
    }
    s.norm_segments.clear();
    if (impl.norm_matcher.empty()) {
      s.norm_segments.push_back({-1, 0, static_cast<std::uint32_t>(work.size())});
    } else {
      impl.norm_matcher.split(work, impl.added, s.norm_segments);
    }
    for (const detail::Segment ns : s.norm_segments) {
      const std::uint32_t b = identity ? seg.b + ns.b : seg.b;
      const std::uint32_t e = identity ? seg.b + ns.e : seg.e;
      if (ns.id >= 0) {
        emit.push(static_cast<TokenId>(ns.id), b, e);
      } else {
        encode_plain(impl, work.substr(ns.b, ns.e - ns.b), identity, seg.b == 0 && ns.b == 0, b, e,
                     s, emit);
      }
    }
  }
  if (options.add_special_tokens) {
    for (const TokenId id : impl.suffix) {
      emit.push(id, 0, 0);
    }
  }
  return out;
}

Result<std::vector<TokenId>> Tokenizer::encode(std::string_view text,
                                               bool add_special_tokens) const {
  Scratch scratch;
  EncodeOptions options;
  options.add_special_tokens = add_special_tokens;
  auto r = encode(text, options, scratch);
  if (!r) {
    return r.error();
  }
  return std::move(r->ids);
}

Result<std::size_t> Tokenizer::count(std::string_view text, bool add_special_tokens,
                                     Scratch& scratch) const {
  EncodeOptions options;
  options.add_special_tokens = add_special_tokens;
  auto r = encode(text, options, scratch);
  if (!r) {
    return r.error();
  }
  return r->ids.size();
}

Result<std::string> Tokenizer::decode(std::span<const TokenId> ids,
                                      bool skip_special_tokens) const {
  const Impl& impl = *impl_;
  std::string bytes;
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const TokenId id = ids[i];
    if (id >= impl.id_to_bytes.size()) {
      return Error{fmt::format("id {} at index {} is outside the vocabulary (size {})", id, i,
                               impl.id_to_bytes.size()),
                   "ids", static_cast<std::int64_t>(i)};
    }
    if (skip_special_tokens && impl.is_special[id] != 0) {
      continue;
    }
    if (impl.bytes_decoder) {
      bytes += impl.id_to_bytes[id];
    } else {
      tokens.push_back(impl.id_to_token[id]);
    }
  }
  if (!impl.bytes_decoder) {
    detail::PreScratch scratch;
    return Result<std::string>(boost::system::in_place_value,
                               detail::decode_chain(impl.decoders, tokens, scratch));
  }
  return Result<std::string>(boost::system::in_place_value, utf8_lossy(bytes));
}

std::string_view Tokenizer::id_to_token(TokenId id) const {
  return id < impl_->id_to_token.size() ? std::string_view(impl_->id_to_token[id])
                                        : std::string_view();
}

std::int64_t Tokenizer::token_to_id(std::string_view token) const {
  const auto it = impl_->token_to_id.find(token);
  return it == impl_->token_to_id.end() ? -1 : static_cast<std::int64_t>(it->second);
}

std::size_t Tokenizer::vocab_size() const {
  return impl_->id_to_token.size();
}

std::span<const TokenId> Tokenizer::special_prefix() const {
  return impl_->prefix;
}

std::span<const TokenId> Tokenizer::special_suffix() const {
  return impl_->suffix;
}

std::size_t Tokenizer::memory_bytes() const {
  const Impl& impl = *impl_;
  // Approximation: container capacities plus ~48 bytes per hash node / std::string header, and
  // the heap text of strings too long for the small-string buffer (15 bytes in libstdc++).
  auto str = [](const std::string& x) {
    return sizeof(std::string) + (x.size() > 15 ? x.capacity() + 1 : 0);
  };
  std::size_t n = sizeof(Impl) + impl.bpe.memory_bytes();
  for (const auto& t : impl.id_to_token) {
    n += str(t);
  }
  for (const auto& t : impl.id_to_bytes) {
    n += str(t);
  }
  n += impl.token_to_id.bucket_count() * sizeof(void*);
  for (const auto& [key, id] : impl.token_to_id) {
    n += 16 + str(key);
  }
  n += impl.is_special.capacity() + impl.added.capacity() * sizeof(detail::AddedToken);
  return n;
}

}  // namespace llmbench::tokenizer
