#include "llmbench/sim/block_manager.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace llmbench::sim {

std::vector<std::uint64_t> block_hashes(const std::vector<std::uint32_t>& tokens,
                                        std::int64_t block_size) {
  std::vector<std::uint64_t> out;
  if (block_size <= 0)
    return out;
  const auto bs = static_cast<std::size_t>(block_size);
  std::uint64_t h = 0x6c6c6d62656e6368ULL;  // chain seed ("llmbench")
  for (std::size_t start = 0; start + bs <= tokens.size(); start += bs) {
    for (std::size_t i = start; i < start + bs; ++i) h = splitmix64(h ^ tokens[i]);
    out.push_back(h);
  }
  return out;
}

BlockHashMap::BlockHashMap(std::size_t max_entries) {
  std::size_t capacity = 16;
  int bits = 4;
  while (capacity < 2 * max_entries) {
    capacity *= 2;
    ++bits;
  }
  slots_.reset(static_cast<Slot*>(std::calloc(capacity, sizeof(Slot))));
  if (!slots_)
    throw std::bad_alloc();
  mask_ = capacity - 1;
  shift_ = 64 - bits;
}

BlockId BlockHashMap::find(std::uint64_t hash) const noexcept {
  for (std::size_t i = home(hash);; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.block_plus_one == 0)
      return -1;
    if (s.hash == hash)
      return static_cast<BlockId>(s.block_plus_one - 1);
  }
}

bool BlockHashMap::insert(std::uint64_t hash, BlockId block) noexcept {
  for (std::size_t i = home(hash);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.block_plus_one == 0) {
      s = Slot{hash, block + 1};
      ++size_;
      return true;
    }
    if (s.hash == hash)
      return false;
  }
}

void BlockHashMap::erase(std::uint64_t hash, BlockId block) noexcept {
  std::size_t i = home(hash);
  for (;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.block_plus_one == 0)
      return;
    if (s.hash == hash)
      break;
  }
  if (slots_[i].block_plus_one != block + 1)
    return;
  // Backward-shift deletion: pull later entries of the probe run into the hole unless their
  // home lies cyclically in (hole, j].
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask_; slots_[j].block_plus_one != 0; j = (j + 1) & mask_) {
    const std::size_t k = home(slots_[j].hash);
    const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (stays)
      continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = Slot{0, 0};
  --size_;
}

BlockManager::BlockManager(std::int64_t num_blocks, std::int64_t block_size,
                           bool enable_prefix_caching)
    : block_size_(block_size),
      prefix_caching_(enable_prefix_caching),
      cached_(static_cast<std::size_t>(std::max<std::int64_t>(num_blocks, 1))) {
  LLMBENCH_ASSERT(num_blocks >= 1 && block_size >= 1, "need at least one block of one token");
  const auto n = static_cast<std::size_t>(num_blocks);
  ref_.assign(n, 0);
  hash_.assign(n, 0);
  has_hash_.assign(n, false);
  in_free_.assign(n, false);
  free_prev_.assign(n, -1);
  free_next_.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i) append_to_free_queue(static_cast<BlockId>(i));
}

CacheHit BlockManager::find_cached(const std::vector<std::uint64_t>& hashes,
                                   std::int64_t num_tokens) const {
  CacheHit hit;
  if (!prefix_caching_ || num_tokens <= 1)
    return hit;
  const auto max_blocks =
      std::min(static_cast<std::size_t>((num_tokens - 1) / block_size_), hashes.size());
  for (std::size_t j = 0; j < max_blocks; ++j) {
    const BlockId b = cached_.find(hashes[j]);
    if (b < 0)
      break;
    hit.blocks.push_back(b);
  }
  hit.num_tokens = static_cast<std::int64_t>(hit.blocks.size()) * block_size_;
  return hit;
}

std::int64_t BlockManager::cached_prefix_blocks(const std::vector<std::uint64_t>& hashes,
                                                std::int64_t num_tokens) const {
  if (!prefix_caching_ || num_tokens <= 1)
    return 0;
  const auto max_blocks =
      std::min(static_cast<std::size_t>((num_tokens - 1) / block_size_), hashes.size());
  std::size_t j = 0;
  while (j < max_blocks && cached_.find(hashes[j]) >= 0) ++j;
  return static_cast<std::int64_t>(j);
}

void BlockManager::take_from_free_queue(BlockId block) {
  const auto b = static_cast<std::size_t>(block);
  LLMBENCH_ASSERT(in_free_[b], "block not in the free queue");
  const BlockId prev = free_prev_[b];
  const BlockId next = free_next_[b];
  if (prev >= 0)
    free_next_[static_cast<std::size_t>(prev)] = next;
  else
    free_head_ = next;
  if (next >= 0)
    free_prev_[static_cast<std::size_t>(next)] = prev;
  else
    free_tail_ = prev;
  free_prev_[b] = free_next_[b] = -1;
  in_free_[b] = false;
  --free_count_;
}

void BlockManager::append_to_free_queue(BlockId block) {
  const auto b = static_cast<std::size_t>(block);
  free_prev_[b] = free_tail_;
  free_next_[b] = -1;
  if (free_tail_ >= 0)
    free_next_[static_cast<std::size_t>(free_tail_)] = block;
  else
    free_head_ = block;
  free_tail_ = block;
  in_free_[b] = true;
  ++free_count_;
}

bool BlockManager::allocate_slots(std::int64_t request, std::int64_t num_computed,
                                  std::int64_t num_new, const CacheHit& hit,
                                  const std::vector<std::uint64_t>& hashes) {
  const auto [slot, inserted] = held_.try_emplace(request);
  Held& held = slot->second;
  if (inserted && !spare_lists_.empty()) {
    held.blocks = std::move(spare_lists_.back());
    spare_lists_.pop_back();
  }
  LLMBENCH_ASSERT(hit.blocks.empty() || held.blocks.empty(),
                  "prefix hits only for a request without blocks");
  const std::int64_t total_tokens = num_computed + num_new;
  const std::int64_t have = static_cast<std::int64_t>(held.blocks.size() + hit.blocks.size());
  const std::int64_t needed =
      std::max<std::int64_t>(0, (total_tokens + block_size_ - 1) / block_size_ - have);
  std::int64_t evictable_hits = 0;
  for (const BlockId b : hit.blocks)
    evictable_hits += ref_[static_cast<std::size_t>(b)] == 0 ? 1 : 0;
  if (needed > num_free_blocks() - evictable_hits) {
    if (held.blocks.empty())
      release(slot);
    return false;
  }
  for (const BlockId b : hit.blocks) {
    const auto i = static_cast<std::size_t>(b);
    if (ref_[i] == 0)
      take_from_free_queue(b);
    ++ref_[i];
    held.blocks.push_back(b);
  }
  if (held.num_hashed == 0)
    held.num_hashed = static_cast<std::int64_t>(hit.blocks.size());
  for (std::int64_t k = 0; k < needed; ++k) {
    const BlockId b = free_head_;
    const auto i = static_cast<std::size_t>(b);
    take_from_free_queue(b);
    if (has_hash_[i]) {  // evict the least recently freed cached block
      cached_.erase(hash_[i], b);
      has_hash_[i] = false;
    }
    ref_[i] = 1;
    held.blocks.push_back(b);
  }
  if (prefix_caching_) {
    const auto full = std::min(static_cast<std::size_t>(total_tokens / block_size_), hashes.size());
    for (auto j = static_cast<std::size_t>(held.num_hashed); j < full; ++j) {
      const auto i = static_cast<std::size_t>(held.blocks[j]);
      if (!has_hash_[i] && cached_.insert(hashes[j], held.blocks[j])) {
        hash_[i] = hashes[j];
        has_hash_[i] = true;
      }
    }
    held.num_hashed = std::max(held.num_hashed, static_cast<std::int64_t>(full));
  }
  return true;
}

void BlockManager::free(std::int64_t request) {
  const auto it = held_.find(request);
  if (it == held_.end())
    return;
  const auto& blocks = it->second.blocks;
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
    const auto i = static_cast<std::size_t>(*b);
    LLMBENCH_ASSERT(ref_[i] > 0, "freeing a block with reference count 0");
    if (--ref_[i] == 0) {
      append_to_free_queue(*b);
    }
  }
  release(it);
}

void BlockManager::release(std::unordered_map<std::int64_t, Held>::iterator held) {
  constexpr std::size_t kMaxSpareLists = 4096;
  if (spare_lists_.size() < kMaxSpareLists && held->second.blocks.capacity() > 0) {
    held->second.blocks.clear();
    spare_lists_.push_back(std::move(held->second.blocks));
  }
  held_.erase(held);
}

std::int64_t BlockManager::blocks_of(std::int64_t request) const {
  const auto it = held_.find(request);
  return it == held_.end() ? 0 : static_cast<std::int64_t>(it->second.blocks.size());
}

double BlockManager::usage() const noexcept {
  return 1.0 - static_cast<double>(num_free_blocks()) / static_cast<double>(num_blocks());
}

void BlockManager::check_invariants() const {
  std::vector<std::int32_t> holders(ref_.size(), 0);
  for (const auto& [id, held] : held_) {
    for (const BlockId b : held.blocks) ++holders[static_cast<std::size_t>(b)];
  }
  std::size_t zero = 0;
  for (std::size_t i = 0; i < ref_.size(); ++i) {
    LLMBENCH_ASSERT(holders[i] == ref_[i], "reference count differs from holders");
    LLMBENCH_ASSERT((ref_[i] == 0) == in_free_[i], "free-queue membership differs from count");
    zero += ref_[i] == 0 ? 1 : 0;
    if (has_hash_[i]) {
      LLMBENCH_ASSERT(cached_.find(hash_[i]) == static_cast<BlockId>(i),
                      "hashed block missing from the cache map");
    }
  }
  LLMBENCH_ASSERT(static_cast<std::int64_t>(zero) == free_count_,
                  "free queue size differs from free blocks");
  std::int64_t walked = 0;
  for (BlockId b = free_head_; b >= 0; b = free_next_[static_cast<std::size_t>(b)]) {
    LLMBENCH_ASSERT(in_free_[static_cast<std::size_t>(b)], "free-queue link to a used block");
    ++walked;
  }
  LLMBENCH_ASSERT(walked == free_count_, "free-queue links differ from its size");
  cached_.for_each([&](std::uint64_t h, BlockId b) {
    LLMBENCH_ASSERT(
        has_hash_[static_cast<std::size_t>(b)] && hash_[static_cast<std::size_t>(b)] == h,
        "cache map entry without its block hash");
  });
}

}  // namespace llmbench::sim
