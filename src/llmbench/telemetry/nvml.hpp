#pragma once
/// @file
/// What the GPUs were doing during a run, read from NVML. The library is opened at run time with
/// `dlopen` (never linked, so `llmbench` runs on machines without NVIDIA): a missing library
/// gives one message and no sampling; each function is resolved on its own with `dlsym`, and a
/// missing symbol gives one message naming it while the fields it feeds stay NaN and the rest
/// are still sampled. The ABI is described in detail/nvml_abi.hpp (NVML API Reference Guide).
/// Tests load a fake library (tests/unit/telemetry/fake_nvml.cpp) through `NvmlOptions::
/// library_path`. Summary arithmetic: gpu_summary.hpp.

#include "llmbench/core/clock.hpp"
#include "llmbench/telemetry/detail/periodic_thread.hpp"

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace llmbench::telemetry {

/// Why the clocks are below their maximum: the bits of NVML's `nvmlClocksEventReasons` (formerly
/// `nvmlClocksThrottleReasons`; NVML API Reference Guide, section "NvmlClocksEventReasons").
enum class ThrottleReason : std::uint8_t {
  GpuIdle,
  ApplicationsClocksSetting,
  SwPowerCap,
  HwSlowdown,
  SyncBoost,
  SwThermalSlowdown,
  HwThermalSlowdown,
  HwPowerBrakeSlowdown,
  DisplayClockSetting,
};

/// Each reason's bit (the reference's `0x…LL` values) and its results key.
struct ThrottleReasonInfo {
  ThrottleReason reason;
  std::uint64_t bit;
  std::string_view name;
};
inline constexpr std::array<ThrottleReasonInfo, 9> kThrottleReasons{{
    {.reason = ThrottleReason::GpuIdle, .bit = 0x1, .name = "gpu_idle"},
    {.reason = ThrottleReason::ApplicationsClocksSetting,
     .bit = 0x2,
     .name = "applications_clocks_setting"},
    {.reason = ThrottleReason::SwPowerCap, .bit = 0x4, .name = "sw_power_cap"},
    {.reason = ThrottleReason::HwSlowdown, .bit = 0x8, .name = "hw_slowdown"},
    {.reason = ThrottleReason::SyncBoost, .bit = 0x10, .name = "sync_boost"},
    {.reason = ThrottleReason::SwThermalSlowdown, .bit = 0x20, .name = "sw_thermal_slowdown"},
    {.reason = ThrottleReason::HwThermalSlowdown, .bit = 0x40, .name = "hw_thermal_slowdown"},
    {.reason = ThrottleReason::HwPowerBrakeSlowdown,
     .bit = 0x80,
     .name = "hw_power_brake_slowdown"},
    {.reason = ThrottleReason::DisplayClockSetting, .bit = 0x100, .name = "display_clock_setting"},
}};

/// The names of the bits set in `mask`, in table order; bits the table does not know (reasons
/// added by newer drivers) as one "other(0x…)" entry.
[[nodiscard]] std::vector<std::string> decode_throttle_reasons(std::uint64_t mask);

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// One device at one instant. NaN (or nullopt) where the driver gave no value: not supported on
/// this GPU, or the function missing from the library.
struct GpuSample {
  TimeNs t_ns = 0;                  ///< absolute steady clock (the base of `RunClock`)
  double memory_used_bytes = kNaN;  ///< `nvmlDeviceGetMemoryInfo` used
  double sm_util_pct = kNaN;        ///< `nvmlDeviceGetUtilizationRates` gpu
  double mem_util_pct = kNaN;       ///< … memory (memory-controller busy)
  double power_w = kNaN;            ///< `nvmlDeviceGetPowerUsage` mW / 1000
  double energy_j = kNaN;           ///< `nvmlDeviceGetTotalEnergyConsumption` mJ / 1000
  double sm_clock_mhz = kNaN;       ///< `nvmlDeviceGetClockInfo(NVML_CLOCK_SM)`
  double mem_clock_mhz = kNaN;      ///< `nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)`
  double temperature_c = kNaN;      ///< `nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)`
  double pcie_gen = kNaN;           ///< `nvmlDeviceGetCurrPcieLinkGeneration`
  double pcie_width = kNaN;         ///< `nvmlDeviceGetCurrPcieLinkWidth` (lanes)
  double pcie_tx_kbps = kNaN;       ///< `nvmlDeviceGetPcieThroughput(TX)` KB/s
  double pcie_rx_kbps = kNaN;       ///< `nvmlDeviceGetPcieThroughput(RX)` KB/s
  double ecc_corrected = kNaN;      ///< `nvmlDeviceGetTotalEccErrors` corrected, volatile
  double ecc_uncorrected = kNaN;    ///< … uncorrected, volatile
  std::optional<std::uint64_t> throttle_reasons{};  ///< the event-reason mask
};

/// What does not change during a run, read once per device.
struct GpuDeviceInfo {
  unsigned int index = 0;
  std::string name{};
  double memory_total_bytes = kNaN;
  double max_sm_clock_mhz = kNaN;     ///< `nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)`
  double max_mem_clock_mhz = kNaN;    ///< `nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)`
  double max_pcie_gen = kNaN;         ///< `nvmlDeviceGetMaxPcieLinkGeneration`
  double max_pcie_width = kNaN;       ///< `nvmlDeviceGetMaxPcieLinkWidth`
  std::optional<bool> mig_enabled{};  ///< `nvmlDeviceGetMigMode` current mode
};

/// A process with a context on a GPU (`nvmlDeviceGetComputeRunningProcesses_v3`).
struct GpuProcess {
  unsigned int pid = 0;
  std::string name{};        ///< `/proc/<pid>/comm`, "" when unreadable (another namespace)
  double used_bytes = kNaN;  ///< NaN when the driver cannot tell
};

/// What `llmbench doctor` checks on one GPU, read once. Optional and NaN fields: not supported
/// by this GPU or driver, or the function is missing from the library (then named in
/// `missing`).
struct GpuHealth {
  GpuDeviceInfo info{};
  GpuSample now{};                         ///< clocks, throttle reasons, PCIe link, volatile ECC
  std::optional<bool> persistence_mode{};  ///< `nvmlDeviceGetPersistenceMode`
  double app_sm_clock_mhz = kNaN;          ///< `nvmlDeviceGetApplicationsClock(NVML_CLOCK_SM)`
  double app_mem_clock_mhz = kNaN;         ///< … (NVML_CLOCK_MEM)
  std::optional<bool> ecc_enabled{};       ///< `nvmlDeviceGetEccMode` current
  std::optional<bool> ecc_pending{};       ///< … pending (after the next reboot)
  double ecc_aggregate_corrected = kNaN;   ///< `nvmlDeviceGetTotalEccErrors`, aggregate
  double ecc_aggregate_uncorrected = kNaN;
  /// `nvmlDeviceGetNvLinkState` of each link the GPU has, in link order; nullopt when the GPU
  /// has no NVLink (NVML_ERROR_NOT_SUPPORTED on link 0).
  std::optional<std::vector<bool>> nvlink_active{};
  std::optional<std::vector<GpuProcess>> processes{};  ///< nullopt when the query failed
  std::vector<std::string> missing{};  ///< doctor functions the library lacks, by NVML name
};

/// An opened NVML: the library handle, `nvmlInit_v2` done, the symbols that resolved.
/// `nvmlShutdown` and `dlclose` at destruction. One thread at a time.
class Nvml {
 public:
  /// Opens `library_path` and initializes NVML. nullptr with `message` set when the library is
  /// missing or `nvmlInit_v2` fails; `notes` gets one line per symbol that is missing.
  static std::unique_ptr<Nvml> open(const std::string& library_path, std::string& message,
                                    std::vector<std::string>& notes);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  Nvml(Nvml&&) = delete;
  Nvml& operator=(Nvml&&) = delete;

  /// Devices NVML sees (0 when the count function failed).
  [[nodiscard]] unsigned int device_count() const;
  /// The static facts of device `index` (name "" when unknown).
  [[nodiscard]] GpuDeviceInfo device_info(unsigned int index) const;
  /// One sample of device `index`, stamped with the steady clock before the first call.
  [[nodiscard]] GpuSample sample(unsigned int index) const;
  /// Everything `llmbench doctor` checks on device `index` (doctor_checks.hpp), process names
  /// read from `proc_root`/<pid>/comm.
  [[nodiscard]] GpuHealth health(unsigned int index, const std::string& proc_root = "/proc") const;
  /// `nvmlSystemGetDriverVersion` ("" when unavailable).
  [[nodiscard]] std::string driver_version() const;
  /// `nvmlSystemGetCudaDriverVersion`, e.g. 12040 for CUDA 12.4 (nullopt when unavailable).
  [[nodiscard]] std::optional<int> cuda_driver_version() const;

  struct Symbols;  ///< the resolved function pointers (nvml.cpp)

 private:
  Nvml() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Symbols> fn_;
};

/// What to sample.
struct NvmlOptions {
  std::string library_path = "libnvidia-ml.so.1";
  std::chrono::milliseconds interval{100};  ///< `--gpu-telemetry=MS`
  std::vector<unsigned int> devices{};      ///< `--gpu-devices`; empty = every device
};

/// The samples of one device over the run.
struct GpuSeries {
  GpuDeviceInfo info{};
  std::vector<GpuSample> samples{};
};

/// Samples every chosen device each `interval` on its own thread from `start()` to `stop()`
/// (one sample at each end). When NVML cannot be opened, `available()` is false, `message()`
/// says why (logged once by `start`), and start/stop do nothing. Series are read after `stop()`.
class GpuSampler {
 public:
  explicit GpuSampler(NvmlOptions options);
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;
  GpuSampler(GpuSampler&&) = delete;
  GpuSampler& operator=(GpuSampler&&) = delete;

  /// Opens NVML (if not yet), takes the first samples and starts the thread.
  void start();
  /// Takes the last samples and joins the thread. Idempotent.
  void stop();
  /// One sample of every chosen device now (what the thread does each tick); opens NVML on first
  /// use. Public for tests, which drive it step by step.
  void sample_once();

  [[nodiscard]] bool available() const noexcept { return nvml_ != nullptr; }
  /// Why sampling is off ("" when on).
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// Missing symbols and skipped devices, one line each.
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }
  [[nodiscard]] const std::vector<GpuSeries>& series() const noexcept { return series_; }
  [[nodiscard]] const std::string& driver_version() const noexcept { return driver_version_; }
  [[nodiscard]] std::optional<int> cuda_driver_version() const noexcept { return cuda_version_; }
  [[nodiscard]] const NvmlOptions& options() const noexcept { return options_; }

 private:
  void open_once();

  NvmlOptions options_;
  bool opened_ = false;
  std::unique_ptr<Nvml> nvml_;
  std::string message_;
  std::vector<std::string> notes_;
  std::string driver_version_;
  std::optional<int> cuda_version_;
  std::vector<GpuSeries> series_;
  detail::PeriodicThread periodic_;
};

}  // namespace llmbench::telemetry
