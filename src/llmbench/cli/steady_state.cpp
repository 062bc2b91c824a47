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

}  // namespace

void add_window_flag(CLI::App& app, double& window_s) {
  app.add_option("--window-s", window_s,
                 "Seconds per time window in the results (windows, stable): completed, tok/s, "
                 "in flight, TTFT/ITL percentiles per window")
      ->capture_default_str();
}

SteadyState steady_state(const std::vector<metrics::RequestRecord>& records, double window_s,
                         std::vector<double> percentiles) {
  SteadyState s{
      .window_s = window_s,
      .windows = analysis::time_windows(records, window_options(window_s, std::move(percentiles))),
      .stability = {}};
  s.stability = analysis::stability(s.windows, analysis::StabilityRule{});
  return s;
}

SteadyState steady_state(const std::vector<metrics::RequestRecord>& records,
                         const metrics::TokenRuns& tokens, double window_s,
                         std::vector<double> percentiles) {
  SteadyState s{.window_s = window_s,
                .windows = analysis::time_windows(records, tokens,
                                                  window_options(window_s, std::move(percentiles))),
                .stability = {}};
  s.stability = analysis::stability(s.windows, analysis::StabilityRule{});
  return s;
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
  return {{"window_s", s.window_s},
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
}

std::pair<std::string, std::string> stability_line(const SteadyState& s) {
  return {fmt::format("Stable ({:g} s windows):", s.window_s),
          s.stability.stable ? "yes" : "no: " + s.stability.reason};
}

}  // namespace llmbench::cli
