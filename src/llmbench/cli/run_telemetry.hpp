#pragma once
/// @file
/// The telemetry of one `llmbench run` (docs/telemetry.md): the client self-monitor always, the
/// GPU sampler with `--gpu-telemetry`, the `/metrics` scraper with `--scrape-metrics`; started
/// right before the load and stopped right after it, so their series bracket the requests, and
/// summarized into the results JSON's `telemetry` object (times relative to the run's start, as
/// every record's).

#include "llmbench/cli/telemetry_flags.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/telemetry/nvml.hpp"
#include "llmbench/telemetry/self_monitor.hpp"
#include "llmbench/telemetry/server_metrics.hpp"

#include <nlohmann/json.hpp>

#include <memory>

namespace llmbench::cli {

/// The samplers of one run. `start`, `stop`, `finish` from the controlling thread, in order.
class RunTelemetry {
 public:
  /// Builds what `flags` ask for. `load` gives the target (its URL, for the default scrape URL,
  /// and its client options: TLS, and the headers, which are sent only when the scrape URL has
  /// the target's origin, since they hold the API key). Throws `Exception` for a bad
  /// `--gpu-devices` or `--scrape-metrics` URL, before any request is sent.
  RunTelemetry(const TelemetryFlags& flags, const loadgen::LoadOptions& load);

  /// Starts every sampler (a GPU sampler without NVML says so once and stays off).
  void start();
  /// Stops every sampler (each takes a last sample). Idempotent.
  void stop();
  /// Summarizes the series against the run's clock and output tokens (every completed request
  /// of `result`, warm-ups included, since the energy covers them too), logs a warning when the
  /// client came near saturation or scrapes failed, and keeps the `telemetry` JSON for `json()`.
  void finish(const loadgen::LoadResult& result);
  /// The results JSON `telemetry` object: `client`, `gpu` (null without `--gpu-telemetry`),
  /// `server_metrics` (null without `--scrape-metrics`). Null before `finish`.
  [[nodiscard]] const nlohmann::json& json() const noexcept { return json_; }

 private:
  telemetry::SelfMonitor self_;
  std::unique_ptr<telemetry::GpuSampler> gpu_;
  std::unique_ptr<telemetry::ServerMetricsSampler> scraper_;
  nlohmann::json json_;
};

}  // namespace llmbench::cli
