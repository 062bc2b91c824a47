#include "llmbench/report/report_data.hpp"

#include "llmbench/analysis/windows.hpp"
#include "llmbench/core/build_info.hpp"
#include "llmbench/metrics/statistics.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/report/detail/data_util.hpp"
#include "llmbench/report/run_config.hpp"
#include "llmbench/report/table_export.hpp"
#include "llmbench/report/verdicts.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace llmbench::report {

namespace detail {

nlohmann::json round6(double x) {
  if (!std::isfinite(x))
    return nullptr;
  return std::stod(fmt::format("{:.6g}", x));
}

double number_at(const nlohmann::json& j, std::string_view key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
}

}  // namespace detail

namespace {

using detail::number_at;
using detail::round6;
using nlohmann::json;

/// The window keys the charts draw (docs/sweep.md "Time windows").
constexpr std::array<std::string_view, 12> kWindowKeys{
    "start_s",        "end_s",         "output_throughput", "request_throughput",
    "mean_in_flight", "max_in_flight", "mean_ttft_ms",      "p50_ttft_ms",
    "p99_ttft_ms",    "mean_itl_ms",   "p50_itl_ms",        "p99_itl_ms"};

void samples_from_detailed(const json& r, RunSamples& s) {
  const auto& errors = r.contains("errors") && r["errors"].is_array() ? r["errors"] : json::array();
  const auto failed = [&](std::size_t i) {
    return i < errors.size() && errors[i].is_string() && !errors[i].get<std::string>().empty();
  };
  const auto seconds = [&](const char* key, std::vector<double>& out) {
    if (!r.contains(key) || !r[key].is_array())
      return;
    for (std::size_t i = 0; i < r[key].size(); ++i) {
      if (r[key][i].is_number() && !failed(i))
        out.push_back(r[key][i].get<double>() * 1000.0);
    }
  };
  seconds("ttfts", s.ttft_ms);
  seconds("tpots", s.tpot_ms);
  seconds("e2els", s.e2el_ms);
  if (r.contains("itls") && r["itls"].is_array()) {
    for (std::size_t i = 0; i < r["itls"].size(); ++i) {
      if (!r["itls"][i].is_array() || failed(i))
        continue;
      for (const auto& v : r["itls"][i]) {
        if (v.is_number())
          s.itl_ms.push_back(v.get<double>() * 1000.0);
      }
    }
  }
  const auto counts = [&](const char* key, std::vector<double>& out) {
    if (!r.contains(key) || !r[key].is_array())
      return;
    for (std::size_t i = 0; i < r[key].size(); ++i) {
      if (r[key][i].is_number() && !failed(i))
        out.push_back(r[key][i].get<double>());
    }
  };
  counts("input_lens", s.input_tokens);
  counts("output_lens", s.output_tokens);
}

json cdf_json(const std::vector<double>& values, std::size_t max_points) {
  const Cdf cdf = empirical_cdf(values, max_points);
  json x = json::array();
  json p = json::array();
  for (std::size_t i = 0; i < cdf.x.size(); ++i) {
    x.push_back(round6(cdf.x[i]));
    p.push_back(round6(cdf.p[i]));
  }
  return {{"count", values.size()}, {"x", std::move(x)}, {"p", std::move(p)}};
}

json window_json(const analysis::Window& w) {
  json j{{"start_s", ns_to_s(w.start_ns)},           {"end_s", ns_to_s(w.end_ns)},
         {"output_throughput", w.output_throughput}, {"request_throughput", w.request_throughput},
         {"mean_in_flight", w.mean_in_flight},       {"max_in_flight", w.max_in_flight},
         {"mean_ttft_ms", round6(w.ttft_ms.mean)},   {"mean_itl_ms", round6(w.itl_ms.mean)}};
  for (const auto& [q, v] : w.ttft_ms.percentiles) j[fmt::format("p{:g}_ttft_ms", q)] = round6(v);
  for (const auto& [q, v] : w.itl_ms.percentiles) j[fmt::format("p{:g}_itl_ms", q)] = round6(v);
  return j;
}

/// The results' windows (the keys the charts draw), or windows of 1 s computed from the records
/// for a results file written before windows existed.
json windows_json(const RunData& run, json& notes) {
  json out = json::array();
  if (const auto it = run.results.find("windows"); it != run.results.end() && it->is_array()) {
    for (const auto& w : *it) {
      json j = json::object();
      for (const auto key : kWindowKeys)
        j[std::string(key)] = w.is_object() ? round6(number_at(w, key)) : json();
      out.push_back(std::move(j));
    }
    return out;
  }
  if (!run.records_loaded) {
    notes.push_back("no time windows: the results have none and there are no records");
    return out;
  }
  for (const auto& w :
       analysis::time_windows(run.records, {.width_ns = 1'000'000'000, .percentiles = {50, 99}}))
    out.push_back(window_json(w));
  notes.push_back("time windows (1 s) computed from the records: the results file has none");
  return out;
}

/// Queue (scheduled → sent), time to first token (sent → first chunk) and decode (first chunk →
/// done) of an even sample of the run's sent, non-warm-up requests, in seconds since run start.
json timeline_json(const RunData& run, std::size_t max_requests, json& notes) {
  if (!run.records_loaded) {
    notes.push_back(fmt::format("no per-request timeline: {}", run.records_note));
    return nullptr;
  }
  std::vector<const metrics::RequestRecord*> sent;
  for (const auto& r : run.records) {
    if (!r.warmup && r.sent_ns >= 0)
      sent.push_back(&r);
  }
  std::stable_sort(sent.begin(), sent.end(),
                   [](const auto* a, const auto* b) { return a->scheduled_ns < b->scheduled_ns; });
  const auto seconds = [](TimeNs ns) {
    return ns >= 0 ? json(std::round(ns_to_s(ns) * 1e6) / 1e6) : json(nullptr);
  };
  json scheduled = json::array();
  json sent_s = json::array();
  json first = json::array();
  json done = json::array();
  json ok = json::array();
  const auto picks = even_sample(sent.size(), max_requests);
  for (const std::size_t i : picks) {
    const auto& r = *sent[i];
    scheduled.push_back(seconds(r.scheduled_ns >= 0 ? r.scheduled_ns : r.sent_ns));
    sent_s.push_back(seconds(r.sent_ns));
    first.push_back(r.ok() && !r.chunks.empty() ? seconds(r.chunks.front().time_ns) : json());
    done.push_back(seconds(r.done_ns >= 0 ? r.done_ns : r.sent_ns));
    ok.push_back(r.ok() ? 1 : 0);
  }
  if (picks.size() < sent.size()) {
    notes.push_back(fmt::format("the timeline shows an even sample of {} of {} requests",
                                picks.size(), sent.size()));
  }
  return {
      {"total", sent.size()},      {"shown", picks.size()},     {"scheduled", std::move(scheduled)},
      {"sent", std::move(sent_s)}, {"first", std::move(first)}, {"done", std::move(done)},
      {"ok", std::move(ok)}};
}

json config_json(const RunConfig& c) {
  json lines = json::array();
  for (const auto& l : c.lines)
    lines.push_back({{"key", l.key}, {"label", l.label}, {"text", l.text}});
  return {{"lines", std::move(lines)}, {"gpus", round6(c.gpus)}};
}

json verdict_json(const json& results, const json* point) {
  const RunVerdict v = run_verdict(results, point);
  json badges = json::array();
  for (const auto& b : v.badges()) {
    badges.push_back(
        {{"key", b.key}, {"text", b.text}, {"tone", to_string(b.tone)}, {"detail", b.detail}});
  }
  json headlines = json::array();
  for (const auto& h : run_headlines(results, v)) {
    headlines.push_back({{"key", h.key},
                         {"title", h.title},
                         {"text", h.text},
                         {"tone", to_string(h.tone)},
                         {"detail", h.detail}});
  }
  return {{"badges", std::move(badges)}, {"headlines", std::move(headlines)}};
}

/// The first and the last send of the run's measured requests, seconds since run start: the
/// period the load was applied (after it, the drain). From the records, else from the windows
/// that were `sending`; null when neither says.
json load_span_json(const RunData& run) {
  TimeNs first = -1;
  TimeNs last = -1;
  for (const auto& r : run.records) {
    if (r.warmup || r.sent_ns < 0)
      continue;
    first = first < 0 ? r.sent_ns : std::min(first, r.sent_ns);
    last = std::max(last, r.sent_ns);
  }
  if (first >= 0)
    return {round6(ns_to_s(first)), round6(ns_to_s(last))};
  double lo = std::nan("");
  double hi = std::nan("");
  for (const auto& w : run.results.value("windows", json::array())) {
    if (!w.is_object() || !w.value("sending", false))
      continue;
    lo = std::isnan(lo) ? number_at(w, "start_s") : lo;
    hi = number_at(w, "end_s");
  }
  return std::isnan(lo) ? json(nullptr) : json{round6(lo), round6(hi)};
}

json run_json(const RunData& run, const std::string& group, const json* point, const RunSamples& s,
              const ReportOptions& o) {
  const json& r = run.results;
  const bool simulated = r.value("simulated", false) || r.value("backend", "") == "simulate";
  json notes = json::array();
  if (!run.records_note.empty())
    notes.push_back(run.records_note);
  if (s.source == "none") {
    notes.push_back(
        "no per-request latencies: no records file and no --save-detailed arrays; the "
        "distributions are empty");
  }
  json summary = json::object();
  for (const auto key : kSummaryColumns) summary[std::string(key)] = round6(number_at(r, key));
  json sim = nullptr;
  if (const auto it = r.find("sim_timeline"); it != r.end() && it->is_array()) {
    sim = *it;
  } else if (simulated) {
    notes.push_back("no engine timeline: the results carry no sim_timeline");
  }
  json windows = windows_json(run, notes);
  json timeline = timeline_json(run, o.max_timeline_requests, notes);
  json telemetry = detail::telemetry_series(r, notes);
  return {{"name", run.name},
          {"source", run.source},
          {"group", group},
          {"kind", simulated ? "simulate" : "run"},
          {"config", config_json(run_config(r))},
          {"verdict", verdict_json(r, point)},
          {"load_span", load_span_json(run)},
          {"telemetry", std::move(telemetry)},
          {"summary", std::move(summary)},
          {"samples_from", s.source},
          {"cdf",
           {{"ttft", cdf_json(s.ttft_ms, o.max_cdf_points)},
            {"tpot", cdf_json(s.tpot_ms, o.max_cdf_points)},
            {"itl", cdf_json(s.itl_ms, o.max_cdf_points)},
            {"e2el", cdf_json(s.e2el_ms, o.max_cdf_points)}}},
          {"windows", std::move(windows)},
          {"timeline", std::move(timeline)},
          {"sim_timeline", std::move(sim)},
          // Multi-turn runs (docs/workloads.md "Conversations"): the per-turn rows and the
          // prefix-cache finding as the results file has them; null otherwise.
          {"by_turn", r.contains("by_turn") ? r.at("by_turn") : json(nullptr)},
          {"turn_finding", r.contains("turn_finding") ? r.at("turn_finding") : json(nullptr)},
          {"notes", std::move(notes)}};
}

json histogram_json(const std::vector<RunSamples>& all, std::vector<double> RunSamples::*field,
                    const ReportOptions& o, double clip) {
  std::vector<const std::vector<double>*> samples;
  samples.reserve(all.size());
  for (const auto& s : all) samples.push_back(&(s.*field));
  const Histogram h = shared_histogram(samples, o.histogram_bins, clip);
  json edges = json::array();
  for (const double e : h.edges) edges.push_back(round6(e));
  json runs = json::array();
  for (std::size_t i = 0; i < h.fractions.size(); ++i) {
    json f = json::array();
    for (const double v : h.fractions[i]) f.push_back(round6(v));
    runs.push_back({{"fractions", std::move(f)}, {"above", h.above[i]}, {"count", h.counts[i]}});
  }
  return {{"edges", std::move(edges)}, {"clip_percentile", clip}, {"runs", std::move(runs)}};
}

/// The metrics of the change headline of a comparison: key, label, and whether higher is better.
struct DeltaMetric {
  std::string_view key;
  std::string_view label;
  bool higher_is_better;
};
constexpr std::array<DeltaMetric, 6> kDeltaMetrics{{{"output_throughput", "output tok/s", true},
                                                    {"median_ttft_ms", "TTFT p50", false},
                                                    {"p99_ttft_ms", "TTFT p99", false},
                                                    {"median_tpot_ms", "TPOT p50", false},
                                                    {"p99_tpot_ms", "TPOT p99", false},
                                                    {"p99_e2el_ms", "E2EL p99", false}}};

/// Runs given together (not sweep points): the knobs in which they differ, each run's own
/// values of them (set as `differs` on its entry of `run_list`), and per run after the first its
/// change against the first on the metrics of `kDeltaMetrics` (point estimates; `llmbench
/// compare` gives their intervals). A change within 2% is shown plain, otherwise as better or
/// worse. Null for fewer than two runs.
json comparison_json(const std::vector<RunData>& runs, json& run_list) {
  if (runs.size() < 2)
    return nullptr;
  std::vector<RunConfig> configs;
  configs.reserve(runs.size());
  for (const auto& r : runs) configs.push_back(run_config(r.results));
  std::vector<const RunConfig*> ptrs;
  ptrs.reserve(configs.size());
  for (const auto& c : configs) ptrs.push_back(&c);
  const auto diffs = knob_differences(ptrs);
  json knobs = json::array();
  for (const auto& d : diffs) knobs.push_back({{"knob", d.knob}, {"values", d.values}});
  for (std::size_t i = 0; i < runs.size(); ++i) run_list[i]["differs"] = describe_config(diffs, i);
  json changes = json::array();
  for (std::size_t i = 1; i < runs.size(); ++i) {
    json parts = json::array();
    for (const auto& m : kDeltaMetrics) {
      const double a = number_at(runs[0].results, m.key);
      const double b = number_at(runs[i].results, m.key);
      if (!(a > 0) || std::isnan(b))
        continue;
      const double rel = (b - a) / a;
      const bool better = (rel > 0) == m.higher_is_better;
      parts.push_back({{"text", fmt::format("{} {:+.1f}%", m.label, rel * 100)},
                       {"tone", std::fabs(rel) < 0.02 ? "info"
                                : better              ? "good"
                                                      : "bad"}});
    }
    changes.push_back({{"run", i}, {"against", 0}, {"parts", std::move(parts)}});
  }
  return {{"text", describe_differences(diffs)},
          {"knobs", std::move(knobs)},
          {"changes", std::move(changes)}};
}

}  // namespace

RunSamples run_samples(const RunData& run) {
  RunSamples s;
  if (run.records_loaded) {
    s.source = "records";
    for (const auto& r : run.records) {
      if (r.warmup || !r.ok())
        continue;
      const auto lat = metrics::request_latency(r);
      for (const auto& [v, out] :
           {std::pair{lat.ttft_ms, &s.ttft_ms}, std::pair{lat.tpot_ms, &s.tpot_ms},
            std::pair{lat.e2el_ms, &s.e2el_ms}}) {
        if (std::isfinite(v))
          out->push_back(v);
      }
      metrics::append_itl_ms(r, s.itl_ms);
      s.input_tokens.push_back(static_cast<double>(metrics::input_token_count(r)));
      s.output_tokens.push_back(static_cast<double>(metrics::output_token_count(r)));
    }
    return s;
  }
  samples_from_detailed(run.results, s);
  const bool any = !s.ttft_ms.empty() || !s.e2el_ms.empty() || !s.input_tokens.empty();
  s.source = any ? "detailed arrays" : "none";
  return s;
}

Cdf empirical_cdf(std::vector<double> values, std::size_t max_points) {
  values.erase(
      std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
      values.end());
  Cdf cdf;
  if (values.empty())
    return cdf;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const std::size_t k = std::min(n, std::max<std::size_t>(max_points, 2));
  for (std::size_t j = 0; j < k; ++j) {
    // Evenly spaced ranks from the first to the last order statistic (both included).
    const std::size_t i = k == 1 ? n - 1 : (j * (n - 1) + (k - 1) / 2) / (k - 1);
    // Ties: the last of equal values carries the CDF's value there (right-continuous).
    const std::size_t last =
        static_cast<std::size_t>(std::upper_bound(values.begin() + static_cast<std::ptrdiff_t>(i),
                                                  values.end(), values[i]) -
                                 values.begin()) -
        1;
    const double p = static_cast<double>(last + 1) / static_cast<double>(n);
    if (!cdf.x.empty() && cdf.x.back() == values[i])
      continue;
    cdf.x.push_back(values[i]);
    cdf.p.push_back(p);
  }
  return cdf;
}

Histogram shared_histogram(const std::vector<const std::vector<double>*>& samples, std::size_t bins,
                           double clip_percentile) {
  Histogram h;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  for (const auto* s : samples) {
    std::vector<double> sorted;
    for (const double v : *s) {
      if (std::isfinite(v))
        sorted.push_back(v);
    }
    if (sorted.empty())
      continue;
    std::sort(sorted.begin(), sorted.end());
    lo = std::min(lo, sorted.front());
    hi = std::max(hi, metrics::percentile_sorted(sorted, clip_percentile));
  }
  h.fractions.resize(samples.size());
  h.above.assign(samples.size(), 0);
  h.counts.assign(samples.size(), 0);
  if (!std::isfinite(lo))
    return h;
  if (!(hi > lo)) {
    lo -= 0.5;
    hi = lo + 1.0;
    bins = 1;
  }
  bins = std::max<std::size_t>(bins, 1);
  const double width = (hi - lo) / static_cast<double>(bins);
  for (std::size_t i = 0; i <= bins; ++i) h.edges.push_back(lo + width * static_cast<double>(i));
  h.edges.back() = hi;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    std::vector<std::size_t> count(bins, 0);
    for (const double v : *samples[k]) {
      if (!std::isfinite(v))
        continue;
      ++h.counts[k];
      if (v > hi) {
        ++h.above[k];
        continue;
      }
      const auto b = static_cast<std::size_t>((v - lo) / width);
      ++count[std::min(b, bins - 1)];
    }
    for (const std::size_t c : count) {
      h.fractions[k].push_back(
          h.counts[k] > 0 ? static_cast<double>(c) / static_cast<double>(h.counts[k]) : 0.0);
    }
  }
  return h;
}

std::vector<std::size_t> even_sample(std::size_t n, std::size_t max) {
  std::vector<std::size_t> out;
  const std::size_t k = std::min(n, max);
  out.reserve(k);
  for (std::size_t i = 0; i < k; ++i) out.push_back(n <= max ? i : i * n / max);
  return out;
}

namespace {

json report_data_of(const ReportInputs& inputs, const ReportOptions& options) {
  struct Entry {
    const RunData* run;
    std::string group;
    const json* point;  ///< the sweep row of a sweep point, else null
  };
  std::vector<Entry> runs;
  for (const auto& run : inputs.runs) runs.push_back({&run, "", nullptr});
  json sweeps = json::array();
  for (const auto& s : inputs.sweeps) {
    sweeps.push_back(detail::sweep_data(s, runs.size()));
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const json* row = nullptr;
      for (const auto& p : s.sweep.at("points")) {
        if (p.is_object() && p.value("index", std::size_t{0}) == s.point_index[i])
          row = &p;
      }
      runs.push_back({&s.points[i], s.name, row});
    }
  }
  std::vector<RunSamples> samples;
  samples.reserve(runs.size());
  json run_list = json::array();
  for (const auto& e : runs) {
    samples.push_back(run_samples(*e.run));
    run_list.push_back(run_json(*e.run, e.group, e.point, samples.back(), options));
  }
  json histograms{
      {"ttft", histogram_json(samples, &RunSamples::ttft_ms, options, 99)},
      {"tpot", histogram_json(samples, &RunSamples::tpot_ms, options, 99)},
      {"itl", histogram_json(samples, &RunSamples::itl_ms, options, 99)},
      {"e2el", histogram_json(samples, &RunSamples::e2el_ms, options, 99)},
      {"input_tokens", histogram_json(samples, &RunSamples::input_tokens, options, 100)},
      {"output_tokens", histogram_json(samples, &RunSamples::output_tokens, options, 100)}};
  json comparison = comparison_json(inputs.runs, run_list);
  return {{"title", options.title},
          {"generator",
           {{"tool", "llmbench"},
            {"version", std::string(build_info::version())},
            {"git_sha", std::string(build_info::git_sha())}}},
          {"runs", std::move(run_list)},
          {"comparison", std::move(comparison)},
          {"histograms", std::move(histograms)},
          {"sweeps", std::move(sweeps)}};
}

}  // namespace

json report_data(const ReportInputs& inputs, const ReportOptions& options) {
  return detail::reading_files([&] { return report_data_of(inputs, options); });
}

}  // namespace llmbench::report
