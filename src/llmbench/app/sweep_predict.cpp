#include "llmbench/app/sweep_predict.hpp"

#include "llmbench/core/json_number.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace llmbench::app {

using nlohmann::json;

std::vector<std::size_t> rank_settings(const std::vector<double>& scores) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool fa = !std::isnan(scores[a]);
    const bool fb = !std::isnan(scores[b]);
    if (fa != fb)
      return fa;
    return fa && scores[a] > scores[b];
  });
  return order;
}

double relative_error(double predicted, double measured) noexcept {
  if (!std::isfinite(predicted) || !std::isfinite(measured) || measured == 0)
    return std::nan("");
  return (predicted - measured) / std::abs(measured);
}

std::vector<PredictionError> compare_point(const std::string& setting, const std::string& point,
                                           const std::map<std::string, double>& predicted,
                                           const std::map<std::string, double>& measured,
                                           const std::vector<std::string>& metrics) {
  std::vector<PredictionError> out;
  for (const auto& m : metrics) {
    const auto p = predicted.find(m);
    const auto q = measured.find(m);
    if (p == predicted.end() || q == measured.end())
      continue;
    out.push_back({.setting = setting,
                   .point = point,
                   .metric = m,
                   .predicted = p->second,
                   .measured = q->second,
                   .error = relative_error(p->second, q->second)});
  }
  return out;
}

std::vector<RankedSetting> ranked_settings(const std::vector<std::string>& labels,
                                           const std::vector<double>& scores,
                                           std::size_t verify_top, std::vector<std::size_t>& top) {
  const auto order = rank_settings(scores);
  std::vector<RankedSetting> out;
  top.clear();
  for (std::size_t r = 0; r < order.size(); ++r) {
    out.push_back({.label = labels[order[r]],
                   .score = scores[order[r]],
                   .rank = r,
                   .verified = r < verify_top});
    if (r < verify_top)
      top.push_back(order[r]);
  }
  return out;
}

std::vector<PredictionError> compare_slo_answers(const std::string& setting,
                                                 const analysis::SloSearchResult& predicted,
                                                 const analysis::SloSearchResult& measured) {
  const auto at = [](const analysis::SloSearchResult& r) {
    std::map<std::string, double> out;
    if (r.best)
      out["answer"] = *r.best;
    if (r.answer_point) {
      const auto& m = r.points[*r.answer_point].measurement.metrics;
      out.insert(m.begin(), m.end());
    }
    return out;
  };
  std::vector<std::string> keys{"answer"};
  keys.insert(keys.end(), std::begin(kPredictedMetrics), std::end(kPredictedMetrics));
  return compare_point(setting, "at the SLO answer", at(predicted), at(measured), keys);
}

namespace {

/// The worst |error| per metric, in the order the metrics first appear.
std::vector<std::pair<std::string, double>> worst_errors(
    const std::vector<PredictionError>& comparisons) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& c : comparisons) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& w) { return w.first == c.metric; });
    if (it == out.end())
      it = out.insert(out.end(), {c.metric, std::nan("")});
    if (std::isfinite(c.error) && !(std::abs(c.error) <= it->second))
      it->second = std::abs(c.error);
  }
  return out;
}

}  // namespace

json predict_json(const std::string& ranked_by, const std::string& predicted_sweep,
                  const std::string& calibration, std::size_t verify_top,
                  const std::vector<RankedSetting>& settings,
                  const std::vector<PredictionError>& comparisons) {
  json s = json::array();
  for (const auto& r : settings) {
    s.push_back({{"setting", r.label},
                 {"score", finite_or_null(r.score)},
                 {"rank", r.rank},
                 {"verified", r.verified}});
  }
  json c = json::array();
  for (const auto& e : comparisons) {
    c.push_back({{"setting", e.setting},
                 {"point", e.point},
                 {"metric", e.metric},
                 {"predicted", finite_or_null(e.predicted)},
                 {"measured", finite_or_null(e.measured)},
                 {"error", finite_or_null(e.error)}});
  }
  json worst = json::object();
  for (const auto& [metric, w] : worst_errors(comparisons)) worst[metric] = finite_or_null(w);
  return {{"ranked_by", ranked_by},
          {"predicted_sweep", predicted_sweep},
          {"calibration", calibration.empty() ? json(nullptr) : json(calibration)},
          {"verify_top", verify_top},
          {"error_definition", "(predicted - measured) / |measured|"},
          {"settings", std::move(s)},
          {"comparisons", std::move(c)},
          {"max_abs_error", std::move(worst)}};
}

std::vector<std::string> predict_lines(const std::string& ranked_by,
                                       const std::vector<RankedSetting>& settings,
                                       const std::vector<PredictionError>& comparisons) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("Prediction (simulated), settings ranked by {}:", ranked_by));
  for (const auto& r : settings) {
    lines.push_back(fmt::format("  {}. {}: {}{}", r.rank + 1, r.label,
                                std::isfinite(r.score) ? fmt::format("{:.4g}", r.score) : "none",
                                r.verified ? "  (measured)" : ""));
  }
  std::size_t sw = 7;
  std::size_t pw = 5;
  std::size_t mw = 6;
  for (const auto& c : comparisons) {
    sw = std::max(sw, c.setting.size());
    pw = std::max(pw, c.point.size());
    mw = std::max(mw, c.metric.size());
  }
  lines.emplace_back("Predicted against measured (error = (predicted - measured) / measured):");
  lines.push_back(fmt::format("  {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>12}  {:>8}", "setting", sw,
                              "point", pw, "metric", mw, "predicted", "measured", "error"));
  const auto num = [](double v) {
    return std::isfinite(v) ? fmt::format("{:.2f}", v) : std::string("-");
  };
  for (const auto& c : comparisons) {
    lines.push_back(fmt::format(
        "  {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>12}  {:>8}", c.setting, sw, c.point, pw, c.metric, mw,
        num(c.predicted), num(c.measured),
        std::isfinite(c.error) ? fmt::format("{:+.1f}%", 100 * c.error) : std::string("-")));
  }
  std::string worst;
  for (const auto& [metric, w] : worst_errors(comparisons)) {
    worst += fmt::format("{}{} {}", worst.empty() ? "" : ", ", metric,
                         std::isfinite(w) ? fmt::format("{:.1f}%", 100 * w) : "-");
  }
  if (!worst.empty())
    lines.push_back("  worst |error| per metric: " + worst);
  return lines;
}

}  // namespace llmbench::app
