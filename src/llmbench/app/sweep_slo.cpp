#include "llmbench/app/sweep_slo.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/json_number.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmbench::app {

using nlohmann::json;

analysis::ValidityRule with_floors(analysis::ValidityRule rule, const ExtendRule& extend) {
  rule.min_duration_s = std::max(rule.min_duration_s, extend.min_duration_s);
  rule.min_completed = std::max(rule.min_completed, extend.min_requests);
  return rule;
}

analysis::PointFacts point_facts(const RunResult& result) {
  const metrics::Summary& s = result.summary();
  analysis::PointFacts facts{
      .duration_s = s.duration_s, .completed = s.completed, .failed = s.failed, .tails = {}};
  for (const auto& t : result.verdicts().tails) facts.tails.emplace_back(t.metric, t.ci);
  return facts;
}

std::optional<std::int64_t> extension_scale(const RunResult& result,
                                            const analysis::ValidityRule& rule,
                                            const ExtendRule& extend, std::int64_t scale) {
  if (!extend.active() || result.interrupted || scale >= extend.max_scale)
    return std::nullopt;
  const analysis::PointFacts facts = point_facts(result);
  const analysis::Extension need = analysis::needed_to_be_valid(facts, rule);
  if (need.met)
    return std::nullopt;
  double factor = 1;
  if (facts.completed < need.completed) {
    factor = facts.completed == 0
                 ? static_cast<double>(extend.max_scale)
                 : static_cast<double>(need.completed) / static_cast<double>(facts.completed);
  }
  if (facts.duration_s < need.duration_s) {
    factor = std::max(factor, facts.duration_s > 0 ? need.duration_s / facts.duration_s
                                                   : static_cast<double>(extend.max_scale));
  }
  const auto next = static_cast<std::int64_t>(std::ceil(static_cast<double>(scale) * factor * 1.1));
  return std::clamp(next, scale + 1, extend.max_scale);
}

std::string extension_note(std::int64_t scale, std::size_t measurements, std::size_t completed,
                           bool valid) {
  if (scale <= 1 && measurements <= 1)
    return "";
  return fmt::format("extended to {}x the requests in {} measurements ({} completed): {}", scale,
                     measurements, completed, valid ? "valid" : "still invalid at the cap");
}

analysis::SloMeasurement slo_measurement(const RunResult* result,
                                         const std::vector<analysis::SloConstraint>& constraints,
                                         const std::string& results_file) {
  analysis::SloMeasurement m{.metrics = {}, .samples = 0, .ran = result != nullptr};
  if (result == nullptr)
    return m;
  m.samples = result->summary().completed;
  for (const auto& c : constraints) {
    const auto value = result->metric(c.metric);
    if (!value) {
      throw Exception(Error{fmt::format("'{}' is not a number of the results JSON (e.g. "
                                        "p99_ttft_ms, p99_tpot_ms, mean_e2el_ms, "
                                        "output_throughput; see {})",
                                        c.metric, results_file),
                            "--slo", -1});
    }
    m.metrics[c.metric] = *value;
  }
  // What the answer line shows beside the constraints (analysis::slo_answer_lines).
  for (const char* key : {"output_throughput", "request_throughput", "request_goodput",
                          "p99_ttft_ms", "p99_tpot_ms", "p99_itl_ms", "p99_e2el_ms"}) {
    const auto value = result->metric(key);
    if (value && std::isfinite(*value) && m.metrics.count(key) == 0)
      m.metrics[key] = *value;
  }
  m.valid = result->verdicts().validity.valid;
  m.invalid_reasons = result->verdicts().validity.reasons;
  return m;
}

std::vector<SettingSearch> search_settings(const std::vector<std::string>& labels,
                                           const std::vector<json>& knobs,
                                           const std::vector<analysis::SloConstraint>& constraints,
                                           const analysis::SloSearchOptions& options,
                                           const SettingMeasure& measure) {
  std::vector<SettingSearch> out;
  for (std::size_t s = 0; s < labels.size(); ++s) {
    SettingSearch search{.label = labels[s],
                         .knobs = s < knobs.size() ? knobs[s] : json(nullptr),
                         .result = {},
                         .points = {}};
    search.result = analysis::slo_search(
        constraints, options, [&](double load) -> std::optional<analysis::SloMeasurement> {
          auto point = measure(s, load);
          if (!point)
            return std::nullopt;
          search.points.push_back(*point);
          return point->measurement;
        });
    const bool stopped = search.result.stopped;
    out.push_back(std::move(search));
    if (stopped)
      break;
  }
  return out;
}

namespace {

double metric_at_answer(const analysis::SloSearchResult& r, const char* key) {
  if (!r.answer_point)
    return std::nan("");
  const auto& m = r.points[*r.answer_point].measurement.metrics;
  const auto it = m.find(key);
  return it == m.end() ? std::nan("") : it->second;
}

}  // namespace

double throughput_at_answer(const analysis::SloSearchResult& result) {
  return metric_at_answer(result, "output_throughput");
}

const SearchPoint* bounding_point(const SettingSearch& search) {
  const auto& r = search.result;
  const auto at = r.failing_point ? r.failing_point : r.answer_point;
  if (!at || *at >= search.points.size() || !search.points[*at].engine)
    return nullptr;
  return &search.points[*at];
}

std::vector<std::string> slo_bottleneck_lines(const std::vector<SettingSearch>& searches,
                                              std::string_view axis) {
  std::vector<std::string> lines;
  std::vector<analysis::EngineFacts> named;
  for (const auto& s : searches) {
    const SearchPoint* p = bounding_point(s);
    if (p == nullptr)
      continue;
    analysis::EngineFacts facts = *p->engine;
    facts.setting = s.label;
    const auto finding = analysis::name_bottleneck(facts);
    lines.push_back(fmt::format(
        "  {}{}at {}={:g} ({}): {}", s.label, s.label.empty() ? "" : " ", axis, p->measurement.load,
        s.result.failing_point ? "the first load past the answer" : "the answer", finding.reason));
    named.push_back(std::move(facts));
  }
  if (lines.empty())
    return lines;
  lines.insert(lines.begin(), "Bottleneck per setting (the simulated engine's facts):");
  if (named.size() >= 2)
    lines.push_back("  " + analysis::explain_what_if(named.front(), named.back()));
  return lines;
}

std::string binding_constraint(const analysis::SloSearchResult& result) {
  return result.binding.substr(0, result.binding.find(" ("));
}

json slo_search_json(const SettingSearch& search,
                     const std::vector<analysis::SloConstraint>& constraints, std::string_view axis,
                     const analysis::SloSearchOptions& options) {
  const analysis::SloSearchResult& result = search.result;
  std::vector<std::string> names;
  names.reserve(constraints.size());
  for (const auto& c : constraints) names.push_back(analysis::to_string(c));
  json points = json::array();
  for (std::size_t i = 0; i < result.points.size(); ++i) {
    const auto& p = result.points[i];
    json point{{"load", p.load},
               {"meets", p.meets},
               {"margin", finite_or_null(p.margin)},
               {"samples", p.measurement.samples},
               {"ran", p.measurement.ran},
               {"p99_ci", nullptr}};
    if (i < search.points.size()) {
      const SearchPoint& sp = search.points[i];
      point["p99_ci"] = sp.p99_ci;
      point["row"] = sp.row;
      point["scale"] = sp.scale;
      point["measurements"] = sp.measurements;
      point["valid"] = p.measurement.valid;
    }
    points.push_back(std::move(point));
  }
  return {{"constraints", names},
          {"axis", std::string(axis)},
          {"range", {options.lo, options.hi}},
          {"resolution", options.resolution},
          {"max_points", options.max_points},
          {"method",
           "bracket, then regula falsi on the smallest relative constraint margin (failing end "
           "floored at -1, 10% minimum step, bisection after two moves of one end)"},
          {"answer", result.best ? json(*result.best) : json(nullptr)},
          {"first_failing", result.first_failing ? json(*result.first_failing) : json(nullptr)},
          {"converged", result.converged},
          {"stopped", result.stopped},
          {"reason", result.reason},
          {"answer_rounded", result.answer_rounded ? json(*result.answer_rounded) : json(nullptr)},
          {"binding", result.binding},
          {"non_monotonic", result.non_monotonic},
          {"provisional", result.provisional},
          {"provisional_reasons", result.provisional_reasons},
          {"points", points}};
}

namespace {

/// `{load, which, statement}` of a setting's `bounding_point`; null without engine facts.
json setting_bottleneck_json(const SettingSearch& search) {
  const SearchPoint* p = bounding_point(search);
  if (p == nullptr)
    return nullptr;
  const auto finding = analysis::name_bottleneck(*p->engine);
  return {{"load", p->measurement.load},
          {"which", analysis::to_string(finding.which)},
          {"statement", finding.reason}};
}

}  // namespace

json slo_settings_json(const std::vector<SettingSearch>& searches,
                       const std::vector<analysis::SloConstraint>& constraints,
                       std::string_view axis, const analysis::SloSearchOptions& options) {
  json out = json::array();
  for (const auto& s : searches) {
    const auto& r = s.result;
    out.push_back(
        {{"setting", s.label},
         {"knobs", s.knobs},
         {"answer", r.best ? json(*r.best) : json(nullptr)},
         {"answer_rounded", r.answer_rounded ? json(*r.answer_rounded) : json(nullptr)},
         {"binding", r.binding},
         {"binding_constraint", binding_constraint(r)},
         {"output_throughput", finite_or_null(throughput_at_answer(r))},
         {"request_throughput", finite_or_null(metric_at_answer(r, "request_throughput"))},
         {"provisional", r.provisional},
         {"bottleneck", setting_bottleneck_json(s)},
         {"points", r.points.size()},
         {"search", slo_search_json(s, constraints, axis, options)}});
  }
  return out;
}

std::vector<std::string> slo_search_lines(const SettingSearch& search,
                                          const std::vector<analysis::SloConstraint>& constraints,
                                          std::string_view axis) {
  const analysis::SloSearchResult& result = search.result;
  std::vector<std::string> lines = analysis::slo_answer_lines(result, constraints, axis);
  if (!search.label.empty())
    lines.front() = fmt::format("[{}] {}", search.label, lines.front());
  std::string samples;
  for (const auto& p : result.points)
    samples += (samples.empty() ? "" : ", ") + std::to_string(p.measurement.samples);
  lines.push_back(
      fmt::format("  {} point(s), samples per point: {}", result.points.size(), samples));
  for (std::size_t i = 0; i < search.points.size() && i < result.points.size(); ++i) {
    const SearchPoint& sp = search.points[i];
    const std::string note =
        extension_note(sp.scale, sp.measurements, result.points[i].measurement.samples,
                       result.points[i].measurement.valid);
    if (!note.empty())
      lines.push_back(
          fmt::format("  point {} ({}={:g}): {}", sp.row, axis, result.points[i].load, note));
  }
  // How sure the answer is: the p99 interval of each constrained p99 at the answer's point.
  if (!result.answer_point || *result.answer_point >= search.points.size())
    return lines;
  const json& ci = search.points[*result.answer_point].p99_ci;
  for (const auto& c : constraints) {
    const std::string& name = c.metric;
    const bool p99_ms = name.size() > 7 && name.rfind("p99_", 0) == 0 &&
                        name.compare(name.size() - 3, 3, "_ms") == 0;
    const std::string m = p99_ms ? name.substr(4, name.size() - 7) : std::string();
    if (m.empty() || !ci.is_object() || !ci.contains(m))
      continue;
    const json& t = ci.at(m);
    const auto bound = [](const json& v) {
      return v.is_number() ? fmt::format("{:.2f}", v.get<double>()) : std::string("none");
    };
    lines.push_back(fmt::format("  at the answer, {}: {} ms, 95% CI [{}, {}] ms from {} samples{}",
                                name, bound(t.at("p99_ms")), bound(t.at("lower_ms")),
                                bound(t.at("upper_ms")), t.at("n").get<std::size_t>(),
                                t.at("supported").get<bool>() ? "" : " (not supported)"));
  }
  return lines;
}

std::vector<std::string> slo_settings_table(const std::vector<SettingSearch>& searches,
                                            std::string_view axis, std::string_view unit,
                                            double resolution) {
  std::vector<std::string> lines;
  const std::string load_head = fmt::format("highest {}", axis);
  std::size_t width = 7;  // "setting"
  for (const auto& s : searches) width = std::max(width, s.label.size());
  const std::size_t lw = load_head.size();
  lines.push_back(fmt::format("SLO answer per setting (rounded down to the search's {:g}%):",
                              100 * resolution));
  lines.push_back(fmt::format("  {:<{}}  {:>{}}  {:<28}  {:>12}", "setting", width, load_head, lw,
                              "binding constraint", "output tok/s"));
  std::string summary;
  for (const auto& s : searches) {
    const auto& r = s.result;
    const std::string answer =
        r.answer_rounded ? fmt::format("{:g}{}", *r.answer_rounded, r.provisional ? "*" : "")
                         : std::string("none");
    const double t = throughput_at_answer(r);
    lines.push_back(fmt::format("  {:<{}}  {:>{}}  {:<28}  {:>12}", s.label, width, answer, lw,
                                binding_constraint(r).empty() ? "-" : binding_constraint(r),
                                std::isfinite(t) ? fmt::format("{:.1f}", t) : "-"));
    summary +=
        fmt::format("{}{}: {}{}{}", summary.empty() ? "" : "; ", s.label, answer,
                    unit.empty() || !r.answer_rounded ? "" : " ", r.answer_rounded ? unit : "");
  }
  bool provisional = false;
  for (const auto& s : searches) provisional = provisional || s.result.provisional;
  if (provisional)
    lines.emplace_back("  * provisional: the answer rests on an invalid point (see its search)");
  lines.push_back("  " + summary);
  return lines;
}

}  // namespace llmbench::app
