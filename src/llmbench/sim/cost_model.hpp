#pragma once
/// @file
/// Execution-time models: the wall time of one engine step for a batch composition. The
/// roofline model sums, per operator group, max(FLOPs / (η_F · peak), bytes / (η_M · bandwidth))
/// plus fixed per-step, per-layer and per-sequence costs and the TP all-reduce (formulas and
/// sources in docs/simulator.md and SIMULATOR-NOTES.md §6). Models are chosen by
/// `ExecModelKind` through a registry (STYLE.md "Simulator").

#include "llmbench/core/clock.hpp"
#include "llmbench/sim/profiles.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

namespace llmbench::sim {

/// The work of one sequence in a step.
struct SeqWork {
  std::int64_t num_new_tokens = 0;      ///< tokens computed this step (1 for a decode)
  std::int64_t num_context_tokens = 0;  ///< tokens already in the KV cache before this step
  bool samples = false;                 ///< the step ends its prompt/recompute and samples a token
};

/// Seconds per named term of one step (per GPU; all ranks run in lockstep).
struct StepCost {
  double fixed_s = 0;         ///< T_step0 + L·τ_layer + B·τ_req
  double dense_linear_s = 0;  ///< attention projections, dense FFN, shared experts, routers
  double moe_s = 0;           ///< routed experts
  double attention_prefill_s = 0;
  double attention_decode_s = 0;
  double lm_head_s = 0;
  double allreduce_s = 0;  ///< 2 ring all-reduces per layer at TP > 1
  [[nodiscard]] double total_s() const noexcept {
    return fixed_s + dense_linear_s + moe_s + attention_prefill_s + attention_decode_s + lm_head_s +
           allreduce_s;
  }
};

/// Predicts step times. Implementations must be deterministic and pure.
class ExecTimeModel {
 public:
  virtual ~ExecTimeModel() = default;
  /// Cost of one step computing `batch` (non-empty).
  [[nodiscard]] virtual StepCost step_cost(const std::vector<SeqWork>& batch) const = 0;
  /// `step_cost(batch).total_s()` in ns, at least 1.
  [[nodiscard]] TimeNs step_time_ns(const std::vector<SeqWork>& batch) const;
};

/// Expected distinct routed experts hit by `tokens` tokens each picking `k` of `n` uniformly:
/// n·(1 − (1 − k/n)^tokens).
double expected_distinct_experts(double n, double k, double tokens) noexcept;

/// Everything a model needs: shapes, GPU, parallelism, efficiencies (default: the GPU's).
struct ExecModelParams {
  ModelProfile model;
  HardwareProfile gpu;
  int tp = 1;  ///< tensor-parallel size; experts are sharded TP-wise (no EP)
  Efficiency efficiency;
};

/// The roofline model of SIMULATOR-NOTES.md §6.2.
class RooflineModel final : public ExecTimeModel {
 public:
  explicit RooflineModel(ExecModelParams params);
  [[nodiscard]] StepCost step_cost(const std::vector<SeqWork>& batch) const override;

 private:
  ExecModelParams p_;
  double peak_flops_;
  double bandwidth_;  ///< η_M × HBM bytes/s
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
