#pragma once
/// @file
/// What a deployment's communication is made of, for `plan` and `simulate`: which of the cost
/// model's communication terms come from a measurement (`describe_comm_terms`), and the bytes
/// each forward pass moves under tensor parallelism against data parallelism with expert
/// parallelism, with the time the cost model gives them (`forward_pass_traffic`;
/// docs/simulator.md "TP against DP/EP traffic").
///
/// Per forward pass of N tokens over n GPUs (h hidden size, L layers, L_moe MoE layers, k experts
/// per token, b_d dispatch bytes per element: 1 for FP8 models, else 2):
/// - TPn: two all-reduces per layer of S = N·h·2 bytes (BF16 activations); a ring all-reduce
///   sends 2(n−1)/n·S from each GPU (nccl-tests' bus-bandwidth argument, PERFORMANCE.md);
/// - DPn + EPn (attention data-parallel, experts spread): per MoE layer one dispatch of
///   S_d = (N/n)·k·h·b_d and one combine of S_c = (N/n)·k·h·2 bytes from each GPU's send buffer,
///   (n−1)/n of which leave the GPU, with tokens routed uniformly (no deduplication of tokens
///   whose experts share a GPU); dense layers move nothing;
/// - DPn of a dense model: replicas share nothing during a forward pass (inference has no
///   gradient synchronisation), 0 bytes.

#include "llmbench/sim/comm_model.hpp"
#include "llmbench/sim/profiles.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace llmbench::sim {

/// How one communication term of the cost model is priced.
struct CommTermSource {
  std::string term{};  ///< "TP all-reduce", "EP all-to-all"
  bool used = false;   ///< the deployment has the term (tp > 1 / ep > 1)
  bool measured = false;
  std::string detail{};  ///< "measured: …" / "datasheet: …, because …" / "none (TP1)"
};

/// The sources of the TP all-reduce and EP all-to-all terms for `tp` and `ep`: measured when
/// `comm` (read from `file`, "" = none given) has a fit for that GPU count, else the datasheet
/// formula with the reason.
std::vector<CommTermSource> describe_comm_terms(const CommModel* comm, const std::string& file,
                                                int tp, int ep, const HardwareProfile& gpu,
                                                const Efficiency& efficiency);

/// The communication of one parallel layout for one forward pass.
struct LayoutTraffic {
  std::string layout{};     ///< "TP8", "DP8+EP8", "TP2+DP4+EP8"
  bool configured = false;  ///< the layout the plan was given
  int tp = 1;
  int ep = 1;
  int dp = 1;
  std::int64_t tokens = 0;        ///< N: tokens per forward pass over all GPUs
  double all_reduce_bytes = 0;    ///< S of one TP all-reduce (0 without TP)
  std::int64_t all_reduces = 0;   ///< TP all-reduces per forward pass (2·L)
  double dispatch_bytes = 0;      ///< S of one GPU's dispatch (0 without EP)
  double combine_bytes = 0;       ///< S of one GPU's combine
  std::int64_t all_to_alls = 0;   ///< dispatch + combine pairs per forward pass (L_moe)
  double wire_bytes_per_gpu = 0;  ///< bytes each GPU sends per forward pass
  double all_reduce_s = 0;        ///< TP all-reduce time per forward pass
  double all_to_all_s = 0;        ///< EP all-to-all time per forward pass
  bool all_reduce_measured = false;
  bool all_to_all_measured = false;
  [[nodiscard]] double comm_s() const noexcept { return all_reduce_s + all_to_all_s; }
};

/// The traffic of the configured layout (tp, ep, dp; `tokens_per_replica` tokens in each of the
/// dp replicas' forward passes) and of the pure alternatives over the same n = tp·dp GPUs and
/// the same N = tokens_per_replica·dp tokens: TPn, and DPn+EPn for an MoE model or DPn for a
/// dense one (duplicates dropped, configured first). Times from the roofline model's
/// communication terms (`RooflineModel`), measured where `comm` has the fit.
std::vector<LayoutTraffic> forward_pass_traffic(const ModelProfile& model,
                                                const HardwareProfile& gpu,
                                                const Efficiency& efficiency, const CommModel* comm,
                                                int tp, int ep, int dp,
                                                std::int64_t tokens_per_replica);

}  // namespace llmbench::sim
