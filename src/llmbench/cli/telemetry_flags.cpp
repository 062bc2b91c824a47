#include "llmbench/cli/telemetry_flags.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <charconv>

namespace llmbench::cli {

void add_telemetry_flags(CLI::App& app, TelemetryFlags& f) {
  app.add_option("--gpu-telemetry", f.gpu_telemetry_ms,
                 "Sample the GPUs through NVML every MS ms during the run (--gpu-telemetry "
                 "alone: 100); without NVIDIA it says so once and the run goes on")
      ->expected(0, 1)
      ->default_str("100")
      ->check(CLI::Range(1, 60'000));
  app.add_option("--gpu-devices", f.gpu_devices,
                 "GPUs to sample by NVML index, e.g. 0,1 (default: all)");
  app.add_option("--nvml-library", f.nvml_library, "The NVML library dlopen opens")
      ->capture_default_str();
  app.add_option("--scrape-metrics", f.scrape_metrics,
                 "Scrape the server's Prometheus metrics during the run (--scrape-metrics alone: "
                 "the target's base URL + /metrics)")
      ->expected(0, 1)
      ->default_str("");
  app.add_option("--scrape-interval-ms", f.scrape_interval_ms, "Milliseconds between scrapes")
      ->capture_default_str()
      ->check(CLI::Range(10, 600'000));
}

nlohmann::json telemetry_flags_json(const TelemetryFlags& f) {
  using nlohmann::json;
  return {{"gpu_telemetry", f.gpu_telemetry_ms ? json(*f.gpu_telemetry_ms) : json(nullptr)},
          {"gpu_devices", f.gpu_devices},
          {"nvml_library", f.nvml_library},
          {"scrape_metrics", f.scrape_metrics ? json(*f.scrape_metrics) : json(nullptr)},
          {"scrape_interval_ms", f.scrape_interval_ms}};
}

std::vector<unsigned int> parse_gpu_devices(const std::string& text) {
  std::vector<unsigned int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::size_t a = start;
    std::size_t b = end;
    while (a < b && text[a] == ' ') ++a;
    while (b > a && text[b - 1] == ' ') --b;
    unsigned int index = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + a, text.data() + b, index);
    if (a == b || ec != std::errc{} || ptr != text.data() + b) {
      throw Exception(Error{
          fmt::format("'{}' is not a GPU index (valid: 0,1,...)", text.substr(start, end - start)),
          "--gpu-devices", static_cast<std::int64_t>(start)});
    }
    out.push_back(index);
    start = end + 1;
  }
  return out;
}

app::TelemetryPlan resolve_telemetry(const TelemetryFlags& f) {
  // The devices are checked even without --gpu-telemetry, so a typo is not silently ignored.
  return app::TelemetryPlan{.gpu_interval_ms = f.gpu_telemetry_ms,
                            .gpu_devices = f.gpu_devices.empty() ? std::vector<unsigned int>{}
                                                                 : parse_gpu_devices(f.gpu_devices),
                            .nvml_library = f.nvml_library,
                            .scrape_url = f.scrape_metrics,
                            .scrape_interval_ms = f.scrape_interval_ms};
}

}  // namespace llmbench::cli
