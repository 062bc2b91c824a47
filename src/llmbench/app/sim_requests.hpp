#pragma once
/// @file
/// Workload samples as simulated requests (`llmbench simulate`): the one place that gives the
/// engine a sample's lengths and prefix-cache identity. The prefix-cache ids of a prompt follow
/// `sim::prompt_cache_ids`, the rule the real-time server applies to HTTP requests too.

#include "llmbench/core/clock.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/workload/dataset.hpp"

#include <cstdint>
#include <vector>

namespace llmbench::app {

/// One simulated request per sample, arriving at `arrivals[i]` (ns of virtual time; one per
/// sample). Prompt length: the sample's count, else `estimate_text_tokens` (core/text.hpp) of its
/// text (prompt and chat messages), at least 1; output length at least 1. Prefix-cache identity:
/// random prompts keyed by their corpus offset (`content_key` ≥ 0) get
/// `sim::synthetic_block_hashes` with `shared_prefix_len` tokens common to all (`--random-prefix-
/// len`) for KV blocks of `block_size`; the others `sim::prompt_cache_ids` of their token ids and
/// text, salted by the sample's index + 1; trace rows with `block_ids` get
/// `trace_block_hashes` of them.
/// Prefix-cache block hashes (`block_size`-token engine blocks, `sim::block_hashes`) of a trace
/// prompt of `prompt_len` tokens made of `trace_block_size`-token blocks named by `ids` (Mooncake
/// `hash_ids`): prompts share exactly the full engine blocks that lie in their common id prefix.
/// Tokens past the ids' cover get ids of their own.
std::vector<std::uint64_t> trace_block_hashes(const std::vector<std::uint64_t>& ids,
                                              std::int64_t trace_block_size,
                                              std::int64_t prompt_len, std::int64_t block_size);

std::vector<sim::SimRequest> to_sim_requests(const std::vector<workload::Sample>& samples,
                                             const std::vector<TimeNs>& arrivals,
                                             std::int64_t shared_prefix_len,
                                             std::int64_t block_size,
                                             std::int64_t trace_block_size = 512);

}  // namespace llmbench::app
