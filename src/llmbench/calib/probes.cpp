#include "llmbench/calib/probes.hpp"

#include <algorithm>

namespace llmbench::calib {

namespace {

Probe make_probe(const char* kind, std::int64_t input, std::int64_t output,
                 std::int64_t concurrency, std::int64_t num_prompts) {
  Probe p;
  p.kind = kind;
  Workload& w = p.workload;
  w.input_min = w.input_max = std::max<std::int64_t>(1, input);
  w.output_min = w.output_max = std::max<std::int64_t>(1, output);
  w.max_concurrency = std::max<std::int64_t>(1, concurrency);
  w.num_prompts = std::max<std::int64_t>(1, num_prompts);
  return p;
}

bool same(const Probe& a, const Probe& b) {
  return a.kind == b.kind && a.workload.input_max == b.workload.input_max &&
         a.workload.output_max == b.workload.output_max &&
         a.workload.max_concurrency == b.workload.max_concurrency;
}

}  // namespace

std::vector<Probe> probe_plan(const ProbeLimits& limits) {
  const std::int64_t c = std::max<std::int64_t>(1, limits.max_concurrency);
  const std::int64_t len = std::max<std::int64_t>(64, limits.max_input_len);
  const std::int64_t out = std::max<std::int64_t>(8, limits.output_len);
  std::vector<Probe> plan;
  for (const std::int64_t in : {std::int64_t{32}, len / 4, len})
    plan.push_back(make_probe("prefill", in, 4, 1, 3));
  // Decode batches on a doubling ladder: engines change path with the batch (llama.cpp's CUDA
  // engine runs one token on its vector kernels and any larger batch at a flat higher cost), so
  // the fit sees the step at every scale instead of bridging 1 to c/4.
  // (Rungs below one sequence become 1, and the duplicates are dropped below.)
  for (const std::int64_t conc : {std::int64_t{1}, c / 8, c / 4, c / 2, c})
    plan.push_back(make_probe("decode", 32, out, conc, 2 * conc));
  const std::int64_t half = std::max<std::int64_t>(2, c / 2);
  plan.push_back(make_probe("mixed", len / 2, out / 4, std::min(half, c), 2 * std::min(half, c)));
  plan.push_back(make_probe("mixed", len / 4, out / 4, c, 2 * c));
  // Every slot full of the longest prompts: the largest KV window an engine whose steps attend
  // over all occupied cells (llama.cpp) reaches, and the longest prefill stalls of decodes.
  plan.push_back(make_probe("mixed", len, out / 4, c, 2 * c));
  // Right after it, one sequence alone: a one-token step over the largest window the other
  // slots' kept cells make (llama.cpp keeps an idle slot's cells until it takes a request), so
  // that the fit sees that step instead of extrapolating to it from small windows.
  if (c > 1)
    plan.push_back(make_probe("window", 32, out, 1, 2));
  std::vector<Probe> unique;
  for (auto& p : plan) {
    if (std::none_of(unique.begin(), unique.end(), [&](const Probe& q) { return same(p, q); }))
      unique.push_back(std::move(p));
  }
  if (unique.size() > kMaxProbes)
    unique.resize(kMaxProbes);
  return unique;
}

}  // namespace llmbench::calib
