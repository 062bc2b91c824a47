#include "llmbench/cli/run_telemetry.hpp"

#include "llmbench/core/log.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/telemetry/gpu_summary.hpp"

#include <fmt/format.h>

namespace llmbench::cli {

RunTelemetry::RunTelemetry(const TelemetryFlags& f, const loadgen::LoadOptions& load)
    : self_(telemetry::SelfMonitorOptions{}) {
  // Checked even without --gpu-telemetry, so a typo is not silently ignored.
  std::vector<unsigned int> devices;
  if (!f.gpu_devices.empty())
    devices = parse_gpu_devices(f.gpu_devices);
  if (f.gpu_telemetry_ms) {
    gpu_ = std::make_unique<telemetry::GpuSampler>(
        telemetry::NvmlOptions{.library_path = f.nvml_library,
                               .interval = std::chrono::milliseconds(*f.gpu_telemetry_ms),
                               .devices = devices});
  }
  if (f.scrape_metrics) {
    const std::string url = f.scrape_metrics->empty()
                                ? load.url.origin() + load.url.path_prefix + "/metrics"
                                : *f.scrape_metrics;
    auto parsed = http::parse_url(url);
    if (!parsed)
      throw Exception(Error{parsed.error().what(), "--scrape-metrics", -1});
    http::ClientOptions client = load.client;
    if (parsed->origin() != load.url.origin())
      client.headers.clear();  // the API key and --header values go to the target's origin only
    scraper_ = std::make_unique<telemetry::ServerMetricsSampler>(
        telemetry::ScrapeOptions{.url = *parsed,
                                 .url_text = url,
                                 .interval = std::chrono::milliseconds(f.scrape_interval_ms),
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

void RunTelemetry::finish(const loadgen::LoadResult& result) {
  const TimeNs zero = result.run_start_steady_ns;
  auto client = telemetry::summarize_self(self_.samples(), self_.options());
  telemetry::add_event_loop_lag(client, result.loop_lag_ms, self_.options());
  if (client.client_saturated) {
    log::warn(
        "the client itself came near saturation, so its latencies may include its own "
        "delay: {} (telemetry.client in the results)",
        fmt::join(client.reasons, "; "));
  }
  json_ = {{"client", telemetry::self_monitor_json(self_.samples(), client, self_.options(), zero)},
           {"client_saturated", client.client_saturated},
           {"gpu", nullptr},
           {"server_metrics", nullptr}};
  if (gpu_) {
    std::int64_t tokens = 0;
    for (const auto& r : result.records) {
      if (r.ok())
        tokens += metrics::output_token_count(r);
    }
    json_["gpu"] = telemetry::gpu_telemetry_json(
        *gpu_, telemetry::summarize_gpus(gpu_->series(), tokens), zero);
  }
  if (scraper_) {
    const auto& series = scraper_->series();
    if (series.failures > 0) {
      log::warn("{} of {} scrapes of {} failed; the last: {}", series.failures,
                series.failures + static_cast<std::int64_t>(series.t_ns.size()),
                scraper_->options().url_text, series.last_error);
    }
    json_["server_metrics"] =
        telemetry::server_metrics_json(series, telemetry::summarize_server_metrics(series), zero);
    json_["server_metrics"]["url"] = scraper_->options().url_text;
    json_["server_metrics"]["interval_ms"] = scraper_->options().interval.count();
  }
}

}  // namespace llmbench::cli
