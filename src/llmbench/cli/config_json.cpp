#include "llmbench/cli/config_json.hpp"

#include "llmbench/core/json_number.hpp"
#include "llmbench/server/options.hpp"

#include <optional>
#include <string>

namespace llmbench::cli {

namespace {

using nlohmann::json;

template <typename T>
json optional(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
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
          {"trace_duration_s", number_or_inf(f.trace_duration_s)},
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
      {"step_overhead_us", optional(f.step_overhead_us)},
      {"engine", f.engine.value_or("vllm")},
      {"calibration", optional(f.calibration)}};
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
                {"served_model_name", f.served_model_name},
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
                {"source_address", f.source_addresses},
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
                {"num_gpus", f.num_gpus > 0 ? json(f.num_gpus) : json(nullptr)},
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
                {"window_s", f.window_s},
                {"label", f.label},
                {"quiet", f.quiet},
                {"cluster", f.cluster_path},
                {"records", f.records},
                {"trace_tile_s", f.trace_tile_s}});
  return j;
}

}  // namespace llmbench::cli
