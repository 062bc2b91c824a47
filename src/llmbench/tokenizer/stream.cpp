/// @file
/// `Tokenizer::encode_batch` (threads) and `StreamDecoder` (incremental decoding).

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/impl.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

namespace llmbench::tokenizer {
namespace {

Result<std::string> ok(std::string text) {
  return Result<std::string>(boost::system::in_place_value, std::move(text));
}

bool ends_with_replacement(std::string_view s) {
  return s.size() >= 3 && s.substr(s.size() - 3) == "\xEF\xBF\xBD";
}

}  // namespace

Result<std::vector<Encoding>> Tokenizer::encode_batch(std::span<const std::string_view> texts,
                                                      const EncodeOptions& options,
                                                      int threads) const {
  std::vector<Encoding> out(texts.size());
  std::size_t n = threads > 0 ? static_cast<std::size_t>(threads)
                              : std::max<std::size_t>(1, std::thread::hardware_concurrency());
  n = std::min(n, texts.size());
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::optional<std::pair<std::size_t, Error>> first_error;
  auto work = [&] {
    Scratch scratch;
    for (std::size_t i = next.fetch_add(1); i < texts.size(); i = next.fetch_add(1)) {
      auto r = encode(texts[i], options, scratch);
      if (r) {
        out[i] = std::move(*r);
        continue;
      }
      const std::scoped_lock lock(mu);
      if (!first_error || i < first_error->first) {
        Error e = r.error();
        e.source = fmt::format("texts[{}]", i);
        first_error.emplace(i, std::move(e));
      }
    }
  };
  if (n <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(n);
    for (std::size_t t = 0; t < n; ++t) {
      pool.emplace_back(work);
    }
  }  // the jthreads join here
  if (first_error) {
    return first_error->second;
  }
  return out;
}

StreamDecoder::StreamDecoder(Tokenizer tokenizer, bool skip_special_tokens)
    : tokenizer_(std::move(tokenizer)),
      skip_special_(skip_special_tokens),
      bytes_mode_(tokenizer_.impl().bytes_decoder) {}

Result<std::string> StreamDecoder::step(TokenId id) {
  const Tokenizer::Impl& impl = tokenizer_.impl();
  if (id >= impl.id_to_bytes.size()) {
    return Error{
        fmt::format("id {} is outside the vocabulary (size {})", id, impl.id_to_bytes.size()),
        "stream", static_cast<std::int64_t>(fed_)};
  }
  ++fed_;
  if (skip_special_ && impl.is_special[id] != 0) {
    return ok(std::string());
  }
  if (bytes_mode_) {
    pending_ += impl.id_to_bytes[id];
    const std::size_t keep = utf8_incomplete_tail(pending_);
    std::string text = utf8_lossy(std::string_view(pending_).substr(0, pending_.size() - keep));
    pending_.erase(0, pending_.size() - keep);
    return ok(std::move(text));
  }
  window_.push_back(id);
  auto text = tokenizer_.decode(window_, skip_special_);
  if (!text) {
    return text.error();
  }
  if (text->size() <= context_text_.size() || ends_with_replacement(*text) ||
      text->compare(0, context_text_.size(), context_text_) != 0) {
    return ok(std::string());
  }
  std::string fresh = text->substr(context_text_.size());
  // The ids just emitted become the context of the next window (decoders such as Metaspace treat
  // the first token specially, so the window never starts on an unemitted id).
  window_.erase(window_.begin(), window_.begin() + static_cast<std::ptrdiff_t>(context_));
  context_ = window_.size();
  auto ctx = tokenizer_.decode(window_, skip_special_);
  context_text_ = ctx ? std::move(*ctx) : std::string();
  return ok(std::move(fresh));
}

std::string StreamDecoder::flush() {
  std::string rest;
  if (bytes_mode_) {
    rest = utf8_lossy(pending_);
  } else if (window_.size() > context_) {
    auto text = tokenizer_.decode(window_, skip_special_);
    if (text && text->size() > context_text_.size()) {
      rest = text->substr(context_text_.size());
    }
  }
  pending_.clear();
  window_.clear();
  context_ = 0;
  context_text_.clear();
  return rest;
}

}  // namespace llmbench::tokenizer
