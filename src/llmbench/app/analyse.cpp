#include "llmbench/app/analyse.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"
#include "llmbench/metrics/catalog.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace llmbench::app {

namespace {

using nlohmann::json;

analysis::WindowOptions window_options(double window_s, std::vector<double> percentiles) {
  if (!(window_s >= 0.001 && window_s <= 1e6)) {
    // The flag is checked when it is resolved; this guards a plan made another way.
    throw Exception(
        Error{fmt::format("must be a number of seconds in [0.001, 1e6], got {}", window_s),
              "--window-s", -1});
  }
  if (std::find(percentiles.begin(), percentiles.end(), 99.0) == percentiles.end())
    percentiles.push_back(99.0);
  return analysis::WindowOptions{.width_ns = static_cast<TimeNs>(std::llround(window_s * 1e9)),
                                 .percentiles = std::move(percentiles)};
}

void add_stats(json& j, const std::string& name, const metrics::Stats& s) {
  j[name + "_count"] = s.count;
  j[metrics::latency_key("mean", name)] = finite_or_null(s.mean);
  for (const auto& [q, v] : s.percentiles) {
    j[metrics::latency_key(q, name)] = finite_or_null(v);
  }
}

json spikes_json(const analysis::SpikeReport& r) {
  const analysis::SpikeRule rule;
  json list = json::array();
  for (const auto& sp : r.spikes) {
    list.push_back({{"metric", analysis::to_string(sp.metric)},
                    {"prefill_step", sp.prefill_step},
                    {"window", sp.window},
                    {"start_s", ns_to_s(sp.start_ns)},
                    {"end_s", ns_to_s(sp.end_ns)},
                    {"value_ms", finite_or_null(sp.value_ms)},
                    {"baseline_ms", finite_or_null(sp.baseline_ms)},
                    {"ratio", finite_or_null(sp.ratio)},
                    {"mean_in_flight", finite_or_null(sp.mean_in_flight)},
                    {"max_in_flight", sp.max_in_flight},
                    {"samples", sp.samples},
                    {"completed", sp.completed}});
  }
  const auto& in = r.interference;
  return {{"rule",
           {{"multiple", rule.multiple},
            {"iqr_multiple", rule.iqr_multiple},
            {"percentile", rule.percentile},
            {"baseline",
             "median over the steady windows of the window percentile, per class: ITL in gaps "
             "without / with a prefill, TTFT over the TTFT its prompt length explains"},
            {"min_windows", rule.min_windows}}},
          {"summary", analysis::spike_summary(r, rule)},
          {"count", r.spikes.size()},
          {"warmup_windows", r.warmup_windows},
          {"itl_baseline_ms", finite_or_null(r.itl_baseline_ms)},
          {"itl_prefill_baseline_ms", finite_or_null(r.itl_prefill_baseline_ms)},
          {"ttft_baseline_ms", finite_or_null(r.ttft_baseline_ms)},
          {"ttft_ratio_baseline", finite_or_null(r.ttft_ratio_baseline)},
          {"prefill_interference",
           {{"found", in.found},
            {"with_prefill_ms", finite_or_null(in.with_prefill_ms)},
            {"without_prefill_ms", finite_or_null(in.without_prefill_ms)},
            {"windows", in.windows}}},
          {"list", std::move(list)}};
}

json batching_json(const Verdicts& v) {
  const analysis::BatchingRule rule;
  const auto& b = v.batching;
  json windows = json::array();
  for (const auto& w : b.windows) {
    windows.push_back({{"start_s", ns_to_s(w.start_ns)},
                       {"samples", w.samples},
                       {"warmup", w.warmup},
                       {"mean_running", finite_or_null(w.mean_running)},
                       {"mean_waiting", finite_or_null(w.mean_waiting)},
                       {"share", finite_or_null(w.share)},
                       {"failed", w.failed}});
  }
  return {{"rule",
           {{"shrink_ratio", rule.shrink_ratio},
            {"min_waiting", rule.min_waiting},
            {"consecutive", rule.consecutive},
            {"share", "mean running / min(capacity, mean running + mean waiting)"}}},
          {"source", v.batching_source},
          {"evaluated", b.evaluated},
          {"fired", b.fired},
          {"capacity", finite_or_null(b.capacity)},
          {"longest_failed_run", b.longest_failed_run},
          {"warmup_windows", b.warmup_windows},
          {"late_samples", b.late_samples},
          {"reason", b.reason},
          {"windows", std::move(windows)}};
}

json windows_json(const std::vector<analysis::Window>& windows) {
  json out = json::array();
  for (const auto& w : windows) {
    json j{{"start_s", ns_to_s(w.start_ns)},
           {"end_s", ns_to_s(w.end_ns)},
           {"full", w.full},
           {"sending", w.sending},
           {"completed", w.completed},
           {"failed", w.failed},
           {"output_tokens", w.output_tokens},
           {"output_throughput", finite_or_null(w.output_throughput)},
           {"request_throughput", finite_or_null(w.request_throughput)},
           {"mean_in_flight", finite_or_null(w.mean_in_flight)},
           {"max_in_flight", w.max_in_flight},
           {"mean_queued", finite_or_null(w.mean_queued)}};
    add_stats(j, "ttft", w.ttft_ms);
    add_stats(j, "itl", w.itl_ms);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

RunAnalysis analyse_run(const AnalysisInputs& in) {
  // The p99 intervals' percentiles are selected in the summary's own pass over the samples.
  metrics::SummaryOptions summary_options = in.report.summary;
  summary_options.extra_percentiles = tail_percentiles();
  RunAnalysis a{.summary = in.tokens != nullptr
                               ? metrics::summarize(in.records, *in.tokens, summary_options)
                               : metrics::summarize(in.records, summary_options),
                .window_s = in.window_s,
                .windows = {},
                .verdicts = {}};
  const auto options = window_options(in.window_s, in.report.percentiles);
  a.windows = in.tokens != nullptr ? analysis::time_windows(in.records, *in.tokens, options)
                                   : analysis::time_windows(in.records, options);
  Verdicts& v = a.verdicts;
  v.batching = analysis::batching_failure(a.windows, in.queue.samples, in.queue.capacity,
                                          analysis::BatchingRule{});
  v.batching_source = v.batching.evaluated ? in.queue.source : std::string();
  // The engine's queue, where the batching rule could read it, also decides saturation (a
  // standing or growing queue) and the start-up ramp left out as warm-up.
  v.stability = v.batching.evaluated
                    ? analysis::stability(a.windows, in.queue.samples, analysis::StabilityRule{})
                    : analysis::stability(a.windows, analysis::StabilityRule{});
  v.spikes = analysis::find_spikes(a.windows, analysis::SpikeRule{});
  v.tails = tail_cis(a.summary);
  analysis::PointFacts facts{.duration_s = a.summary.duration_s,
                             .completed = a.summary.completed,
                             .failed = a.summary.failed,
                             .tails = {}};
  for (const auto& t : v.tails) facts.tails.emplace_back(t.metric, t.ci);
  v.validity = analysis::validity(facts, in.validity);
  v.verdict = analysis::judge_point(facts, in.validity, v.stability, in.interrupted);
  return a;
}

std::vector<analysis::EngineSample> step_samples(const std::vector<sim::StepTrace>& steps) {
  std::vector<analysis::EngineSample> out;
  out.reserve(steps.size());
  for (const auto& st : steps) {
    out.push_back(analysis::EngineSample{.t_ns = st.start_ns,
                                         .running = static_cast<double>(st.num_running),
                                         .waiting = static_cast<double>(st.num_waiting),
                                         .weight = static_cast<double>(st.end_ns - st.start_ns)});
  }
  return out;
}

std::vector<analysis::EngineSample> scrape_samples(const telemetry::ServerMetricsSeries& series,
                                                   TimeNs run_start_ns) {
  std::vector<analysis::EngineSample> out;
  const auto index = [](telemetry::Concept c) { return static_cast<std::size_t>(c); };
  const auto running = index(telemetry::Concept::Running);
  const auto waiting = index(telemetry::Concept::Waiting);
  if (series.concept_sources[running].empty() || series.concept_sources[waiting].empty())
    return out;
  const auto& r = series.concepts[running];
  const auto& w = series.concepts[waiting];
  for (std::size_t i = 0; i < series.t_ns.size() && i < r.size() && i < w.size(); ++i) {
    if (!std::isfinite(r[i]) || !std::isfinite(w[i]))
      continue;
    out.push_back(analysis::EngineSample{.t_ns = series.t_ns[i] - run_start_ns,
                                         .running = r[i],
                                         .waiting = w[i],
                                         .weight = 1,
                                         .late = series.late(i)});
  }
  return out;
}

json analysis_json(const RunAnalysis& a) {
  const analysis::StabilityRule rule;
  const Verdicts& v = a.verdicts;
  const auto& st = v.stability;
  json out{{"window_s", a.window_s},
           {"windows", windows_json(a.windows)},
           {"stable", st.stable},
           {"stability",
            {{"state", analysis::to_string(st.state)},
             {"reason", st.reason},
             {"throughput_spread", finite_or_null(st.throughput_spread)},
             {"latency_spread", finite_or_null(st.latency_spread)},
             {"ttft_change", finite_or_null(st.ttft_change)},
             {"queue_growth", finite_or_null(st.queue_growth)},
             {"judged_windows", st.judged_windows},
             {"warmup_windows", st.warmup_windows},
             {"steady_start_s", ns_to_s(st.steady_start_ns)},
             {"rule",
              {{"min_windows", rule.min_windows},
               {"alpha", rule.alpha},
               {"tolerance", rule.tolerance},
               {"ttft_tolerance", rule.ttft_tolerance},
               {"queue_growth", rule.queue_growth},
               {"queue_growth_rel", rule.queue_growth_rel},
               {"standing_queue_share", rule.standing_queue_share},
               {"warmup", "MSER truncation of output tok/s and mean ITL; the engine's batch ramp"},
               {"trend", "Mann-Kendall test, Theil-Sen change over the steady windows"}}}}}};
  out["spikes"] = spikes_json(v.spikes);
  out["batching"] = batching_json(v);
  out["p99_ci"] = tail_cis_json(v.tails);
  out["verdict"] = verdict_json(v.verdict);
  return out;
}

json verdict_json(const analysis::PointVerdict& v) {
  return {{"label", analysis::verdict_label(v)},  {"valid", v.valid},
          {"invalid_reasons", v.invalid_reasons}, {"steadiness", analysis::to_string(v.steadiness)},
          {"interrupted", v.interrupted},         {"ok", v.ok()}};
}

}  // namespace llmbench::app
