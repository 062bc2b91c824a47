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

double ExecTimeModel::swap_time_s(std::int64_t num_blocks, std::int64_t block_size) const {
  (void)num_blocks;
  (void)block_size;
  return 0;
}

RooflineModel::RooflineModel(ExecModelParams params) : p_(std::move(params)) {
  LLMBENCH_ASSERT(p_.tp >= 1 && p_.ep >= 1 && p_.dp >= 1, "tp, ep and dp must be >= 1");
  LLMBENCH_ASSERT(p_.ubatch_tokens >= 1, "ubatch_tokens must be >= 1");
  LLMBENCH_ASSERT(p_.efficiency.attention > 0, "the attention efficiency must be > 0");
  peak_flops_ = p_.gpu.peak_flops(p_.model.weight_bytes) * p_.efficiency.compute;
  bandwidth_ = p_.gpu.memory_bandwidth_gb_s * 1e9 * p_.efficiency.memory;
  const ModelProfile& m = p_.model;
  const auto& e = p_.efficiency;
  const double t = p_.tp;
  const double L = static_cast<double>(m.num_layers);
  fixed_layer_s_ = (e.step_overhead_us + L * e.layer_overhead_us) * 1e-6;
  per_seq_s_ = e.request_overhead_us * 1e-6;
  p_dense_ = static_cast<double>(m.dense_params());
  if (m.is_moe()) {
    const double n = static_cast<double>(m.n_routed_experts);
    const double k = static_cast<double>(m.experts_per_token);
    moe_layers_ = static_cast<double>(m.num_moe_layers());
    params_per_expert_ = static_cast<double>(m.params_per_expert());
    expert_s_ = moe_layers_ * e.moe_expert_overhead_us * 1e-6;
    log_miss_ = k < n ? std::log1p(-k / n) : -1e300;
    if (p_.ep > 1) {  // whole experts per GPU, tokens of all DP replicas
      experts_local_ = n / p_.ep;
      moe_shards_ = 1;
      moe_gpus_ = p_.ep;
    } else {  // every expert TP-sharded inside the replica
      experts_local_ = n;
      moe_shards_ = t;
      moe_gpus_ = t;
    }
  }
  nh_ = static_cast<double>(m.num_heads) / t;
  const double bkv = m.kv_cache_bytes;
  if (m.attention == AttentionKind::Mla) {
    const double lat = static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim);
    dec_flops_per_tok_ = 2.0 * nh_ * static_cast<double>(2 * m.kv_lora_rank + m.qk_rope_head_dim);
    dec_bytes_per_tok_ = lat * bkv;
    pre_flops_qk_ =
        2.0 * nh_ * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
    pre_flops_up_ = 2.0 * static_cast<double>(m.kv_lora_rank) * nh_ *
                    static_cast<double>(m.qk_nope_head_dim + m.v_head_dim);
    pre_bytes_per_tok_ = lat * bkv;
  } else {
    const double kv_layer = static_cast<double>(m.kv_elements_per_token_per_layer(p_.tp)) * bkv;
    const double d = static_cast<double>(m.head_dim);
    dec_flops_per_tok_ = 4.0 * nh_ * d;
    dec_bytes_per_tok_ = kv_layer;
    pre_flops_qk_ = 4.0 * nh_ * d;
    pre_flops_up_ = 0;
    pre_bytes_per_tok_ = kv_layer;
  }
  if (p_.shared_kv_window) {
    // Scores and weighted values per token and cell: 2·n_h·(d_qk + d_v) FLOPs over K and V
    // cached per head (GQA: 4·n_h·d_h over 2·n_kv·d_h elements).
    const double nh = static_cast<double>(m.num_heads);
    if (m.attention == AttentionKind::Mla) {
      const double dk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
      const double dv = static_cast<double>(m.v_head_dim);
      win_flops_ = 2.0 * nh * (dk + dv);
      win_bytes_ = nh * (dk + dv) * bkv;
    } else {
      win_flops_ = 4.0 * nh * static_cast<double>(m.head_dim);
      win_bytes_ = static_cast<double>(m.kv_elements_per_token_per_layer(1)) * bkv;
    }
    vec_score_s_ = L * nh * e.vec_score_overhead_us * 1e-6;
  }
}

double RooflineModel::window_attention_s(const BatchSums& sums) const noexcept {
  // n_kv = the occupied window padded to 32 cells; T·n_kv scores per layer at η_attn times the
  // linear layers' FLOP rate, the window's K and V read once per micro-batch at η_M.
  const double window = std::ceil(static_cast<double>(sums.window_cells()) / 32.0) * 32.0;
  const double tokens = static_cast<double>(sums.tokens);
  const double u = static_cast<double>(p_.ubatch_tokens);
  const double ubatches = std::ceil(tokens / u);
  const double L = static_cast<double>(p_.model.num_layers);
  const double roof =
      std::max(L * tokens * window * win_flops_ / (peak_flops_ * p_.efficiency.attention),
               L * ubatches * window * win_bytes_ / bandwidth_);
  // A micro-batch of one token (a single decode, or the step's last token past a multiple of
  // n_ubatch) scores the window on the matrix-vector path: τ_vec per cell, head and layer.
  const bool one_token = tokens - std::floor(tokens / u) * u == 1.0;
  return one_token ? roof + vec_score_s_ * window : roof;
}

double RooflineModel::ubatch_experts_hit(double tokens) const noexcept {
  // llama.cpp's per-expert MoE batches (`Efficiency::moe_expert_overhead_us`): the step runs as
  // micro-batches of `ubatch_tokens` (`llama_decode_impl`, `split_simple(n_ubatch)`), each a graph
  // of its own; one of more than one token pays τ_exp per MoE layer and expert. A CPU backend
  // pays it per distinct expert the micro-batch hits; the CUDA backend pays it for every local
  // expert whatever the micro-batch hits (llama-batched-bench: a step of 2 to 16 sequences costs
  // the same; docs/simulator.md "llama.cpp's per-expert MoE batches").
  const double u = static_cast<double>(p_.ubatch_tokens);
  const double full = u > 1 ? std::floor(tokens / u) : 0.0;
  const double rest = u > 1 ? tokens - full * u : 0.0;
  if (!p_.gpu.cpu)
    return experts_local_ * (full + (rest > 1 ? 1.0 : 0.0));
  const auto hit = [&](double n) { return experts_local_ * -std::expm1(n * log_miss_); };
  return full * hit(u) + (rest > 1 ? hit(rest) : 0.0);
}

StepCost RooflineModel::step_cost(const std::vector<SeqWork>& batch) const {
  return step_cost_of_sums(BatchSums::of(batch));
}

StepCost ExecTimeModel::step_cost_of_sums(const BatchSums& sums) const {
  (void)sums;
  LLMBENCH_ASSERT(false, "this execution-time model prices per sequence, not from sums");
  return {};
}

StepCost RooflineModel::step_cost_of_sums(const BatchSums& sums) const {
  const ModelProfile& m = p_.model;
  const double t = p_.tp;
  const double L = static_cast<double>(m.num_layers);
  const double h = static_cast<double>(m.hidden_size);
  const double bw = m.weight_bytes;
  // Roofline per operator group: the slower of compute and memory.
  const auto roof = [&](double flops, double bytes) {
    return std::max(flops / peak_flops_, bytes / bandwidth_);
  };
  // Every attention term is linear in the batch sums (decode: context c = p + 1; prefill chunk
  // q after p: q·(p + q/2), p for the latent up-projection, p + q read).
  const double tokens = static_cast<double>(sums.tokens);
  const double sampling = static_cast<double>(sums.sampling);
  StepCost c;
  const auto& e = p_.efficiency;
  c.fixed_s = fixed_layer_s_ + static_cast<double>(sums.num_seqs) * per_seq_s_;

  // Dense linears: F = 2·T·P/t, M = P·b_w/t.
  c.dense_linear_s = roof(2.0 * tokens * p_dense_ / t, p_dense_ * bw / t);

  // Routed experts per MoE layer: F = 2·T·k·P_e spread over the MoE GPUs; weights of the
  // distinct local experts hit (expected N_local·(1 − (1 − k/N)^T)).
  if (m.is_moe()) {
    const double k = static_cast<double>(m.experts_per_token);
    const double moe_tokens = p_.ep > 1 ? tokens * p_.dp : tokens;
    const double hit = moe_tokens > 0 ? experts_local_ * -std::expm1(moe_tokens * log_miss_) : 0;
    c.moe_s = roof(moe_layers_ * 2.0 * moe_tokens * k * params_per_expert_ / moe_gpus_,
                   moe_layers_ * hit * params_per_expert_ * bw / moe_shards_);
    if (expert_s_ > 0 && moe_tokens > 1)
      c.moe_s += expert_s_ * ubatch_experts_hit(moe_tokens);
    // EP all-to-all: dispatch (FP8 for FP8 models, else BF16) + combine (BF16) of each GPU's
    // T/tp tokens × k, the (ep − 1)/ep share leaving the GPU, plus one latency per collective.
    if (p_.ep > 1) {
      const double link = p_.gpu.link_bandwidth_gb_s * 1e9;
      const double dispatch_bytes = bw <= 1.0 ? 1.0 : 2.0;
      const double ep = p_.ep;
      if (p_.comm.all_to_all) {  // measured: each GPU's send buffer is its nccl-tests size
        const double per_gpu = tokens / t * h * k;
        c.alltoall_s = moe_layers_ * (p_.comm.all_to_all->time_s(per_gpu * dispatch_bytes) +
                                      p_.comm.all_to_all->time_s(per_gpu * 2.0));
      } else {
        c.alltoall_s =
            moe_layers_ * (2.0 * e.allreduce_latency_us * 1e-6 +
                           tokens / t * h * k * (dispatch_bytes + 2.0) * (ep - 1) / ep / link);
      }
    }
  }

  // Attention: heads are sharded over TP; MLA latents are replicated, GQA KV heads sharded.
  if (p_.shared_kv_window) {
    (sums.any_prefill ? c.attention_prefill_s : c.attention_decode_s) = window_attention_s(sums);
  } else if (sums.any_prefill) {
    const double f_pre =
        pre_flops_qk_ * sums.prefill_qp + pre_flops_up_ * static_cast<double>(sums.prefill_context);
    const double m_pre = pre_bytes_per_tok_ * static_cast<double>(sums.prefill_read);
    c.attention_prefill_s = roof(L * f_pre, L * m_pre) / e.attention;
  }
  if (!p_.shared_kv_window && sums.decode_context > 0) {
    const double ctx = static_cast<double>(sums.decode_context);
    c.attention_decode_s =
        roof(L * dec_flops_per_tok_ * ctx, L * dec_bytes_per_tok_ * ctx) / e.attention;
  }

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
        p_.comm.all_reduce  // measured: the all-reduce of T·h BF16 activations
            ? 2.0 * L * p_.comm.all_reduce->time_s(tokens * h * 2.0)
            : 2.0 * L *
                  (e.allreduce_latency_us * 1e-6 + 2.0 * (t - 1) / t * tokens * h * 2.0 / link);
  }
  return c;
}

double RooflineModel::swap_time_s(std::int64_t num_blocks, std::int64_t block_size) const {
  const double link = p_.gpu.host_link_bandwidth_gb_s * 1e9;
  if (num_blocks <= 0 || !(link > 0))
    return 0;
  const double bytes = static_cast<double>(num_blocks) * static_cast<double>(block_size) *
                       p_.model.kv_bytes_per_token(p_.tp);
  return bytes / link;
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
