#include "llmbench/app/config_json.hpp"

#include "llmbench/calib/report.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/protocol/openai.hpp"
#include "llmbench/server/options.hpp"
#include "llmbench/sim/comm_traffic.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace llmbench::app {

namespace {

using nlohmann::json;

template <typename T>
json optional(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

double seconds(std::chrono::milliseconds ms) {
  return static_cast<double>(ms.count()) / 1000.0;
}

/// Which communication terms of `spec` were measured (a calibration file's `comm` section) and
/// which are the datasheet's: {"calibration": FILE or null, "all_reduce": {"used", "measured",
/// "detail"}, "all_to_all": {…}} (`sim::describe_comm_terms`).
json comm_terms_json(const sim::EngineSpec& spec) {
  json j{
      {"calibration", spec.calibration_file.empty() ? json(nullptr) : json(spec.calibration_file)}};
  const auto sources =
      sim::describe_comm_terms(spec.comm ? &*spec.comm : nullptr, spec.calibration_file,
                               spec.memory.tp, spec.memory.ep, spec.gpu, spec.efficiency);
  for (const auto& s : sources) {
    j[s.term == "TP all-reduce" ? "all_reduce" : "all_to_all"] = {
        {"used", s.used}, {"measured", s.measured}, {"detail", s.detail}};
  }
  return j;
}

}  // namespace

json dataset_json(const workload::DatasetOptions& d, const WorkloadNames& n) {
  return {{"tokenizer", n.tokenizer},
          {"dataset_name", n.dataset_name},
          {"dataset_path", d.path},
          {"seed", d.seed},
          {"output_len", d.output_len},
          {"random_input_len", d.random_input_len},
          {"random_output_len", d.random_output_len},
          {"random_range_ratio", d.random_range_ratio},
          {"random_prefix_len", d.random_prefix_len},
          {"random_prompt_kind", n.random_prompt_kind},
          {"sonnet_input_len", d.sonnet_input_len},
          {"sonnet_output_len", d.sonnet_output_len},
          {"sonnet_prefix_len", d.sonnet_prefix_len},
          {"count_special_tokens", d.count_special_tokens},
          {"trace_format", d.trace.format},
          {"trace_speedup", d.trace.speedup},
          {"trace_start_s", d.trace.start_s},
          {"trace_duration_s", number_or_inf(d.trace.duration_s)},
          {"trace_spread", d.trace.spread},
          {"trace_block_size", d.trace.block_size},
          {"corpus", d.trace.corpus_path},
          {"gsp_num_groups", d.shared_prefix.num_groups},
          {"gsp_prompts_per_group", d.shared_prefix.prompts_per_group},
          {"gsp_system_prompt_len", d.shared_prefix.system_prompt_len},
          {"gsp_question_len", d.shared_prefix.question_len},
          {"gsp_output_len", d.shared_prefix.output_len},
          {"gsp_range_ratio", d.shared_prefix.range_ratio},
          {"gsp_popularity", n.gsp_popularity},
          {"gsp_zipf_s", d.shared_prefix.zipf_s},
          {"prefix_repetition_prefix_len", d.prefix_repetition.prefix_len},
          {"prefix_repetition_suffix_len", d.prefix_repetition.suffix_len},
          {"prefix_repetition_num_prefixes", d.prefix_repetition.num_prefixes},
          {"prefix_repetition_output_len", d.prefix_repetition.output_len},
          {"long_doc_input_len", d.long_doc_input_len},
          {"multi_turn", d.multi_turn},
          {"max_turns", d.max_turns},
          // The conversation's pacing (`LoadOptions::think_time*` in `run`), beside its shape so
          // that `run` and `simulate` share the keys; checked by `check_workload_flags`.
          {"think_time_ms", n.think_time_ms},
          {"think_time_dist", n.think_time_dist}};
}

json report_setup_json(const ReportSetup& s) {
  return {{"request_rate", number_or_inf(s.rate)},
          {"burstiness", number_or_inf(s.burstiness)},
          {"metric_percentiles", s.percentiles},
          {"percentile_metrics", s.percentile_metrics},
          {"goodput",
           {{"ttft_ms", optional(s.summary.slo.ttft_ms)},
            {"tpot_ms", optional(s.summary.slo.tpot_ms)},
            {"e2el_ms", optional(s.summary.slo.e2el_ms)}}}};
}

json engine_spec_json(const sim::EngineSpec& s, const sim::EngineOverrides& f) {
  const auto& sched = s.engine.scheduler;
  const auto& eff = s.efficiency;
  return {{"model_profile", s.model.name},
          {"gpu", s.gpu.name},
          {"tp", s.memory.tp},
          {"expert_parallel_size", s.memory.ep},
          {"data_parallel_size", s.data_parallel_size()},
          {"max_num_seqs", sched.max_num_seqs},
          {"max_num_batched_tokens", sched.max_num_batched_tokens},
          {"enable_prefix_caching", sched.enable_prefix_caching},
          {"long_prefill_token_threshold", sched.long_prefill_token_threshold},
          {"scheduler", f.scheduler.value_or(std::string(sim::kDefaultScheduler))},
          {"exec_model", f.exec_model.value_or(std::string(sim::kDefaultExecModel))},
          {"block_size", s.plan.block_size},
          {"num_gpu_blocks", s.plan.num_gpu_blocks},
          {"num_cpu_blocks", s.plan.num_cpu_blocks},
          {"kv_bytes_per_gpu", s.plan.kv_bytes},
          {"weight_bytes_per_gpu", s.plan.weight_bytes_per_gpu},
          {"efficiency", calib::cost_model_json(eff)},
          {"engine", sim::to_string(s.family)},
          {"calibration", s.calibration_file},
          {"calibrated_on", s.calibrated_on},
          {"api_overhead_us", s.engine.overheads.api_overhead_us},
          {"first_step_overhead_us", s.engine.overheads.first_step_overhead_us},
          {"comm_terms", comm_terms_json(s)}};
}

json load_options_json(const loadgen::LoadOptions& lo) {
  json names = json::array();
  for (const auto& [name, value] : lo.client.headers) {
    names.push_back(name);  // values may be secrets
  }
  return {{"base_url", lo.url.origin() + lo.url.path_prefix},
          {"endpoint", lo.endpoint},
          {"backend", protocol::to_string(lo.backend)},
          {"model", lo.request.model},
          {"chat", lo.request.chat},
          {"num_prompts", lo.num_prompts},
          {"num_warmups", lo.num_warmups},
          {"max_concurrency", lo.max_concurrency},
          {"request_rate", number_or_inf(lo.request_rate)},
          {"burstiness", number_or_inf(lo.burstiness)},
          {"duration", lo.duration_s},
          {"drain_timeout", lo.drain_timeout_s},
          {"seed", lo.seed},
          {"client_threads", lo.client_threads},
          {"stream", lo.request.stream},
          {"continuous_usage", lo.request.continuous_usage},
          {"ignore_eos", lo.request.ignore_eos},
          {"min_tokens", optional(lo.request.min_tokens)},
          {"temperature", optional(lo.request.temperature)},
          {"top_p", optional(lo.request.top_p)},
          {"top_k", optional(lo.request.top_k)},
          {"min_p", optional(lo.request.min_p)},
          {"presence_penalty", optional(lo.request.presence_penalty)},
          {"frequency_penalty", optional(lo.request.frequency_penalty)},
          {"repetition_penalty", optional(lo.request.repetition_penalty)},
          {"extra_body", lo.request.extra_body_json},
          {"prewarm", lo.prewarm_connections},
          {"insecure", lo.client.insecure},
          {"ca_cert", lo.client.ca_cert_file},
          {"header_names", names},
          {"connect_timeout", seconds(lo.client.connect_timeout)},
          {"first_byte_timeout", seconds(lo.client.first_byte_timeout)},
          {"idle_timeout", seconds(lo.client.idle_timeout)},
          {"timeout", seconds(lo.client.total_timeout)}};
}

json builtin_server_json(const BuiltinServerPlan& b) {
  const auto& o = b.options;
  json j;
  if (o.timing == server::Timing::Fixed) {
    j = {{"timing", "fixed"},
         {"ttft_ms", o.ttft_ms},
         {"itl_ms", o.itl_ms},
         {"tokens_per_chunk", o.tokens_per_chunk},
         {"max_num_seqs", o.max_num_seqs}};
  } else {
    j = engine_spec_json(o.engine->spec, b.engine_requested);
    j["timing"] = "engine";
    j["admission_window_ms"] = o.engine->admission_window_ms;
  }
  j["model"] = o.model;
  j["default_output_len"] = o.default_output_len;
  j["max_model_len"] = o.max_model_len;
  return j;
}

json run_effective_config(const RunPlan& plan, const loadgen::LoadOptions& load,
                          std::size_t samples) {
  json j = dataset_json(plan.dataset, plan.names);
  j.update(report_setup_json(plan.report));
  j.update(load_options_json(load));
  j["builtin_server"] = plan.builtin ? builtin_server_json(*plan.builtin) : json(nullptr);
  j["samples"] = samples;
  return j;
}

}  // namespace llmbench::app
