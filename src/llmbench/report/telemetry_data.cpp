// The server-metrics and GPU series of a run for the report's charts (detail/data_util.hpp
// `telemetry_series`; docs/report.md "Over time"): read from the results' `telemetry`
// (docs/telemetry.md), on the run's clock (seconds since run start, the zero of the records and
// the time windows), so they line up with the load.

#include "llmbench/report/detail/data_util.hpp"

#include <fmt/core.h>

#include <cmath>
#include <string>
#include <string_view>

namespace llmbench::report::detail {

namespace {

using nlohmann::json;

/// A gauge of the server's `/metrics` drawn as it is (docs/telemetry.md "Server metrics").
struct GaugeSeries {
  std::string_view concept_name;
  std::string_view label;
  double scale;
};
constexpr GaugeSeries kGauges[] = {{"running", "running", 1},
                                   {"waiting", "waiting", 1},
                                   {"batch_size", "batch size", 1},
                                   {"kv_cache_usage", "KV-cache usage", 100},
                                   {"prefix_cache_hit_rate", "prefix-cache hit rate", 100}};

/// A counter drawn as its rate between consecutive scrapes.
struct CounterSeries {
  std::string_view concept_name;
  std::string_view label;
};
constexpr CounterSeries kCounters[] = {{"generation_tokens", "server generation tok/s"},
                                       {"prompt_tokens", "server prompt tok/s"},
                                       {"preemptions", "preemptions/s"}};

json seconds_of(const json& t_ms) {
  json out = json::array();
  for (const auto& t : t_ms) out.push_back(t.is_number() ? round6(t.get<double>() / 1000) : json());
  return out;
}

json scaled(const json& values, double scale) {
  json out = json::array();
  for (const auto& v : values)
    out.push_back(v.is_number() ? round6(v.get<double>() * scale) : json());
  return out;
}

/// The rise of a counter between scrapes over their time: the rate in each interval, at the
/// interval's end (null at the first scrape). A drop is a reset, the new value all rise
/// (Prometheus's `increase()` rule, as docs/telemetry.md counts counters).
json rates(const json& values, const json& t_ms) {
  json out = json::array();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == 0 || i >= t_ms.size() || !values[i].is_number() || !values[i - 1].is_number() ||
        !t_ms[i].is_number() || !t_ms[i - 1].is_number()) {
      out.push_back(nullptr);
      continue;
    }
    const double v = values[i].get<double>();
    const double before = values[i - 1].get<double>();
    const double dt = (t_ms[i].get<double>() - t_ms[i - 1].get<double>()) / 1000;
    out.push_back(dt > 0 ? round6((v >= before ? v - before : v) / dt) : json());
  }
  return out;
}

json server_json(const json& sm) {
  const json t_ms = sm.value("t_ms", json::array());
  const json series = sm.value("series", json::object());
  json out = json::array();
  for (const auto& g : kGauges) {
    const auto it = series.find(g.concept_name);
    if (it != series.end() && it->is_array())
      out.push_back(
          {{"key", g.concept_name}, {"label", g.label}, {"values", scaled(*it, g.scale)}});
  }
  for (const auto& c : kCounters) {
    const auto it = series.find(c.concept_name);
    if (it != series.end() && it->is_array())
      out.push_back({{"key", c.concept_name}, {"label", c.label}, {"values", rates(*it, t_ms)}});
  }
  return {{"engine", sm.value("engine", "")},
          {"scrapes", sm.value("scrapes", 0)},
          {"failures", sm.value("failures", 0)},
          {"t_s", seconds_of(t_ms)},
          {"series", std::move(out)}};
}

json gpu_json(const json& gpu) {
  json devices = json::array();
  for (const auto& d : gpu.value("devices", json::array())) {
    const json s = d.value("series", json::object());
    const json info = d.value("info", json::object());
    json device{{"name", fmt::format("gpu{} {}", info.value("index", 0), info.value("name", ""))},
                {"t_s", seconds_of(s.value("t_ms", json::array()))}};
    for (const auto& [key, scale] : {std::pair<const char*, double>{"sm_util_pct", 1},
                                     {"mem_util_pct", 1},
                                     {"power_w", 1},
                                     {"sm_clock_mhz", 1},
                                     {"temperature_c", 1},
                                     {"memory_used_bytes", 1.0 / (1024.0 * 1024 * 1024)}}) {
      device[key == std::string_view("memory_used_bytes") ? "memory_used_gib" : key] =
          scaled(s.value(key, json::array()), scale);
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace

json telemetry_series(const json& results, json& notes) {
  const json telemetry = results.value("telemetry", json::object());
  json out{{"server", nullptr}, {"gpus", json::array()}};
  if (!telemetry.is_object())
    return out;
  if (const auto sm = telemetry.find("server_metrics"); sm != telemetry.end() && sm->is_object()) {
    out["server"] = server_json(*sm);
    if (sm->value("failures", 0) > 0) {
      notes.push_back(fmt::format("{} of the server's /metrics scrapes failed ({})",
                                  sm->value("failures", 0), sm->value("last_error", "")));
    }
  }
  if (const auto gpu = telemetry.find("gpu"); gpu != telemetry.end() && gpu->is_object()) {
    if (gpu->value("available", false))
      out["gpus"] = gpu_json(*gpu);
    else
      notes.push_back("no GPU telemetry: " +
                      gpu->value("message", std::string("NVML unavailable")));
  }
  return out;
}

}  // namespace llmbench::report::detail
