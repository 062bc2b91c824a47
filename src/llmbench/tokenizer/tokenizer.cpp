#include "llmbench/tokenizer/tokenizer.hpp"

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

// Pre-tokenizes and BPE-encodes one text segment `text`. `identity` says whether `text` is the
// input itself starting at byte `base` (else every token gets the span [base, base_end)).
void encode_plain(const Tokenizer::Impl& impl, std::string_view text, bool identity,
                  std::uint32_t base, std::uint32_t base_end, Scratch::State& s, Emitter& emit) {
  detail::pre_tokenize(impl.pre_steps, text, s.pre, s.pieces);
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
  const std::int64_t bad = detail::find_invalid_utf8(text);
  if (bad >= 0) {
    return Error{fmt::format("invalid UTF-8 (byte 0x{:02X})",
                             static_cast<unsigned>(
                                 static_cast<unsigned char>(text[static_cast<std::size_t>(bad)]))),
                 "text", bad};
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
      s.normalized.assign(sub);
      for (const auto form : impl.normalizers) {
        s.normalized = detail::normalize(s.normalized, form);
      }
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
        encode_plain(impl, work.substr(ns.b, ns.e - ns.b), identity, b, e, s, emit);
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
    bytes += impl.id_to_bytes[id];
  }
  return Result<std::string>(boost::system::in_place_value, detail::utf8_lossy(bytes));
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

}  // namespace llmbench::tokenizer
