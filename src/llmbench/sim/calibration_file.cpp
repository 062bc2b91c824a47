#include "llmbench/sim/calibration_file.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/sim/detail/calibration_json.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace llmbench::sim {

namespace {

using nlohmann::json;

/// Reads the fields of one section with errors that name "section.field".
class Section {
 public:
  Section(const json& root, const char* name, const std::string& origin)
      : origin_(origin), name_(name) {
    const auto it = root.find(name);
    if (it == root.end() || it->is_null())
      return;
    if (!it->is_object())
      fail("", "must be an object");
    j_ = &*it;
  }
  [[nodiscard]] bool present() const noexcept { return j_ != nullptr; }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    const std::string where = field.empty() ? name_ : name_ + "." + field;
    throw Exception(Error{fmt::format("{}: {}", where, what), origin_, -1});
  }
  [[nodiscard]] const json* find(const char* field) const {
    if (j_ == nullptr)
      return nullptr;
    const auto it = j_->find(field);
    return it == j_->end() || it->is_null() ? nullptr : &*it;
  }
  void integer(const char* field, std::int64_t min_value, std::optional<std::int64_t>& out) const {
    if (const json* v = find(field)) {
      if (!v->is_number_integer() || v->get<std::int64_t>() < min_value)
        fail(field, fmt::format("must be an integer ≥ {}", min_value));
      out = v->get<std::int64_t>();
    }
  }
  void integer(const char* field, int min_value, std::optional<int>& out) const {
    std::optional<std::int64_t> v;
    integer(field, static_cast<std::int64_t>(min_value), v);
    if (v)
      out = static_cast<int>(*v);
  }
  void number(const char* field, double min_value, double max_value, double& out) const {
    if (const json* v = find(field)) {
      if (!v->is_number() || !(v->get<double>() >= min_value && v->get<double>() <= max_value))
        fail(field, fmt::format("must be a number in [{}, {}]", min_value, max_value));
      out = v->get<double>();
    }
  }
  void number(const char* field, double min_value, double max_value,
              std::optional<double>& out) const {
    if (find(field) != nullptr) {
      double v = 0;
      number(field, min_value, max_value, v);
      out = v;
    }
  }
  void boolean(const char* field, std::optional<bool>& out) const {
    if (const json* v = find(field)) {
      if (!v->is_boolean())
        fail(field, "must be true or false");
      out = v->get<bool>();
    }
  }
  void text(const char* field, std::optional<std::string>& out) const {
    if (const json* v = find(field)) {
      if (!v->is_string())
        fail(field, "must be a string");
      out = v->get<std::string>();
    }
  }
  void text(const char* field, std::string& out) const {
    std::optional<std::string> v;
    text(field, v);
    if (v)
      out = *v;
  }

 private:
  const json* j_ = nullptr;
  std::string origin_;
  std::string name_;
};

void read_target(const json& root, const std::string& origin, Calibration& c) {
  const Section t(root, "target", origin);
  if (!t.present())
    return;  // a hand-written `comm` fragment: nothing to check the flags against
  t.text("engine", c.target.engine);
  t.text("engine_version", c.target.engine_version);
  t.text("model_profile", c.target.model_profile);
  t.text("gpu", c.target.gpu);
  std::optional<int> tp, ep, dp;
  t.integer("tp", 1, tp);
  t.integer("ep", 1, ep);
  t.integer("dp", 1, dp);
  c.target.tp = tp.value_or(0);
  c.target.ep = ep.value_or(0);
  c.target.dp = dp.value_or(0);
  if (!c.target.engine.empty()) {
    try {
      (void)parse_engine_family(c.target.engine);
    } catch (const Exception& e) {
      t.fail("engine", e.error().message);  // name the file, not a flag
    }
  }
  EngineOverrides& e = c.engine;
  if (!c.target.engine.empty())
    e.engine = c.target.engine;
  if (!c.target.model_profile.empty())
    e.model_profile = c.target.model_profile;
  if (!c.target.gpu.empty())
    e.gpu = c.target.gpu;
  if (tp)
    e.tp = tp;
  if (dp)
    e.dp = dp;
  if (ep)
    e.ep = ep;
}

void read_engine(const json& root, const std::string& origin, EngineOverrides& e) {
  const Section s(root, "engine", origin);
  s.integer("max_num_seqs", 1, e.max_num_seqs);
  s.integer("max_num_batched_tokens", 1, e.max_num_batched_tokens);
  s.integer("max_prefill_tokens", 0, e.max_prefill_tokens);
  s.integer("num_continuous_decode_steps", 1, e.num_continuous_decode_steps);
  s.integer("stream_interval", 1, e.stream_interval);
  s.integer("block_size", 1, e.block_size);
  s.integer("num_gpu_blocks_override", 1, e.num_gpu_blocks_override);
  s.integer("long_prefill_token_threshold", 0, e.long_prefill_token_threshold);
  s.integer("context_size", 1, e.context_size);
  s.boolean("enable_prefix_caching", e.enable_prefix_caching);
  s.number("gpu_memory_utilization", 1e-6, 1.0, e.gpu_memory_utilization);
  s.text("kv_cache_dtype", e.kv_cache_dtype);
  s.text("scheduler", e.scheduler);
  if (e.scheduler) {
    try {
      (void)parse_scheduler_kind(*e.scheduler);
    } catch (const Exception& ex) {
      s.fail("scheduler", ex.error().message);
    }
  }
}

void read_cost_model(const json& root, const std::string& origin, Calibration& c) {
  const Section s(root, "cost_model", origin);
  if (!s.present())
    return;
  c.has_cost_model = true;
  Efficiency& e = c.cost_model;
  s.number("compute", 1e-6, 1.0, e.compute);
  s.number("memory", 1e-6, 1.0, e.memory);
  s.number("attention", 1e-6, 1e3, e.attention);
  s.number("step_overhead_us", 0, 1e9, e.step_overhead_us);
  s.number("layer_overhead_us", 0, 1e9, e.layer_overhead_us);
  s.number("request_overhead_us", 0, 1e9, e.request_overhead_us);
  s.number("allreduce_latency_us", 0, 1e9, e.allreduce_latency_us);
  s.number("moe_expert_overhead_us", 0, 1e9, e.moe_expert_overhead_us);
  s.number("vec_score_overhead_us", 0, 1e9, e.vec_score_overhead_us);
}

}  // namespace

namespace detail {

json parse_calibration_root(std::string_view text, const std::string& origin) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw Exception(Error{fmt::format("invalid JSON: {}", e.what()), origin,
                          static_cast<std::int64_t>(e.byte)});
  }
  if (!root.is_object())
    throw Exception(Error{"expected a JSON object at the top level", origin, 0});
  const auto format = root.find("format");
  if (format == root.end() || !format->is_string() || *format != kCalibrationFormat) {
    throw Exception(
        Error{fmt::format("format: not a calibration file (expected \"format\": \"{}\")",
                          kCalibrationFormat),
              origin, -1});
  }
  const auto version = root.find("format_version");
  if (version == root.end() || !version->is_number_integer() ||
      version->get<int>() != kCalibrationFormatVersion) {
    throw Exception(Error{
        fmt::format("format_version: this llmbench reads version {}", kCalibrationFormatVersion),
        origin, -1});
  }
  return root;
}

}  // namespace detail

Calibration parse_calibration(std::string_view json_text, const std::string& origin) {
  const json root = detail::parse_calibration_root(json_text, origin);
  Calibration c;
  c.origin = origin;
  read_target(root, origin, c);
  read_engine(root, origin, c.engine);
  read_cost_model(root, origin, c);
  const Section serving(root, "serving", origin);
  serving.number("api_overhead_us", 0, 1e10, c.serving.api_overhead_us);
  serving.number("first_step_overhead_us", 0, 1e10, c.serving.first_step_overhead_us);
  const Section fit(root, "fit", origin);
  fit.text("summary", c.fit_summary);
  c.comm = detail::read_comm_section(root, origin);
  return c;
}

Calibration load_calibration(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw Exception(Error{"no such calibration file", path, -1});
  return parse_calibration(read_file(path, std::uint64_t{64} << 20).value(), path);
}

EngineOverrides merge_overrides(const EngineOverrides& typed, const EngineOverrides& file) {
  EngineOverrides m = typed;
  const auto fill = [](auto& into, const auto& from) {
    if (!into && from)
      into = from;
  };
  fill(m.model_profile, file.model_profile);
  fill(m.gpu, file.gpu);
  fill(m.tp, file.tp);
  fill(m.dp, file.dp);
  fill(m.ep, file.ep);
  m.enable_expert_parallel = typed.enable_expert_parallel || file.enable_expert_parallel;
  fill(m.max_num_seqs, file.max_num_seqs);
  fill(m.max_num_batched_tokens, file.max_num_batched_tokens);
  fill(m.block_size, file.block_size);
  fill(m.gpu_memory_utilization, file.gpu_memory_utilization);
  fill(m.num_gpu_blocks_override, file.num_gpu_blocks_override);
  fill(m.enable_prefix_caching, file.enable_prefix_caching);
  fill(m.long_prefill_token_threshold, file.long_prefill_token_threshold);
  fill(m.scheduler, file.scheduler);
  fill(m.engine, file.engine);
  fill(m.max_prefill_tokens, file.max_prefill_tokens);
  fill(m.num_continuous_decode_steps, file.num_continuous_decode_steps);
  fill(m.stream_interval, file.stream_interval);
  fill(m.context_size, file.context_size);
  fill(m.kv_cache_dtype, file.kv_cache_dtype);
  return m;
}

}  // namespace llmbench::sim
