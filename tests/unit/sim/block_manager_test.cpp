#include "llmbench/sim/block_manager.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <unordered_map>

namespace llmbench::sim {
namespace {

std::vector<std::uint32_t> iota_tokens(std::size_t n, std::uint32_t first) {
  std::vector<std::uint32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

TEST(BlockHashes, FullBlocksOnlyAndChained) {
  const auto a = block_hashes(iota_tokens(10, 1), 4);
  EXPECT_EQ(a.size(), 2u);  // the partial third block has no hash
  auto t = iota_tokens(10, 1);
  t[1] = 99;  // change the first block: every later hash changes too
  const auto b = block_hashes(t, 4);
  EXPECT_NE(a[0], b[0]);
  EXPECT_NE(a[1], b[1]);
  t = iota_tokens(10, 1);
  t[9] = 77;  // inside the partial block: no full-block hash changes
  EXPECT_EQ(block_hashes(t, 4), a);
}

TEST(BlockManager, AllocateFailLeavesStateAndFree) {
  BlockManager bm(4, 4, false);
  const CacheHit none;
  EXPECT_TRUE(bm.allocate_slots(1, 0, 9, none, {}));  // ceil(9/4) = 3 blocks
  EXPECT_EQ(bm.blocks_of(1), 3);
  EXPECT_EQ(bm.num_free_blocks(), 1);
  EXPECT_FALSE(bm.allocate_slots(2, 0, 5, none, {}));  // needs 2
  EXPECT_EQ(bm.blocks_of(2), 0);
  EXPECT_EQ(bm.num_free_blocks(), 1);
  EXPECT_TRUE(bm.allocate_slots(1, 9, 3, none, {}));  // 12 tokens still fit 3 blocks
  EXPECT_EQ(bm.blocks_of(1), 3);
  EXPECT_TRUE(bm.allocate_slots(1, 12, 1, none, {}));  // the 13th token needs a 4th
  EXPECT_EQ(bm.num_free_blocks(), 0);
  EXPECT_DOUBLE_EQ(bm.usage(), 1.0);
  bm.check_invariants();
  bm.free(1);
  EXPECT_EQ(bm.num_free_blocks(), 4);
  bm.check_invariants();
}

TEST(BlockManager, PrefixHitsAndLruEvictionOrder) {
  BlockManager bm(4, 4, true);
  const auto hashes = block_hashes(iota_tokens(13, 1), 4);  // 3 full blocks
  ASSERT_EQ(hashes.size(), 3u);
  ASSERT_TRUE(bm.allocate_slots(1, 0, 13, {}, hashes));  // blocks 0,1,2,3
  EXPECT_EQ(bm.num_cached_blocks(), 3);
  bm.free(1);  // free queue: 3, 2, 1, 0 (last block first)
  bm.check_invariants();
  // All three full blocks are reusable for the same 13-token prompt (max hit = 12 tokens).
  CacheHit hit = bm.find_cached(hashes, 13);
  EXPECT_EQ(hit.num_tokens, 12);
  // A 12-token prompt keeps its last token to recompute: floor(11 / 4) = 2 blocks.
  EXPECT_EQ(bm.find_cached(hashes, 12).num_tokens, 8);
  // Another request takes 2 fresh blocks: 3 (unhashed) then 2 (evicting the 3rd prefix block).
  ASSERT_TRUE(bm.allocate_slots(2, 0, 8, {}, {}));
  EXPECT_EQ(bm.num_cached_blocks(), 2);
  hit = bm.find_cached(hashes, 13);
  EXPECT_EQ(hit.num_tokens, 8);
  // Taking the hit reuses the cached blocks; it then needs 2 more blocks but only 0 are free
  // besides the hit blocks themselves, so it fails and changes nothing.
  EXPECT_FALSE(bm.allocate_slots(3, 8, 5, hit, hashes));
  EXPECT_EQ(bm.num_free_blocks(), 2);
  ASSERT_TRUE(bm.allocate_slots(3, 8, 0, hit, hashes));
  EXPECT_EQ(bm.blocks_of(3), 2);
  EXPECT_EQ(bm.num_free_blocks(), 0);
  bm.check_invariants();
  // Sharing: a second holder of the same cached blocks raises their counts, no new blocks.
  bm.free(2);
  const CacheHit again = bm.find_cached(hashes, 9);
  EXPECT_EQ(again.num_tokens, 8);
  ASSERT_TRUE(bm.allocate_slots(4, 8, 1, again, hashes));
  EXPECT_EQ(bm.blocks_of(4), 3);
  EXPECT_EQ(bm.num_free_blocks(), 1);
  bm.check_invariants();
  bm.free(3);
  bm.free(4);
  EXPECT_EQ(bm.num_free_blocks(), 4);
  bm.check_invariants();
}

// The flat hash map against std::unordered_map under random insert/erase/find, with hashes that
// collide in their home slot (few distinct high bits) so probe runs wrap and backward shifts run.
TEST(BlockHashMap, MatchesUnorderedMapUnderRandomOps) {
  for (const std::uint64_t spread : {std::uint64_t{40}, std::uint64_t{1} << 40}) {
    BlockHashMap map(64);  // 128 slots
    std::unordered_map<std::uint64_t, BlockId> ref;
    std::mt19937_64 rng(spread);
    for (int step = 0; step < 200000; ++step) {
      const std::uint64_t hash = rng() % spread;
      const auto block = static_cast<BlockId>(rng() % 64);
      switch (rng() % 3) {
        case 0: {
          if (ref.size() >= 64 && ref.count(hash) == 0)
            break;  // full: the pool never holds more hashes than blocks
          const bool fresh = ref.emplace(hash, block).second;
          ASSERT_EQ(map.insert(hash, block), fresh) << "step " << step;
          break;
        }
        case 1: {
          // Erase only when the entry maps to this block (eviction of a reused hash).
          const auto it = ref.find(hash);
          const BlockId mapped = it == ref.end() ? -1 : it->second;
          const BlockId target = mapped >= 0 && rng() % 4 != 0 ? mapped : block;
          map.erase(hash, target);
          if (it != ref.end() && it->second == target)
            ref.erase(it);
          break;
        }
        default:
          break;
      }
      const auto it = ref.find(hash);
      ASSERT_EQ(map.find(hash), it == ref.end() ? -1 : it->second) << "step " << step;
      ASSERT_EQ(map.size(), ref.size()) << "step " << step;
    }
    std::size_t seen = 0;
    map.for_each([&](std::uint64_t h, BlockId b) {
      ++seen;
      EXPECT_EQ(ref.at(h), b);
    });
    EXPECT_EQ(seen, ref.size());
    for (const auto& [h, b] : ref) EXPECT_EQ(map.find(h), b);
  }
}

}  // namespace
}  // namespace llmbench::sim
