#include "llmbench/sim/cluster_spec.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace llmbench::sim {

namespace {

using nlohmann::json;

/// Walks a JSON object, taking each known field once; `finish` rejects the fields left over.
/// Every error names the file and the field path ("groups[1].engine.tp").
class Fields {
 public:
  Fields(const json& object, std::string path, const std::string& file)
      : object_(object), path_(std::move(path)), file_(file) {
    if (!object_.is_object())
      fail(path_, "must be an object");
  }
  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw Exception(Error{fmt::format("{}: {}", at.empty() ? "(top level)" : at, what), file_, -1});
  }
  [[nodiscard]] std::string at(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }
  const json* get(std::string_view key) {
    seen_.insert(std::string(key));
    const auto it = object_.find(std::string(key));
    return it == object_.end() ? nullptr : &*it;
  }
  std::optional<double> number(std::string_view key) {
    const json* v = get(key);
    if (v == nullptr)
      return std::nullopt;
    if (!v->is_number())
      fail(at(key), "must be a number");
    return v->get<double>();
  }
  std::optional<std::int64_t> integer(std::string_view key) {
    const json* v = get(key);
    if (v == nullptr)
      return std::nullopt;
    if (!v->is_number_integer())
      fail(at(key), "must be an integer");
    return v->get<std::int64_t>();
  }
  std::optional<bool> boolean(std::string_view key) {
    const json* v = get(key);
    if (v == nullptr)
      return std::nullopt;
    if (!v->is_boolean())
      fail(at(key), "must be true or false");
    return v->get<bool>();
  }
  std::optional<std::string> string(std::string_view key) {
    const json* v = get(key);
    if (v == nullptr)
      return std::nullopt;
    if (!v->is_string())
      fail(at(key), "must be a string");
    return v->get<std::string>();
  }
  void finish() const {
    for (const auto& [key, value] : object_.items()) {
      (void)value;
      if (seen_.count(key) == 0)
        fail(at(key), "unknown field");
    }
  }

 private:
  const json& object_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> seen_;
};

template <typename Enum, std::size_t N>
Enum parse_name(const NameTable<Enum, N>& table, std::string_view name,
                const std::function<void(const std::string&)>& fail) {
  if (const auto value = table.find(name))
    return *value;
  fail(fmt::format("unknown name '{}' (valid: {})", name, table.names()));
  return table.entries.front().first;
}

EngineOverrides parse_engine(Fields& f) {
  EngineOverrides e;
  e.model_profile = f.string("model_profile");
  e.gpu = f.string("gpu");
  if (const auto v = f.integer("tp"))
    e.tp = static_cast<int>(*v);
  if (const auto v = f.integer("dp"))
    e.dp = static_cast<int>(*v);
  if (const auto v = f.integer("ep"))
    e.ep = static_cast<int>(*v);
  e.enable_expert_parallel = f.boolean("enable_expert_parallel").value_or(false);
  e.max_num_seqs = f.integer("max_num_seqs");
  e.max_num_batched_tokens = f.integer("max_num_batched_tokens");
  e.block_size = f.integer("block_size");
  e.gpu_memory_utilization = f.number("gpu_memory_utilization");
  e.num_gpu_blocks_override = f.integer("num_gpu_blocks_override");
  e.enable_prefix_caching = f.boolean("enable_prefix_caching");
  e.long_prefill_token_threshold = f.integer("long_prefill_token_threshold");
  e.scheduler = f.string("scheduler");
  e.swap_space_gib = f.number("swap_space_gib");
  e.activation_peak_gib = f.number("activation_peak_gib");
  e.non_torch_gib = f.number("non_torch_gib");
  e.exec_model = f.string("exec_model");
  e.compute_efficiency = f.number("compute_efficiency");
  e.memory_efficiency = f.number("memory_efficiency");
  e.step_overhead_us = f.number("step_overhead_us");
  f.finish();
  return e;
}

MtpConfig parse_mtp(Fields& f) {
  MtpConfig m;
  m.depth = static_cast<int>(f.integer("depth").value_or(0));
  if (const json* a = f.get("acceptance")) {
    if (a->is_number()) {
      m.acceptance = {a->get<double>()};
    } else if (a->is_array()) {
      for (const auto& x : *a) {
        if (!x.is_number())
          f.fail(f.at("acceptance"), "must be a number or an array of numbers");
        m.acceptance.push_back(x.get<double>());
      }
    } else {
      f.fail(f.at("acceptance"), "must be a number or an array of numbers");
    }
  }
  m.draft_overhead_us = f.number("draft_overhead_us").value_or(0);
  f.finish();
  return m;
}

WideEpConfig parse_wide_ep(Fields& f, const std::string& file) {
  WideEpConfig w;
  w.gpus_per_node = static_cast<int>(f.integer("gpus_per_node").value_or(w.gpus_per_node));
  w.expert_imbalance = f.number("expert_imbalance").value_or(w.expert_imbalance);
  w.link_gb_s = f.number("link_gb_s").value_or(w.link_gb_s);
  w.latency_us = f.number("latency_us").value_or(w.latency_us);
  w.overlap = f.boolean("overlap").value_or(w.overlap);
  if (const auto d = f.string("dispatch"))
    w.dispatch = parse_dispatch_mode(*d, file + ": " + f.at("dispatch"));
  w.max_nodes_per_token =
      static_cast<int>(f.integer("max_nodes_per_token").value_or(w.max_nodes_per_token));
  f.finish();
  validate_wide_ep(w, file);
  return w;
}

ReplicaGroupSpec parse_group(const json& j, const std::string& path, const std::string& file) {
  Fields f(j, path, file);
  ReplicaGroupSpec g;
  (void)f.string("note");
  g.name = f.string("name").value_or(path);
  if (const auto role = f.string("role"))
    g.role = parse_name(kPoolRoles, *role, [&](const std::string& w) { f.fail(f.at("role"), w); });
  g.count = static_cast<int>(f.integer("count").value_or(1));
  if (g.count < 1)
    f.fail(f.at("count"), fmt::format("must be >= 1, got {}", g.count));
  if (const json* e = f.get("engine")) {
    Fields ef(*e, f.at("engine"), file);
    g.engine = parse_engine(ef);
  }
  g.redundant_experts = static_cast<int>(f.integer("redundant_experts").value_or(0));
  if (g.redundant_experts < 0)
    f.fail(f.at("redundant_experts"), "must be >= 0");
  if (const json* w = f.get("lockstep")) {
    Fields wf(*w, f.at("lockstep"), file);
    g.lockstep = true;
    g.wide_ep = parse_wide_ep(wf, file);
  }
  if (const json* m = f.get("mtp")) {
    Fields mf(*m, f.at("mtp"), file);
    g.mtp = parse_mtp(mf);
    validate_mtp(g.mtp, file + ": " + f.at("mtp"));
  }
  g.version = f.string("version").value_or("");
  f.finish();
  return g;
}

/// Cross-field checks: a prefill pool needs a decode pool and the other way round, mixed and
/// disaggregated pools do not mix, versions add up and each is served in every pool.
void check_spec(const ClusterSpec& s) {
  const auto fail = [&](const std::string& what) { throw Exception(Error{what, s.source, -1}); };
  if (s.groups.empty())
    fail("groups: at least one replica group is needed");
  std::set<PoolRole> roles;
  for (const auto& g : s.groups) roles.insert(g.role);
  // A prefill pool alone measures prefill (requests end with their first token); a decode pool
  // alone measures decode (requests arrive with their prompt's KV), as phase benchmarks do.
  const bool pd = roles.count(PoolRole::Prefill) + roles.count(PoolRole::Decode) > 0;
  if (pd && roles.count(PoolRole::Mixed) > 0)
    fail("groups: mixed groups cannot sit beside a prefill/decode pair");
  double total = 0;
  std::set<std::string> names;
  for (const auto& v : s.versions) {
    if (v.name.empty() || !names.insert(v.name).second)
      fail(fmt::format("versions: names must be non-empty and distinct ('{}')", v.name));
    if (!(v.share >= 0 && v.share <= 1))
      fail(fmt::format("versions: share of '{}' must be in [0, 1], got {}", v.name, v.share));
    total += v.share;
  }
  if (!s.versions.empty() && std::abs(total - 1.0) > 1e-9)
    fail(fmt::format("versions: shares must sum to 1, got {}", total));
  if (s.buckets < 1)
    fail("buckets: must be >= 1");
  for (const auto& g : s.groups)
    if (!g.version.empty() && names.count(g.version) == 0)
      fail(fmt::format("groups: '{}' serves unknown version '{}'", g.name, g.version));
  // Every version needs a replica in each pool its requests pass through.
  for (const PoolRole role : roles) {
    for (const auto& v : s.versions) {
      bool served = false;
      for (const auto& g : s.groups)
        served = served || (g.role == role && (g.version.empty() || g.version == v.name));
      if (!served)
        fail(fmt::format("versions: no {} group serves '{}'", pool_role_name(role), v.name));
    }
  }
}

}  // namespace

std::string_view pool_role_name(PoolRole role) noexcept {
  return kPoolRoles.name(role, "?");
}

std::string_view route_policy_name(RoutePolicy policy) noexcept {
  return kRoutePolicies.name(policy, "?");
}

RoutePolicy parse_route_policy(std::string_view name, const std::string& source) {
  return parse_name(kRoutePolicies, name, [&](const std::string& what) {
    throw Exception(Error{what, source, -1});
  });
}

ClusterSpec parse_cluster_spec(std::string_view text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Exception(Error{fmt::format("malformed JSON: {}", e.what()), path,
                          static_cast<std::int64_t>(e.byte)});
  }
  ClusterSpec s;
  s.source = path;
  Fields f(j, "", path);
  (void)f.string("note");  // provenance for readers; not used
  s.model_id = f.string("model_id").value_or("");
  const json* groups = f.get("groups");
  if (groups == nullptr || !groups->is_array())
    f.fail("groups", "must be an array of replica groups");
  for (std::size_t i = 0; i < groups->size(); ++i)
    s.groups.push_back(parse_group((*groups)[i], fmt::format("groups[{}]", i), path));
  if (const json* r = f.get("router")) {
    Fields rf(*r, "router", path);
    if (const auto p = rf.string("policy"))
      s.router.policy = parse_route_policy(*p, path + ": router.policy");
    if (const auto p = rf.string("decode_policy"))
      s.router.decode_policy = parse_route_policy(*p, path + ": router.decode_policy");
    s.router.load_cap = rf.integer("load_cap").value_or(s.router.load_cap);
    if (s.router.load_cap < 0)
      rf.fail("router.load_cap", "must be >= 0");
    rf.finish();
  }
  if (const json* v = f.get("versions")) {
    if (!v->is_array())
      f.fail("versions", "must be an array of {name, share}");
    for (std::size_t i = 0; i < v->size(); ++i) {
      Fields vf((*v)[i], fmt::format("versions[{}]", i), path);
      VersionSpec vs;
      vs.name = vf.string("name").value_or("");
      vs.share = vf.number("share").value_or(-1);
      vf.finish();
      s.versions.push_back(vs);
    }
  }
  s.buckets = f.integer("buckets").value_or(s.buckets);
  if (const json* k = f.get("kv_transfer")) {
    Fields kf(*k, "kv_transfer", path);
    s.kv_transfer.link_gb_s = kf.number("link_gb_s").value_or(s.kv_transfer.link_gb_s);
    s.kv_transfer.latency_us = kf.number("latency_us").value_or(s.kv_transfer.latency_us);
    s.kv_transfer.bytes_per_token =
        kf.number("bytes_per_token").value_or(s.kv_transfer.bytes_per_token);
    kf.finish();
    if (!(s.kv_transfer.link_gb_s > 0) || !(s.kv_transfer.latency_us >= 0) ||
        !(s.kv_transfer.bytes_per_token >= 0))
      kf.fail("kv_transfer", "link_gb_s must be > 0, latency_us and bytes_per_token >= 0");
  }
  f.finish();
  check_spec(s);
  return s;
}

ClusterSpec load_cluster_spec(const std::string& path) {
  const std::string text = read_file(path).value();
  return parse_cluster_spec(text, path);
}

std::vector<ResolvedGroup> resolve_cluster(const ClusterSpec& spec, const std::string& data_dir) {
  std::vector<ResolvedGroup> out;
  std::optional<std::int64_t> cache_block_size;
  for (const auto& g : spec.groups) {
    const auto fail = [&](const std::string& what) {
      throw Exception(Error{fmt::format("group '{}': {}", g.name, what), spec.source, -1});
    };
    ModelProfile model = load_model_profile(
        data_dir, g.engine.model_profile.value_or(std::string(kDefaultModelProfile)));
    if (g.redundant_experts > 0) {
      if (!model.is_moe())
        fail("redundant_experts needs an MoE model");
      model.n_routed_experts += g.redundant_experts;
    }
    const HardwareProfile gpu =
        load_hardware_profile(data_dir, g.engine.gpu.value_or(std::string(kDefaultGpu)));
    ResolvedGroup r{.spec = g,
                    .engine = make_engine_spec(gpu, model, g.engine),
                    .model = nullptr,
                    .lockstep = nullptr};
    if (g.role != PoolRole::Mixed && r.engine.engine.scheduler_kind != SchedulerKind::VllmV1)
      fail("prefill and decode pools need the vllm-v1 scheduler");
    if (g.mtp.enabled() && r.engine.engine.scheduler_kind != SchedulerKind::VllmV1)
      fail("MTP needs the vllm-v1 scheduler");
    const int dp = r.engine.data_parallel_size();
    std::shared_ptr<const ExecTimeModel> base = r.engine.make_exec_model();
    if (g.mtp.enabled())
      base = std::make_shared<MtpExecModel>(base, r.engine.exec_params(), g.mtp);
    r.model = base;
    if (g.lockstep) {
      if (!base->prices_from_sums())
        fail("lockstep needs a step-time model that prices from batch sums");
      r.engines_per_unit = dp;
      r.units = g.count;
      r.lockstep = std::make_shared<LockstepPricer>(base, r.engine.exec_params(), g.wide_ep, g.mtp);
    } else {
      r.engines_per_unit = 1;
      r.units = g.count * dp;
    }
    if (g.role != PoolRole::Decode && r.engine.engine.scheduler.enable_prefix_caching) {
      if (cache_block_size && *cache_block_size != r.engine.engine.block_size)
        fail(
            fmt::format("block size {} differs from another caching group's {} (one prefix "
                        "identity per cluster)",
                        r.engine.engine.block_size, *cache_block_size));
      cache_block_size = r.engine.engine.block_size;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace llmbench::sim
