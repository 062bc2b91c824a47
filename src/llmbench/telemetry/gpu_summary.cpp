#include "llmbench/telemetry/gpu_summary.hpp"

#include "llmbench/core/json_number.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace llmbench::telemetry {

namespace {

using nlohmann::json;

json stats_json(const SeriesStats& s) {
  return {{"mean", finite_or_null(s.mean)}, {"min", finite_or_null(s.min)},
          {"max", finite_or_null(s.max)},   {"p50", finite_or_null(s.p50)},
          {"p90", finite_or_null(s.p90)},   {"p99", finite_or_null(s.p99)}};
}

/// The values of one field over the samples.
std::vector<double> field(const GpuSeries& series, double GpuSample::*member) {
  std::vector<double> out;
  out.reserve(series.samples.size());
  for (const auto& s : series.samples) out.push_back(s.*member);
  return out;
}

double nan_min(const std::vector<double>& values) {
  double out = kNaN;
  for (const double v : values) {
    if (!std::isnan(v) && (std::isnan(out) || v < out))
      out = v;
  }
  return out;
}

/// The trapezoid rule over (t, P) pairs, in joules; NaN when no pair has two powers.
double integrate_power(const std::vector<GpuSample>& samples) {
  double joules = 0;
  bool any = false;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const double p0 = samples[i - 1].power_w;
    const double p1 = samples[i].power_w;
    if (std::isnan(p0) || std::isnan(p1))
      continue;
    joules += (p0 + p1) / 2 * ns_to_s(samples[i].t_ns - samples[i - 1].t_ns);
    any = true;
  }
  return any ? joules : kNaN;
}

void add_throttle_times(const std::vector<GpuSample>& samples, GpuDeviceSummary& out) {
  for (const auto& r : kThrottleReasons) out.throttled.push_back({.reason = std::string(r.name)});
  const std::uint64_t idle_bit = kThrottleReasons[0].bit;
  for (std::size_t i = 0; i + 1 < samples.size(); ++i) {
    if (!samples[i].throttle_reasons)
      continue;
    const std::uint64_t mask = *samples[i].throttle_reasons;
    const double dt = ns_to_s(samples[i + 1].t_ns - samples[i].t_ns);
    for (std::size_t r = 0; r < kThrottleReasons.size(); ++r) {
      if ((mask & kThrottleReasons[r].bit) != 0)
        out.throttled[r].seconds += dt;
    }
    if ((mask & ~idle_bit) != 0)
      out.throttled_any_except_idle_s += dt;
  }
}

json device_series_json(const GpuSeries& s, TimeNs run_start_ns) {
  json t_ms = json::array();
  json throttle = json::array();
  for (const auto& x : s.samples) {
    t_ms.push_back(ns_to_ms(x.t_ns - run_start_ns));
    throttle.push_back(x.throttle_reasons ? json(*x.throttle_reasons) : json(nullptr));
  }
  json out = {{"t_ms", t_ms}, {"throttle_reasons", throttle}};
  const std::pair<const char*, double GpuSample::*> fields[] = {
      {"memory_used_bytes", &GpuSample::memory_used_bytes},
      {"sm_util_pct", &GpuSample::sm_util_pct},
      {"mem_util_pct", &GpuSample::mem_util_pct},
      {"power_w", &GpuSample::power_w},
      {"energy_j", &GpuSample::energy_j},
      {"sm_clock_mhz", &GpuSample::sm_clock_mhz},
      {"mem_clock_mhz", &GpuSample::mem_clock_mhz},
      {"temperature_c", &GpuSample::temperature_c},
      {"pcie_gen", &GpuSample::pcie_gen},
      {"pcie_width", &GpuSample::pcie_width},
      {"pcie_tx_kbps", &GpuSample::pcie_tx_kbps},
      {"pcie_rx_kbps", &GpuSample::pcie_rx_kbps},
      {"ecc_corrected", &GpuSample::ecc_corrected},
      {"ecc_uncorrected", &GpuSample::ecc_uncorrected},
  };
  for (const auto& [name, member] : fields) {
    json a = json::array();
    for (const auto& x : s.samples) a.push_back(finite_or_null(x.*member));
    out[name] = a;
  }
  return out;
}

json device_summary_json(const GpuDeviceSummary& d) {
  json throttled = json::object();
  for (const auto& t : d.throttled) throttled[t.reason] = t.seconds;
  throttled["any_except_idle"] = d.throttled_any_except_idle_s;
  return {{"samples", d.samples},
          {"span_s", finite_or_null(d.span_s)},
          {"peak_memory_used_bytes", finite_or_null(d.peak_memory_used_bytes)},
          {"power_w", stats_json(d.power_w)},
          {"sm_util_pct", stats_json(d.sm_util_pct)},
          {"mem_util_pct", stats_json(d.mem_util_pct)},
          {"sm_clock_mhz", stats_json(d.sm_clock_mhz)},
          {"mem_clock_mhz", stats_json(d.mem_clock_mhz)},
          {"temperature_c", stats_json(d.temperature_c)},
          {"pcie_tx_kbps", stats_json(d.pcie_tx_kbps)},
          {"pcie_rx_kbps", stats_json(d.pcie_rx_kbps)},
          {"pcie_gen_min", finite_or_null(d.pcie_gen_min)},
          {"pcie_width_min", finite_or_null(d.pcie_width_min)},
          {"energy_counter_j", finite_or_null(d.energy_counter_j)},
          {"energy_integrated_j", finite_or_null(d.energy_integrated_j)},
          {"energy_j", finite_or_null(d.energy_j)},
          {"throttled_s", throttled},
          {"ecc_corrected_increase", finite_or_null(d.ecc_corrected_increase)},
          {"ecc_uncorrected_increase", finite_or_null(d.ecc_uncorrected_increase)}};
}

json info_json(const GpuDeviceInfo& i) {
  return {{"index", i.index},
          {"name", i.name},
          {"memory_total_bytes", finite_or_null(i.memory_total_bytes)},
          {"max_sm_clock_mhz", finite_or_null(i.max_sm_clock_mhz)},
          {"max_mem_clock_mhz", finite_or_null(i.max_mem_clock_mhz)},
          {"max_pcie_gen", finite_or_null(i.max_pcie_gen)},
          {"max_pcie_width", finite_or_null(i.max_pcie_width)},
          {"mig_enabled", i.mig_enabled ? json(*i.mig_enabled) : json(nullptr)}};
}

}  // namespace

GpuDeviceSummary summarize_gpu(const GpuSeries& series) {
  GpuDeviceSummary d{.info = series.info, .samples = series.samples.size()};
  const auto& samples = series.samples;
  if (samples.size() >= 2)
    d.span_s = ns_to_s(samples.back().t_ns - samples.front().t_ns);
  d.peak_memory_used_bytes = describe_series(field(series, &GpuSample::memory_used_bytes)).max;
  d.power_w = describe_series(field(series, &GpuSample::power_w));
  d.sm_util_pct = describe_series(field(series, &GpuSample::sm_util_pct));
  d.mem_util_pct = describe_series(field(series, &GpuSample::mem_util_pct));
  d.sm_clock_mhz = describe_series(field(series, &GpuSample::sm_clock_mhz));
  d.mem_clock_mhz = describe_series(field(series, &GpuSample::mem_clock_mhz));
  d.temperature_c = describe_series(field(series, &GpuSample::temperature_c));
  d.pcie_tx_kbps = describe_series(field(series, &GpuSample::pcie_tx_kbps));
  d.pcie_rx_kbps = describe_series(field(series, &GpuSample::pcie_rx_kbps));
  d.pcie_gen_min = nan_min(field(series, &GpuSample::pcie_gen));
  d.pcie_width_min = nan_min(field(series, &GpuSample::pcie_width));
  d.energy_counter_j = counter_increase(field(series, &GpuSample::energy_j));
  d.energy_integrated_j = integrate_power(samples);
  d.energy_j = std::isnan(d.energy_counter_j) ? d.energy_integrated_j : d.energy_counter_j;
  add_throttle_times(samples, d);
  d.ecc_corrected_increase = counter_increase(field(series, &GpuSample::ecc_corrected));
  d.ecc_uncorrected_increase = counter_increase(field(series, &GpuSample::ecc_uncorrected));
  return d;
}

GpuTelemetrySummary summarize_gpus(const std::vector<GpuSeries>& series,
                                   std::int64_t output_tokens) {
  GpuTelemetrySummary out{.output_tokens = output_tokens};
  for (const auto& s : series) {
    out.devices.push_back(summarize_gpu(s));
    const double e = out.devices.back().energy_j;
    if (!std::isnan(e))
      out.energy_j = std::isnan(out.energy_j) ? e : out.energy_j + e;
  }
  if (output_tokens > 0)
    out.joules_per_output_token = out.energy_j / static_cast<double>(output_tokens);
  return out;
}

json gpu_telemetry_json(const GpuSampler& sampler, const GpuTelemetrySummary& summary,
                        TimeNs run_start_ns) {
  json devices = json::array();
  for (std::size_t i = 0; i < sampler.series().size(); ++i) {
    const auto& s = sampler.series()[i];
    devices.push_back(
        {{"info", info_json(s.info)},
         {"series", device_series_json(s, run_start_ns)},
         {"summary",
          i < summary.devices.size() ? device_summary_json(summary.devices[i]) : json(nullptr)}});
  }
  const auto cuda = sampler.cuda_driver_version();
  return {{"available", sampler.available()},
          {"message", sampler.message()},
          {"notes", sampler.notes()},
          {"library", sampler.options().library_path},
          {"interval_ms", sampler.options().interval.count()},
          {"driver_version", sampler.driver_version()},
          {"cuda_driver_version", cuda ? json(*cuda) : json(nullptr)},
          {"devices", devices},
          {"energy_j", finite_or_null(summary.energy_j)},
          {"output_tokens", summary.output_tokens},
          {"joules_per_output_token", finite_or_null(summary.joules_per_output_token)}};
}

}  // namespace llmbench::telemetry
