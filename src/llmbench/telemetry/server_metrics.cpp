#include "llmbench/telemetry/server_metrics.hpp"

#include "llmbench/core/json_number.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/telemetry/self_monitor.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmbench::telemetry {

namespace {

using nlohmann::json;

json numbers(const std::vector<double>& values) {
  json a = json::array();
  for (const double v : values) a.push_back(finite_or_null(v));
  return a;
}

json stats_json(const SeriesStats& s) {
  return {{"count", s.count},
          {"mean", finite_or_null(s.mean)},
          {"min", finite_or_null(s.min)},
          {"max", finite_or_null(s.max)},
          {"p50", finite_or_null(s.p50)},
          {"p90", finite_or_null(s.p90)},
          {"p99", finite_or_null(s.p99)}};
}

}  // namespace

std::string_view engine_name(Engine engine) noexcept {
  for (const auto& e : kEngineNames) {
    if (e.engine == engine)
      return e.name;
  }
  return "unknown";
}

const ConceptInfo& concept_info(Concept c) noexcept {
  return kConceptNames[static_cast<std::size_t>(c)];
}

Engine detect_engine(const Exposition& exposition) {
  struct Prefix {
    std::string_view text;
    Engine engine;
  };
  constexpr Prefix kPrefixes[] = {{.text = "vllm:", .engine = Engine::Vllm},
                                  {.text = "sglang:", .engine = Engine::Sglang},
                                  {.text = "tgi_", .engine = Engine::Tgi},
                                  {.text = "llamacpp:", .engine = Engine::LlamaCpp}};
  std::array<std::int64_t, std::size(kPrefixes)> counts{};
  for (const auto& s : exposition.samples) {
    if (s.name.rfind("llmbench:", 0) == 0)
      return Engine::Llmbench;
    for (std::size_t i = 0; i < std::size(kPrefixes); ++i) {
      if (s.name.rfind(kPrefixes[i].text, 0) == 0)
        ++counts[i];
    }
  }
  const auto best = std::max_element(counts.begin(), counts.end());
  return *best == 0 ? Engine::Unknown
                    : kPrefixes[static_cast<std::size_t>(best - counts.begin())].engine;
}

ConceptValues map_concepts(const Exposition& exposition) {
  ConceptValues out;
  out.values.fill(std::nan(""));
  for (const auto& m : kMetricMap) {
    const auto c = static_cast<std::size_t>(m.concept_id);
    if (!out.sources[c].empty())
      continue;  // an earlier name of the table already gave this concept
    double sum = 0;
    std::size_t n = 0;
    for (const auto& s : exposition.samples) {
      if (s.name == m.metric && !std::isnan(s.value)) {
        sum += s.value;
        ++n;
      }
    }
    if (n == 0)
      continue;
    out.values[c] = kConceptNames[c].combine == Combine::Mean ? sum / static_cast<double>(n) : sum;
    out.sources[c] = m.metric;
  }
  return out;
}

void ServerMetricsSeries::add(TimeNs t_ns_abs, const Exposition& exposition, TimeNs latency) {
  const std::size_t index = t_ns.size();
  t_ns.push_back(t_ns_abs);
  latency_ns.push_back(latency);
  for (const auto& s : exposition.samples) {
    auto& values = raw[s.series_key()];
    if (values.empty())
      raw_types[s.series_key()] = exposition.type_of(s.name);
    values.resize(index + 1, std::nan(""));
    values[index] = s.value;
  }
  for (auto& [key, values] : raw) values.resize(index + 1, std::nan(""));
  const ConceptValues mapped = map_concepts(exposition);
  for (std::size_t c = 0; c < kConceptCount; ++c) {
    concepts[c].push_back(mapped.values[c]);
    if (!mapped.sources[c].empty())
      concept_sources[c] = std::string(mapped.sources[c]);
  }
  // A since-start ratio of counters: recover its numerator, difference both, and give the
  // concept each interval's mean (NaN on the first scrape or when the denominator did not move).
  for (const auto& rc : kRatioCounters) {
    double ratio = std::nan("");
    double den = std::nan("");
    for (const auto& smp : exposition.samples) {
      if (smp.name == rc.ratio)
        ratio = smp.value;
      else if (smp.name == rc.denominator)
        den = smp.value;
    }
    auto& [nums, dens] = ratio_counters[std::string(rc.ratio)];
    if (std::isnan(ratio) && std::isnan(den) && nums.empty())
      continue;
    nums.resize(index, std::nan(""));
    dens.resize(index, std::nan(""));
    nums.push_back(ratio * den);
    dens.push_back(den);
    const auto c = static_cast<std::size_t>(rc.concept_id);
    double mean = std::nan("");
    if (index > 0 && dens[index] > dens[index - 1])
      mean = (nums[index] - nums[index - 1]) / (dens[index] - dens[index - 1]);
    concepts[c].back() = mean;
    if (!std::isnan(den))
      concept_sources[c] = fmt::format("{} x {}, differenced", rc.ratio, rc.denominator);
  }
  std::erase_if(ratio_counters, [](const auto& kv) { return kv.second.first.empty(); });
  if (engine == Engine::Unknown)
    engine = detect_engine(exposition);
}

bool ServerMetricsSeries::late(std::size_t i) const noexcept {
  return asked_interval_ms > 0 && i < latency_ns.size() &&
         ns_to_ms(latency_ns[i]) > 0.5 * asked_interval_ms;
}

ScrapeTiming scrape_timing(const ServerMetricsSeries& series) {
  ScrapeTiming t{.asked_ms = series.asked_interval_ms};
  std::vector<double> gaps;
  for (std::size_t i = 1; i < series.t_ns.size(); ++i)
    gaps.push_back(ns_to_ms(series.t_ns[i] - series.t_ns[i - 1]));
  std::vector<double> latencies;
  for (std::size_t i = 0; i < series.latency_ns.size(); ++i) {
    latencies.push_back(ns_to_ms(series.latency_ns[i]));
    t.late_scrapes += series.late(i) ? 1 : 0;
  }
  const SeriesStats g = describe_series(gaps);
  t.median_gap_ms = g.p50;
  t.p90_gap_ms = g.p90;
  t.median_latency_ms = describe_series(latencies).p50;
  t.interval_late = t.asked_ms > 0 && t.median_gap_ms > 1.5 * t.asked_ms;
  if (t.interval_late || t.late_scrapes > 0) {
    t.warning = fmt::format(
        "/metrics scrapes ran late: median gap {:.0f} ms for {:.0f} ms asked (p90 {:.0f} ms), "
        "median answer {:.0f} ms; {} of {} scrape(s) answered after half the interval and their "
        "gauges are marked late (left out of the batching rule)",
        t.median_gap_ms, t.asked_ms, t.p90_gap_ms, t.median_latency_ms, t.late_scrapes,
        series.t_ns.size());
  }
  return t;
}

ServerMetricsSummary summarize_server_metrics(const ServerMetricsSeries& series) {
  ServerMetricsSummary out;
  out.engine = series.engine;
  out.scrapes = static_cast<std::int64_t>(series.t_ns.size());
  out.failures = series.failures;
  const double span_s =
      series.t_ns.size() >= 2 ? ns_to_s(series.t_ns.back() - series.t_ns.front()) : 0.0;
  std::array<double, kConceptCount> increases{};
  increases.fill(std::nan(""));
  for (std::size_t c = 0; c < kConceptCount; ++c) {
    if (series.concept_sources[c].empty())
      continue;
    ConceptSummary s{.info = &kConceptNames[c], .source = series.concept_sources[c]};
    const RatioCounter* rc = nullptr;
    for (const auto& r : kRatioCounters) {
      if (static_cast<std::size_t>(r.concept_id) == c &&
          series.ratio_counters.count(std::string(r.ratio)) > 0)
        rc = &r;
    }
    if (rc != nullptr) {
      const auto& [nums, dens] = series.ratio_counters.at(std::string(rc->ratio));
      const double dd = counter_increase(dens);
      s.run_mean = dd > 0 ? counter_increase(nums) / dd : std::nan("");
      s.gauge = describe_series(series.concepts[c]);
    } else if (kConceptNames[c].counter) {
      s.increase = counter_increase(series.concepts[c]);
      s.rate_per_s = span_s > 0 ? s.increase / span_s : std::nan("");
      increases[c] = s.increase;
    } else {
      s.gauge = describe_series(series.concepts[c]);
    }
    out.concepts.push_back(std::move(s));
  }
  auto ratio = [&](Concept num, Concept den) {
    const double d = increases[static_cast<std::size_t>(den)];
    return d > 0 ? increases[static_cast<std::size_t>(num)] / d : std::nan("");
  };
  out.prefix_cache_hit_rate = ratio(Concept::PrefixCacheHits, Concept::PrefixCacheQueries);
  out.spec_decode_acceptance_rate = ratio(Concept::SpecAcceptedTokens, Concept::SpecDraftTokens);
  out.timing = scrape_timing(series);
  return out;
}

json server_metrics_json(const ServerMetricsSeries& series, const ServerMetricsSummary& summary,
                         TimeNs run_start_ns) {
  json t_ms = json::array();
  for (const TimeNs t : series.t_ns) t_ms.push_back(ns_to_ms(t - run_start_ns));
  json mapped = json::object();
  for (std::size_t c = 0; c < kConceptCount; ++c) {
    if (!series.concept_sources[c].empty())
      mapped[std::string(kConceptNames[c].name)] = numbers(series.concepts[c]);
  }
  json raw = json::object();
  json increases = json::object();
  for (const auto& [key, values] : series.raw) {
    raw[key] = numbers(values);
    const auto type = series.raw_types.find(key);
    if (type != series.raw_types.end() && type->second == MetricType::Counter)
      increases[key] = finite_or_null(counter_increase(values));
  }
  json concepts = json::object();
  for (const auto& s : summary.concepts) {
    json j = {{"source", s.source}, {"counter", s.info->counter}};
    if (!std::isnan(s.run_mean)) {
      j.update(stats_json(s.gauge));
      j["mean_over_run"] = finite_or_null(s.run_mean);
    } else if (s.info->counter) {
      j["increase"] = finite_or_null(s.increase);
      j["rate_per_s"] = finite_or_null(s.rate_per_s);
    } else {
      j.update(stats_json(s.gauge));
    }
    concepts[std::string(s.info->name)] = j;
  }
  json late = json::array();
  for (std::size_t i = 0; i < series.t_ns.size(); ++i) late.push_back(series.late(i));
  const ScrapeTiming& tm = summary.timing;
  return {{"engine", engine_name(summary.engine)},
          {"timing",
           {{"asked_interval_ms", tm.asked_ms},
            {"median_gap_ms", finite_or_null(tm.median_gap_ms)},
            {"p90_gap_ms", finite_or_null(tm.p90_gap_ms)},
            {"median_latency_ms", finite_or_null(tm.median_latency_ms)},
            {"late_scrapes", tm.late_scrapes},
            {"interval_late", tm.interval_late},
            {"warning", tm.warning}}},
          {"late", late},
          {"scrapes", summary.scrapes},
          {"failures", summary.failures},
          {"last_error", series.last_error},
          {"t_ms", t_ms},
          {"series", mapped},
          {"raw", raw},
          {"counter_increases", increases},
          {"summary",
           {{"concepts", concepts},
            {"prefix_cache_hit_rate", finite_or_null(summary.prefix_cache_hit_rate)},
            {"spec_decode_acceptance_rate", finite_or_null(summary.spec_decode_acceptance_rate)}}}};
}

// ---- sampler ----

ServerMetricsSampler::ServerMetricsSampler(ScrapeOptions options) : options_(std::move(options)) {
  series_.asked_interval_ms = static_cast<double>(options_.interval.count());
}

ServerMetricsSampler::~ServerMetricsSampler() {
  stop();
}

void ServerMetricsSampler::scrape_once() {
  const TimeNs t = steady_now_ns();
  const std::string target = options_.url.path_prefix.empty() ? "/" : options_.url.path_prefix;
  std::string failure;
  try {
    auto [status, body] =
        http::fetch_blocking(options_.url, target, options_.client, options_.timeout);
    if (status != 200) {
      failure = fmt::format("GET {} answered HTTP {}", options_.url_text, status);
    } else if (auto parsed = parse_exposition(body, options_.url_text)) {
      series_.add(t, *parsed, steady_now_ns() - t);
      return;
    } else {
      failure = parsed.error().what();
    }
  } catch (const Exception& e) {
    failure = e.what();
  }
  if (series_.failures == 0)
    log::warn("scraping {}: {} (later failures are counted in the results)", options_.url_text,
              failure);
  ++series_.failures;
  series_.last_error = std::move(failure);
}

void ServerMetricsSampler::start() {
  if (periodic_.running())
    return;
  scrape_once();
  periodic_.start("llmb-telem-scrp", options_.interval, [this] { scrape_once(); });
}

void ServerMetricsSampler::stop() {
  if (periodic_.stop())
    scrape_once();
}

}  // namespace llmbench::telemetry
