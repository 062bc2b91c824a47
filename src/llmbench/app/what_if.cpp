#include "llmbench/app/what_if.hpp"

#include "llmbench/core/clock.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/report/run_config.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string_view>
#include <utility>

namespace llmbench::app {

namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The numeric fields of `EngineFacts` with their JSON names (one table for writing and
/// reading; `preemptions` is an integer and handled apart).
struct FactField {
  std::string_view key;
  double analysis::EngineFacts::*member;
};
constexpr std::array<FactField, 13> kFactFields{{
    {"kv_capacity_tokens", &analysis::EngineFacts::kv_capacity_tokens},
    {"kv_usage_mean", &analysis::EngineFacts::kv_usage_mean},
    {"kv_usage_max", &analysis::EngineFacts::kv_usage_max},
    {"max_num_seqs", &analysis::EngineFacts::max_num_seqs},
    {"running_mean", &analysis::EngineFacts::running_mean},
    {"running_max", &analysis::EngineFacts::running_max},
    {"waiting_mean", &analysis::EngineFacts::waiting_mean},
    {"token_budget", &analysis::EngineFacts::token_budget},
    {"step_tokens_mean", &analysis::EngineFacts::step_tokens_mean},
    {"request_tokens_mean", &analysis::EngineFacts::request_tokens_mean},
    {"busy_fraction", &analysis::EngineFacts::busy_fraction},
    {"request_throughput", &analysis::EngineFacts::request_throughput},
    {"p99_tpot_ms", &analysis::EngineFacts::p99_tpot_ms},
}};

double percentile_of(const metrics::Stats& stats, double q) {
  for (const auto& [at, value] : stats.percentiles) {
    if (at == q)
      return value;
  }
  return kNaN;
}

}  // namespace

analysis::EngineFacts engine_facts(const sim::SimOptions& options, const sim::SimStats& stats,
                                   const std::vector<sim::StepTrace>& steps,
                                   const metrics::Summary& summary) {
  const double replicas = std::max(1, options.data_parallel_size);
  const auto& engine = options.engine;
  analysis::EngineFacts f;
  f.kv_capacity_tokens = static_cast<double>(engine.num_gpu_blocks) *
                         static_cast<double>(engine.block_size) * replicas;
  f.preemptions = stats.preemptions;
  f.max_num_seqs = static_cast<double>(engine.scheduler.max_num_seqs) * replicas;
  f.token_budget = static_cast<double>(engine.scheduler.max_num_batched_tokens);
  f.request_throughput = summary.request_throughput;
  f.p99_tpot_ms = percentile_of(summary.tpot_ms, 99);
  if (summary.completed > 0) {
    f.request_tokens_mean =
        static_cast<double>(summary.total_input_tokens + summary.total_output_tokens) /
        static_cast<double>(summary.completed);
  }
  const double end_s = ns_to_s(stats.end_ns);
  if (end_s > 0)
    f.busy_fraction = std::min(1.0, stats.busy_s / (replicas * end_s));
  if (steps.empty())
    return f;
  // Step-time weights: a state that lasted longer counts for more. The batch figures are taken
  // while requests waited (what held the batch when there was work to add), over every step
  // when none did. Per-replica counts are scaled to the whole engine (× replicas).
  double time = 0;
  double kv = 0;
  double waiting = 0;
  double kv_max = 0;
  for (const auto& s : steps) {
    const auto w = static_cast<double>(s.end_ns - s.start_ns);
    time += w;
    kv += w * s.kv_usage;
    waiting += w * static_cast<double>(s.num_waiting);
    kv_max = std::max(kv_max, s.kv_usage);
  }
  const bool any_waited =
      std::any_of(steps.begin(), steps.end(), [](const auto& s) { return s.num_waiting > 0; });
  double batch_time = 0;
  double running = 0;
  double tokens = 0;
  double batch_steps = 0;
  std::int64_t running_max = 0;
  for (const auto& s : steps) {
    if (any_waited && s.num_waiting == 0)
      continue;
    const auto w = static_cast<double>(s.end_ns - s.start_ns);
    batch_time += w;
    running += w * static_cast<double>(s.num_running);
    tokens += static_cast<double>(s.num_tokens);
    batch_steps += 1;
    running_max = std::max(running_max, s.num_running);
  }
  if (time > 0) {
    f.kv_usage_mean = kv / time;
    f.waiting_mean = replicas * waiting / time;
  }
  f.kv_usage_max = kv_max;
  if (batch_time > 0)
    f.running_mean = replicas * running / batch_time;
  if (batch_steps > 0)
    f.step_tokens_mean = tokens / batch_steps;
  f.running_max = replicas * static_cast<double>(running_max);
  return f;
}

json engine_facts_json(const analysis::EngineFacts& facts) {
  json out = json::object();
  for (const auto& field : kFactFields)
    out[std::string(field.key)] = finite_or_null(facts.*field.member);
  out["preemptions"] = facts.preemptions;
  return out;
}

json bottleneck_json(const analysis::EngineFacts& facts) {
  const auto finding = analysis::name_bottleneck(facts);
  return {{"which", analysis::to_string(finding.which)}, {"statement", finding.reason}};
}

std::optional<analysis::EngineFacts> engine_facts_from_results(const json& results) {
  if (!results.is_object())
    return std::nullopt;
  const auto it = results.find("engine_facts");
  if (it == results.end() || !it->is_object())
    return std::nullopt;
  analysis::EngineFacts f;
  for (const auto& field : kFactFields) {
    const auto v = it->find(field.key);
    f.*field.member = v != it->end() && v->is_number() ? v->get<double>() : kNaN;
  }
  if (const auto p = it->find("preemptions"); p != it->end() && p->is_number_integer())
    f.preemptions = p->get<std::int64_t>();
  return f;
}

std::optional<analysis::WhatIf> what_if_of_results(const json& a, const json& b) {
  auto fa = engine_facts_from_results(a);
  auto fb = engine_facts_from_results(b);
  if (!fa || !fb)
    return std::nullopt;
  const report::RunConfig ca = report::run_config(a);
  const report::RunConfig cb = report::run_config(b);
  const auto differences = report::knob_differences({&ca, &cb});
  fa->setting = report::describe_config(differences, 0);
  fb->setting = report::describe_config(differences, 1);
  if (fa->setting.empty())
    fa->setting = "A";
  if (fb->setting.empty())
    fb->setting = "B";
  return analysis::what_if(*fa, *fb);
}

json what_if_json(const analysis::WhatIf& w) {
  const auto side = [](const std::string& setting, const analysis::BottleneckFinding& f) {
    return json{
        {"setting", setting}, {"bottleneck", analysis::to_string(f.which)}, {"reason", f.reason}};
  };
  return {{"moved", w.moved},
          {"statement", w.statement},
          {"a", side(w.a_setting, w.a)},
          {"b", side(w.b_setting, w.b)}};
}

}  // namespace llmbench::app
