#pragma once
/// @file
/// Data-parallel attention in lockstep with wide expert parallelism (docs/simulator.md
/// "Cluster", DP attention and wide EP). DeepSeek's deployment (its "Inference System Overview",
/// open-source week day 6) and SGLang's (`--enable-dp-attention --enable-deepep-moe`, LMSYS blog
/// of 2025-05-05) give each GPU its own attention batch and KV cache (a DP rank) and spread the
/// routed experts over all GPUs of the unit: every MoE layer dispatches each token to the GPUs of
/// its experts and combines the results back, so all ranks step together and the slowest one
/// sets the step. Each rank is an `EngineCore` with its own scheduler; `LockstepPricer` turns the
/// ranks' batches into the unit's step time.

#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/speculative.hpp"

#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace llmbench::sim {

/// DeepEP's two dispatch modes (deepseek-ai/DeepEP README): `Normal` kernels (prefill) send a
/// token once per destination node and forward it over NVLink inside the node; `LowLatency`
/// kernels (decode, CUDA-graph friendly) send one copy per destination expert over RDMA.
enum class DispatchMode { Normal, LowLatency };

/// One row of the dispatch-mode name table.
struct DispatchModeName {
  std::string_view name;
  DispatchMode mode;
};

/// The one table of dispatch-mode names ("normal", "low_latency").
inline constexpr std::array<DispatchModeName, 2> kDispatchModes{{
    {.name = "normal", .mode = DispatchMode::Normal},
    {.name = "low_latency", .mode = DispatchMode::LowLatency},
}};

/// Parses a dispatch-mode name; throws `Exception` naming `source` and the valid names.
DispatchMode parse_dispatch_mode(std::string_view name, const std::string& source);

/// The lockstep unit's communication and balance.
struct WideEpConfig {
  int gpus_per_node = 8;
  /// Hottest GPU's routed tokens over the mean, minus 1 (0 = perfectly balanced; EPLB's
  /// "balancedness" b = mean/max gives 1/b − 1). Scales the MoE term and the combine traffic.
  double expert_imbalance = 0;
  /// Inter-node bandwidth per GPU and direction, GB/s: 50 for one 400 Gb/s InfiniBand NIC per
  /// GPU (DeepSeek-V3 technical report §3.1), about 43 achieved by DeepEP's kernels (README).
  double link_gb_s = 43;
  double latency_us = 10;  ///< per dispatch and per combine of one MoE layer
  /// Two-batch overlap (DeepSeek's dual micro-batch prefill and 5-stage decode pipeline,
  /// SGLang's TBO): communication runs behind computation, so the step takes the longer of the
  /// two instead of their sum.
  bool overlap = true;
  DispatchMode dispatch = DispatchMode::Normal;
  /// Node-limited routing: a token's experts lie on at most this many nodes (DeepSeek-V3
  /// technical report §2.1.2, M = 4).
  int max_nodes_per_token = 4;
};

/// Checks `config` (positive sizes and bandwidth, imbalance ≥ 0); throws `Exception` naming
/// `source`.
void validate_wide_ep(const WideEpConfig& config, const std::string& source);

/// Bytes one token sends over the inter-node links per MoE layer (dispatch + combine) in a unit of
/// `nodes` nodes: `Normal` mode sends it once to each other node holding one of its k experts
/// (expected distinct nodes n·(1 − (1 − 1/n)^k), at most `max_nodes_per_token`, times the
/// (n − 1)/n of them that are remote); `LowLatency` sends one copy per remote expert
/// (k·(n − 1)/n). A copy is h bytes of FP8 hidden state (BF16 for BF16 models) out and 2·h
/// bytes of BF16 back (DeepSeek's overview: FP8 dispatch, BF16 combine). 0 for one node.
double internode_bytes_per_token(const ModelProfile& model, const WideEpConfig& config, int nodes);

/// Seconds of one lockstep step's terms.
struct LockstepCost {
  double fixed_s = 0;    ///< the largest rank's fixed cost
  double compute_s = 0;  ///< slowest rank's attention and dense layers + the MoE of all tokens
  double moe_s = 0;      ///< of `compute_s`: the routed experts on the hottest GPU
  double comm_s = 0;     ///< dispatch + combine over the inter-node links
  double step_s = 0;     ///< fixed + (overlap ? max(compute, comm) : compute + comm)
};

/// Prices the step of a lockstep unit from its ranks' batch sums.
class LockstepPricer {
 public:
  /// `rank_model` prices one rank's batch (with its MTP, if any); `params` are the unit's
  /// (tp per rank, ep over the unit, dp = ranks), from which the MoE term comes (a
  /// `RooflineModel`); `mtp` says how many tokens each decode verifies.
  LockstepPricer(std::shared_ptr<const ExecTimeModel> rank_model, const ExecModelParams& params,
                 WideEpConfig config, MtpConfig mtp);
  /// The step of ranks whose batches sum to `ranks` (an idle rank: empty sums, which join with
  /// their fixed cost only, as an idle DP rank still runs the MoE collectives).
  [[nodiscard]] LockstepCost cost(std::span<const BatchSums> ranks) const;
  [[nodiscard]] int num_ranks() const noexcept { return ranks_; }

 private:
  std::shared_ptr<const ExecTimeModel> rank_model_;
  std::unique_ptr<ExecTimeModel> moe_model_;
  WideEpConfig config_;
  MtpConfig mtp_;
  int ranks_ = 1;
  double bytes_per_token_ = 0;  ///< inter-node bytes per token per MoE layer
  double link_bytes_s_ = 0;
  double moe_layers_ = 0;
};

}  // namespace llmbench::sim
