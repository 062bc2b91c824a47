#include "llmbench/sim/cost_model.hpp"

#include "llmbench/core/error.hpp"

#include <algorithm>
#include <cmath>

namespace llmbench::sim {

TimeNs ExecTimeModel::step_time_ns(const std::vector<SeqWork>& batch) const {
  const double s = step_cost(batch).total_s();
  return std::max<TimeNs>(1, static_cast<TimeNs>(std::llround(s * 1e9)));
}

double expected_distinct_experts(double n, double k, double tokens) noexcept {
  if (n <= 0 || tokens <= 0)
    return 0;
  return n * (1.0 - std::pow(1.0 - k / n, tokens));
}

RooflineModel::RooflineModel(ExecModelParams params) : p_(std::move(params)) {
  LLMBENCH_ASSERT(p_.tp >= 1, "tp must be >= 1");
  peak_flops_ = p_.gpu.peak_flops(p_.model.weight_bytes) * p_.efficiency.compute;
  bandwidth_ = p_.gpu.memory_bandwidth_gb_s * 1e9 * p_.efficiency.memory;
}

StepCost RooflineModel::step_cost(const std::vector<SeqWork>& batch) const {
  const ModelProfile& m = p_.model;
  const double t = p_.tp;
  const double L = static_cast<double>(m.num_layers);
  const double h = static_cast<double>(m.hidden_size);
  const double bw = m.weight_bytes;
  const double bkv = m.kv_cache_bytes;
  // Roofline per operator group: the slower of compute and memory.
  const auto roof = [&](double flops, double bytes) {
    return std::max(flops / peak_flops_, bytes / bandwidth_);
  };

  double tokens = 0;
  double sampling = 0;
  for (const auto& s : batch) {
    tokens += static_cast<double>(s.num_new_tokens);
    sampling += s.samples ? 1 : 0;
  }
  StepCost c;
  const auto& e = p_.efficiency;
  c.fixed_s = (e.step_overhead_us + L * e.layer_overhead_us +
               static_cast<double>(batch.size()) * e.request_overhead_us) *
              1e-6;

  // Dense linears: F = 2·T·P/t, M = P·b_w/t.
  const double p_dense = static_cast<double>(m.dense_params());
  c.dense_linear_s = roof(2.0 * tokens * p_dense / t, p_dense * bw / t);

  // Routed experts per MoE layer: F = 2·T·k·P_e/t; weights of the distinct experts hit.
  if (m.is_moe()) {
    const double pe = static_cast<double>(m.params_per_expert());
    const double lm = static_cast<double>(m.num_moe_layers());
    const double k = static_cast<double>(m.experts_per_token);
    const double hit =
        expected_distinct_experts(static_cast<double>(m.n_routed_experts), k, tokens);
    c.moe_s = roof(lm * 2.0 * tokens * k * pe / t, lm * hit * pe * bw / t);
  }

  // Attention: heads are sharded over TP; MLA latents are replicated, GQA KV heads sharded.
  const double nh = static_cast<double>(m.num_heads) / t;
  double f_pre = 0, m_pre = 0, f_dec = 0, m_dec = 0;
  for (const auto& s : batch) {
    const double q = static_cast<double>(s.num_new_tokens);
    const double p = static_cast<double>(s.num_context_tokens);
    if (m.attention == AttentionKind::Mla) {
      const double lat = static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim);
      if (q == 1 && p > 0) {  // absorbed decode: 2·n_h·(2·r_kv + d_r) FLOPs per cached token
        f_dec += 2.0 * nh * static_cast<double>(2 * m.kv_lora_rank + m.qk_rope_head_dim) * (p + 1);
        m_dec += (p + 1) * lat * bkv;
      } else {  // MHA form; prior latents are up-projected (kv_b_proj)
        const double dqk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
        const double dv = static_cast<double>(m.v_head_dim);
        f_pre += 2.0 * nh * (dqk + dv) * q * (p + q / 2.0) +
                 2.0 * p * static_cast<double>(m.kv_lora_rank) * nh *
                     static_cast<double>(m.qk_nope_head_dim + m.v_head_dim);
        m_pre += (p + q) * lat * bkv;
      }
    } else {
      const double kv_layer = static_cast<double>(m.kv_elements_per_token_per_layer(p_.tp)) * bkv;
      const double d = static_cast<double>(m.head_dim);
      if (q == 1 && p > 0) {
        f_dec += 4.0 * nh * d * (p + 1);
        m_dec += (p + 1) * kv_layer;
      } else {
        f_pre += 4.0 * nh * d * q * (p + q / 2.0);
        m_pre += (p + q) * kv_layer;
      }
    }
  }
  if (f_pre > 0 || m_pre > 0)
    c.attention_prefill_s = roof(L * f_pre, L * m_pre);
  if (f_dec > 0 || m_dec > 0)
    c.attention_decode_s = roof(L * f_dec, L * m_dec);

  // lm_head (BF16) only for sequences that sample.
  if (sampling > 0) {
    const double v = static_cast<double>(m.vocab_size);
    c.lm_head_s = std::max(2.0 * sampling * v * h / t / (p_.gpu.bf16_tflops * 1e12 * e.compute),
                           v * h * 2.0 / t / bandwidth_);
  }

  // Two ring all-reduces per layer: α + 2(t−1)/t · T·h·2 B / link.
  if (p_.tp > 1) {
    const double link = p_.gpu.link_bandwidth_gb_s * 1e9;
    c.allreduce_s =
        2.0 * L * (e.allreduce_latency_us * 1e-6 + 2.0 * (t - 1) / t * tokens * h * 2.0 / link);
  }
  return c;
}

ExecModelKind parse_exec_model_kind(std::string_view name) {
  if (name == "roofline")
    return ExecModelKind::Roofline;
  throw Exception(Error{"unknown execution-time model (known: roofline)", "--exec-model", -1});
}

const std::map<ExecModelKind, ExecModelFactory>& exec_model_registry() {
  static const std::map<ExecModelKind, ExecModelFactory> registry{
      {ExecModelKind::Roofline,
       [](const ExecModelParams& p) { return std::make_unique<RooflineModel>(p); }},
  };
  return registry;
}

std::unique_ptr<ExecTimeModel> make_exec_model(ExecModelKind kind, const ExecModelParams& params) {
  const auto& reg = exec_model_registry();
  const auto it = reg.find(kind);
  LLMBENCH_ASSERT(it != reg.end(), "execution-time model kind not registered");
  return it->second(params);
}

}  // namespace llmbench::sim
