#include "llmbench/app/detail/sim_cluster.hpp"

#include "llmbench/app/config_json.hpp"
#include "llmbench/app/outputs.hpp"
#include "llmbench/app/sim_requests.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/metrics/record_file.hpp"
#include "llmbench/workload/arrivals.hpp"
#include "llmbench/workload/trace.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

namespace llmbench::app::detail {

namespace {

using nlohmann::json;

/// Records handed to the writer between two flushes.
constexpr std::int64_t kRecordsPerFlush = 4096;

std::uint64_t hash_words(const std::vector<std::uint64_t>& words, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (const auto w : words) h = splitmix64(h ^ w);
  return h;
}

/// Single requests from the samples, as one engine takes them (`to_sim_requests`), keyed for
/// the cluster's prefix-caching block size and fingerprinted by their prefix identity.
std::vector<sim::ClusterRequest> single_requests(const std::vector<workload::Sample>& samples,
                                                 const std::vector<TimeNs>& arrivals,
                                                 const SimPlan& plan, std::int64_t block_size) {
  auto sims = to_sim_requests(samples, arrivals, plan.dataset.random_prefix_len, block_size,
                              plan.dataset.trace.block_size);
  std::vector<sim::ClusterRequest> out;
  out.reserve(sims.size());
  for (std::size_t i = 0; i < sims.size(); ++i) {
    sim::SimRequest& r = sims[i];
    sim::ClusterRequest c;
    c.arrival_ns = r.arrival_ns;
    c.prompt_len = r.prompt_len;
    c.output_len = r.output_len;
    c.warmup = r.warmup;
    c.block_hashes = std::move(r.block_hashes);
    c.hash_block_size = block_size;
    c.prompt_tokens = std::move(r.prompt_tokens);
    std::vector<std::uint64_t> words(c.block_hashes);
    for (const auto t : c.prompt_tokens) words.push_back(t);
    // Prompts without a cacheable identity still get a fingerprint of their own.
    c.input_hash =
        words.empty() ? splitmix64(plan.dataset.seed ^ (i + 1)) : hash_words(words, 0x1b);
    out.push_back(std::move(c));
  }
  return out;
}

/// Conversations from a multi-turn dataset: each turn's user message is a segment keyed by its
/// text (FNV-1a, estimated tokens), its answer a segment of its output length.
std::vector<sim::ConversationSpec> conversations(const std::vector<workload::Sample>& samples,
                                                 const std::vector<TimeNs>& arrivals) {
  std::vector<sim::ConversationSpec> out;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    sim::ConversationSpec c;
    c.arrival_ns = arrivals[i];
    for (const auto& t : samples[i].turns) {
      std::uint64_t key = 0xcbf29ce484222325ULL;
      for (const char ch : t.content)
        key = (key ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
      c.turns.push_back(
          sim::TurnSpec{.user_key = splitmix64(key),
                        .user_tokens = std::max<std::int64_t>(1, estimate_text_tokens(t.content)),
                        .output_len = std::max<std::int64_t>(1, t.output_len)});
    }
    if (!c.turns.empty())
      out.push_back(std::move(c));
  }
  return out;
}

/// The trace of `plan.dataset` (its replay window) tiled over `trace_tile_s` into `num_prompts`
/// requests.
std::unique_ptr<sim::RequestSource> tiled_trace(const SimPlan& plan) {
  const auto& d = plan.dataset;
  const auto text = read_file(d.path);
  if (!text)
    throw Exception(Error{"cannot read the trace", d.path, -1});
  const auto format = d.trace.format.empty() ? workload::detect_trace_format(*text, d.path)
                                             : workload::parse_trace_format(d.trace.format);
  const auto rows = workload::replay_window(workload::parse_trace(*text, d.path, format), d.trace);
  std::vector<sim::TraceRequest> tiles;
  tiles.reserve(rows.size());
  for (const auto& r : rows)
    tiles.push_back({.time_ns = r.time_ns, .input_len = r.input_len, .output_len = r.output_len});
  log::info("tiling {} trace rows over {} s into {} requests", tiles.size(),
            plan.cluster->trace_tile_s, plan.num_prompts);
  return std::make_unique<sim::TiledTraceSource>(std::move(tiles), plan.num_prompts,
                                                 plan.cluster->trace_tile_s, d.seed);
}

/// The requests of the point as a source, and whether they come as a closed loop (no schedule
/// of their own and no finite rate).
std::unique_ptr<sim::RequestSource> make_source(const SimPlan& plan,
                                                const std::vector<workload::Sample>* samples,
                                                std::int64_t block_size, bool& closed_loop) {
  if (samples == nullptr) {
    closed_loop = false;  // a tiled trace brings its own schedule
    return tiled_trace(plan);
  }
  const auto n = static_cast<std::int64_t>(samples->size());
  auto arrivals = workload::dataset_arrivals(*samples, 0, n);
  closed_loop =
      !workload::is_open_loop(!arrivals.empty(), plan.report.rate, workload::RampUp::None);
  if (arrivals.empty()) {
    arrivals =
        workload::arrival_times(n, workload::ArrivalOptions{.request_rate = plan.report.rate,
                                                            .burstiness = plan.report.burstiness,
                                                            .seed = plan.dataset.seed});
  }
  if (plan.dataset.multi_turn) {
    const sim::ThinkTime think{.mean_ms = plan.names.think_time_ms,
                               .exponential = plan.names.think_time_dist == "exponential",
                               .seed = plan.dataset.seed};
    return std::make_unique<sim::ConversationSource>(conversations(*samples, arrivals), think);
  }
  return std::make_unique<sim::VectorSource>(single_requests(*samples, arrivals, plan, block_size));
}

/// The block size whose hashes the cluster's prefix caches key on.
std::int64_t cache_block_size(const std::vector<sim::ResolvedGroup>& groups) {
  for (const auto& g : groups) {
    if (g.spec.role != sim::PoolRole::Decode && g.engine.engine.scheduler.enable_prefix_caching)
      return g.engine.engine.block_size;
  }
  return groups.front().engine.engine.block_size;
}

/// Count, mean, P50, P90 and P99 of a histogram, ms (null where empty).
json hist_json(const sim::StreamingHistogram& h) {
  return {{"count", h.count()},
          {"mean", finite_or_null(h.mean())},
          {"p50", finite_or_null(h.percentile(50))},
          {"p90", finite_or_null(h.percentile(90))},
          {"p99", finite_or_null(h.percentile(99))}};
}

json latency_json(const sim::LatencyStats& l) {
  return {{"completed", l.completed},
          {"failed", l.failed},
          {"input_tokens", l.input_tokens},
          {"output_tokens", l.output_tokens},
          {"cached_tokens", l.cached_tokens},
          {"duration_s", l.duration_s()},
          {"output_throughput",
           l.duration_s() > 0 ? static_cast<double>(l.output_tokens) / l.duration_s() : 0.0},
          {"ttft_ms", hist_json(l.ttft_ms)},
          {"tpot_ms", hist_json(l.tpot_ms)},
          {"itl_ms", hist_json(l.itl_ms)},
          {"e2el_ms", hist_json(l.e2el_ms)}};
}

/// The cluster's own results (`cluster` in the results JSON).
json cluster_json(const sim::ClusterResult& r) {
  json versions = json::array();
  for (const auto& v : r.versions) {
    versions.push_back(
        {{"name", v.name},
         {"share", v.share},
         {"requests", v.requests},
         {"routed_share",
          r.arrived > 0 ? static_cast<double>(v.requests) / static_cast<double>(r.arrived) : 0.0},
         {"results", latency_json(v.latency)}});
  }
  json replicas = json::array();
  for (const auto& x : r.replicas) {
    replicas.push_back({{"group", x.group},
                        {"role", sim::pool_role_name(static_cast<sim::PoolRole>(x.role))},
                        {"unit", x.unit},
                        {"requests", x.requests},
                        {"prefix_cache_queries", x.prefix_queries},
                        {"prefix_cache_hits", x.prefix_hits},
                        {"prefix_cache_hit_rate", x.hit_rate()},
                        {"preemptions", x.preemptions},
                        {"steps", x.steps},
                        {"busy_s", x.busy_s},
                        {"input_tokens", x.input_tokens},
                        {"output_tokens", x.output_tokens}});
  }
  json out{{"units", r.units},
           {"engines", r.engines},
           {"arrived", r.arrived},
           {"rejected", r.rejected},
           {"unit_steps", r.unit_steps},
           {"steady_steps", r.steady_steps},
           {"events", r.events},
           {"kv_transfers", r.kv_transfers},
           {"kv_bytes", r.kv_bytes},
           {"end_s", ns_to_s(r.end_ns)},
           {"results", latency_json(r.overall)},
           {"versions", std::move(versions)},
           {"replicas", std::move(replicas)}};
  if (r.pools.prefill_ms.count() > 0) {
    out["pools"] = {{"prefill_ms", hist_json(r.pools.prefill_ms)},
                    {"transfer_ms", hist_json(r.pools.transfer_ms)},
                    {"admit_ms", hist_json(r.pools.admit_ms)}};
  }
  return out;
}

/// The cluster as it ran: per group its role, units and engines, MTP, version and the engine of
/// one rank (`engine_spec_json`); the router, versions and KV link.
json cluster_spec_json(const ClusterPlan& c) {
  json groups = json::array();
  for (const auto& g : c.groups) {
    groups.push_back({{"name", g.spec.name},
                      {"role", sim::pool_role_name(g.spec.role)},
                      {"count", g.spec.count},
                      {"units", g.units},
                      {"engines_per_unit", g.engines_per_unit},
                      {"gpus", g.units * g.gpus_per_unit()},
                      {"lockstep", g.spec.lockstep},
                      {"redundant_experts", g.spec.redundant_experts},
                      {"mtp_depth", g.spec.mtp.depth},
                      {"mtp_acceptance", g.spec.mtp.acceptance},
                      {"tokens_per_step", g.tokens_per_step()},
                      {"version", g.spec.version},
                      {"engine", engine_spec_json(g.engine, g.spec.engine)}});
  }
  json versions = json::array();
  for (const auto& v : c.spec.versions) versions.push_back({{"name", v.name}, {"share", v.share}});
  return {{"path", c.path},
          {"model_id", c.spec.model_id},
          {"groups", std::move(groups)},
          {"router",
           {{"policy", sim::route_policy_name(c.spec.router.policy)},
            {"load_cap", c.spec.router.load_cap},
            {"decode_policy", sim::route_policy_name(c.spec.router.decode_policy)}}},
          {"versions", std::move(versions)},
          {"buckets", c.spec.buckets},
          {"kv_transfer",
           {{"link_gb_s", c.spec.kv_transfer.link_gb_s},
            {"latency_us", c.spec.kv_transfer.latency_us},
            {"bytes_per_token", c.spec.kv_transfer.bytes_per_token}}}};
}

/// The analysis of a cluster point: its summary from the streamed stats. Without records there
/// are no time windows, so no verdict over them is evaluated (each says why).
RunAnalysis cluster_analysis(const SimPlan& plan, const sim::ClusterResult& result) {
  RunAnalysis a;
  a.summary = sim::to_summary(result.overall, plan.report.percentiles);
  a.window_s = plan.window_s;
  const std::string why =
      "not evaluated: a cluster run is summarised while it goes and keeps no records, so it has "
      "no time windows";
  a.verdicts.stability.reason = why;
  a.verdicts.validity.reasons = {why};
  return a;
}

std::string model_id(const ClusterPlan& c) {
  return c.spec.model_id.empty() ? c.groups.front().engine.model.name : c.spec.model_id;
}

}  // namespace

RunResult simulate_cluster(const SimPlan& plan,
                           const std::shared_ptr<const std::vector<workload::Sample>>& samples,
                           LoadObserver* observer) {
  const ClusterPlan& c = *plan.cluster;
  for (const auto& g : c.groups) {
    log::info("group '{}' ({}, {} x {}): {}", g.spec.name, sim::pool_role_name(g.spec.role),
              g.units, g.engines_per_unit, g.engine.describe());
  }
  RunResult r;
  r.sim_plan = std::make_shared<const SimPlan>(plan);
  r.samples = samples ? samples->size() : 0;
  bool closed_loop = false;
  auto source = make_source(plan, samples.get(), cache_block_size(c.groups), closed_loop);

  // ---- outputs first (a bad folder costs no simulation), then the run ----
  r.start_time = std::chrono::system_clock::now();
  r.stem = plan.output.stem.empty()
               ? fmt::format("simulate-cluster-{:%Y%m%d-%H%M%S}",
                             fmt::localtime(std::chrono::system_clock::to_time_t(r.start_time)))
               : plan.output.stem;
  const sim::RecordsMode records_mode = plan.output.save ? c.records : sim::RecordsMode::None;
  std::unique_ptr<metrics::RecordFileWriter> writer;
  if (plan.output.save)
    prepare_result_dir(plan.output.dir);
  if (records_mode != sim::RecordsMode::None) {
    r.records_path = plan.output.dir / (r.stem + ".records.jsonl");
    writer = std::make_unique<metrics::RecordFileWriter>(r.records_path.string());
  }
  std::int64_t unflushed = 0;
  sim::ClusterOptions options{.max_concurrency = plan.max_concurrency,
                              .closed_loop = closed_loop,
                              .records = records_mode,
                              .sample_every = 100,
                              .record_sink = {},
                              .seed = plan.dataset.seed,
                              .steady_runs = true};
  if (writer) {
    options.record_sink = [&writer, &unflushed](metrics::RequestRecord&& record) {
      writer->append(record);
      if (++unflushed >= kRecordsPerFlush) {
        writer->flush();
        unflushed = 0;
      }
    };
  }
  sim::ClusterSimulation cluster(c.spec, c.groups, std::move(options));
  const TimeNs wall_start = steady_now_ns();
  sim::ClusterResult result = cluster.run(*source);
  const double wall_s = ns_to_s(steady_now_ns() - wall_start);

  // ---- analysis ----
  r.analysis = cluster_analysis(plan, result);
  r.cluster = ClusterFacts{.result = std::move(result), .wall_s = wall_s, .records_written = 0};
  r.exit_code = r.summary().failed > 0 ? 1 : 0;
  if (writer) {
    writer->flush();
    r.cluster->records_written = writer->written();
    r.records_lost = writer->lost();
    r.records_error = writer->error();
  }
  if (observer != nullptr)
    observer->analysed(r);
  if (r.records_lost > 0) {
    log::error("{} of {} records could not be written to {} ({}); the summary counts every request",
               r.records_lost, r.records_lost + r.cluster->records_written, r.records_path.string(),
               r.records_error);
    r.exit_code = 1;
  }
  if (plan.output.save) {
    const auto path = plan.output.dir / (r.stem + ".json");
    report::write_json_file(path.string(), r.to_json());
    r.results_path = path;
    log::info("results written to {}{}", path.string(),
              writer ? fmt::format(", per-request records ({}) to {}",
                                   sim::kRecordsModes.name(records_mode), r.records_path.string())
                     : std::string());
  }
  return r;
}

nlohmann::json cluster_document(const RunResult& r, report::RunInfo info) {
  const SimPlan& plan = *r.sim_plan;
  const ClusterPlan& c = *plan.cluster;
  const auto& facts = *r.cluster;
  info.backend = "simulate";
  info.model_id = model_id(c);
  info.tokenizer_id = plan.names.tokenizer.empty() ? info.model_id : plan.names.tokenizer;
  info.num_prompts = plan.num_prompts;
  info.max_concurrency = static_cast<int>(plan.max_concurrency > 0 ? plan.max_concurrency : -1);
  info.seed = plan.dataset.seed;
  info.config_requested = plan.requested;
  json effective = dataset_json(plan.dataset, plan.names);
  effective.update(report_setup_json(plan.report));
  effective.update(json{{"num_prompts", plan.num_prompts},
                        {"max_concurrency", plan.max_concurrency},
                        {"samples", r.samples},
                        {"records", sim::kRecordsModes.name(c.records)},
                        {"trace_tile_s", c.trace_tile_s},
                        {"cluster", cluster_spec_json(c)}});
  info.config_effective = std::move(effective);
  info.extra = {{"simulated", true},
                // "" when none was written (`--records none`), as readers expect a string.
                {"records_file", r.records_path.filename().string()},
                {"records_written", facts.records_written},
                {"records_lost", r.records_lost},
                {"sim_steps", facts.result.unit_steps},
                {"sim_wall_s", facts.wall_s},
                {"cluster", cluster_json(facts.result)}};
  info.extra.update(analysis_json(r.analysis));
  return report::results_json(r.summary(), info);
}

}  // namespace llmbench::app::detail
