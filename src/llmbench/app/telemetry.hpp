#pragma once
/// @file
/// The telemetry of one `run` point (docs/telemetry.md): the client self-monitor always, the
/// GPU sampler with `--gpu-telemetry`, the `/metrics` scraper with `--scrape-metrics`; started
/// right before the load and stopped right after it, so their series bracket the requests, and
/// kept as typed series and summaries (`RunTelemetryData`) that the results JSON's `telemetry`
/// object is written from (times relative to the run's start, as every record's).

#include "llmbench/app/plan.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/telemetry/gpu_summary.hpp"
#include "llmbench/telemetry/nvml.hpp"
#include "llmbench/telemetry/self_monitor.hpp"
#include "llmbench/telemetry/server_metrics.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::app {

/// The `/metrics` scrapes of a run, summarized.
struct ScrapeData {
  telemetry::ServerMetricsSeries series;
  telemetry::ServerMetricsSummary summary;
  std::string url;               ///< as given (or the target's /metrics)
  std::int64_t interval_ms = 0;  ///< `--scrape-interval-ms`
};

/// What the samplers of one run saw, after it: typed, read by the verdicts (the batching rule
/// reads `server_metrics`) and written by `to_json`.
struct RunTelemetryData {
  TimeNs run_start_ns = 0;  ///< absolute steady clock of record time 0
  telemetry::SelfMonitorOptions client_options;
  std::vector<telemetry::SelfSample> client_samples;
  telemetry::SelfMonitorSummary client;
  /// The stopped GPU sampler (its series and device facts); null without `--gpu-telemetry`.
  std::shared_ptr<const telemetry::GpuSampler> gpu;
  std::optional<telemetry::GpuTelemetrySummary> gpu_summary;  ///< set with `gpu`
  std::optional<ScrapeData> server_metrics;                   ///< set with `--scrape-metrics`

  /// The results JSON `telemetry` object: `client`, `client_saturated`, `gpu` (null without
  /// `--gpu-telemetry`), `server_metrics` (null without `--scrape-metrics`).
  [[nodiscard]] nlohmann::json to_json() const;
};

/// The samplers of one run. `start`, `stop`, `finish` from the controlling thread, in order.
class RunTelemetry {
 public:
  /// Builds what `plan` asks for. `load` gives the target (its URL, for the default scrape URL,
  /// and its client options: TLS, and the headers, which are sent only when the scrape URL has
  /// the target's origin, since they hold the API key). Throws `Exception` naming
  /// `--scrape-metrics` for a bad URL, before any request is sent.
  RunTelemetry(const TelemetryPlan& plan, const loadgen::LoadOptions& load);

  /// Starts every sampler (a GPU sampler without NVML says so once and stays off).
  void start();
  /// Stops every sampler (each takes a last sample). Idempotent.
  void stop();
  /// Summarizes the series against the run's clock and output tokens (every completed request
  /// of `result`, warm-ups included, since the energy covers them too), logs a warning when the
  /// client came near saturation or scrapes failed. Call once, after `stop`; the samplers'
  /// series move into the value returned.
  RunTelemetryData finish(const loadgen::LoadResult& result);

 private:
  telemetry::SelfMonitor self_;
  std::shared_ptr<telemetry::GpuSampler> gpu_;
  std::unique_ptr<telemetry::ServerMetricsSampler> scraper_;
};

}  // namespace llmbench::app
