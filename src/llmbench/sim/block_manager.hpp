#pragma once
/// @file
/// Paged KV-cache block manager with automatic prefix caching, after vLLM V1
/// (`vllm/v1/core/kv_cache_manager.py`, `block_pool.py`; docs/simulator.md "Scheduler"): blocks of
/// `block_size` tokens, reference counts, a free queue that doubles as the LRU eviction order,
/// and a map from chained block hash to cached block. Only FULL prompt blocks are hashed.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <vector>

namespace llmbench::sim {

/// Index of a KV block, 0 … num_blocks − 1.
using BlockId = std::int32_t;

/// Chained hashes of the full blocks of `tokens`: hash_j = mix(hash_{j−1}, tokens of block j),
/// so equal hashes mean equal prefixes (vLLM `hash_block_tokens`, with a 64-bit mix instead of
/// sha256). A trailing partial block gets no hash.
std::vector<std::uint64_t> block_hashes(const std::vector<std::uint32_t>& tokens,
                                        std::int64_t block_size);

/// The prefix cache's map from chained block hash to block: open addressing with linear probing
/// and backward-shift deletion (no tombstones), sized once for `max_entries` at a load factor
/// ≤ 1/2, so it never rehashes. Slots come zeroed from `calloc` (0 = empty), so only the pages a
/// run touches are faulted in. Replaces `std::unordered_map` on the simulator's hot path (one
/// division and one node per entry there).
class BlockHashMap {
 public:
  /// Room for `max_entries` ≥ 1 entries (the pool's block count: a block holds one hash).
  explicit BlockHashMap(std::size_t max_entries);
  /// The block cached under `hash`, or -1 when none.
  [[nodiscard]] BlockId find(std::uint64_t hash) const noexcept;
  /// Maps `hash` to `block` (≥ 0) unless `hash` is present; returns whether it inserted.
  bool insert(std::uint64_t hash, BlockId block) noexcept;
  /// Removes `hash` when it maps to `block`; otherwise changes nothing.
  void erase(std::uint64_t hash, BlockId block) noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Calls `fn(hash, block)` for every entry, in slot order.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = 0; i <= mask_; ++i)
      if (slots_[i].block_plus_one != 0)
        fn(slots_[i].hash, static_cast<BlockId>(slots_[i].block_plus_one - 1));
  }

 private:
  struct Slot {
    std::uint64_t hash;
    std::int32_t block_plus_one;  ///< 0 = empty
  };
  struct FreeDeleter {
    void operator()(Slot* p) const noexcept { std::free(p); }
  };
  [[nodiscard]] std::size_t home(std::uint64_t hash) const noexcept {
    return static_cast<std::size_t>((hash * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  std::unique_ptr<Slot[], FreeDeleter> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

/// A prefix-cache lookup: cached blocks that can be reused, in prefix order.
struct CacheHit {
  std::vector<BlockId> blocks;
  std::int64_t num_tokens = 0;  ///< blocks.size() × block_size
};

/// The KV block pool of one model replica. Not thread-safe (the simulator is single-threaded).
class BlockManager {
 public:
  /// `num_blocks` ≥ 1 blocks of `block_size` ≥ 1 tokens. vLLM's reserved null block is not
  /// modelled: all `num_blocks` are usable.
  BlockManager(std::int64_t num_blocks, std::int64_t block_size, bool enable_prefix_caching);

  /// Longest cached prefix for a request with `num_tokens` tokens whose full prompt blocks hash to
  /// `hashes`, limited to floor((num_tokens − 1) / block_size) blocks so the last token is always
  /// recomputed (vLLM `max_cache_hit_length = num_tokens − 1`). Does not change any state.
  [[nodiscard]] CacheHit find_cached(const std::vector<std::uint64_t>& hashes,
                                     std::int64_t num_tokens) const;

  /// `find_cached(hashes, num_tokens).blocks.size()` without building the list (a router's
  /// question to every replica: docs/simulator.md "Cluster").
  [[nodiscard]] std::int64_t cached_prefix_blocks(const std::vector<std::uint64_t>& hashes,
                                                  std::int64_t num_tokens) const;

  /// Makes room for `request` to hold `num_computed + num_new` tokens: first takes the `hit`
  /// blocks (only for a request that holds no blocks yet; `num_computed` then includes
  /// `hit.num_tokens`), then pops fresh blocks from the head of the free queue, evicting their
  /// cached hash. Afterwards every newly full block i < hashes.size() is registered in the
  /// prefix cache. Returns false and changes nothing when too few blocks are free.
  bool allocate_slots(std::int64_t request, std::int64_t num_computed, std::int64_t num_new,
                      const CacheHit& hit, const std::vector<std::uint64_t>& hashes);

  /// Releases every block of `request` (last block first, each appended to the free-queue tail,
  /// so a prefix's first blocks are evicted last). Cached hashes are kept until eviction.
  /// No-op when the request holds no blocks.
  void free(std::int64_t request);

  /// Blocks with reference count 0 (empty or cached-but-evictable).
  [[nodiscard]] std::int64_t num_free_blocks() const noexcept { return free_count_; }
  [[nodiscard]] std::int64_t num_blocks() const noexcept {
    return static_cast<std::int64_t>(ref_.size());
  }
  [[nodiscard]] std::int64_t block_size() const noexcept { return block_size_; }
  /// Blocks held by `request` (0 if none).
  [[nodiscard]] std::int64_t blocks_of(std::int64_t request) const;
  /// Blocks registered in the prefix cache (referenced or evictable).
  [[nodiscard]] std::int64_t num_cached_blocks() const noexcept {
    return static_cast<std::int64_t>(cached_.size());
  }
  /// KV usage in [0, 1]: 1 − free / num_blocks (vLLM `BlockPool.get_usage`, without the null
  /// block).
  [[nodiscard]] double usage() const noexcept;

  /// Checks the internal invariants (reference counts equal the number of holders, free queue
  /// holds exactly the blocks with count 0, cache map and block hashes agree); aborts via
  /// `LLMBENCH_ASSERT` on a violation. O(num_blocks); for tests.
  void check_invariants() const;

 private:
  struct Held {
    std::vector<BlockId> blocks;
    std::int64_t num_hashed = 0;  ///< leading blocks already registered in the cache
  };

  void take_from_free_queue(BlockId block);
  void append_to_free_queue(BlockId block);
  /// Forgets a request's entry, keeping its emptied block list for reuse.
  void release(std::unordered_map<std::int64_t, Held>::iterator held);

  std::int64_t block_size_;
  bool prefix_caching_;
  std::vector<std::int32_t> ref_;
  std::vector<std::uint64_t> hash_;
  std::vector<bool> has_hash_;
  // Free queue: an intrusive doubly linked list over block ids (O(1) remove/append, no
  // allocation); -1 ends it.
  std::vector<BlockId> free_prev_;
  std::vector<BlockId> free_next_;
  BlockId free_head_ = -1;
  BlockId free_tail_ = -1;
  std::int64_t free_count_ = 0;
  std::vector<bool> in_free_;
  BlockHashMap cached_;
  std::unordered_map<std::int64_t, Held> held_;
  /// Emptied block lists of freed requests, reused (with their capacity) by new ones: growing
  /// each request's list from empty was a third of `allocate_slots`' cost in `simulate`.
  std::vector<std::vector<BlockId>> spare_lists_;
};

}  // namespace llmbench::sim
