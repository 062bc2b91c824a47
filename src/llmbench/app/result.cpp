#include "llmbench/app/result.hpp"

#include "llmbench/app/config_json.hpp"
#include "llmbench/app/detail/sim_cluster.hpp"
#include "llmbench/app/tokenizers.hpp"
#include "llmbench/app/what_if.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/metrics/catalog.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/report/report.hpp"
#include "llmbench/report/turns.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <cmath>
#include <limits>

namespace llmbench::app {

namespace {

using nlohmann::json;

/// `j` with the counts vLLM's keys leave out: `cancelled` (apart from `failed`),
/// `zero_output_completions` and the TTFT basis (`metrics::kTtftBasis`).
json with_counts(json j, const metrics::Summary& s) {
  j["cancelled"] = s.cancelled;
  j["zero_output_completions"] = s.zero_output_completions;
  j["ttft_basis"] = metrics::kTtftBasis;
  return j;
}

std::string local_date(std::chrono::system_clock::time_point t) {
  return fmt::format("{:%Y%m%d-%H%M%S}", fmt::localtime(std::chrono::system_clock::to_time_t(t)));
}

/// The run information every results document starts with.
report::RunInfo base_info(const RunResult& r) {
  report::RunInfo info;
  info.date = local_date(r.start_time);
  info.tool_version = std::string(build_info::version());
  info.git_sha = std::string(build_info::git_sha());
  info.request_rate = r.report().rate;
  info.burstiness = r.report().burstiness;
  info.percentiles = r.report().percentiles;
  info.slo = r.report().summary.slo;
  return info;
}

/// Seconds, or null when undefined (NaN).
json seconds_or_null(double ms) {
  return finite_or_null(ms / 1000.0);
}

json run_document(const RunResult& r) {
  const RunPlan& plan = *r.run_plan;
  const auto& lo = r.load;
  const auto& summary = r.summary();
  report::RunInfo info = base_info(r);
  info.backend = plan.backend_name;
  info.model_id = lo.request.model;
  info.tokenizer_id = plan.names.tokenizer.empty() ? lo.request.model : plan.names.tokenizer;
  info.base_url = lo.url.origin() + lo.url.path_prefix;
  info.endpoint = lo.endpoint;
  info.num_prompts = lo.duration_s > 0 ? plan.num_prompts : lo.num_prompts;
  info.max_concurrency = static_cast<int>(plan.max_concurrency);
  info.seed = lo.seed;
  info.config_requested = plan.requested;
  info.config_effective = run_effective_config(plan, lo, r.samples);
  info.server_models = r.server_models;
  info.run_start_steady_ns = r.run_start_steady_ns;
  const LoadFacts facts = r.load_facts.value_or(LoadFacts{});
  info.extra = {{"interrupted", r.interrupted},
                {"connections_opened", facts.connections_opened},
                {"records_file", r.records_path.filename().string()},
                {"output_tokens_counted_locally", summary.output_tokens_counted_locally}};
  // GPUs behind the server, for per-GPU figures: null when not known (they are then per server).
  const GpuCount gpus = r.gpu_count();
  info.extra["num_gpus"] = finite_or_null(gpus.count);
  info.extra["num_gpus_source"] = gpus.source.empty() ? json(nullptr) : json(gpus.source);
  info.extra.update(analysis_json(r.analysis));
  if (plan.output.save_detailed)
    info.extra.update(detailed_arrays(r.records));
  if (r.telemetry)
    info.extra["telemetry"] = r.telemetry->to_json();
  info.extra["tokenizer"] = tokenizer_json(plan.names.tokenizer);
  if (r.spread)
    info.extra["distributed"] = dist::to_json(*r.spread);
  if (lo.multi_turn) {
    // Multi-turn runs only (docs/workloads.md "Conversations"): the per-turn figures and how the
    // conversations ended; `num_prompts` counts conversations, `completed` requests (turns).
    const auto by_turn = metrics::summarize_turns(r.records);
    const auto& c = facts.conversations;
    info.extra["multi_turn"] = true;
    info.extra["by_turn"] = report::by_turn_json(by_turn);
    info.extra["turn_finding"] =
        report::turn_finding_json(report::turn_finding(r.records, by_turn));
    info.extra["conversations"] = {{"started", c.started},
                                   {"completed", c.completed},
                                   {"ended_by_failure", c.ended_by_failure},
                                   {"cut", c.cut}};
  }
  info.extra["label"] = plan.output.label.empty() ? json(nullptr) : json(plan.output.label);
  json metadata = json::object();
  for (const auto& [key, value] : plan.output.metadata) metadata[key] = value;
  info.extra["metadata"] = metadata;
  json doc = with_counts(report::results_json(summary, info), summary);
  // vLLM writes `--metadata KEY=VALUE` at the top level: so does llmbench, for every key that is
  // not one of its own (those stay under "metadata" only).
  for (const auto& [key, value] : metadata.items()) {
    if (!doc.contains(key))
      doc[key] = value;
  }
  return doc;
}

/// The timeline as a JSON array (`sim_timeline`).
json timeline_json(const std::vector<sim::TimelineBucket>& timeline) {
  json out = json::array();
  for (const auto& b : timeline) {
    out.push_back({{"start_s", ns_to_s(b.start_ns)},
                   {"end_s", ns_to_s(b.end_ns)},
                   {"steps", b.steps},
                   {"busy_fraction", b.busy_fraction},
                   {"mean_kv_cache_usage", b.mean_kv_usage},
                   {"max_kv_cache_usage", b.max_kv_usage},
                   {"mean_running", b.mean_running},
                   {"max_waiting", b.max_waiting},
                   {"preemptions", b.preemptions},
                   {"prefix_cache_queries", b.prefix_queries},
                   {"prefix_cache_hits", b.prefix_hits},
                   {"prefix_cache_hit_rate", b.prefix_hit_rate()}});
  }
  return out;
}

/// `simulate`'s effective configuration: the engine that ran, the dataset and report setup,
/// and the load shape.
json simulate_effective_config(const RunResult& r) {
  const SimPlan& plan = *r.sim_plan;
  json j = engine_spec_json(plan.engine, plan.engine_requested);
  j.update(dataset_json(plan.dataset, plan.names));
  j.update(report_setup_json(plan.report));
  j.update(json{{"num_prompts", plan.num_prompts},
                {"max_concurrency", plan.options.max_concurrency},
                {"ignore_eos", plan.ignore_eos},
                {"timeline_interval", ns_to_s(r.simulation->timeline_interval_ns)},
                {"samples", r.samples}});
  return j;
}

json simulate_document(const RunResult& r) {
  const SimPlan& plan = *r.sim_plan;
  const auto& st = r.simulation->stats;
  report::RunInfo info = base_info(r);
  info.backend = "simulate";
  info.model_id = plan.engine.model.name;
  info.tokenizer_id = plan.names.tokenizer.empty() ? plan.engine.model.name : plan.names.tokenizer;
  info.num_prompts = plan.num_prompts;
  info.max_concurrency = static_cast<int>(plan.max_concurrency > 0 ? plan.max_concurrency : -1);
  info.seed = plan.dataset.seed;
  info.config_requested = plan.requested;
  info.config_effective = simulate_effective_config(r);
  info.extra = {{"simulated", true},
                {"records_file", r.records_path.filename().string()},
                {"sim_steps", st.steps},
                {"sim_preemptions", st.preemptions},
                {"sim_swap_outs", st.swap_outs},
                {"sim_swap_ins", st.swap_ins},
                {"sim_swap_out_blocks", st.swap_out_blocks},
                {"sim_swap_in_blocks", st.swap_in_blocks},
                {"sim_recompute_fallbacks", st.recompute_fallbacks},
                {"sim_prefix_cache_queries", st.prefix_queries},
                {"sim_prefix_cache_hits", st.prefix_hits},
                {"sim_wall_s", r.simulation->wall_s},
                {"sim_timeline", timeline_json(r.simulation->timeline)},
                {"engine_facts", engine_facts_json(r.simulation->engine)},
                {"bottleneck", bottleneck_json(r.simulation->engine)},
                {"label", plan.output.label.empty() ? json(nullptr) : json(plan.output.label)}};
  info.extra.update(analysis_json(r.analysis));
  return with_counts(report::results_json(r.summary(), info), r.summary());
}

}  // namespace

nlohmann::json detailed_arrays(const std::vector<metrics::RequestRecord>& records) {
  json ttfts = json::array();
  json tpots = json::array();
  json e2els = json::array();
  json itls = json::array();
  json in_lens = json::array();
  json out_lens = json::array();
  json errors = json::array();
  std::vector<double> itl_ms;
  for (const auto& r : records) {
    if (r.warmup)
      continue;
    // A failed request has no latencies: they enter no figure of the summary either.
    const auto lat = r.ok() ? metrics::request_latency(r) : metrics::RequestLatency{};
    ttfts.push_back(seconds_or_null(lat.ttft_ms));
    tpots.push_back(seconds_or_null(lat.tpot_ms));
    e2els.push_back(seconds_or_null(lat.e2el_ms));
    itl_ms.clear();
    if (r.ok())
      metrics::append_itl_ms(r, itl_ms);
    json gaps = json::array();
    for (const double ms : itl_ms) gaps.push_back(ms / 1000.0);
    itls.push_back(std::move(gaps));
    in_lens.push_back(metrics::input_token_count(r));
    out_lens.push_back(metrics::output_token_count(r));
    errors.push_back(r.error_message);
  }
  return {{"ttfts", std::move(ttfts)},        {"tpots", std::move(tpots)},
          {"e2els", std::move(e2els)},        {"itls", std::move(itls)},
          {"input_lens", std::move(in_lens)}, {"output_lens", std::move(out_lens)},
          {"errors", std::move(errors)}};
}

const ReportSetup& RunResult::report() const {
  if (run_plan != nullptr)
    return run_plan->report;
  LLMBENCH_ASSERT(sim_plan != nullptr, "a RunResult without its plan");
  return sim_plan->report;
}

GpuCount RunResult::gpu_count() const {
  const auto engine_gpus = [](const sim::EngineSpec& spec) {
    return GpuCount{.count = static_cast<double>(spec.memory.tp) *
                             static_cast<double>(spec.data_parallel_size()),
                    .source = "tp x dp"};
  };
  if (sim_plan != nullptr) {
    if (!sim_plan->cluster)
      return engine_gpus(sim_plan->engine);
    double gpus = 0;
    for (const auto& g : sim_plan->cluster->groups)
      gpus += static_cast<double>(g.units) * static_cast<double>(g.gpus_per_unit());
    return {.count = gpus, .source = "tp x dp"};
  }
  if (run_plan == nullptr)
    return {};
  if (run_plan->num_gpus > 0)
    return {.count = static_cast<double>(run_plan->num_gpus), .source = "--num-gpus"};
  if (run_plan->builtin && run_plan->builtin->options.engine)
    return engine_gpus(run_plan->builtin->options.engine->spec);
  // NVML sees this host's GPUs: they serve the run only when the server is on this host.
  const std::string& host = load.url.host;
  const bool local = host == "127.0.0.1" || host == "::1" || host == "localhost";
  if (local && telemetry && telemetry->gpu_summary && !telemetry->gpu_summary->devices.empty())
    return {.count = static_cast<double>(telemetry->gpu_summary->devices.size()),
            .source = "NVML devices sampled"};
  return {};
}

std::optional<double> RunResult::metric(std::string_view key) const {
  const auto& slo = report().summary.slo;
  if (auto v = metrics::summary_value(summary(), key, report().percentiles,
                                      slo.ttft_ms || slo.tpot_ms || slo.e2el_ms))
    return v;
  // The point's own counts beside the summary's (the same keys as its results document).
  const auto count = [](auto n) { return std::optional<double>(static_cast<double>(n)); };
  if (key == "prompt_token_mismatches")
    return count(summary().prompt_token_mismatches);
  if (key == "output_tokens_counted_locally")
    return count(summary().output_tokens_counted_locally);
  if (key == "connections_opened" && load_facts)
    return count(load_facts->connections_opened);
  if (cluster) {
    if (key == "sim_steps")
      return count(cluster->result.unit_steps);
    if (key == "sim_preemptions") {
      std::int64_t preemptions = 0;
      for (const auto& x : cluster->result.replicas) preemptions += x.preemptions;
      return count(preemptions);
    }
  }
  if (simulation) {
    const auto& st = simulation->stats;
    if (key == "sim_steps")
      return count(st.steps);
    if (key == "sim_preemptions")
      return count(st.preemptions);
    if (key == "sim_swap_outs")
      return count(st.swap_outs);
    if (key == "sim_recompute_fallbacks")
      return count(st.recompute_fallbacks);
  }
  return std::nullopt;
}

nlohmann::json RunResult::to_json() const {
  if (cluster)
    return detail::cluster_document(*this, base_info(*this));
  return sim_plan != nullptr ? simulate_document(*this) : run_document(*this);
}

std::vector<std::pair<std::string, std::string>> connection_lines(const RunResult& r) {
  std::vector<std::pair<std::string, std::string>> lines;
  if (!r.telemetry)
    return lines;
  const auto errors_text = [](const std::map<std::string, std::int64_t>& by_cause) {
    std::string text = std::to_string(telemetry::connect_error_count(by_cause));
    std::string causes;
    for (const auto& [cause, n] : by_cause)
      causes += fmt::format("{}{} {}", causes.empty() ? "" : ", ", cause, n);
    return causes.empty() ? text : fmt::format("{} ({})", text, causes);
  };
  const auto& client = r.telemetry->client;
  const bool spread = r.spread && r.spread->ranks > 1;
  lines.emplace_back(spread ? "Ports in use (peak, sum of ranks):" : "Ports in use (peak):",
                     std::to_string(client.ports_in_use_peak));
  lines.emplace_back("Connect errors:", errors_text(client.connect_errors));
  if (!spread)
    return lines;
  for (const auto& rank : r.spread->per_rank) {
    lines.emplace_back(
        fmt::format("Rank {} ({}) ports peak / connect errors:", rank.rank, rank.host),
        fmt::format("{} / {}", rank.ports_in_use_peak, errors_text(rank.connect_errors_by_cause)));
  }
  return lines;
}

}  // namespace llmbench::app
