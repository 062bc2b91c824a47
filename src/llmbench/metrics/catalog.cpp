#include "llmbench/metrics/catalog.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmbench::metrics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
constexpr double as_double(T v) {
  return static_cast<double>(v);
}

/// The statistic `stat` ("mean", "median", "std", "min", "max", "p<q>") of `s`; nullopt for an
/// unknown statistic.
std::optional<double> stat_value(const Stats& s, std::string_view stat,
                                 const std::vector<double>& percentiles) {
  if (stat == "mean")
    return s.mean;
  if (stat == "median")
    return s.median;
  if (stat == "std")
    return s.stddev;
  if (stat == "min")
    return s.min;
  if (stat == "max")
    return s.max;
  if (stat.size() < 2 || stat.front() != 'p')
    return std::nullopt;
  if (percentiles.empty()) {
    for (const auto& [p, v] : s.percentiles) {
      if (percentile_label(p) == stat.substr(1))
        return v;
    }
    return std::nullopt;
  }
  for (const double q : percentiles) {
    if (percentile_label(q) != stat.substr(1))
      continue;
    for (const auto& [p, v] : s.percentiles) {
      if (p == q)
        return v;
    }
    return kNaN;
  }
  return std::nullopt;
}

}  // namespace

const std::array<SummaryNumber, 19> kSummaryNumbers{{
    {"duration", "s", [](const Summary& s) { return s.duration_s; }},
    {"completed", "requests", [](const Summary& s) { return as_double(s.completed); }},
    {"total_input_tokens", "tokens",
     [](const Summary& s) { return as_double(s.total_input_tokens); }},
    {"total_output_tokens", "tokens",
     [](const Summary& s) { return as_double(s.total_output_tokens); }},
    {"request_throughput", "req/s", [](const Summary& s) { return s.request_throughput; }},
    {"request_goodput", "req/s", [](const Summary& s) { return s.request_goodput; }},
    {"output_throughput", "tok/s", [](const Summary& s) { return s.output_throughput; }},
    {"total_token_throughput", "tok/s", [](const Summary& s) { return s.total_token_throughput; }},
    {"max_output_tokens_per_s", "tok/s",
     [](const Summary& s) { return s.max_output_tokens_per_s; }},
    {"max_concurrent_requests", "requests",
     [](const Summary& s) { return as_double(s.max_concurrent_requests); }},
    {"total_requests", "requests", [](const Summary& s) { return as_double(s.total); }},
    {"failed", "requests", [](const Summary& s) { return as_double(s.failed); }},
    {"good_requests", "requests", [](const Summary& s) { return as_double(s.good_requests); }},
    {"token_count_mismatches", "requests",
     [](const Summary& s) { return as_double(s.token_count_mismatches); }},
    {"usage_missing", "requests", [](const Summary& s) { return as_double(s.usage_missing); }},
    {"single_chunk_outputs", "requests",
     [](const Summary& s) { return as_double(s.single_chunk_outputs); }},
    {"finished_before_max_tokens", "requests",
     [](const Summary& s) { return as_double(s.finished_before_max_tokens); }},
    {"total_requested_output_tokens", "tokens",
     [](const Summary& s) { return as_double(s.total_requested_output_tokens); }},
    {"requests_with_max_tokens", "requests",
     [](const Summary& s) { return as_double(s.requests_with_max_tokens); }},
}};

const LatencyMetric* find_latency_metric(std::string_view key) noexcept {
  for (const auto& m : kLatencyMetrics) {
    if (m.key == key)
      return &m;
  }
  return nullptr;
}

std::string latency_metric_names() {
  std::string out;
  for (const auto& m : kLatencyMetrics) {
    out += out.empty() ? "" : ", ";
    out += m.key;
  }
  return out;
}

std::string summary_number_names() {
  std::string out;
  for (const auto& n : kSummaryNumbers) {
    out += out.empty() ? "" : ", ";
    out += n.key;
  }
  return out;
}

std::string percentile_label(double q) {
  if (std::isfinite(q) && q == std::floor(q) && std::fabs(q) < 1e15) {
    return fmt::format("{}", static_cast<std::int64_t>(q));
  }
  return fmt::format("{}", q);  // shortest round-trip form, as Python's str(float)
}

std::string latency_key(std::string_view stat, std::string_view metric) {
  return fmt::format("{}_{}_ms", stat, metric);
}

std::string latency_key(double q, std::string_view metric) {
  return fmt::format("p{}_{}_ms", percentile_label(q), metric);
}

std::optional<double> summary_value(const Summary& summary, std::string_view key,
                                    const std::vector<double>& percentiles, bool has_slo) {
  for (const auto& n : kSummaryNumbers) {
    if (n.key == key)
      return n.key == "request_goodput" && !has_slo ? kNaN : n.value(summary);
  }
  // "<stat>_<metric>_ms": the metric may hold '_' itself ("ttft_sched"), the stat never does.
  if (key.size() < 4 || !key.ends_with("_ms"))
    return std::nullopt;
  const std::string_view inner = key.substr(0, key.size() - 3);
  const auto underscore = inner.find('_');
  if (underscore == std::string_view::npos)
    return std::nullopt;
  const LatencyMetric* m = find_latency_metric(inner.substr(underscore + 1));
  if (m == nullptr)
    return std::nullopt;
  return stat_value(summary.*(m->stats), inner.substr(0, underscore), percentiles);
}

}  // namespace llmbench::metrics
