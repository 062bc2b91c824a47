#pragma once
/// @file
/// Model and hardware profiles of the simulator, loaded from JSON files under `data/sim/models/`
/// and `data/sim/gpus/` (each carries a "source" field naming where its numbers come from;
/// docs/simulator.md lists the formulas). Shapes follow the models' HF `config.json` field names.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::sim {

/// Attention kind of a model, which decides the KV-cache layout.
enum class AttentionKind {
  Mla,  ///< DeepSeek multi-head latent attention: one (kv_lora_rank + qk_rope_head_dim) latent
        ///< per token per layer, replicated on every TP rank
  Gqa,  ///< grouped-query (or multi-head) attention: K and V of `num_key_value_heads` heads
};

/// Transformer shape of a model. MoE fields are zero for dense models; MLA fields are zero for
/// GQA models. All sizes in elements.
struct ModelProfile {
  std::string name;                  ///< canonical name ("deepseek-r1")
  std::vector<std::string> aliases;  ///< other accepted names (HF ids)
  AttentionKind attention = AttentionKind::Gqa;
  std::int64_t num_layers = 0;  ///< `num_hidden_layers`
  std::int64_t hidden_size = 0;
  std::int64_t num_heads = 0;     ///< `num_attention_heads`
  std::int64_t num_kv_heads = 0;  ///< GQA `num_key_value_heads`
  std::int64_t head_dim = 0;      ///< GQA head size
  // MLA (DeepSeek-V2 paper §2.1; config fields of the same names)
  std::int64_t q_lora_rank = 0;  ///< 0 = direct q_proj (V2-Lite)
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  // FFN / MoE
  std::int64_t intermediate_size = 0;      ///< dense FFN (dense layers of an MoE model)
  std::int64_t moe_intermediate_size = 0;  ///< per expert
  std::int64_t n_routed_experts = 0;
  std::int64_t n_shared_experts = 0;
  std::int64_t experts_per_token = 0;      ///< `num_experts_per_tok` (top-k)
  std::int64_t first_k_dense_replace = 0;  ///< leading dense-FFN layers of an MoE model
  std::int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  std::int64_t max_position_embeddings = 0;
  double weight_bytes = 2;    ///< bytes per linear weight (1 = FP8, 2 = BF16)
  double kv_cache_bytes = 2;  ///< bytes per KV element (2 = BF16, 1 = FP8)
  std::string source;

  /// True for mixture-of-experts models (`n_routed_experts > 0`).
  [[nodiscard]] bool is_moe() const noexcept { return n_routed_experts > 0; }
  /// Layers with an MoE FFN: `num_layers − first_k_dense_replace` (0 for dense models).
  [[nodiscard]] std::int64_t num_moe_layers() const noexcept;
  /// Parameters of one attention block. MLA: h·r_q + r_q·n_h(d_n+d_r) + h(r_kv+d_r) +
  /// r_kv·n_h(d_n+d_v) + n_h·d_v·h (q_proj h·n_h(d_n+d_r) when r_q = 0); 187.1M for V3.
  /// GQA: h·n_h·d + 2·h·n_kv·d + n_h·d·h (biases ignored).
  [[nodiscard]] std::int64_t attention_params_per_layer() const noexcept;
  /// Parameters of one routed expert: 3·h·moe_intermediate_size (gate, up, down).
  [[nodiscard]] std::int64_t params_per_expert() const noexcept;
  /// Parameters run for every token outside routed experts: attention of all layers, dense FFN
  /// layers, shared experts and routers (embedding and lm_head excluded).
  [[nodiscard]] std::int64_t dense_params() const noexcept;
  /// Embedding + lm_head parameters (one matrix when tied).
  [[nodiscard]] std::int64_t embedding_params() const noexcept;
  /// All parameters (671.0B for DeepSeek-V3 without the MTP layer).
  [[nodiscard]] std::int64_t total_params() const noexcept;
  /// Weight bytes of the whole model: linear weights × `weight_bytes`, embeddings/lm_head in BF16
  /// (DeepSeek FP8 checkpoints keep them BF16). FP8 block scales (1/16384 per weight) ignored.
  [[nodiscard]] double weight_bytes_total() const noexcept;
  /// KV elements stored per token per layer on ONE GPU. MLA: kv_lora_rank + qk_rope_head_dim
  /// (576), replicated on every rank; GQA: 2·(n_kv/tp)·head_dim while n_kv ≥ tp, else 2·head_dim.
  [[nodiscard]] std::int64_t kv_elements_per_token_per_layer(int tp) const noexcept;
  /// KV bytes per token over all layers on one GPU: elements × layers × `kv_cache_bytes`.
  /// DeepSeek-V3 BF16: 576 × 61 × 2 = 70,272 B.
  [[nodiscard]] double kv_bytes_per_token(int tp = 1) const noexcept;
};

/// Simulator efficiency factors and fixed costs of a GPU (roofline terms, docs/simulator.md).
struct Efficiency {
  double compute = 0.45;             ///< η_F: achieved / peak FLOP/s
  double memory = 0.8;               ///< η_M: achieved / peak HBM bandwidth
  double step_overhead_us = 2000;    ///< T_step0: scheduler, sampler, launch per engine step
  double layer_overhead_us = 0;      ///< τ_layer: fixed cost per layer per step
  double request_overhead_us = 5;    ///< τ_req: per scheduled sequence per step
  double allreduce_latency_us = 10;  ///< α_ar: latency per TP all-reduce
  /// η_attn: attention runs at this fraction of the rates the linear layers achieve (η_F·peak
  /// FLOP/s and η_M·bandwidth); 1 = the same. A calibrated term: attention kernels (MLA
  /// absorbed decode, paged prefill) rarely reach the GEMMs' efficiency.
  double attention = 1.0;
  /// τ_exp: µs per MoE layer and routed expert, per micro-batch (`--ubatch-size`) of more than
  /// one token; 0 = none. An engine term of llama.cpp (c392e5094, February 2025): one token runs
  /// each of its k experts' matrices on the vector path, while a larger batch walks the experts
  /// (CUDA: `ggml_cuda_mul_mat_id` copies the expert ids to the host, a stream sync, then
  /// gathers, multiplies and scatters per expert). On a CPU host it is charged per distinct
  /// expert the micro-batch hits; on a GPU for every local expert, since the CUDA engine's step
  /// is flat from 2 to 16 tokens (llama-batched-bench on an H100). Fitted by `calibrate` for the
  /// llamacpp family (docs/simulator.md "llama.cpp's per-expert MoE batches"); other engines
  /// keep 0.
  double moe_expert_overhead_us = 0;
  /// τ_vec: µs per attention score (KV cell × head × layer) of the shared KV window in a
  /// micro-batch of one token, over the roofline's price; 0 = none. An engine term of
  /// llama.cpp's CPU backend (c392e5094, February 2025): with one token every matrix product is
  /// a matrix-vector product — `llamafile_sgemm` declines n < 2 (ggml/src/ggml-cpu/llamafile/
  /// sgemm.cpp) — so `ggml_compute_forward_mul_mat` scores each cell with its own
  /// `ggml_vec_dot_f16` call over one head's d_qk elements, paying a call, a reduction of the
  /// SIMD accumulators and a scalar tail (d_qk modulo the vector step) per score; two or more
  /// tokens go through tinyBLAS tiles instead. Fitted by `calibrate` for the llamacpp family
  /// (docs/simulator.md "llama.cpp's one-token steps"); other engines keep 0.
  double vec_score_overhead_us = 0;
};

/// One GPU model. Bandwidths in GB/s (1e9 B/s), compute in dense TFLOP/s (1e12, no sparsity).
struct HardwareProfile {
  std::string name;
  std::vector<std::string> aliases;
  double memory_bytes = 0;           ///< total device memory as the driver reports it
  double memory_bandwidth_gb_s = 0;  ///< HBM/GDDR
  double bf16_tflops = 0;
  double fp8_tflops = 0;           ///< 0 = no FP8 tensor cores (then BF16 rate is used)
  double link_bandwidth_gb_s = 0;  ///< GPU-GPU per direction (NVLink, else PCIe)
  /// GPU-host per direction (PCIe; JSON `host_link_bandwidth_gb_s`, optional, 0 = unknown):
  /// prices swap-out/in of KV blocks. Theoretical link rate from the vendor datasheet.
  double host_link_bandwidth_gb_s = 0;
  /// A CPU host rather than a GPU (JSON `device`: "cpu"; optional, default "gpu"): the engine
  /// runs on a CPU backend, whose one-token steps price `Efficiency::vec_score_overhead_us`.
  bool cpu = false;
  Efficiency efficiency;
  std::string source;
  /// What `efficiency` was fitted on (JSON `calibrated.on`), "" when it keeps the uncalibrated
  /// defaults; `simulate` prints it (`EngineSpec::describe`).
  std::string calibrated_on;
  /// The calibration file the fit wrote (JSON `calibrated.file`, relative to the data folder),
  /// "" when none.
  std::string calibration_file;

  /// Peak dense FLOP/s for weights of `weight_bytes` bytes (1 → FP8 when available).
  [[nodiscard]] double peak_flops(double weight_bytes) const noexcept;
};

/// Parses a model profile from JSON text. Throws `Exception` whose source is `origin` and whose
/// message names the missing or bad field (e.g. "models/x.json: field 'hidden_size': must be a
/// positive integer").
ModelProfile parse_model_profile(std::string_view json_text, const std::string& origin);
/// Parses a hardware profile; same error contract as `parse_model_profile`.
HardwareProfile parse_hardware_profile(std::string_view json_text, const std::string& origin);

/// Loads `<data_dir>/sim/models/<name>.json`, or the profile whose name or alias equals `name`
/// (case-insensitive), or `name` itself when it is a path to a .json file. Throws `Exception`
/// listing the known names when none matches.
ModelProfile load_model_profile(const std::string& data_dir, const std::string& name);
/// Same for `<data_dir>/sim/gpus/`.
HardwareProfile load_hardware_profile(const std::string& data_dir, const std::string& name);

/// Canonical names of the bundled profiles in `<data_dir>/sim/<kind>` ("models" or "gpus"),
/// sorted.
std::vector<std::string> list_profiles(const std::string& data_dir, const std::string& kind);

}  // namespace llmbench::sim
