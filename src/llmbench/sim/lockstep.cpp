#include "llmbench/sim/lockstep.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmbench::sim {

DispatchMode parse_dispatch_mode(std::string_view name, const std::string& source) {
  for (const auto& row : kDispatchModes)
    if (row.name == name)
      return row.mode;
  throw Exception(Error{
      fmt::format("unknown dispatch mode '{}' (valid: normal, low_latency)", name), source, -1});
}

void validate_wide_ep(const WideEpConfig& config, const std::string& source) {
  const auto bad = [&](const std::string& what) { throw Exception(Error{what, source, -1}); };
  if (config.gpus_per_node < 1)
    bad(fmt::format("gpus_per_node must be >= 1, got {}", config.gpus_per_node));
  if (!(config.expert_imbalance >= 0))
    bad(fmt::format("expert_imbalance must be >= 0, got {}", config.expert_imbalance));
  if (!(config.link_gb_s > 0))
    bad(fmt::format("link_gb_s must be > 0, got {}", config.link_gb_s));
  if (!(config.latency_us >= 0))
    bad(fmt::format("latency_us must be >= 0, got {}", config.latency_us));
  if (config.max_nodes_per_token < 1)
    bad(fmt::format("max_nodes_per_token must be >= 1, got {}", config.max_nodes_per_token));
}

double internode_bytes_per_token(const ModelProfile& model, const WideEpConfig& config, int nodes) {
  if (nodes <= 1 || !model.is_moe())
    return 0;
  const double n = nodes;
  const double k = static_cast<double>(model.experts_per_token);
  const double h = static_cast<double>(model.hidden_size);
  const double copy = h * (model.weight_bytes <= 1.0 ? 1.0 : 2.0) + 2.0 * h;
  const double remote = (n - 1) / n;
  if (config.dispatch == DispatchMode::LowLatency)
    return k * remote * copy;
  const double nodes_hit = std::min(static_cast<double>(config.max_nodes_per_token),
                                    n * (1.0 - std::pow(1.0 - 1.0 / n, k)));
  return nodes_hit * remote * copy;
}

LockstepPricer::LockstepPricer(std::shared_ptr<const ExecTimeModel> rank_model,
                               const ExecModelParams& params, WideEpConfig config, MtpConfig mtp)
    : rank_model_(std::move(rank_model)),
      moe_model_(make_exec_model(ExecModelKind::Roofline, params)),
      config_(config),
      mtp_(std::move(mtp)),
      ranks_(params.dp) {
  LLMBENCH_ASSERT(rank_model_ != nullptr && rank_model_->prices_from_sums(),
                  "lockstep ranks need a model that prices from batch sums");
  const int gpus = params.tp * params.dp;
  const int nodes = (gpus + config_.gpus_per_node - 1) / config_.gpus_per_node;
  bytes_per_token_ = internode_bytes_per_token(params.model, config_, nodes);
  link_bytes_s_ = config_.link_gb_s * 1e9;
  moe_layers_ = static_cast<double>(params.model.num_moe_layers());
}

LockstepCost LockstepPricer::cost(std::span<const BatchSums> ranks) const {
  LLMBENCH_ASSERT(static_cast<int>(ranks.size()) == ranks_, "one batch per rank");
  LockstepCost out;
  double slowest = 0;
  double nvlink_comm = 0;
  std::int64_t tokens_total = 0;
  std::int64_t tokens_max = 0;
  for (const BatchSums& s : ranks) {
    const StepCost c = rank_model_->step_cost_of_sums(s);
    out.fixed_s = std::max(out.fixed_s, c.fixed_s);
    if (s.num_seqs == 0)
      continue;
    slowest = std::max(slowest, c.total_s() - c.fixed_s - c.moe_s - c.alltoall_s);
    nvlink_comm = std::max(nvlink_comm, c.alltoall_s);
    // A decode verifies k + 1 tokens with MTP: all of them go through the experts.
    const std::int64_t t = s.tokens + static_cast<std::int64_t>(mtp_.depth) * s.decode_seqs;
    tokens_total += t;
    tokens_max = std::max(tokens_max, t);
  }
  if (tokens_total == 0) {
    out.step_s = out.fixed_s;
    return out;
  }
  // The hottest GPU's routed tokens: the mean per rank times (1 + imbalance). The roofline model
  // with dp = ranks prices the MoE of that many tokens per rank on every rank.
  const double mean = static_cast<double>(tokens_total) / ranks_;
  BatchSums hottest;
  hottest.tokens = std::max<std::int64_t>(1, std::llround(mean * (1.0 + config_.expert_imbalance)));
  out.moe_s = moe_model_->step_cost_of_sums(hottest).moe_s;
  out.compute_s = slowest + out.moe_s;
  if (bytes_per_token_ > 0) {
    const double sent =
        std::max(static_cast<double>(tokens_max), mean * (1.0 + config_.expert_imbalance));
    out.comm_s =
        moe_layers_ * (2.0 * config_.latency_us * 1e-6 + sent * bytes_per_token_ / link_bytes_s_);
  } else {
    out.comm_s = nvlink_comm;  // one node: the rank model's all-to-all over NVLink
  }
  out.step_s = out.fixed_s +
               (config_.overlap ? std::max(out.compute_s, out.comm_s) : out.compute_s + out.comm_s);
  return out;
}

}  // namespace llmbench::sim
