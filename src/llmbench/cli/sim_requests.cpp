#include "llmbench/cli/sim_requests.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/text.hpp"

#include <algorithm>
#include <string>

namespace llmbench::cli {

std::vector<sim::SimRequest> to_sim_requests(const std::vector<workload::Sample>& samples,
                                             const std::vector<TimeNs>& arrivals,
                                             std::int64_t shared_prefix_len,
                                             std::int64_t block_size) {
  LLMBENCH_ASSERT(arrivals.size() == samples.size(), "one arrival time per sample");
  std::vector<sim::SimRequest> requests;
  requests.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const workload::Sample& s = samples[i];
    sim::SimRequest& r = requests.emplace_back();
    r.arrival_ns = arrivals[i];
    r.output_len = std::max<std::int64_t>(1, s.output_len);
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

}  // namespace llmbench::cli
