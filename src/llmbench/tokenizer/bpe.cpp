#include "llmbench/tokenizer/bpe.hpp"

#include "llmbench/tokenizer/unicode.hpp"

#include <algorithm>

namespace llmbench::tokenizer::detail {

void MergeTable::reserve(std::size_t n) {
  std::size_t cap = 16;
  while (cap < n * 2) {
    cap <<= 1;
  }
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  size_ = 0;
}

std::size_t MergeTable::memory_bytes() const {
  return slots_.capacity() * sizeof(Slot);
}

bool MergeTable::insert(TokenId left, TokenId right, std::uint32_t rank, TokenId merged) {
  if ((size_ + 1) * 2 > slots_.size()) {
    std::vector<Slot> old = std::move(slots_);
    reserve(std::max<std::size_t>(size_ + 1, old.size()));
    for (const Slot& s : old) {
      if (s.key != kEmpty) {
        insert(static_cast<TokenId>(s.key >> 32), static_cast<TokenId>(s.key & 0xFFFFFFFFu), s.rank,
               s.merged);
      }
    }
  }
  const std::uint64_t key = (std::uint64_t{left} << 32) | right;
  std::size_t i = hash(key) & mask_;
  while (slots_[i].key != kEmpty) {
    if (slots_[i].key == key) {
      return false;
    }
    i = (i + 1) & mask_;
  }
  slots_[i] = Slot{key, rank, merged};
  ++size_;
  return true;
}

const TokenId* WordCache::find(std::string_view key, std::size_t hash, std::size_t& count) const {
  if (slots_.empty()) {
    return nullptr;
  }
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (true) {
    const Slot& s = slots_[i];
    if (s.key_len == 0) {
      return nullptr;
    }
    if (s.hash == hash && s.key_len == key.size() &&
        std::string_view(keys_).substr(s.key_off, s.key_len) == key) {
      count = s.ids_len;
      return ids_.data() + s.ids_off;
    }
    i = (i + 1) & mask;
  }
}

void WordCache::insert(std::string_view key, std::size_t hash, const TokenId* ids,
                       std::size_t count) {
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return;
  }
  if (size_ >= kMaxEntries) {
    clear();
  }
  if ((size_ + 1) * 2 > slots_.size()) {
    grow();
  }
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (slots_[i].key_len != 0) {
    i = (i + 1) & mask;
  }
  slots_[i] =
      Slot{hash, static_cast<std::uint32_t>(keys_.size()), static_cast<std::uint32_t>(key.size()),
           static_cast<std::uint32_t>(ids_.size()), static_cast<std::uint32_t>(count)};
  keys_.append(key);
  ids_.insert(ids_.end(), ids, ids + count);
  ++size_;
}

void WordCache::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(std::max(kMinSlots, old.size() * 2), Slot{});
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.key_len != 0) {
      std::size_t i = s.hash & mask;
      while (slots_[i].key_len != 0) {
        i = (i + 1) & mask;
      }
      slots_[i] = s;
    }
  }
}

void WordCache::clear() {
  if (size_ > 0) {
    std::fill(slots_.begin(), slots_.end(), Slot{});
  }
  keys_.clear();
  ids_.clear();
  size_ = 0;
}

namespace {

// Min-heap order on (rank, pos): std heap functions build a max-heap, so compare reversed.
bool heap_less(const BpeScratch::Candidate& a, const BpeScratch::Candidate& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
}

}  // namespace

void Bpe::char_symbols(std::string_view piece, BpeScratch& scratch) const {
  auto& syms = scratch.symbols;
  std::string key;
  bool last_unk = false;
  for (std::size_t i = 0; i < piece.size();) {
    std::size_t len = 0;
    decode_utf8(piece, i, len);
    const bool first = i == 0;
    const bool last = i + len == piece.size();
    std::string_view lookup = piece.substr(i, len);
    if ((!first && !prefix.empty()) || (last && !suffix.empty())) {
      key.clear();
      if (!first) {
        key.append(prefix);
      }
      key.append(lookup);
      if (last) {
        key.append(suffix);
      }
      lookup = key;
    }
    const auto it = bytes_to_id.find(lookup);
    const auto ulen = static_cast<std::uint32_t>(len);
    if (it != bytes_to_id.end()) {
      syms.push_back({it->second, 0, 0, ulen});
      last_unk = false;
    } else {
      bool fell_back = false;
      if (byte_fallback) {
        fell_back = true;
        for (std::size_t k = 0; k < len; ++k) {
          fell_back = fell_back && fallback_id[static_cast<unsigned char>(piece[i + k])] >= 0;
        }
        if (fell_back) {
          for (std::size_t k = 0; k < len; ++k) {
            const auto id = fallback_id[static_cast<unsigned char>(piece[i + k])];
            syms.push_back({static_cast<TokenId>(id), 0, 0, 1});
          }
          last_unk = false;
        }
      }
      if (!fell_back && unk_id >= 0) {
        if (fuse_unk && last_unk) {
          syms.back().len += ulen;
        } else {
          syms.push_back({static_cast<TokenId>(unk_id), 0, 0, ulen});
        }
        last_unk = true;
      }
    }
    i += len;
  }
}

std::size_t Bpe::memory_bytes() const {
  std::size_t n = merges.memory_bytes() + bytes_to_id.bucket_count() * sizeof(void*);
  for (const auto& [key, id] : bytes_to_id) {
    n += 48 + (key.size() > 15 ? key.capacity() + 1 : 0);
  }
  return n + prefix.capacity() + suffix.capacity();
}

void Bpe::encode(std::string_view piece, std::vector<TokenId>& ids,
                 std::vector<std::uint32_t>* lens, BpeScratch& scratch) const {
  if (piece.empty()) {
    return;
  }
  if (ignore_merges) {
    const auto it = bytes_to_id.find(piece);
    if (it != bytes_to_id.end()) {
      ids.push_back(it->second);
      if (lens != nullptr) {
        lens->push_back(static_cast<std::uint32_t>(piece.size()));
      }
      return;
    }
  }
  auto& syms = scratch.symbols;
  syms.clear();
  if (!byte_level) {
    char_symbols(piece, scratch);
  }
  // One symbol per byte; bytes without an id become unk (fused when fuse_unk) or are dropped,
  // as HF `BPE::merge_word` does.
  for (std::size_t i = 0; byte_level && i < piece.size(); ++i) {
    const std::int64_t id = byte_id[static_cast<unsigned char>(piece[i])];
    if (id >= 0) {
      syms.push_back({static_cast<TokenId>(id), 0, 0, 1});
    } else if (unk_id >= 0) {
      if (fuse_unk && !syms.empty() && syms.back().id == static_cast<TokenId>(unk_id)) {
        syms.back().len += 1;
      } else {
        syms.push_back({static_cast<TokenId>(unk_id), 0, 0, 1});
      }
    }
  }
  const auto n = static_cast<std::int32_t>(syms.size());
  for (std::int32_t i = 0; i < n; ++i) {
    syms[static_cast<std::size_t>(i)].prev = i - 1;
    syms[static_cast<std::size_t>(i)].next = i + 1 < n ? i + 1 : -1;
  }
  auto& heap = scratch.heap;
  heap.clear();
  for (std::int32_t i = 0; i + 1 < n; ++i) {
    std::uint32_t rank = 0;
    TokenId merged = 0;
    if (merges.find(syms[static_cast<std::size_t>(i)].id, syms[static_cast<std::size_t>(i + 1)].id,
                    rank, merged)) {
      heap.push_back({rank, static_cast<std::uint32_t>(i), merged});
    }
  }
  std::make_heap(heap.begin(), heap.end(), heap_less);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), heap_less);
    const BpeScratch::Candidate top = heap.back();
    heap.pop_back();
    auto& left = syms[top.pos];
    if (left.len == 0 || left.next < 0) {
      continue;
    }
    const auto right_pos = static_cast<std::size_t>(left.next);
    auto& right = syms[right_pos];
    std::uint32_t rank = 0;
    TokenId merged = 0;
    if (!merges.find(left.id, right.id, rank, merged) || merged != top.merged) {
      continue;
    }
    left.id = merged;
    left.len += right.len;
    left.next = right.next;
    right.len = 0;
    if (left.next >= 0) {
      syms[static_cast<std::size_t>(left.next)].prev = static_cast<std::int32_t>(top.pos);
    }
    if (left.prev >= 0) {
      const auto& p = syms[static_cast<std::size_t>(left.prev)];
      if (merges.find(p.id, left.id, rank, merged)) {
        heap.push_back({rank, static_cast<std::uint32_t>(left.prev), merged});
        std::push_heap(heap.begin(), heap.end(), heap_less);
      }
    }
    if (left.next >= 0) {
      const auto& nx = syms[static_cast<std::size_t>(left.next)];
      if (merges.find(left.id, nx.id, rank, merged)) {
        heap.push_back({rank, top.pos, merged});
        std::push_heap(heap.begin(), heap.end(), heap_less);
      }
    }
  }
  for (std::int32_t i = n > 0 ? 0 : -1; i >= 0; i = syms[static_cast<std::size_t>(i)].next) {
    const auto& s = syms[static_cast<std::size_t>(i)];
    ids.push_back(s.id);
    if (lens != nullptr) {
      lens->push_back(s.len);
    }
  }
}

}  // namespace llmbench::tokenizer::detail
