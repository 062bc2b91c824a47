#include "llmbench/sim/profiles.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace llmbench::sim {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& origin, const std::string& field,
                       const std::string& what) {
  throw Exception(Error{fmt::format("field '{}': {}", field, what), origin, -1});
}

json parse_object(std::string_view text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw Exception(Error{fmt::format("invalid JSON: {}", e.what()), origin,
                          static_cast<std::int64_t>(e.byte)});
  }
  if (!j.is_object()) {
    throw Exception(Error{"expected a JSON object at the top level", origin, 0});
  }
  return j;
}

/// A required (or optional with `fallback`) integer field, ≥ `min_value`.
std::int64_t get_int(const json& j, const std::string& origin, const char* field,
                     std::int64_t min_value, const std::int64_t* fallback = nullptr) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) {
    if (fallback != nullptr)
      return *fallback;
    fail(origin, field, "missing");
  }
  if (!it->is_number_integer())
    fail(origin, field, "must be an integer");
  const auto v = it->get<std::int64_t>();
  if (v < min_value)
    fail(origin, field, fmt::format("must be ≥ {}, got {}", min_value, v));
  return v;
}

double get_number(const json& j, const std::string& origin, const std::string& field,
                  double min_value, const double* fallback = nullptr) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) {
    if (fallback != nullptr)
      return *fallback;
    fail(origin, field, "missing");
  }
  if (!it->is_number())
    fail(origin, field, "must be a number");
  const auto v = it->get<double>();
  if (!(v >= min_value))
    fail(origin, field, fmt::format("must be ≥ {}, got {}", min_value, v));
  return v;
}

std::string get_string(const json& j, const std::string& origin, const char* field) {
  const auto it = j.find(field);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
    fail(origin, field, "missing or not a non-empty string");
  return it->get<std::string>();
}

std::vector<std::string> get_aliases(const json& j, const std::string& origin) {
  std::vector<std::string> out;
  const auto it = j.find("aliases");
  if (it == j.end())
    return out;
  if (!it->is_array())
    fail(origin, "aliases", "must be an array of strings");
  for (const auto& a : *it) {
    if (!a.is_string())
      fail(origin, "aliases", "must be an array of strings");
    out.push_back(a.get<std::string>());
  }
  return out;
}

double dtype_bytes(const json& j, const std::string& origin, const char* field) {
  const std::string name = get_string(j, origin, field);
  if (name == "fp8" || name == "fp8_e4m3" || name == "fp8_e5m2" || name == "int8")
    return 1;
  if (name == "bf16" || name == "fp16" || name == "auto")
    return 2;
  if (name == "fp32")
    return 4;
  fail(origin, field, fmt::format("unknown dtype '{}' (fp8, bf16, fp16, fp32, int8)", name));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// The text of a profile file, through the one file reader (core/file.hpp): a missing, unreadable
/// or oversized file throws `Exception` naming the path. Profiles are a few KiB; 1 MiB is a bound
/// that only a wrong path (`/dev/zero`, a dataset) reaches.
std::string read_profile(const std::filesystem::path& path) {
  constexpr std::uint64_t kMaxProfileBytes = std::uint64_t{1} << 20;
  return read_file(path, kMaxProfileBytes).value();
}

/// Finds the file for `name` in `<data_dir>/sim/<kind>`: exact file name, then any profile whose
/// name or alias matches case-insensitively, else a path given directly.
template <class Profile, class Parse>
Profile load_named(const std::string& data_dir, const std::string& kind, const std::string& name,
                   Parse parse) {
  const std::filesystem::path direct(name);
  if (direct.extension() == ".json" && std::filesystem::exists(direct)) {
    return parse(read_profile(direct), direct.string());
  }
  const std::filesystem::path dir = std::filesystem::path(data_dir) / "sim" / kind;
  const auto exact = dir / (lower(name) + ".json");
  if (std::filesystem::exists(exact))
    return parse(read_profile(exact), exact.string());
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json")
      continue;
    Profile p = parse(read_profile(entry.path()), entry.path().string());
    if (lower(p.name) == lower(name))
      return p;
    for (const auto& a : p.aliases) {
      if (lower(a) == lower(name))
        return p;
    }
  }
  std::string known;
  for (const auto& n : list_profiles(data_dir, kind)) known += (known.empty() ? "" : ", ") + n;
  throw Exception(Error{fmt::format("unknown {} profile '{}' (known: {})",
                                    kind == "gpus" ? "GPU" : "model", name, known),
                        dir.string(), -1});
}

}  // namespace

// ---- ModelProfile arithmetic ----

std::int64_t ModelProfile::num_moe_layers() const noexcept {
  return is_moe() ? num_layers - first_k_dense_replace : 0;
}

std::int64_t ModelProfile::attention_params_per_layer() const noexcept {
  const std::int64_t h = hidden_size;
  if (attention == AttentionKind::Mla) {
    const std::int64_t qk = qk_nope_head_dim + qk_rope_head_dim;
    const std::int64_t q =
        q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank * num_heads * qk : h * num_heads * qk;
    return q + h * (kv_lora_rank + qk_rope_head_dim) +
           kv_lora_rank * num_heads * (qk_nope_head_dim + v_head_dim) + num_heads * v_head_dim * h;
  }
  return h * num_heads * head_dim + 2 * h * num_kv_heads * head_dim + num_heads * head_dim * h;
}

std::int64_t ModelProfile::params_per_expert() const noexcept {
  return 3 * hidden_size * moe_intermediate_size;
}

std::int64_t ModelProfile::dense_params() const noexcept {
  const std::int64_t dense_ffn = 3 * hidden_size * intermediate_size;
  const std::int64_t dense_layers = is_moe() ? first_k_dense_replace : num_layers;
  const std::int64_t shared_and_router =
      n_shared_experts * params_per_expert() + hidden_size * n_routed_experts;
  return num_layers * attention_params_per_layer() + dense_layers * dense_ffn +
         num_moe_layers() * shared_and_router;
}

std::int64_t ModelProfile::embedding_params() const noexcept {
  return (tie_word_embeddings ? 1 : 2) * vocab_size * hidden_size;
}

std::int64_t ModelProfile::total_params() const noexcept {
  return dense_params() + num_moe_layers() * n_routed_experts * params_per_expert() +
         embedding_params();
}

double ModelProfile::weight_bytes_total() const noexcept {
  return static_cast<double>(total_params() - embedding_params()) * weight_bytes +
         static_cast<double>(embedding_params()) * 2.0;
}

std::int64_t ModelProfile::kv_elements_per_token_per_layer(int tp) const noexcept {
  if (attention == AttentionKind::Mla)
    return kv_lora_rank + qk_rope_head_dim;
  const std::int64_t t = std::max(1, tp);
  const std::int64_t heads = num_kv_heads >= t ? num_kv_heads / t : 1;
  return 2 * heads * head_dim;
}

double ModelProfile::kv_bytes_per_token(int tp) const noexcept {
  return static_cast<double>(kv_elements_per_token_per_layer(tp) * num_layers) * kv_cache_bytes;
}

double HardwareProfile::peak_flops(double weight_bytes_per_param) const noexcept {
  const double tflops =
      (weight_bytes_per_param <= 1.0 && fp8_tflops > 0) ? fp8_tflops : bf16_tflops;
  return tflops * 1e12;
}

// ---- parsing ----

ModelProfile parse_model_profile(std::string_view json_text, const std::string& origin) {
  const json j = parse_object(json_text, origin);
  ModelProfile m;
  m.name = get_string(j, origin, "name");
  m.aliases = get_aliases(j, origin);
  m.source = get_string(j, origin, "source");
  const std::string attention = get_string(j, origin, "attention");
  if (attention == "mla") {
    m.attention = AttentionKind::Mla;
  } else if (attention == "gqa" || attention == "mha") {
    m.attention = AttentionKind::Gqa;
  } else {
    fail(origin, "attention", fmt::format("'{}' is not one of mla, gqa, mha", attention));
  }
  const std::int64_t zero = 0;
  m.num_layers = get_int(j, origin, "num_hidden_layers", 1);
  m.hidden_size = get_int(j, origin, "hidden_size", 1);
  m.num_heads = get_int(j, origin, "num_attention_heads", 1);
  if (m.attention == AttentionKind::Mla) {
    m.q_lora_rank = get_int(j, origin, "q_lora_rank", 0, &zero);
    m.kv_lora_rank = get_int(j, origin, "kv_lora_rank", 1);
    m.qk_nope_head_dim = get_int(j, origin, "qk_nope_head_dim", 1);
    m.qk_rope_head_dim = get_int(j, origin, "qk_rope_head_dim", 1);
    m.v_head_dim = get_int(j, origin, "v_head_dim", 1);
  } else {
    m.num_kv_heads = get_int(j, origin, "num_key_value_heads", 1);
    const std::int64_t derived_head = m.hidden_size / m.num_heads;
    m.head_dim = get_int(j, origin, "head_dim", 1, &derived_head);
    if (m.num_heads % m.num_kv_heads != 0)
      fail(origin, "num_key_value_heads", "must divide num_attention_heads");
  }
  m.intermediate_size = get_int(j, origin, "intermediate_size", 1);
  m.n_routed_experts = get_int(j, origin, "n_routed_experts", 0, &zero);
  if (m.n_routed_experts > 0) {
    m.moe_intermediate_size = get_int(j, origin, "moe_intermediate_size", 1);
    m.n_shared_experts = get_int(j, origin, "n_shared_experts", 0, &zero);
    m.experts_per_token = get_int(j, origin, "num_experts_per_tok", 1);
    m.first_k_dense_replace = get_int(j, origin, "first_k_dense_replace", 0, &zero);
    if (m.experts_per_token > m.n_routed_experts)
      fail(origin, "num_experts_per_tok", "exceeds n_routed_experts");
    if (m.first_k_dense_replace > m.num_layers)
      fail(origin, "first_k_dense_replace", "exceeds num_hidden_layers");
  }
  m.vocab_size = get_int(j, origin, "vocab_size", 1);
  if (const auto it = j.find("tie_word_embeddings"); it != j.end()) {
    if (!it->is_boolean())
      fail(origin, "tie_word_embeddings", "must be true or false");
    m.tie_word_embeddings = it->get<bool>();
  }
  m.max_position_embeddings = get_int(j, origin, "max_position_embeddings", 1);
  m.weight_bytes = dtype_bytes(j, origin, "weight_dtype");
  m.kv_cache_bytes = dtype_bytes(j, origin, "kv_cache_dtype");
  return m;
}

HardwareProfile parse_hardware_profile(std::string_view json_text, const std::string& origin) {
  const json j = parse_object(json_text, origin);
  HardwareProfile h;
  h.name = get_string(j, origin, "name");
  h.aliases = get_aliases(j, origin);
  h.source = get_string(j, origin, "source");
  h.memory_bytes = get_number(j, origin, "memory_bytes", 1);
  h.memory_bandwidth_gb_s = get_number(j, origin, "memory_bandwidth_gb_s", 1);
  h.bf16_tflops = get_number(j, origin, "bf16_tflops", 1e-3);  // a CPU host: 0.1 TFLOP/s
  const double none = 0;
  h.fp8_tflops = get_number(j, origin, "fp8_tflops", 0, &none);
  h.link_bandwidth_gb_s = get_number(j, origin, "link_bandwidth_gb_s", 1);
  h.host_link_bandwidth_gb_s = get_number(j, origin, "host_link_bandwidth_gb_s", 0, &none);
  if (const auto dev = j.find("device"); dev != j.end()) {
    if (!dev->is_string() || (*dev != "gpu" && *dev != "cpu"))
      fail(origin, "device", "must be \"gpu\" or \"cpu\"");
    h.cpu = *dev == "cpu";
  }
  const auto it = j.find("efficiency");
  if (it != j.end()) {
    if (!it->is_object())
      fail(origin, "efficiency", "must be an object");
    const Efficiency d;
    auto eff = [&](const char* key, double min_value, double fallback) {
      const std::string field = std::string("efficiency.") + key;
      const auto k = it->find(key);
      if (k == it->end() || k->is_null())
        return fallback;
      if (!k->is_number())
        fail(origin, field, "must be a number");
      const double v = k->get<double>();
      if (!(v >= min_value))
        fail(origin, field, fmt::format("must be ≥ {}, got {}", min_value, v));
      return v;
    };
    h.efficiency.compute = eff("compute", 1e-3, d.compute);
    h.efficiency.memory = eff("memory", 1e-3, d.memory);
    if (h.efficiency.compute > 1)
      fail(origin, "efficiency.compute", "must be ≤ 1");
    if (h.efficiency.memory > 1)
      fail(origin, "efficiency.memory", "must be ≤ 1");
    h.efficiency.step_overhead_us = eff("step_overhead_us", 0, d.step_overhead_us);
    h.efficiency.layer_overhead_us = eff("layer_overhead_us", 0, d.layer_overhead_us);
    h.efficiency.request_overhead_us = eff("request_overhead_us", 0, d.request_overhead_us);
    h.efficiency.allreduce_latency_us = eff("allreduce_latency_us", 0, d.allreduce_latency_us);
    h.efficiency.attention = eff("attention", 1e-3, d.attention);
    h.efficiency.moe_expert_overhead_us =
        eff("moe_expert_overhead_us", 0, d.moe_expert_overhead_us);
    h.efficiency.vec_score_overhead_us = eff("vec_score_overhead_us", 0, d.vec_score_overhead_us);
  }
  // "calibrated": false, or {"on": "what the efficiencies were fitted on", "file": "…"}.
  const auto cal = j.find("calibrated");
  if (cal == j.end() || cal->is_null() || (cal->is_boolean() && !cal->get<bool>()))
    return h;
  if (!cal->is_object())
    fail(origin, "calibrated", "must be false or an object with 'on' (and optionally 'file')");
  const auto on = cal->find("on");
  if (on == cal->end() || !on->is_string() || on->get<std::string>().empty())
    fail(origin, "calibrated.on", "missing or not a non-empty string");
  h.calibrated_on = on->get<std::string>();
  if (const auto file = cal->find("file"); file != cal->end() && file->is_string())
    h.calibration_file = file->get<std::string>();
  return h;
}

ModelProfile load_model_profile(const std::string& data_dir, const std::string& name) {
  return load_named<ModelProfile>(data_dir, "models", name, parse_model_profile);
}

HardwareProfile load_hardware_profile(const std::string& data_dir, const std::string& name) {
  return load_named<HardwareProfile>(data_dir, "gpus", name, parse_hardware_profile);
}

std::vector<std::string> list_profiles(const std::string& data_dir, const std::string& kind) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(data_dir) / "sim" / kind, ec)) {
    if (entry.path().extension() == ".json")
      out.push_back(entry.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace llmbench::sim
