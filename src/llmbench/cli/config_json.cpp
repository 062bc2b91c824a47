#include "llmbench/cli/config_json.hpp"

#include "llmbench/protocol/openai.hpp"
#include "llmbench/server/options.hpp"

#include <chrono>
#include <cmath>
#include <optional>
#include <string>

namespace llmbench::cli {

namespace {

using nlohmann::json;

/// A number, or "inf"/"-inf" (JSON has no infinity), or null for NaN.
json number(double v) {
  if (std::isinf(v)) {
    return v > 0 ? "inf" : "-inf";
  }
  return std::isnan(v) ? json(nullptr) : json(v);
}

template <typename T>
json optional(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

double seconds(std::chrono::milliseconds ms) {
  return static_cast<double>(ms.count()) / 1000.0;
}

}  // namespace

json workload_flags_json(const WorkloadFlags& f) {
  return {{"tokenizer", f.tokenizer},
          {"dataset_name", f.dataset_name},
          {"dataset_path", f.dataset_path},
          {"num_prompts", f.num_prompts},
          {"seed", f.seed},
          {"random_input_len", f.random_input_len},
          {"random_output_len", f.random_output_len},
          {"random_range_ratio", f.random_range_ratio},
          {"random_prefix_len", f.random_prefix_len},
          {"random_prompt_kind", f.random_prompt_kind},
          {"sonnet_input_len", f.sonnet_input_len},
          {"sonnet_output_len", f.sonnet_output_len},
          {"sonnet_prefix_len", f.sonnet_prefix_len},
          {"output_len", f.output_len},
          {"max_concurrency", f.max_concurrency},
          {"request_rate", f.request_rate},
          {"burstiness", f.burstiness},
          {"goodput", f.goodput},
          {"percentile_metrics", f.percentile_metrics},
          {"metric_percentiles", f.metric_percentiles},
          {"trace_format", f.trace_format},
          {"trace_speedup", f.trace_speedup},
          {"trace_start_s", f.trace_start_s},
          {"trace_duration_s", number(f.trace_duration_s)},
          {"trace_spread", f.trace_spread},
          {"trace_block_size", f.trace_block_size},
          {"corpus", f.corpus},
          {"gsp_num_groups", f.gsp.num_groups},
          {"gsp_prompts_per_group", f.gsp.prompts_per_group},
          {"gsp_system_prompt_len", f.gsp.system_prompt_len},
          {"gsp_question_len", f.gsp.question_len},
          {"gsp_output_len", f.gsp.output_len},
          {"gsp_range_ratio", f.gsp.range_ratio},
          {"gsp_popularity", f.gsp_popularity},
          {"gsp_zipf_s", f.gsp.zipf_s},
          {"prefix_repetition_prefix_len", f.prefix_repetition.prefix_len},
          {"prefix_repetition_suffix_len", f.prefix_repetition.suffix_len},
          {"prefix_repetition_num_prefixes", f.prefix_repetition.num_prefixes},
          {"prefix_repetition_output_len", f.prefix_repetition.output_len},
          {"long_doc_input_len", f.long_doc_input_len},
          {"multi_turn", f.multi_turn},
          {"max_turns", f.max_turns},
          {"think_time_ms", f.think_time_ms},
          {"think_time_dist", f.think_time_dist}};
}

json engine_flags_json(const EngineFlags& f) {
  const sim::SchedulerConfig sched;
  const sim::MemoryOptions memory;
  return {
      {"model_profile", f.model_profile.value_or(std::string(sim::kDefaultModelProfile))},
      {"gpu", f.gpu.value_or(std::string(sim::kDefaultGpu))},
      {"tp", f.tp.value_or(sim::kDefaultTensorParallelSize)},
      {"max_num_seqs", f.max_num_seqs.value_or(0)},
      {"max_num_batched_tokens", f.max_num_batched_tokens.value_or(0)},
      {"block_size", f.block_size.value_or(0)},
      {"gpu_memory_utilization", f.gpu_memory_utilization.value_or(memory.gpu_memory_utilization)},
      {"num_gpu_blocks_override", optional(f.num_gpu_blocks_override)},
      {"enable_prefix_caching", f.enable_prefix_caching.value_or(sched.enable_prefix_caching)},
      {"long_prefill_token_threshold",
       f.long_prefill_token_threshold.value_or(sched.long_prefill_token_threshold)},
      {"scheduler", f.scheduler.value_or(std::string(sim::kDefaultScheduler))},
      {"batch_window_ms", f.batch_window_ms.value_or(sched.batch_window_ms)},
      {"batch_length_beta", f.batch_length_beta.value_or(sched.batch_length_beta)},
      {"swap_space", f.swap_space_gib.value_or(memory.swap_space_gib)},
      {"enable_expert_parallel", f.enable_expert_parallel},
      {"expert_parallel_size", f.ep.value_or(0)},
      {"data_parallel_size", f.dp.value_or(memory.dp)},
      {"exec_model", f.exec_model.value_or(std::string(sim::kDefaultExecModel))},
      {"compute_efficiency", optional(f.compute_efficiency)},
      {"memory_efficiency", optional(f.memory_efficiency)},
      {"step_overhead_us", optional(f.step_overhead_us)}};
}

json serve_flags_json(const ServeFlags& f) {
  json j = engine_flags_json(f.engine);
  j["timing"] = f.timing;
  j["stall"] = f.stalls;
  j["drift"] = f.drift;
  j["ttft_ms"] = f.options.ttft_ms;
  j["itl_ms"] = f.options.itl_ms;
  j["tokens_per_chunk"] = f.options.tokens_per_chunk;
  j["default_output_len"] = f.options.default_output_len;
  j["max_model_len"] = optional(f.max_model_len);
  j["admission_window_ms"] =
      f.admission_window_ms.value_or(server::EngineSettings{}.admission_window_ms);
  return j;
}

json run_flags_json(const RunFlags& f) {
  json j = workload_flags_json(f);
  json names = json::array();
  for (const auto& h : f.headers) {
    names.push_back(h.substr(0, h.find(':')));  // values may be secrets
  }
  j.update(json{{"base_url", f.base_url},
                {"host", f.host},
                {"port", f.port},
                {"endpoint", f.endpoint},
                {"backend", f.backend},
                {"model", f.model},
                {"duration", f.duration_s},
                {"num_warmups", f.num_warmups},
                {"ignore_eos", f.ignore_eos},
                {"min_tokens", optional(f.min_tokens)},
                {"temperature", optional(f.temperature)},
                {"top_p", optional(f.top_p)},
                {"top_k", optional(f.top_k)},
                {"min_p", optional(f.min_p)},
                {"presence_penalty", optional(f.presence_penalty)},
                {"frequency_penalty", optional(f.frequency_penalty)},
                {"repetition_penalty", optional(f.repetition_penalty)},
                {"extra_body", f.extra_body},
                {"label", f.label},
                {"metadata", f.metadata},
                {"append_result", f.append_result},
                {"ready_check_timeout_sec", f.ready_check_timeout_s},
                {"ramp_up_strategy", f.ramp_up_strategy},
                {"ramp_up_start_rps", optional(f.ramp_up_start_rps)},
                {"ramp_up_end_rps", optional(f.ramp_up_end_rps)},
                {"save_result", f.save_result},
                {"save_detailed", f.save_detailed},
                {"result_dir", f.result_dir},
                {"result_filename", f.result_filename},
                {"header_names", names},
                {"api_key_given", !f.api_key.empty()},
                {"insecure", f.insecure},
                {"ca_cert", f.ca_cert},
                {"client_threads", f.client_threads},
                {"connect_timeout", f.connect_timeout_s},
                {"first_byte_timeout", f.first_byte_timeout_s},
                {"idle_timeout", f.idle_timeout_s},
                {"timeout", f.timeout_s},
                {"stream", !f.no_stream && !f.disable_stream},
                {"disable_stream", f.disable_stream},
                {"continuous_usage", f.continuous_usage},
                {"prewarm", !f.no_prewarm},
                {"quiet", f.quiet},
                {"window_s", f.window_s},
                {"history", f.history},
                {"report", f.report_path},
                {"server", serve_flags_json(f.server)}});
  j.update(telemetry_flags_json(f.telemetry));
  return j;
}

json simulate_flags_json(const SimulateFlags& f) {
  json j = workload_flags_json(f);
  j.update(engine_flags_json(f.engine));
  j.update(json{{"ignore_eos", f.ignore_eos},
                {"timeline_interval", f.timeline_interval_s},
                {"save_result", f.save_result},
                {"result_dir", f.result_dir},
                {"result_filename", f.result_filename},
                {"trace", f.trace_path},
                {"window_s", f.window_s}});
  return j;
}

json dataset_json(const workload::DatasetOptions& d, const WorkloadFlags& f) {
  return {{"tokenizer", f.tokenizer},
          {"dataset_name", f.dataset_name},
          {"dataset_path", d.path},
          {"seed", d.seed},
          {"output_len", d.output_len},
          {"random_input_len", d.random_input_len},
          {"random_output_len", d.random_output_len},
          {"random_range_ratio", d.random_range_ratio},
          {"random_prefix_len", d.random_prefix_len},
          {"random_prompt_kind", f.random_prompt_kind},
          {"sonnet_input_len", d.sonnet_input_len},
          {"sonnet_output_len", d.sonnet_output_len},
          {"sonnet_prefix_len", d.sonnet_prefix_len},
          {"count_special_tokens", d.count_special_tokens},
          {"trace_format", d.trace.format},
          {"trace_speedup", d.trace.speedup},
          {"trace_start_s", d.trace.start_s},
          {"trace_duration_s", number(d.trace.duration_s)},
          {"trace_spread", d.trace.spread},
          {"trace_block_size", d.trace.block_size},
          {"corpus", d.trace.corpus_path},
          {"gsp_num_groups", d.shared_prefix.num_groups},
          {"gsp_prompts_per_group", d.shared_prefix.prompts_per_group},
          {"gsp_system_prompt_len", d.shared_prefix.system_prompt_len},
          {"gsp_question_len", d.shared_prefix.question_len},
          {"gsp_output_len", d.shared_prefix.output_len},
          {"gsp_range_ratio", d.shared_prefix.range_ratio},
          {"gsp_popularity", f.gsp_popularity},
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
          {"think_time_ms", f.think_time_ms},
          {"think_time_dist", f.think_time_dist}};
}

json report_setup_json(const ReportSetup& s) {
  return {{"request_rate", number(s.rate)},
          {"burstiness", number(s.burstiness)},
          {"metric_percentiles", s.percentiles},
          {"percentile_metrics", s.percentile_metrics},
          {"goodput",
           {{"ttft_ms", optional(s.summary.slo.ttft_ms)},
            {"tpot_ms", optional(s.summary.slo.tpot_ms)},
            {"e2el_ms", optional(s.summary.slo.e2el_ms)}}}};
}

json engine_spec_json(const sim::EngineSpec& s, const EngineFlags& f) {
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
          {"efficiency",
           {{"compute", eff.compute},
            {"memory", eff.memory},
            {"step_overhead_us", eff.step_overhead_us},
            {"layer_overhead_us", eff.layer_overhead_us},
            {"request_overhead_us", eff.request_overhead_us},
            {"allreduce_latency_us", eff.allreduce_latency_us}}}};
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
          {"request_rate", number(lo.request_rate)},
          {"burstiness", number(lo.burstiness)},
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

json builtin_server_json(const BuiltinServerPlan& b, const EngineFlags& f) {
  const auto& o = b.options;
  json j;
  if (o.timing == server::Timing::Fixed) {
    j = {{"timing", "fixed"},
         {"ttft_ms", o.ttft_ms},
         {"itl_ms", o.itl_ms},
         {"tokens_per_chunk", o.tokens_per_chunk},
         {"max_num_seqs", o.max_num_seqs}};
  } else {
    j = engine_spec_json(o.engine->spec, f);
    j["timing"] = "engine";
    j["admission_window_ms"] = o.engine->admission_window_ms;
  }
  j["model"] = o.model;
  j["default_output_len"] = o.default_output_len;
  j["max_model_len"] = o.max_model_len;
  return j;
}

}  // namespace llmbench::cli
