#include "llmbench/telemetry/doctor_checks.hpp"

#include "llmbench/core/file.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sys/resource.h>

namespace llmbench::telemetry {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

DoctorCheck line(std::string subject, std::string_view name, CheckStatus status, std::string detail,
                 std::string fix = {}) {
  return DoctorCheck{.subject = std::move(subject),
                     .name = std::string(name),
                     .status = status,
                     .detail = std::move(detail),
                     .fix = std::move(fix)};
}

bool lacks(const GpuHealth& h, std::string_view function) {
  return std::find(h.missing.begin(), h.missing.end(), function) != h.missing.end();
}

/// The N/A line of a check whose NVML function the library lacks.
DoctorCheck missing_line(const std::string& subject, std::string_view name,
                         std::string_view function) {
  return line(subject, name, CheckStatus::NotApplicable,
              fmt::format("this NVML has no {} (an older driver)", function));
}

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty())
      out += sep;
    out += item;
  }
  return out;
}

// ---- GPU ----

DoctorCheck device_line(const GpuHealth& h, const std::string& s) {
  if (h.info.name.empty())
    return line(s, "device", CheckStatus::Fail, "NVML gives no handle or name for this GPU",
                fmt::format("nvidia-smi -q -i {} shows what the driver knows", h.info.index));
  std::string detail = h.info.name;
  if (!std::isnan(h.info.memory_total_bytes))
    detail += fmt::format(", {:.1f} GiB", h.info.memory_total_bytes / kGiB);
  if (!std::isnan(h.now.memory_used_bytes))
    detail += fmt::format(" ({:.1f} GiB in use)", h.now.memory_used_bytes / kGiB);
  return line(s, "device", CheckStatus::Pass, detail);
}

DoctorCheck persistence_line(const GpuHealth& h, const std::string& s) {
  if (lacks(h, "nvmlDeviceGetPersistenceMode"))
    return missing_line(s, "persistence_mode", "nvmlDeviceGetPersistenceMode");
  if (!h.persistence_mode)
    return line(s, "persistence_mode", CheckStatus::NotApplicable, "not supported on this GPU");
  if (*h.persistence_mode)
    return line(s, "persistence_mode", CheckStatus::Pass, "enabled");
  return line(
      s, "persistence_mode", CheckStatus::Warn,
      "disabled: the driver tears the GPU down when its last client exits, so each "
      "start pays the initialization again and clock settings reset",
      fmt::format("sudo nvidia-smi -i {} -pm 1 (or run nvidia-persistenced)", h.info.index));
}

DoctorCheck clocks_line(const GpuHealth& h, const std::string& s) {
  if (lacks(h, "nvmlDeviceGetApplicationsClock"))
    return missing_line(s, "clocks", "nvmlDeviceGetApplicationsClock");
  const double max_sm = h.info.max_sm_clock_mhz;
  const double max_mem = h.info.max_mem_clock_mhz;
  if (std::isnan(h.app_sm_clock_mhz) || std::isnan(max_sm))
    return line(s, "clocks", CheckStatus::NotApplicable,
                "applications clocks not supported on this GPU");
  const std::string now =
      std::isnan(h.now.sm_clock_mhz) ? "" : fmt::format(" (SM now {:g} MHz)", h.now.sm_clock_mhz);
  const bool mem_below =
      !std::isnan(h.app_mem_clock_mhz) && !std::isnan(max_mem) && h.app_mem_clock_mhz < max_mem;
  if (h.app_sm_clock_mhz < max_sm || mem_below)
    return line(s, "clocks", CheckStatus::Warn,
                fmt::format("applications clocks SM {:g} MHz, memory {:g} MHz, below the maximum "
                            "SM {:g} MHz, memory {:g} MHz{}",
                            h.app_sm_clock_mhz, h.app_mem_clock_mhz, max_sm, max_mem, now),
                fmt::format("sudo nvidia-smi -i {} -ac {:g},{:g} (memory,SM), or lock the SM "
                            "clock with nvidia-smi -i {} -lgc {:g}",
                            h.info.index, max_mem, max_sm, h.info.index, max_sm));
  return line(s, "clocks", CheckStatus::Pass,
              fmt::format("applications clocks at the maximum: SM {:g} MHz, memory {:g} MHz{}",
                          max_sm, max_mem, now));
}

/// The reasons that mean the hardware is protecting itself (FAIL); the rest are settings or
/// policy (WARN). NVML API Reference Guide, "NvmlClocksEventReasons".
bool is_hardware_slowdown(std::string_view reason) {
  return reason == "hw_slowdown" || reason == "sw_thermal_slowdown" ||
         reason == "hw_thermal_slowdown" || reason == "hw_power_brake_slowdown";
}

DoctorCheck throttle_line(const GpuHealth& h, const std::string& s) {
  if (!h.now.throttle_reasons)
    return line(s, "throttle", CheckStatus::NotApplicable, "NVML gives no clocks event reasons");
  const auto reasons = decode_throttle_reasons(*h.now.throttle_reasons);
  if (reasons.empty())
    return line(s, "throttle", CheckStatus::Pass, "no clocks event reason active");
  if (reasons == std::vector<std::string>{"gpu_idle"})
    return line(s, "throttle", CheckStatus::Pass, "gpu_idle only (no work running: clocks rest)");
  const std::string clock = std::isnan(h.now.sm_clock_mhz)
                                ? ""
                                : fmt::format(" (SM clock {:g} of {:g} MHz)", h.now.sm_clock_mhz,
                                              h.info.max_sm_clock_mhz);
  const std::string detail = fmt::format("active now: {}{}", join(reasons), clock);
  if (std::any_of(reasons.begin(), reasons.end(), is_hardware_slowdown))
    return line(s, "throttle", CheckStatus::Fail, detail,
                fmt::format("cooling or power delivery is slowing the GPU: nvidia-smi -i {} -q -d "
                            "PERFORMANCE,TEMPERATURE,POWER; benchmark after it clears",
                            h.info.index));
  return line(s, "throttle", CheckStatus::Warn, detail,
              fmt::format("a setting caps the clocks: nvidia-smi -i {} -q -d PERFORMANCE,POWER "
                          "(power limit: -pl; applications clocks: -ac)",
                          h.info.index));
}

DoctorCheck ecc_mode_line(const GpuHealth& h, const std::string& s) {
  if (lacks(h, "nvmlDeviceGetEccMode"))
    return missing_line(s, "ecc_mode", "nvmlDeviceGetEccMode");
  if (!h.ecc_enabled)
    return line(s, "ecc_mode", CheckStatus::NotApplicable, "ECC not supported on this GPU");
  const bool pending = h.ecc_pending.value_or(*h.ecc_enabled);
  if (*h.ecc_enabled && pending)
    return line(s, "ecc_mode", CheckStatus::Pass, "enabled");
  if (*h.ecc_enabled)
    return line(s, "ecc_mode", CheckStatus::Warn, "enabled now, disabled after the next reboot",
                fmt::format("sudo nvidia-smi -i {} -e 1 keeps it on", h.info.index));
  return line(s, "ecc_mode", CheckStatus::Warn,
              pending ? "disabled now, enabled after the next reboot"
                      : "disabled: memory errors go undetected",
              pending ? "reboot (or reset the GPU) to apply it"
                      : fmt::format("sudo nvidia-smi -i {} -e 1, then reboot", h.info.index));
}

DoctorCheck ecc_errors_line(const GpuHealth& h, const std::string& s) {
  const double corr = h.now.ecc_corrected;
  const double uncorr = h.now.ecc_uncorrected;
  if (std::isnan(corr) || std::isnan(uncorr))
    return line(s, "ecc_errors", CheckStatus::NotApplicable,
                "no ECC error counters (ECC off or not supported)");
  std::string detail =
      fmt::format("{:g} corrected, {:g} uncorrected since the driver loaded", corr, uncorr);
  const double life_uncorr = h.ecc_aggregate_uncorrected;
  if (!std::isnan(h.ecc_aggregate_corrected) && !std::isnan(life_uncorr))
    detail += fmt::format("; lifetime {:g} corrected, {:g} uncorrected", h.ecc_aggregate_corrected,
                          life_uncorr);
  const std::string query = fmt::format("nvidia-smi -i {} -q -d ECC,ROW_REMAPPER", h.info.index);
  if (uncorr > 0)
    return line(s, "ecc_errors", CheckStatus::Fail, detail,
                "drain the GPU and check " + query +
                    "; a reset remaps the rows, repeated errors mean a failing board");
  if (corr > 0 || (!std::isnan(life_uncorr) && life_uncorr > 0))
    return line(s, "ecc_errors", CheckStatus::Warn, detail,
                "watch " + query + ": rising counts come before uncorrected errors");
  return line(s, "ecc_errors", CheckStatus::Pass, detail);
}

DoctorCheck mig_line(const GpuHealth& h, const std::string& s) {
  if (!h.info.mig_enabled)
    return line(s, "mig", CheckStatus::NotApplicable, "MIG not supported on this GPU");
  if (!*h.info.mig_enabled)
    return line(s, "mig", CheckStatus::Pass, "disabled (the whole GPU)");
  return line(s, "mig", CheckStatus::Warn, "enabled: CUDA sees MIG slices, not the whole GPU",
              fmt::format("sudo nvidia-smi -i {} -mig 0 (then reset the GPU), unless a slice is "
                          "what you benchmark",
                          h.info.index));
}

DoctorCheck pcie_line(const GpuHealth& h, const std::string& s) {
  const double gen = h.now.pcie_gen;
  const double width = h.now.pcie_width;
  const double max_gen = h.info.max_pcie_gen;
  const double max_width = h.info.max_pcie_width;
  if (std::isnan(gen) || std::isnan(width) || std::isnan(max_gen) || std::isnan(max_width))
    return line(s, "pcie_link", CheckStatus::NotApplicable, "NVML gives no PCIe link state");
  const std::string detail =
      fmt::format("Gen{:g} x{:g}, max Gen{:g} x{:g}", gen, width, max_gen, max_width);
  if (width < max_width)
    return line(s, "pcie_link", CheckStatus::Warn, detail + ": fewer lanes than the link has",
                "check the slot and riser (lspci -vv: LnkSta against LnkCap); reseat the card");
  if (gen < max_gen) {
    const bool idle = h.now.throttle_reasons && (*h.now.throttle_reasons & 0x1U) != 0;
    if (idle)
      return line(s, "pcie_link", CheckStatus::Pass,
                  detail + ": the GPU is idle, and an idle GPU lowers its link speed");
    return line(s, "pcie_link", CheckStatus::Warn, detail + " while busy",
                fmt::format("check under load with nvidia-smi -i {} -q -d PCIE; if it stays "
                            "low, check the BIOS PCIe speed setting and the slot",
                            h.info.index));
  }
  return line(s, "pcie_link", CheckStatus::Pass, detail);
}

DoctorCheck nvlink_line(const GpuHealth& h, const std::string& s, unsigned int gpu_count) {
  if (lacks(h, "nvmlDeviceGetNvLinkState"))
    return missing_line(s, "nvlink", "nvmlDeviceGetNvLinkState");
  if (!h.nvlink_active)
    return line(s, "nvlink", CheckStatus::NotApplicable, "no NVLink on this GPU");
  const auto& links = *h.nvlink_active;
  std::vector<std::string> down;
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (!links[i])
      down.push_back(std::to_string(i));
  }
  const std::size_t up = links.size() - down.size();
  const std::string detail = fmt::format("{} of {} links up", up, links.size());
  if (down.empty())
    return line(s, "nvlink", CheckStatus::Pass, detail);
  const std::string fix = fmt::format(
      "nvidia-smi nvlink -s -i {}; on NVSwitch systems check that nvidia-fabricmanager runs",
      h.info.index);
  if (up == 0 && gpu_count <= 1)
    return line(s, "nvlink", CheckStatus::Pass, detail + " (one GPU visible: none needed)");
  if (up == 0)
    return line(s, "nvlink", CheckStatus::Warn, detail + ": GPU-to-GPU traffic goes over PCIe",
                fix);
  return line(s, "nvlink", CheckStatus::Warn, detail + "; down: " + join(down), fix);
}

DoctorCheck processes_line(const GpuHealth& h, const std::string& s, unsigned int self_pid) {
  if (lacks(h, "nvmlDeviceGetComputeRunningProcesses_v3"))
    return missing_line(s, "gpu_processes", "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!h.processes)
    return line(s, "gpu_processes", CheckStatus::NotApplicable,
                "NVML could not list the processes on this GPU");
  std::vector<std::string> listed;
  for (const auto& p : *h.processes) {
    if (p.pid == self_pid)
      continue;
    listed.push_back(fmt::format("pid {} ({}) {}", p.pid, p.name.empty() ? "?" : p.name,
                                 std::isnan(p.used_bytes)
                                     ? "memory unknown"
                                     : fmt::format("{:.1f} GiB", p.used_bytes / kGiB)));
  }
  if (listed.empty())
    return line(s, "gpu_processes", CheckStatus::Pass, "no process holds GPU memory");
  if (listed.size() == 1)
    return line(s, "gpu_processes", CheckStatus::Pass,
                "one process holds GPU memory (the server under test?): " + listed.front());
  return line(s, "gpu_processes", CheckStatus::Warn,
              fmt::format("{} processes hold GPU memory: {}", listed.size(), join(listed)),
              "stop those that are not the server under test, or give the server a GPU of its "
              "own (CUDA_VISIBLE_DEVICES)");
}

// ---- host ----

std::string limit_text(double v) {
  return std::isinf(v) ? std::string("unlimited") : fmt::format("{:g}", v);
}

}  // namespace

std::string_view check_status_name(CheckStatus status) noexcept {
  for (const auto& n : kCheckStatusNames) {
    if (n.status == status)
      return n.name;
  }
  return "?";
}

std::vector<DoctorCheck> no_nvml_checks(const std::string& why) {
  std::vector<DoctorCheck> out;
  out.push_back(line("nvml", "driver", CheckStatus::NotApplicable, "no NVIDIA driver: " + why));
  out.push_back(line("nvml", "cuda_driver", CheckStatus::NotApplicable, "no NVIDIA driver"));
  for (const auto name : kGpuCheckNames)
    out.push_back(line("gpu", name, CheckStatus::NotApplicable, "no NVIDIA GPU visible"));
  return out;
}

std::vector<DoctorCheck> driver_checks(const std::string& driver_version,
                                       std::optional<int> cuda_driver_version,
                                       unsigned int gpu_count) {
  std::vector<DoctorCheck> out;
  out.push_back(driver_version.empty()
                    ? line("nvml", "driver", CheckStatus::Warn, "the driver gives no version",
                           "nvidia-smi shows the driver version")
                    : line("nvml", "driver", CheckStatus::Pass,
                           fmt::format("driver {}, {} GPU(s)", driver_version, gpu_count)));
  if (cuda_driver_version)
    out.push_back(line("nvml", "cuda_driver", CheckStatus::Pass,
                       fmt::format("supports CUDA {}.{}", *cuda_driver_version / 1000,
                                   (*cuda_driver_version % 1000) / 10)));
  else
    out.push_back(line("nvml", "cuda_driver", CheckStatus::Warn, "the driver gives no CUDA version",
                       "nvidia-smi shows the CUDA version"));
  if (gpu_count == 0)
    out.push_back(line("nvml", "gpus", CheckStatus::Fail, "the driver sees no GPU",
                       "nvidia-smi -L; check CUDA_VISIBLE_DEVICES and the container's --gpus"));
  return out;
}

std::vector<DoctorCheck> gpu_checks(const GpuHealth& h, unsigned int gpu_count,
                                    unsigned int self_pid) {
  const std::string s = fmt::format("gpu{}", h.info.index);
  return {device_line(h, s),
          persistence_line(h, s),
          clocks_line(h, s),
          throttle_line(h, s),
          ecc_mode_line(h, s),
          ecc_errors_line(h, s),
          mig_line(h, s),
          pcie_line(h, s),
          nvlink_line(h, s, gpu_count),
          processes_line(h, s, self_pid)};
}

HostFacts read_host_facts(const std::filesystem::path& root, std::int64_t planned_concurrency,
                          bool concurrency_given) {
  HostFacts f{.planned_concurrency = planned_concurrency, .concurrency_given = concurrency_given};
  std::error_code ec;
  const auto cpu_dir = root / "sys/devices/system/cpu";
  for (std::filesystem::directory_iterator it(cpu_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 4 || name.rfind("cpu", 0) != 0 ||
        !std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    auto text = read_file(it->path() / "cpufreq/scaling_governor", 4096);
    if (!text)
      continue;
    std::string g = *text;
    while (!g.empty() && (g.back() == '\n' || g.back() == ' ')) g.pop_back();
    ++f.governors[g];
  }
  if (auto thp = read_file(root / "sys/kernel/mm/transparent_hugepage/enabled", 4096)) {
    const auto open = thp->find('[');
    const auto close = thp->find(']', open == std::string::npos ? 0 : open);
    if (open != std::string::npos && close != std::string::npos)
      f.transparent_hugepages = thp->substr(open + 1, close - open - 1);
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    const auto as_limit = [](rlim_t v) {
      return v == RLIM_INFINITY ? std::numeric_limits<double>::infinity() : static_cast<double>(v);
    };
    f.open_files_soft = as_limit(limit.rlim_cur);
    f.open_files_hard = as_limit(limit.rlim_max);
  }
  return f;
}

std::vector<DoctorCheck> host_checks(const HostFacts& f) {
  std::vector<DoctorCheck> out;
  int cpus = 0;
  std::vector<std::string> parts;
  for (const auto& [g, n] : f.governors) {
    cpus += n;
    parts.push_back(fmt::format("{} on {}", g, n));
  }
  if (cpus == 0)
    out.push_back(line("host", "cpu_governor", CheckStatus::NotApplicable,
                       "no cpufreq governor (a VM, or a kernel without cpufreq)"));
  else if (f.governors.size() == 1 && f.governors.begin()->first == "performance")
    out.push_back(line("host", "cpu_governor", CheckStatus::Pass,
                       fmt::format("performance on all {} CPUs", cpus)));
  else
    out.push_back(line("host", "cpu_governor", CheckStatus::Warn,
                       fmt::format("{} of {} CPUs: CPUs that change speed make the client's "
                                   "timing jitter",
                                   join(parts), cpus),
                       "sudo cpupower frequency-set -g performance"));
  const std::string& thp = f.transparent_hugepages;
  if (thp.empty())
    out.push_back(line("host", "transparent_hugepages", CheckStatus::NotApplicable,
                       "no /sys/kernel/mm/transparent_hugepage/enabled"));
  else if (thp == "always")
    out.push_back(line("host", "transparent_hugepages", CheckStatus::Warn,
                       "always: khugepaged compaction can stall the server or the client at "
                       "random moments",
                       "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled"));
  else
    out.push_back(line("host", "transparent_hugepages", CheckStatus::Pass, thp));
  const double needed = static_cast<double>(f.planned_concurrency + 128);
  const std::string planned = f.concurrency_given
                                  ? fmt::format("--max-concurrency {}", f.planned_concurrency)
                                  : fmt::format(
                                        "{} requests at once (--max-concurrency not given: the "
                                        "default --num-prompts)",
                                        f.planned_concurrency);
  if (std::isnan(f.open_files_soft) || std::isnan(f.open_files_hard))
    out.push_back(
        line("host", "open_files", CheckStatus::NotApplicable, "getrlimit(RLIMIT_NOFILE) failed"));
  else if (f.open_files_hard < needed)
    out.push_back(
        line("host", "open_files", CheckStatus::Fail,
             fmt::format("hard limit {} below the {:g} needed for {} (+128 spare)",
                         limit_text(f.open_files_hard), needed, planned),
             fmt::format("raise the hard limit to at least {:g}: LimitNOFILE= in the systemd unit, "
                         "nofile in /etc/security/limits.conf, or docker run --ulimit nofile={:g}",
                         needed, needed)));
  else if (f.open_files_soft < needed)
    out.push_back(
        line("host", "open_files", CheckStatus::Pass,
             fmt::format("soft limit {}, hard {}: llmbench run raises the soft limit "
                         "to the hard one, enough for {}",
                         limit_text(f.open_files_soft), limit_text(f.open_files_hard), planned)));
  else
    out.push_back(
        line("host", "open_files", CheckStatus::Pass,
             fmt::format("soft limit {}, enough for {}", limit_text(f.open_files_soft), planned)));
  return out;
}

std::string format_checks_text(const std::vector<DoctorCheck>& checks) {
  std::string out;
  std::array<int, kCheckStatusNames.size()> counts{};
  for (const auto& c : checks) {
    ++counts.at(static_cast<std::size_t>(c.status));
    out +=
        fmt::format("{:<4}  {} {}: {}\n", check_status_name(c.status), c.subject, c.name, c.detail);
    if (!c.fix.empty())
      out += fmt::format("      fix: {}\n", c.fix);
  }
  out += fmt::format("{} PASS, {} WARN, {} FAIL, {} N/A\n", counts[0], counts[1], counts[2],
                     counts[3]);
  return out;
}

nlohmann::json checks_json(const std::vector<DoctorCheck>& checks) {
  nlohmann::json list = nlohmann::json::array();
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& n : kCheckStatusNames) counts[std::string(n.name)] = 0;
  for (const auto& c : checks) {
    const std::string status(check_status_name(c.status));
    list.push_back({{"subject", c.subject},
                    {"name", c.name},
                    {"status", status},
                    {"detail", c.detail},
                    {"fix", c.fix}});
    counts[status] = counts[status].get<int>() + 1;
  }
  return {{"checks", std::move(list)}, {"counts", std::move(counts)}};
}

int doctor_exit_code(const std::vector<DoctorCheck>& checks) noexcept {
  return std::any_of(checks.begin(), checks.end(),
                     [](const DoctorCheck& c) { return c.status == CheckStatus::Fail; })
             ? 1
             : 0;
}

}  // namespace llmbench::telemetry
