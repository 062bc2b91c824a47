#include "llmbench/calib/predict.hpp"

#include "llmbench/core/rng.hpp"
#include "llmbench/metrics/summary.hpp"
#include "llmbench/sim/slot_cache.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <tuple>

namespace llmbench::calib {

namespace {

double percentile_of(const metrics::Stats& s, double q) {
  for (const auto& [at, value] : s.percentiles) {
    if (at == q)
      return value;
  }
  return kMissing;
}

}  // namespace

std::vector<sim::SimRequest> requests_for(const Workload& w) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(w.num_prompts, 1));
  std::vector<sim::SimRequest> out(n);
  Rng lengths(w.seed, "calibration lengths");
  Rng arrivals(w.seed, "calibration arrivals");
  const bool closed = !(std::isfinite(w.request_rate) && w.request_rate > 0);
  double t_s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sim::SimRequest& r = out[i];
    r.prompt_len =
        i < w.input_lens.size() ? w.input_lens[i] : lengths.uniform_int(w.input_min, w.input_max);
    r.output_len = i < w.output_lens.size() ? w.output_lens[i]
                                            : lengths.uniform_int(w.output_min, w.output_max);
    if (!closed) {
      t_s += -std::log(1.0 - arrivals.uniform01()) / w.request_rate;
      r.arrival_ns = static_cast<TimeNs>(t_s * 1e9);
    }
  }
  return out;
}

void chain_slot_history(std::vector<Point>& points, std::int64_t num_slots) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    points[i].slot_cells_before.clear();
    if (points[i].tags.count("base_url") != 0 && points[i].tags.count("date") != 0)
      order.push_back(i);
  }
  const auto key = [&](std::size_t i) {
    return std::tie(points[i].tags.at("base_url"), points[i].tags.at("date"));
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::optional<sim::SlotCache> slots;
  const std::string* server = nullptr;
  for (const std::size_t i : order) {
    Point& p = points[i];
    if (server == nullptr || *server != p.tags.at("base_url")) {
      slots.emplace(num_slots, std::span<const std::int64_t>{});
      server = &p.tags.at("base_url");
    } else {
      p.slot_cells_before = slots->cells_by_age();
    }
    const auto requests = requests_for(p.workload);
    for (std::size_t r = 0; r < requests.size(); ++r) {
      slots->take(static_cast<std::int64_t>(r));
      slots->release(static_cast<std::int64_t>(r),
                     requests[r].prompt_len + requests[r].output_len - 1);
    }
  }
}

Metrics predict(const sim::EngineSpec& spec, const Point& point) {
  const Workload& w = point.workload;
  sim::SimOptions o;
  o.engine = spec.engine;
  o.engine.initial_slot_cells = point.slot_cells_before;
  o.data_parallel_size = spec.data_parallel_size();
  o.max_concurrency = w.max_concurrency > 0 ? w.max_concurrency : -1;
  o.closed_loop = !(std::isfinite(w.request_rate) && w.request_rate > 0);
  o.expand_chunks = false;
  sim::Simulation simulation(o, spec.make_exec_model());
  const sim::SimResult result = simulation.run(requests_for(w));
  metrics::SummaryOptions so;
  so.percentiles = {50, 99};
  const metrics::Summary s = metrics::summarize(result.records, result.tokens, so);
  const int gpus = point.num_gpus > 0 ? point.num_gpus : spec.memory.tp * spec.memory.dp;
  Metrics m;
  m.ttft_mean_ms = s.ttft_ms.mean;
  m.ttft_median_ms = s.ttft_ms.median;
  m.ttft_p99_ms = percentile_of(s.ttft_ms, 99);
  m.tpot_mean_ms = s.tpot_ms.mean;
  m.tpot_median_ms = s.tpot_ms.median;
  m.tpot_p99_ms = percentile_of(s.tpot_ms, 99);
  m.e2e_mean_s = s.e2el_ms.mean / 1e3;
  m.itl_median_ms = s.itl_ms.median;
  m.output_tok_s_per_gpu = s.output_throughput / gpus;
  m.total_tok_s_per_gpu = s.total_token_throughput / gpus;
  return m;
}

std::string_view to_string(Metric m) noexcept {
  for (const auto& [metric, name] : kMetricNames) {
    if (metric == m)
      return name;
  }
  return "?";
}

double metric_value(const Metrics& x, Metric m) noexcept {
  switch (m) {
    case Metric::TtftMean:
      return x.ttft_mean_ms;
    case Metric::TtftMedian:
      return x.ttft_median_ms;
    case Metric::TtftP99:
      return x.ttft_p99_ms;
    case Metric::Tpot:
      return std::isnan(x.tpot_mean_ms) ? x.tpot_median_ms : x.tpot_mean_ms;
    case Metric::OutputPerGpu:
      return x.output_tok_s_per_gpu;
    case Metric::E2eMean:
      return x.e2e_mean_s;
    case Metric::ItlMedian:
      return x.itl_median_ms;
  }
  return kMissing;
}

double relative_error(double predicted, double measured) noexcept {
  if (std::isnan(predicted) || std::isnan(measured) || measured == 0)
    return kMissing;
  return (predicted - measured) / measured;
}

double mape(const std::vector<PointResult>& results, Metric m, std::size_t* count) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& r : results) {
    const double e =
        relative_error(metric_value(r.predicted, m), metric_value(r.point.measured, m));
    if (std::isnan(e))
      continue;
    sum += std::abs(e);
    ++n;
  }
  if (count != nullptr)
    *count = n;
  return n > 0 ? 100.0 * sum / static_cast<double>(n) : kMissing;
}

}  // namespace llmbench::calib
