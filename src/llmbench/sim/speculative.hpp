#pragma once
/// @file
/// Multi-token prediction (MTP) / speculative decoding in the simulated engine (docs/simulator.md
/// "Cluster", MTP). DeepSeek-V3's MTP module (DeepSeek-V3 technical report, §2.2: one extra
/// Transformer block sharing the embedding and the output head) drafts `depth` tokens one after
/// the other; the main model verifies them with the real next token in one forward pass, so a
/// decode step emits 1 + (accepted prefix) tokens. SGLang runs it as EAGLE with
/// `--speculative-num-steps` = depth and `--speculative-eagle-topk 1`; vLLM as
/// `--num-speculative-tokens` = depth.
///
/// The engine schedules one decode step per verification, so a request of N output tokens is
/// given 1 + S engine outputs, S the verification steps its N − 1 decode tokens take (drawn per
/// request from the per-position acceptance, `decode_steps_for`). Its KV grows by one token per
/// step in the engine, not by the tokens accepted (an under-count of the output part of the
/// context, stated in docs/simulator.md).

#include "llmbench/sim/cost_model.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::sim {

/// Speculative decoding settings of one engine.
struct MtpConfig {
  int depth = 0;  ///< draft tokens per step (k); 0 = off
  /// Acceptance per draft position: acceptance[i] = P(draft i + 1 accepted | drafts 1 … i
  /// accepted), each in [0, 1]. One value applies to every position; otherwise one per position.
  std::vector<double> acceptance;
  /// Fixed cost of one draft forward pass (kernel launches, the draft sampler), µs.
  double draft_overhead_us = 0;
  [[nodiscard]] bool enabled() const noexcept { return depth > 0; }
  /// The acceptance of draft position `i` (0-based).
  [[nodiscard]] double acceptance_at(int i) const noexcept;
};

/// Checks `config`: depth in [0, 16], one acceptance value or `depth` of them, each in [0, 1],
/// overhead ≥ 0. Throws `Exception` naming `source` (the cluster spec field) otherwise.
void validate_mtp(const MtpConfig& config, const std::string& source);

/// Expected tokens per verification step: 1 + Σ_{i=1..k} Π_{j≤i} a_j (a draft counts only when
/// every draft before it was accepted).
double expected_tokens_per_step(const MtpConfig& config) noexcept;

/// Tokens one verification step emits (1 + the accepted prefix, 1 … k + 1), from the uniform
/// variates of `state` (a SplitMix64 state advanced in place).
int draw_step_tokens(const MtpConfig& config, std::uint64_t& state) noexcept;

/// The state of a request's acceptance draws from its `seed` (`draw_step_tokens` advances it):
/// `decode_steps_for` starts from it, and so may a replay of the same steps' tokens.
std::uint64_t mtp_initial_state(std::uint64_t seed) noexcept;

/// Verification steps that emit `tokens` ≥ 0 decode tokens (the last step may accept more than
/// needed: the request stops at its length), drawn with `draw_step_tokens` from `seed`; `tokens`
/// itself when MTP is off. Deterministic in (config, tokens, seed).
std::int64_t decode_steps_for(const MtpConfig& config, std::int64_t tokens, std::uint64_t seed);

/// The cost of one step with speculative decoding on top of a `base` model that prices from
/// batch sums: every decode verifies k + 1 tokens (k more tokens through the linear layers,
/// k more sampled positions through lm_head, k + 1 query rows over its context in attention:
/// FLOPs × (k + 1), the KV read once, `params`' roofline), then the MTP module drafts k tokens
/// for the next step in k passes of one layer each (the base's per-layer cost of the decodes'
/// batch, its lm_head and `draft_overhead_us`). Prefill chunks are priced as without MTP.
StepCost mtp_step_cost(const ExecTimeModel& base, const ExecModelParams& params,
                       const MtpConfig& config, const BatchSums& sums);

/// An execution-time model with MTP over a base model (`mtp_step_cost`); the base must price
/// from sums. Pure, like every model.
class MtpExecModel final : public ExecTimeModel {
 public:
  MtpExecModel(std::shared_ptr<const ExecTimeModel> base, ExecModelParams params, MtpConfig config);
  [[nodiscard]] StepCost step_cost(const std::vector<SeqWork>& batch) const override;
  [[nodiscard]] bool prices_from_sums() const noexcept override { return true; }
  [[nodiscard]] StepCost step_cost_of_sums(const BatchSums& sums) const override;
  [[nodiscard]] double swap_time_s(std::int64_t num_blocks, std::int64_t block_size) const override;

 private:
  std::shared_ptr<const ExecTimeModel> base_;
  ExecModelParams params_;
  MtpConfig config_;
};

}  // namespace llmbench::sim
