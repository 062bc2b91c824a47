// The sweep part of the report's embedded data (detail/data_util.hpp `sweep_data`; docs/report.md
// "The sweep view"): each point of a sweep JSON (docs/sweep.md "Output files") with its load, its
// configuration (the values of the axes that are not load axes), its percentiles, its verdicts
// and whether it meets the SLO; the configurations; the x axis; the knees, SLO bounds and
// headlines; and the Pareto frontier of output per GPU against output per user.

#include "llmbench/analysis/slo_search.hpp"
#include "llmbench/report/detail/data_util.hpp"
#include "llmbench/report/run_config.hpp"
#include "llmbench/report/verdicts.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

namespace llmbench::report::detail {

namespace {

using nlohmann::json;

/// The metrics each point carries for the charts: per latency its mean and percentiles (the
/// bands), and the throughputs.
constexpr std::array<std::string_view, 4> kLatencies{"ttft", "tpot", "itl", "e2el"};
constexpr std::array<std::string_view, 4> kStats{"mean", "median", "p90", "p99"};
constexpr std::array<std::string_view, 5> kRates{"output_throughput", "request_throughput",
                                                 "total_token_throughput", "request_goodput",
                                                 "completed"};

/// The load axes of docs/sweep.md ("Knee": the first of them is the x of the knee).
constexpr std::array<std::string_view, 2> kLoadAxes{"max-concurrency", "request-rate"};

bool is_load_axis(const std::string& a) {
  return std::find(kLoadAxes.begin(), kLoadAxes.end(), a) != kLoadAxes.end();
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
      constraints.push_back({{"metric", c.metric},
                             {"op", op_text(c.op)},
                             {"bound", c.bound},
                             {"text", analysis::to_string(c)}});
    }
  }
  return {{"constraints", std::move(constraints)},
          {"axis", it->value("axis", "")},
          {"answer", it->value("answer", json())},
          {"reason", it->value("reason", "")}};
}

/// A configuration's knob text: "max-num-seqs=64 gpu=h100" → "max_num_seqs 64, gpu h100". A
/// sweep over both load axes (`--profile auto`) has two kinds of point, drawn as two lines: the
/// concurrency ladder (every request at once, a closed loop) and the request rates.
std::string config_label(const json& values, const std::vector<std::string>& axes) {
  std::string out;
  const bool both = std::all_of(kLoadAxes.begin(), kLoadAxes.end(), [&](std::string_view a) {
    return std::find(axes.begin(), axes.end(), a) != axes.end();
  });
  if (both) {
    const json rate = values.value("request-rate", json());
    out = rate.is_number() && std::isfinite(rate.get<double>()) ? "request rates"
                                                                : "concurrency ladder";
  }
  for (const auto& a : axes) {
    if (is_load_axis(a) || !values.contains(a))
      continue;
    std::string knob = a;
    std::replace(knob.begin(), knob.end(), '-', '_');
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", knob, value_text(values[a]));
  }
  return out;
}

/// The point's metrics: from its results file when it was read, else from its sweep row.
json point_metrics(const json& row, const json* results, const json& slo) {
  json m = json::object();
  const auto take = [&](const std::string& key) {
    double v = results != nullptr ? number_at(*results, key) : std::nan("");
    if (std::isnan(v))
      v = number_at(row, key);
    m[key] = round6(v);
  };
  for (const auto l : kLatencies) {
    for (const auto s : kStats) take(fmt::format("{}_{}_ms", s, l));
  }
  for (const auto r : kRates) take(std::string(r));
  if (slo.is_object()) {
    for (const auto& c : slo.at("constraints")) take(c.at("metric").get<std::string>());
  }
  return m;
}

/// Which load the chart's x is: the one load axis the sweep has, when every point has a finite
/// number for it; otherwise (a `--profile auto` sweep with both load axes, or a rate of `inf`)
/// the request throughput each point achieved.
std::pair<std::string, std::string> x_axis(const json& doc, const std::vector<std::string>& axes) {
  std::vector<std::string> loads;
  for (const auto& a : axes) {
    if (is_load_axis(a))
      loads.push_back(a);
  }
  bool finite = loads.size() == 1;
  for (const auto& p : doc.at("points")) {
    const json v = p.value("axes", json::object()).value(loads.empty() ? "" : loads[0], json());
    finite = finite && v.is_number() && std::isfinite(v.get<double>());
  }
  if (finite)
    return {loads[0], loads[0]};
  return {"request_throughput", "achieved request throughput (req/s)"};
}

/// `engine` (a configuration line) with the value of each knob the sweep varies replaced by
/// "swept" ("max_num_seqs 32" → "max_num_seqs swept"); a varied knob the line spells otherwise
/// (tp, gpu) is named at the end.
std::string mark_swept(std::string engine, const std::vector<std::string>& axes) {
  std::vector<std::string> other;
  for (const auto& a : axes) {
    if (is_load_axis(a))
      continue;
    std::string knob = a;
    std::replace(knob.begin(), knob.end(), '-', '_');
    const auto at = engine.find(knob + " ");
    if (at == std::string::npos) {
      other.push_back(knob);
      continue;
    }
    const auto value = at + knob.size() + 1;
    engine.replace(value, std::min(engine.find(',', value), engine.size()) - value, "swept");
  }
  if (!other.empty()) {
    std::string names;
    for (const auto& o : other) names += (names.empty() ? "" : ", ") + o;
    engine += "; swept: " + names;
  }
  return engine;
}

/// The GPUs of a point: its configuration's (tp × dp for a simulated engine), else NaN.
double point_gpus(const json* results) {
  if (results == nullptr)
    return std::nan("");
  return run_config(*results).gpus;
}

/// The configuration the sweep's points share: the first loaded point's card lines (a knob the
/// sweep varies reading "swept"; no load or date, which vary), after a "Sweep" line that names
/// the axes and their values.
json config_lines(const SweepData& s, const std::vector<std::string>& axes, std::size_t n_points) {
  // A knob the sweep varies reads "swept" there, not the first point's value.
  const json& doc = s.sweep;
  json lines = json::array();
  if (!s.points.empty()) {
    for (auto l : run_config(s.points.front().results).lines) {
      if (l.key == "load" || l.key == "date")
        continue;
      if (l.key == "engine")
        l.text = mark_swept(l.text, axes);
      lines.push_back({{"key", l.key}, {"label", l.label}, {"text", l.text}});
    }
  }
  std::string swept = doc.contains("profile") ? "--profile auto: a concurrency ladder, then "
                                                "request rates"
                                              : "";
  for (const auto& a : swept.empty() ? doc.at("axes") : json::array()) {
    std::string values;
    for (const auto& v : a.value("values", json::array()))
      values += (values.empty() ? "" : ",") + value_text(v);
    swept += fmt::format(
        "{}{}={}", swept.empty() ? "" : "; ", a.value("name", ""),
        a.contains("search_range") && a["search_range"].is_array() && a["search_range"].size() == 2
            ? fmt::format("{} to {} (SLO search)", value_text(a["search_range"][0]),
                          value_text(a["search_range"][1]))
            : values);
  }
  lines.insert(
      lines.begin(),
      json{{"key", "sweep"},
           {"label", "Sweep"},
           {"text", fmt::format("{} points of {} ({})", n_points, swept, doc.value("mode", ""))}});
  return lines;
}

}  // namespace

json sweep_data(const SweepData& s, std::size_t first_run) {
  const json& doc = s.sweep;
  std::vector<std::string> axes;
  for (const auto& a : doc.at("axes")) axes.push_back(a.is_object() ? a.value("name", "") : "");
  std::string load_axis;
  for (const auto& a : axes) {
    if (load_axis.empty() && is_load_axis(a))
      load_axis = a;
  }
  const auto [x_key, x_label] = x_axis(doc, axes);
  const json slo = slo_json(doc);
  json points = json::array();
  json configs = json::array();
  std::vector<RunVerdict> verdicts;
  for (const auto& p : doc.at("points")) {
    if (!p.is_object())
      continue;
    const auto index = p.value("index", std::size_t{0});
    const auto loaded = std::find(s.point_index.begin(), s.point_index.end(), index);
    const RunData* run = loaded != s.point_index.end()
                             ? &s.points[static_cast<std::size_t>(loaded - s.point_index.begin())]
                             : nullptr;
    const json* results = run != nullptr ? &run->results : nullptr;
    const json values = p.value("axes", json::object());
    const std::string config = config_label(values, axes);
    if (std::find(configs.begin(), configs.end(), json(config)) == configs.end())
      configs.push_back(config);
    json metrics = point_metrics(p, results, slo);
    const double load = x_key == load_axis ? number_at(values, load_axis)
                                           : number_at(metrics, "request_throughput");
    const double search_load = number_at(values, doc.value("/slo_search/axis"_json_pointer, ""));
    verdicts.push_back(run_verdict(results != nullptr ? *results : json::object(), &p));
    const RunVerdict& v = verdicts.back();
    json badges = json::array();
    for (const auto& b : v.badges()) {
      badges.push_back(
          {{"key", b.key}, {"text", b.text}, {"tone", to_string(b.tone)}, {"detail", b.detail}});
    }
    const auto meets = point_meets_slo(doc, metrics, search_load);
    const double gpus = point_gpus(results);
    const double tpot = number_at(metrics, "mean_tpot_ms");
    const std::string status = p.value("status", "");
    std::string load_text;
    for (const auto& a : axes) {
      if (is_load_axis(a) && values.contains(a))
        load_text +=
            fmt::format("{}{} {}", load_text.empty() ? "" : ", ", a, value_text(values[a]));
    }
    points.push_back(
        {{"index", index},
         {"label", point_name(p)},
         {"name", config.empty() ? load_text : std::string(config).append(" · ").append(load_text)},
         {"status", status},
         {"verdict", p.value("verdict", status)},
         {"error", p.value("error", "")},
         {"x", round6(load)},
         {"config", std::find(configs.begin(), configs.end(), json(config)) - configs.begin()},
         {"run", run != nullptr
                     ? json(first_run + static_cast<std::size_t>(loaded - s.point_index.begin()))
                     : json(nullptr)},
         {"valid", v.valid ? json(*v.valid) : json(nullptr)},
         {"steadiness", v.steadiness},
         {"badges", std::move(badges)},
         {"slo", meets ? json(*meets) : json(nullptr)},
         {"slo_broken", broken_constraints(doc, metrics)},
         {"gpus", round6(gpus)},
         {"per_gpu", round6(number_at(metrics, "output_throughput") / (gpus > 0 ? gpus : 1.0))},
         {"interactivity", round6(tpot > 0 ? 1000.0 / tpot : std::nan(""))},
         {"metrics", std::move(metrics)}});
  }
  // The frontier as the sweep computed it (docs/sweep.md "Pareto frontier"), by point index.
  json frontier = json::array();
  for (const auto& f : doc.value("/pareto/points"_json_pointer, json::array()))
    frontier.push_back(f.value("index", 0));
  bool per_gpu_known = !points.empty();
  for (const auto& p : points) per_gpu_known = per_gpu_known && !p.at("gpus").is_null();
  // The configuration the points share: the first loaded point's header, the axes named.
  json lines = config_lines(s, axes, points.size());
  json headlines = json::array();
  for (const auto& h : sweep_headlines(doc, verdicts)) {
    headlines.push_back({{"key", h.key},
                         {"title", h.title},
                         {"text", h.text},
                         {"tone", to_string(h.tone)},
                         {"detail", h.detail}});
  }
  return {{"name", s.name},
          {"source", s.source},
          {"mode", doc.value("mode", "")},
          {"date", doc.value("date", "")},
          {"axes", axes},
          {"load_axis", load_axis.empty() ? json(nullptr) : json(load_axis)},
          {"x", {{"key", x_key}, {"label", x_label}}},
          {"configs", std::move(configs)},
          {"config_lines", std::move(lines)},
          {"headlines", std::move(headlines)},
          {"points", std::move(points)},
          {"knees", doc.contains("knee") && doc["knee"].is_array() ? doc["knee"] : json::array()},
          {"slo", slo},
          {"pareto",
           {{"frontier", std::move(frontier)},
            {"per_gpu_known", per_gpu_known},
            {"y", per_gpu_known ? "output tok/s per GPU" : "output tok/s per server"},
            {"x", "output tok/s per user (1000 / mean TPOT)"}}}};
}

}  // namespace llmbench::report::detail
