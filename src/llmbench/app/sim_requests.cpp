#include "llmbench/app/sim_requests.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/sim/block_manager.hpp"

#include <algorithm>
#include <string>

namespace llmbench::app {

std::vector<std::uint64_t> trace_block_hashes(const std::vector<std::uint64_t>& ids,
                                              std::int64_t trace_block_size,
                                              std::int64_t prompt_len, std::int64_t block_size) {
  // Pseudo token t of the prompt is (its trace block's id, its offset in that block) mixed, so
  // equal id prefixes give equal token prefixes and `sim::block_hashes` keys the cache by them
  // for any engine block size.
  std::vector<std::uint32_t> tokens;
  tokens.reserve(static_cast<std::size_t>(prompt_len));
  for (std::int64_t t = 0; t < prompt_len; ++t) {
    const auto block = static_cast<std::size_t>(t / trace_block_size);
    const std::uint64_t id = block < ids.size() ? ids[block] : ~std::uint64_t{0} - block;
    const auto offset = static_cast<std::uint64_t>(t % trace_block_size);
    tokens.push_back(static_cast<std::uint32_t>(splitmix64(splitmix64(id) ^ offset)));
  }
  return sim::block_hashes(tokens, block_size);
}

std::vector<sim::SimRequest> to_sim_requests(const std::vector<workload::Sample>& samples,
                                             const std::vector<TimeNs>& arrivals,
                                             std::int64_t shared_prefix_len,
                                             std::int64_t block_size,
                                             std::int64_t trace_block_size) {
  LLMBENCH_ASSERT(arrivals.size() == samples.size(), "one arrival time per sample");
  std::vector<sim::SimRequest> requests;
  requests.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const workload::Sample& s = samples[i];
    sim::SimRequest& r = requests.emplace_back();
    r.arrival_ns = arrivals[i];
    r.output_len = std::max<std::int64_t>(1, s.output_len);
    if (!s.block_ids.empty()) {
      // A Mooncake trace row: its hash ids are the prompt's identity.
      r.prompt_len = std::max<std::int64_t>(1, s.prompt_len);
      r.block_hashes = trace_block_hashes(s.block_ids, trace_block_size, r.prompt_len, block_size);
      continue;
    }
    if (s.content_key >= 0) {
      // No text was generated: the prompt is identified by its corpus offset.
      r.prompt_len = std::max<std::int64_t>(1, s.prompt_len);
      r.block_hashes = sim::synthetic_block_hashes(
          r.prompt_len, shared_prefix_len, static_cast<std::uint64_t>(s.content_key), block_size);
      continue;
    }
    std::string text = s.prompt;
    for (const auto& m : s.messages) text += m.content;
    r.prompt_len =
        std::max<std::int64_t>(1, s.prompt_len >= 0 ? s.prompt_len : estimate_text_tokens(text));
    r.prompt_tokens = sim::prompt_cache_ids(s.prompt_token_ids, text, r.prompt_len, i + 1);
  }
  return requests;
}

}  // namespace llmbench::app
