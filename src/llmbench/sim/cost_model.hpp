#pragma once
/// @file
/// Execution-time models: the wall time of one engine step for a batch composition. The
/// roofline model sums, per operator group, max(FLOPs / (η_F · peak), bytes / (η_M · bandwidth))
/// plus fixed per-step, per-layer and per-sequence costs and the TP all-reduce (formulas and
/// sources in docs/simulator.md "Step-time model" and "Sources"). Models are chosen by
/// `ExecModelKind` through a registry (docs/simulator.md "Structure").

#include "llmbench/core/clock.hpp"
#include "llmbench/sim/batch_sums.hpp"
#include "llmbench/sim/comm_model.hpp"
#include "llmbench/sim/profiles.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

namespace llmbench::sim {

/// Seconds per named term of one step (per GPU; all ranks run in lockstep).
struct StepCost {
  double fixed_s = 0;         ///< T_step0 + L·τ_layer + B·τ_req
  double dense_linear_s = 0;  ///< attention projections, dense FFN, shared experts, routers
  double moe_s = 0;  ///< routed experts (with L_moe·τ_exp per hit expert on multi-token steps)
  double attention_prefill_s = 0;
  double attention_decode_s = 0;
  double lm_head_s = 0;
  double allreduce_s = 0;  ///< 2 ring all-reduces per layer at TP > 1
  double alltoall_s = 0;   ///< EP dispatch + combine per MoE layer at EP > 1
  [[nodiscard]] double total_s() const noexcept {
    return fixed_s + dense_linear_s + moe_s + attention_prefill_s + attention_decode_s + lm_head_s +
           allreduce_s + alltoall_s;
  }
};

/// Predicts step times. Implementations must be deterministic and pure.
class ExecTimeModel {
 public:
  virtual ~ExecTimeModel() = default;
  /// Cost of one step computing `batch` (non-empty).
  [[nodiscard]] virtual StepCost step_cost(const std::vector<SeqWork>& batch) const = 0;
  /// True when `step_cost` depends on the batch only through its `BatchSums`; the engine then
  /// prices a step with `step_cost_of_sums` from sums built in one pass over the schedule,
  /// without a per-sequence work list (speed: docs/performance.md "Simulator"). Default false.
  [[nodiscard]] virtual bool prices_from_sums() const noexcept { return false; }
  /// `step_cost` of a batch with these sums; only called when `prices_from_sums()`. The default
  /// throws (`LLMBENCH_ASSERT`).
  [[nodiscard]] virtual StepCost step_cost_of_sums(const BatchSums& sums) const;
  /// `step_cost(batch).total_s()` in ns, at least 1.
  [[nodiscard]] TimeNs step_time_ns(const std::vector<SeqWork>& batch) const;
  /// Seconds to copy `num_blocks` KV blocks of `block_size` tokens between GPU and host memory
  /// (swap out or in; every GPU of the replica copies its own share in parallel). Default 0.
  [[nodiscard]] virtual double swap_time_s(std::int64_t num_blocks, std::int64_t block_size) const;
};

/// Expected distinct routed experts hit by `tokens` tokens each picking `k` of `n` uniformly:
/// n·(1 − (1 − k/n)^tokens).
double expected_distinct_experts(double n, double k, double tokens) noexcept;

/// Everything a model needs: shapes, GPU, parallelism, efficiencies (default: the GPU's).
struct ExecModelParams {
  ModelProfile model;
  HardwareProfile gpu;
  int tp = 1;  ///< tensor-parallel size of attention/dense layers (GPUs per replica)
  Efficiency efficiency;
  /// Expert-parallel size: 1 = routed experts TP-sharded inside the replica; > 1 = each GPU holds
  /// n_routed_experts / ep whole experts and tokens are dispatched/combined all-to-all (vLLM
  /// `--enable-expert-parallel`: ep = tp × dp).
  int ep = 1;
  /// Attention data-parallel replicas stepping in lockstep (DP-attention + EP MoE). The simulated
  /// batch is one replica's; the MoE layers see dp × its tokens (replicas assumed equally loaded).
  int dp = 1;
  /// Measured curves (`llmbench probe comm`, a calibration file's `comm` section) that replace
  /// the datasheet TP all-reduce and EP all-to-all terms; empty = datasheet.
  CommTerms comm{};
  /// llama.cpp's attention over its unified KV cache without flash attention (the llamacpp
  /// engine family): every token of a step attends over all occupied cells
  /// (`BatchSums::window_cells`, padded to 32 as llama.cpp pads `n_kv`), not over its own
  /// sequence's, and each micro-batch of `ubatch_tokens` reads the whole window's K and V once.
  /// MLA models are priced as llama.cpp c392e5094 (February 2025) runs them: K and V cached per
  /// head (n_h·(d_nope + d_rope) + n_h·d_v elements per cell and layer), no absorbed form.
  /// docs/simulator.md "llama.cpp's shared KV window".
  bool shared_kv_window = false;
  /// llama.cpp `--ubatch-size` (`n_ubatch`), default 512: the micro-batches of the shared window
  /// and of the per-expert MoE batches (`Efficiency::moe_expert_overhead_us`); a micro-batch of
  /// one token pays `Efficiency::vec_score_overhead_us` per window score.
  std::int64_t ubatch_tokens = 512;
};

/// The roofline model of docs/simulator.md "Step-time model".
class RooflineModel final : public ExecTimeModel {
 public:
  explicit RooflineModel(ExecModelParams params);
  [[nodiscard]] StepCost step_cost(const std::vector<SeqWork>& batch) const override;
  [[nodiscard]] bool prices_from_sums() const noexcept override { return true; }
  [[nodiscard]] StepCost step_cost_of_sums(const BatchSums& sums) const override;
  /// bytes = blocks × block_size × KV bytes per token per GPU, over the GPU's host link
  /// (`HardwareProfile::host_link_bandwidth_gb_s`, PCIe per direction); 0 when the profile has
  /// no host link figure.
  [[nodiscard]] double swap_time_s(std::int64_t num_blocks, std::int64_t block_size) const override;

 private:
  ExecModelParams p_;
  double peak_flops_;
  double bandwidth_;  ///< η_M × HBM bytes/s
  // Per-model constants of step_cost, computed once.
  double fixed_layer_s_ = 0;  ///< (T_step0 + L·τ_layer) s
  double per_seq_s_ = 0;      ///< τ_req s
  double expert_s_ = 0;       ///< MoE layers × τ_exp, s per charged expert (> 1 token)
  double p_dense_ = 0;        ///< dense parameters
  double moe_layers_ = 0;
  double params_per_expert_ = 0;
  double log_miss_ = 0;       ///< log(1 − k/N) for the expected-distinct-experts term
  double experts_local_ = 0;  ///< routed experts whose weights one GPU reads (N/ep or N)
  double moe_shards_ = 1;     ///< GPUs one expert's FLOPs/weights are split over (tp or 1)
  double moe_gpus_ = 1;       ///< GPUs the routed-expert FLOPs spread over (tp, or ep)
  double nh_ = 0;             ///< heads per GPU
  double dec_flops_per_tok_ = 0, dec_bytes_per_tok_ = 0;  ///< attention decode, per layer
  double pre_flops_qk_ = 0, pre_flops_up_ = 0, pre_bytes_per_tok_ = 0;
  double win_flops_ = 0, win_bytes_ = 0;  ///< shared window: per token·cell, per cell (a layer)
  double vec_score_s_ = 0;  ///< L·n_h·τ_vec: s per window cell of a one-token micro-batch
  /// Experts charged τ_exp per MoE layer, summed over the micro-batches of `ubatch_tokens` that a
  /// step of `tokens` (> 1) runs as, counting only micro-batches of more than one token: the
  /// distinct experts each hits on a CPU host, every local expert on a GPU.
  [[nodiscard]] double ubatch_experts_hit(double tokens) const noexcept;
  /// The shared-window attention of `sums` (`ExecModelParams::shared_kv_window`), seconds.
  [[nodiscard]] double window_attention_s(const BatchSums& sums) const noexcept;
};

/// Execution-time model kinds.
enum class ExecModelKind { Roofline };
/// Parses "roofline"; throws `Exception` (source `--exec-model`) otherwise.
ExecModelKind parse_exec_model_kind(std::string_view name);

using ExecModelFactory = std::function<std::unique_ptr<ExecTimeModel>(const ExecModelParams&)>;
/// Kind → factory (vidur-style registry).
const std::map<ExecModelKind, ExecModelFactory>& exec_model_registry();
/// Builds the model of `kind` from the registry.
std::unique_ptr<ExecTimeModel> make_exec_model(ExecModelKind kind, const ExecModelParams& params);

}  // namespace llmbench::sim
