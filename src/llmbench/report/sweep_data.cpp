// The sweep part of the report's embedded data (detail/data_util.hpp `sweep_data`; docs/report.md
// "Sweeps"): the throughput-latency points of a sweep JSON (docs/sweep.md "Output files"), its
// knees, its SLO bounds and the Pareto frontiers of throughput against p99 TTFT and p99 TPOT.

#include "llmbench/analysis/pareto.hpp"
#include "llmbench/analysis/slo_search.hpp"
#include "llmbench/report/detail/data_util.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

namespace llmbench::report::detail {

namespace {

using nlohmann::json;

/// The metrics each point carries: the sweep JSON row's (docs/sweep.md `kPointMetrics`) that the
/// charts draw.
constexpr std::array<std::string_view, 10> kPointKeys{
    "output_throughput", "request_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms",
    "mean_tpot_ms",      "p99_tpot_ms",        "p99_itl_ms",   "mean_e2el_ms",   "p99_e2el_ms"};

/// The load axes of docs/sweep.md ("Knee": the first of them is the x of the knee).
constexpr std::array<std::string_view, 2> kLoadAxes{"max-concurrency", "request-rate"};

std::string value_text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

json op_text(analysis::SloOp op) {
  for (const auto& o : analysis::kSloOps) {
    if (o.op == op)
      return std::string(o.text);
  }
  return nullptr;
}

/// The SLO constraints of the sweep's search (`slo_search.constraints`, "p99_ttft_ms<=2000").
json slo_json(const json& sweep) {
  const auto it = sweep.find("slo_search");
  if (it == sweep.end() || !it->is_object())
    return nullptr;
  json constraints = json::array();
  for (const auto& text : it->value("constraints", json::array())) {
    if (!text.is_string())
      continue;
    for (const auto& c : analysis::parse_slo_constraints(text.get<std::string>())) {
      constraints.push_back(
          {{"metric", c.metric}, {"op", op_text(c.op)}, {"bound", c.bound}, {"text", text}});
    }
  }
  return {{"constraints", std::move(constraints)},
          {"axis", it->value("axis", "")},
          {"answer", it->value("answer", json())},
          {"reason", it->value("reason", "")}};
}

/// Indices into `points` (those that ran) of the frontier of output_throughput against `cost`.
json pareto_json(const json& points, const char* cost) {
  // Both axes maximized: throughput, and the latency negated.
  std::vector<std::pair<double, double>> candidates;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].value("status", "") != "ok")
      continue;
    candidates.emplace_back(number_at(points[i], "output_throughput"), -number_at(points[i], cost));
    index.push_back(i);
  }
  json out = json::array();
  for (const std::size_t k : analysis::pareto_front(candidates)) out.push_back(index[k]);
  return out;
}

}  // namespace

json sweep_data(const SweepData& s, std::size_t first_run) {
  const json& doc = s.sweep;
  std::vector<std::string> axes;
  for (const auto& a : doc.at("axes")) axes.push_back(a.is_object() ? a.value("name", "") : "");
  std::string load_axis;
  for (const auto& a : axes) {
    if (load_axis.empty() && std::find(kLoadAxes.begin(), kLoadAxes.end(), a) != kLoadAxes.end())
      load_axis = a;
  }
  const json slo = slo_json(doc);
  std::vector<std::string> keys(kPointKeys.begin(), kPointKeys.end());
  if (slo.is_object()) {
    for (const auto& c : slo.at("constraints")) {
      const auto metric = c.at("metric").get<std::string>();
      if (std::find(keys.begin(), keys.end(), metric) == keys.end())
        keys.push_back(metric);
    }
  }
  json points = json::array();
  for (const auto& p : doc.at("points")) {
    if (!p.is_object())
      continue;
    const auto index = p.value("index", std::size_t{0});
    const auto loaded = std::find(s.point_index.begin(), s.point_index.end(), index);
    const json* results =
        loaded != s.point_index.end()
            ? &s.points[static_cast<std::size_t>(loaded - s.point_index.begin())].results
            : nullptr;
    const json values = p.value("axes", json::object());
    std::string group;
    for (const auto& a : axes) {
      if (a != load_axis && values.contains(a))
        group += fmt::format("{}{}={}", group.empty() ? "" : " ", a, value_text(values[a]));
    }
    json metrics = json::object();
    for (const auto& key : keys) {
      double v = results != nullptr ? number_at(*results, key) : std::nan("");
      if (std::isnan(v))
        v = number_at(p, key);
      metrics[key] = round6(v);
    }
    const double load = values.contains(load_axis) && values[load_axis].is_number()
                            ? values[load_axis].get<double>()
                            : std::nan("");
    points.push_back(
        {{"index", index},
         {"label", point_name(p)},
         {"status", p.value("status", "")},
         {"load", round6(load)},
         {"group", group},
         {"run", loaded != s.point_index.end()
                     ? json(first_run + static_cast<std::size_t>(loaded - s.point_index.begin()))
                     : json(nullptr)},
         {"metrics", std::move(metrics)}});
  }
  // pareto_json reads the metrics at the top level of each point.
  json flat = json::array();
  for (const auto& p : points) {
    json f = p.at("metrics");
    f["status"] = p.at("status");
    flat.push_back(std::move(f));
  }
  return {{"name", s.name},
          {"source", s.source},
          {"mode", doc.value("mode", "")},
          {"axes", axes},
          {"load_axis", load_axis.empty() ? json(nullptr) : json(load_axis)},
          {"points", std::move(points)},
          {"knees", doc.contains("knee") && doc["knee"].is_array() ? doc["knee"] : json::array()},
          {"slo", slo},
          {"pareto",
           {{"p99_ttft_ms", pareto_json(flat, "p99_ttft_ms")},
            {"p99_tpot_ms", pareto_json(flat, "p99_tpot_ms")}}}};
}

}  // namespace llmbench::report::detail
