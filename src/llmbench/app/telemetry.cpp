#include "llmbench/app/telemetry.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/metrics/record.hpp"

#include <fmt/format.h>

#include <utility>

namespace llmbench::app {

RunTelemetry::RunTelemetry(const TelemetryPlan& plan, const loadgen::LoadOptions& load)
    : self_(telemetry::SelfMonitorOptions{}) {
  if (plan.gpu_interval_ms) {
    gpu_ = std::make_shared<telemetry::GpuSampler>(
        telemetry::NvmlOptions{.library_path = plan.nvml_library,
                               .interval = std::chrono::milliseconds(*plan.gpu_interval_ms),
                               .devices = plan.gpu_devices});
  }
  if (plan.scrape_url) {
    const std::string url = plan.scrape_url->empty()
                                ? load.url.origin() + load.url.path_prefix + "/metrics"
                                : *plan.scrape_url;
    auto parsed = http::parse_url(url);
    if (!parsed)
      throw Exception(Error{parsed.error().what(), "--scrape-metrics", -1});
    http::ClientOptions client = load.client;
    if (parsed->origin() != load.url.origin())
      client.headers.clear();  // the API key and --header values go to the target's origin only
    scraper_ = std::make_unique<telemetry::ServerMetricsSampler>(
        telemetry::ScrapeOptions{.url = *parsed,
                                 .url_text = url,
                                 .interval = std::chrono::milliseconds(plan.scrape_interval_ms),
                                 .client = std::move(client)});
  }
}

void RunTelemetry::start() {
  self_.start();
  if (gpu_)
    gpu_->start();
  if (scraper_)
    scraper_->start();
}

void RunTelemetry::stop() {
  if (scraper_)
    scraper_->stop();
  if (gpu_)
    gpu_->stop();
  self_.stop();
}

RunTelemetryData RunTelemetry::finish(const loadgen::LoadResult& result) {
  RunTelemetryData d{.run_start_ns = result.run_start_steady_ns,
                     .client_options = self_.options(),
                     .client_samples = self_.samples(),
                     .client = telemetry::summarize_self(self_.samples(), self_.options()),
                     .gpu = gpu_,
                     .gpu_summary = std::nullopt,
                     .server_metrics = std::nullopt};
  telemetry::add_event_loop_lag(d.client, result.loop_lag_ms, self_.options());
  telemetry::add_connections(d.client, result.ports_in_use_peak, result.connect_errors);
  if (d.client.client_saturated) {
    log::warn(
        "the client itself came near saturation, so its latencies may include its own "
        "delay: {} (telemetry.client in the results)",
        fmt::join(d.client.reasons, "; "));
  }
  if (d.client.host_contended) {
    log::warn(
        "the host's CPU was taken by others during the run, so latencies may include "
        "their delay: {} (telemetry.client.host_reasons in the results)",
        fmt::join(d.client.host_reasons, "; "));
  }
  if (gpu_) {
    std::int64_t tokens = 0;
    for (const auto& r : result.records) {
      if (r.ok())
        tokens += metrics::output_token_count(r);
    }
    d.gpu_summary = telemetry::summarize_gpus(gpu_->series(), tokens);
  }
  if (scraper_) {
    const auto& series = scraper_->series();
    if (series.failures > 0) {
      log::warn("{} of {} scrapes of {} failed; the last: {}", series.failures,
                series.failures + static_cast<std::int64_t>(series.t_ns.size()),
                scraper_->options().url_text, series.last_error);
    }
    auto summary = telemetry::summarize_server_metrics(series);
    if (!summary.timing.warning.empty())
      log::warn("{}", summary.timing.warning);
    d.server_metrics = ScrapeData{.series = series,
                                  .summary = std::move(summary),
                                  .url = scraper_->options().url_text,
                                  .interval_ms = scraper_->options().interval.count()};
  }
  return d;
}

nlohmann::json RunTelemetryData::to_json() const {
  nlohmann::json j{{"client", telemetry::self_monitor_json(client_samples, client, client_options,
                                                           run_start_ns)},
                   {"client_saturated", client.client_saturated},
                   {"gpu", nullptr},
                   {"server_metrics", nullptr}};
  if (gpu && gpu_summary)
    j["gpu"] = telemetry::gpu_telemetry_json(*gpu, *gpu_summary, run_start_ns);
  if (server_metrics) {
    const auto& s = *server_metrics;
    j["server_metrics"] = telemetry::server_metrics_json(s.series, s.summary, run_start_ns);
    j["server_metrics"]["url"] = s.url;
    j["server_metrics"]["interval_ms"] = s.interval_ms;
  }
  return j;
}

}  // namespace llmbench::app
