#include "llmbench/sim/speculative.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <utility>

namespace llmbench::sim {

namespace {

/// Uniform [0, 1) from the next SplitMix64 output of `state` (top 53 bits).
double next_uniform(std::uint64_t& state) noexcept {
  state += 0x9e3779b97f4a7c15ULL;
  const std::uint64_t x = splitmix64(state);
  return static_cast<double>(x >> 11U) * 0x1.0p-53;
}

/// Decode attention of `context` tokens with `queries` query rows per sequence, seconds: the
/// roofline of docs/simulator.md "Step-time model" (MLA absorbed: 2·(n_h/t)·(2·r_kv + d_r)
/// FLOPs and (r_kv + d_r)·b_kv bytes per context token and layer; GQA: 4·(n_h/t)·d FLOPs and
/// the rank's K+V bytes), with the FLOPs times `queries` and the KV read once (a verification
/// step attends k + 1 positions of one sequence over the same cache).
double decode_attention_s(const ExecModelParams& p, double context, double queries) {
  const ModelProfile& m = p.model;
  const double heads = static_cast<double>(m.num_heads) / p.tp;
  double flops_per_token = 0;
  double bytes_per_token = 0;
  if (m.attention == AttentionKind::Mla) {
    flops_per_token = 2.0 * heads * static_cast<double>(2 * m.kv_lora_rank + m.qk_rope_head_dim);
    bytes_per_token = static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * m.kv_cache_bytes;
  } else {
    flops_per_token = 4.0 * heads * static_cast<double>(m.head_dim);
    bytes_per_token =
        static_cast<double>(m.kv_elements_per_token_per_layer(p.tp)) * m.kv_cache_bytes;
  }
  const double layers = static_cast<double>(m.num_layers);
  const double peak = p.gpu.peak_flops(m.weight_bytes) * p.efficiency.compute;
  const double bandwidth = p.gpu.memory_bandwidth_gb_s * 1e9 * p.efficiency.memory;
  return std::max(layers * flops_per_token * context * queries / peak,
                  layers * bytes_per_token * context / bandwidth);
}

}  // namespace

double MtpConfig::acceptance_at(int i) const noexcept {
  if (acceptance.empty())
    return 0;
  return acceptance.size() == 1
             ? acceptance.front()
             : acceptance[std::min(static_cast<std::size_t>(i), acceptance.size() - 1)];
}

void validate_mtp(const MtpConfig& config, const std::string& source) {
  const auto bad = [&](const std::string& what) { throw Exception(Error{what, source, -1}); };
  if (config.depth < 0 || config.depth > 16)
    bad(fmt::format("MTP depth must be in [0, 16], got {}", config.depth));
  if (config.depth > 0 && config.acceptance.size() != 1 &&
      config.acceptance.size() != static_cast<std::size_t>(config.depth))
    bad(fmt::format("MTP acceptance needs one value or one per draft position ({}), got {}",
                    config.depth, config.acceptance.size()));
  for (const double a : config.acceptance)
    if (!(a >= 0 && a <= 1))
      bad(fmt::format("MTP acceptance must be in [0, 1], got {}", a));
  if (!(config.draft_overhead_us >= 0))
    bad(fmt::format("MTP draft overhead must be >= 0 µs, got {}", config.draft_overhead_us));
}

double expected_tokens_per_step(const MtpConfig& config) noexcept {
  double tokens = 1;
  double all_accepted = 1;
  for (int i = 0; i < config.depth; ++i) {
    all_accepted *= config.acceptance_at(i);
    tokens += all_accepted;
  }
  return tokens;
}

int draw_step_tokens(const MtpConfig& config, std::uint64_t& state) noexcept {
  int tokens = 1;
  for (int i = 0; i < config.depth; ++i) {
    if (next_uniform(state) >= config.acceptance_at(i))
      break;
    ++tokens;
  }
  return tokens;
}

std::uint64_t mtp_initial_state(std::uint64_t seed) noexcept {
  return splitmix64(seed ^ 0x6d74702d73746570ULL);  // "mtp-step"
}

std::int64_t decode_steps_for(const MtpConfig& config, std::int64_t tokens, std::uint64_t seed) {
  if (!config.enabled() || tokens <= 0)
    return std::max<std::int64_t>(tokens, 0);
  std::uint64_t state = mtp_initial_state(seed);
  std::int64_t steps = 0;
  for (std::int64_t done = 0; done < tokens; ++steps) done += draw_step_tokens(config, state);
  return steps;
}

StepCost mtp_step_cost(const ExecTimeModel& base, const ExecModelParams& params,
                       const MtpConfig& config, const BatchSums& sums) {
  if (!config.enabled() || sums.decode_seqs == 0)
    return base.step_cost_of_sums(sums);
  const auto k = static_cast<std::int64_t>(config.depth);
  const double queries = static_cast<double>(k + 1);
  // Verification: k more tokens per decode through every linear layer and lm_head.
  BatchSums verify = sums;
  verify.tokens += k * sums.decode_seqs;
  verify.sampling += k * sums.decode_seqs;
  StepCost c = base.step_cost_of_sums(verify);
  c.attention_decode_s =
      decode_attention_s(params, static_cast<double>(sums.decode_context), queries);
  // Drafting: k passes of the one-layer MTP module over the decodes' batch.
  BatchSums draft;
  draft.add_decodes(sums.decode_seqs, sums.decode_context);
  const StepCost d = base.step_cost_of_sums(draft);
  const double layers = static_cast<double>(params.model.num_layers);
  const double per_layer = (d.total_s() - d.fixed_s - d.lm_head_s) / layers;
  const double pass = per_layer + d.lm_head_s + config.draft_overhead_us * 1e-6;
  c.fixed_s += static_cast<double>(k) * pass;
  return c;
}

MtpExecModel::MtpExecModel(std::shared_ptr<const ExecTimeModel> base, ExecModelParams params,
                           MtpConfig config)
    : base_(std::move(base)), params_(std::move(params)), config_(std::move(config)) {
  LLMBENCH_ASSERT(base_ != nullptr && base_->prices_from_sums(),
                  "MTP needs a base model that prices from batch sums");
}

StepCost MtpExecModel::step_cost(const std::vector<SeqWork>& batch) const {
  return step_cost_of_sums(BatchSums::of(batch));
}

StepCost MtpExecModel::step_cost_of_sums(const BatchSums& sums) const {
  return mtp_step_cost(*base_, params_, config_, sums);
}

double MtpExecModel::swap_time_s(std::int64_t num_blocks, std::int64_t block_size) const {
  return base_->swap_time_s(num_blocks, block_size);
}

}  // namespace llmbench::sim
