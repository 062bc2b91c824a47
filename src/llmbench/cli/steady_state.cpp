#include "llmbench/cli/steady_state.hpp"

#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/report/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace llmbench::cli {

namespace {

using nlohmann::json;

json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

analysis::WindowOptions window_options(double window_s, std::vector<double> percentiles) {
  require_in_range(window_s, 0.001, 1e6, "--window-s", "a number of seconds in [0.001, 1e6]");
  if (std::find(percentiles.begin(), percentiles.end(), 99.0) == percentiles.end())
    percentiles.push_back(99.0);
  return analysis::WindowOptions{.width_ns = static_cast<TimeNs>(std::llround(window_s * 1e9)),
                                 .percentiles = std::move(percentiles)};
}

void add_stats(json& j, const std::string& name, const metrics::Stats& s) {
  j[name + "_count"] = s.count;
  j["mean_" + name + "_ms"] = number(s.mean);
  for (const auto& [q, v] : s.percentiles) {
    j["p" + report::percentile_label(q) + "_" + name + "_ms"] = number(v);
  }
}

json spikes_json(const analysis::SpikeReport& r) {
  const analysis::SpikeRule rule;
  json list = json::array();
  for (const auto& sp : r.spikes) {
    list.push_back({{"metric", analysis::to_string(sp.metric)},
                    {"window", sp.window},
                    {"start_s", ns_to_s(sp.start_ns)},
                    {"end_s", ns_to_s(sp.end_ns)},
                    {"value_ms", number(sp.value_ms)},
                    {"baseline_ms", number(sp.baseline_ms)},
                    {"ratio", number(sp.ratio)},
                    {"mean_in_flight", number(sp.mean_in_flight)},
                    {"max_in_flight", sp.max_in_flight},
                    {"samples", sp.samples},
                    {"completed", sp.completed}});
  }
  return {{"rule",
           {{"multiple", rule.multiple},
            {"percentile", rule.percentile},
            {"baseline", "median over the windows of the window percentile"},
            {"min_windows", rule.min_windows}}},
          {"itl_baseline_ms", number(r.itl_baseline_ms)},
          {"ttft_baseline_ms", number(r.ttft_baseline_ms)},
          {"list", std::move(list)}};
}

json batching_json(const SteadyState& s) {
  const analysis::BatchingRule rule;
  const auto& v = s.batching;
  json windows = json::array();
  for (const auto& w : v.windows) {
    windows.push_back({{"start_s", ns_to_s(w.start_ns)},
                       {"samples", w.samples},
                       {"mean_running", number(w.mean_running)},
                       {"mean_waiting", number(w.mean_waiting)},
                       {"share", number(w.share)},
                       {"failed", w.failed}});
  }
  return {{"rule",
           {{"shrink_ratio", rule.shrink_ratio},
            {"min_waiting", rule.min_waiting},
            {"consecutive", rule.consecutive},
            {"share", "mean running / min(capacity, mean running + mean waiting)"}}},
          {"source", s.batching_source},
          {"evaluated", v.evaluated},
          {"fired", v.fired},
          {"capacity", number(v.capacity)},
          {"longest_failed_run", v.longest_failed_run},
          {"reason", v.reason},
          {"windows", std::move(windows)}};
}

}  // namespace

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

std::vector<analysis::EngineSample> scrape_samples(const json& server_metrics) {
  std::vector<analysis::EngineSample> out;
  if (!server_metrics.is_object())
    return out;
  const json& series = server_metrics.value("series", json::object());
  const json& t = server_metrics.value("t_ms", json::array());
  if (!series.contains("running") || !series.contains("waiting") || !t.is_array())
    return out;
  const json& running = series.at("running");
  const json& waiting = series.at("waiting");
  for (std::size_t i = 0; i < t.size() && i < running.size() && i < waiting.size(); ++i) {
    if (!t[i].is_number() || !running[i].is_number() || !waiting[i].is_number())
      continue;
    out.push_back(analysis::EngineSample{.t_ns = ms_to_ns(t[i].get<double>()),
                                         .running = running[i].get<double>(),
                                         .waiting = waiting[i].get<double>(),
                                         .weight = 1});
  }
  return out;
}

void add_batching(SteadyState& s, const std::vector<analysis::EngineSample>& samples,
                  double capacity, std::string source) {
  s.batching = analysis::batching_failure(s.windows, samples, capacity, analysis::BatchingRule{});
  s.batching_source = s.batching.evaluated ? std::move(source) : std::string();
}

void add_window_flag(CLI::App& app, double& window_s) {
  app.add_option("--window-s", window_s,
                 "Seconds per time window in the results (windows, stable): completed, tok/s, "
                 "in flight, TTFT/ITL percentiles per window")
      ->capture_default_str();
}

namespace {

/// The windows' stability verdict and spikes (the rules' defaults, docs/sweep.md).
SteadyState judge_windows(double window_s, std::vector<analysis::Window> windows) {
  SteadyState s{.window_s = window_s,
                .windows = std::move(windows),
                .stability = {},
                .spikes = {},
                .batching = {},
                .batching_source = {},
                .tails = {}};
  s.stability = analysis::stability(s.windows, analysis::StabilityRule{});
  s.spikes = analysis::find_spikes(s.windows, analysis::SpikeRule{});
  return s;
}

}  // namespace

SteadyState steady_state(const std::vector<metrics::RequestRecord>& records, double window_s,
                         std::vector<double> percentiles) {
  return judge_windows(
      window_s, analysis::time_windows(records, window_options(window_s, std::move(percentiles))));
}

SteadyState steady_state(const std::vector<metrics::RequestRecord>& records,
                         const metrics::TokenRuns& tokens, double window_s,
                         std::vector<double> percentiles) {
  return judge_windows(
      window_s,
      analysis::time_windows(records, tokens, window_options(window_s, std::move(percentiles))));
}

json steady_state_json(const SteadyState& s) {
  json windows = json::array();
  for (const auto& w : s.windows) {
    json j{{"start_s", ns_to_s(w.start_ns)},
           {"end_s", ns_to_s(w.end_ns)},
           {"full", w.full},
           {"sending", w.sending},
           {"completed", w.completed},
           {"failed", w.failed},
           {"output_tokens", w.output_tokens},
           {"output_throughput", number(w.output_throughput)},
           {"request_throughput", number(w.request_throughput)},
           {"mean_in_flight", number(w.mean_in_flight)},
           {"max_in_flight", w.max_in_flight}};
    add_stats(j, "ttft", w.ttft_ms);
    add_stats(j, "itl", w.itl_ms);
    windows.push_back(std::move(j));
  }
  const analysis::StabilityRule rule;
  json out{{"window_s", s.window_s},
           {"windows", std::move(windows)},
           {"stable", s.stability.stable},
           {"stability",
            {{"reason", s.stability.reason},
             {"throughput_spread", number(s.stability.throughput_spread)},
             {"latency_spread", number(s.stability.latency_spread)},
             {"rule",
              {{"windows", rule.windows},
               {"tolerance", rule.tolerance},
               {"throughput", "output_throughput"},
               {"latency",
                fmt::format("p{}_itl_ms", report::percentile_label(rule.latency_percentile))}}}}}};
  out["spikes"] = spikes_json(s.spikes);
  out["batching"] = batching_json(s);
  out["p99_ci"] = tail_cis_json(s.tails);
  return out;
}

std::pair<std::string, std::string> stability_line(const SteadyState& s) {
  return {fmt::format("Stable ({:g} s windows):", s.window_s),
          s.stability.stable ? "yes" : "no: " + s.stability.reason};
}

std::pair<std::string, std::string> spike_line(const SteadyState& s) {
  const analysis::SpikeRule rule;
  std::string value = s.spikes.spikes.empty() ? "none" : std::to_string(s.spikes.spikes.size());
  constexpr std::size_t kListed = 5;  // the results list every one
  for (const auto& sp : s.spikes.spikes) {
    if (&sp - s.spikes.spikes.data() == kListed) {
      value += ", ...";
      break;
    }
    value +=
        fmt::format("{} {} {:.1f}x at {:.1f}-{:.1f} s", &sp == s.spikes.spikes.data() ? ":" : ",",
                    sp.metric == analysis::SpikeMetric::Itl ? "ITL" : "TTFT", sp.ratio,
                    ns_to_s(sp.start_ns), ns_to_s(sp.end_ns));
  }
  return {fmt::format("P{:g} spikes (> {:g}x median window):", rule.percentile, rule.multiple),
          value};
}

std::pair<std::string, std::string> batching_line(const SteadyState& s) {
  if (!s.batching.evaluated)
    return {"", ""};
  return {fmt::format("Batching failure ({}):", s.batching_source),
          (s.batching.fired ? "FIRED: " : "no: ") + s.batching.reason};
}

}  // namespace llmbench::cli
