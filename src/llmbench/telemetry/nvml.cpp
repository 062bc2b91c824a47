#include "llmbench/telemetry/nvml.hpp"

#include "llmbench/core/file.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/telemetry/detail/nvml_abi.hpp"
#include "llmbench/telemetry/self_monitor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <dlfcn.h>
#include <limits>
#include <utility>

namespace llmbench::telemetry {

using namespace detail;  // NOLINT(google-build-using-namespace): the ABI's names, this file only

/// One pointer per NVML function the sampler calls; null when the library lacks it.
struct Nvml::Symbols {
  NvmlShutdownFn shutdown = nullptr;
  NvmlErrorStringFn error_string = nullptr;
  NvmlSystemGetDriverVersionFn driver_version = nullptr;
  NvmlSystemGetCudaDriverVersionFn cuda_driver_version = nullptr;
  NvmlDeviceGetCountFn count = nullptr;
  NvmlDeviceGetHandleByIndexFn handle = nullptr;
  NvmlDeviceGetNameFn name = nullptr;
  NvmlDeviceGetMemoryInfoFn memory = nullptr;
  NvmlDeviceGetMemoryInfoV2Fn memory_v2 = nullptr;  // optional: `used` without `reserved`
  NvmlDeviceGetUtilizationRatesFn utilization = nullptr;
  NvmlDeviceGetUintFn power = nullptr;
  NvmlDeviceGetUllFn energy = nullptr;
  NvmlDeviceGetClockFn clock = nullptr;
  NvmlDeviceGetClockFn max_clock = nullptr;
  NvmlDeviceGetUllFn throttle = nullptr;
  NvmlDeviceGetClockFn temperature = nullptr;
  NvmlDeviceGetUintFn pcie_gen = nullptr;
  NvmlDeviceGetUintFn pcie_width = nullptr;
  NvmlDeviceGetUintFn max_pcie_gen = nullptr;
  NvmlDeviceGetUintFn max_pcie_width = nullptr;
  NvmlDeviceGetPcieThroughputFn pcie_throughput = nullptr;
  NvmlDeviceGetTotalEccErrorsFn ecc = nullptr;
  NvmlDeviceGetMigModeFn mig = nullptr;
  // `llmbench doctor` only; a missing one is named in `GpuHealth::missing`, not in the notes.
  NvmlDeviceGetEnableStateFn persistence = nullptr;
  NvmlDeviceGetClockFn app_clock = nullptr;
  NvmlDeviceGetEccModeFn ecc_mode = nullptr;
  NvmlDeviceGetNvLinkStateFn nvlink_state = nullptr;
  NvmlDeviceGetProcessesFn processes = nullptr;
};

namespace {

/// Resolves the first of `names` the library has into `fn`; a note names the first when none.
template <class Fn>
void resolve(void* handle, std::initializer_list<const char*> names, Fn& fn,
             std::vector<std::string>& notes) {
  for (const char* name : names) {
    if (void* p = dlsym(handle, name)) {
      // POSIX guarantees that a dlsym result converts to a function pointer (dlsym(3)).
      fn = reinterpret_cast<Fn>(p);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
      return;
    }
  }
  notes.push_back(
      fmt::format("NVML has no {}: the fields it gives are not sampled", *names.begin()));
}

/// Resolves the first of `names` into `fn` quietly (the doctor's functions).
template <class Fn>
void resolve_quiet(void* handle, std::initializer_list<const char*> names, Fn& fn) {
  std::vector<std::string> ignored;
  resolve(handle, names, fn, ignored);
}

/// Device memory in use, bytes, as nvidia-smi's "Used" counts it: `nvmlDeviceGetMemoryInfo_v2`'s
/// `used` (the driver's reserved memory left out) where the library has it, else
/// `nvmlDeviceGetMemoryInfo`'s total − free (reserved memory included). NaN when neither answers.
double memory_used(const Nvml::Symbols& fn, NvmlDevice d) {
  NvmlMemoryV2 v2{.version = kNvmlMemoryV2Version};
  if (fn.memory_v2 != nullptr && fn.memory_v2(d, &v2) == kNvmlSuccess)
    return static_cast<double>(v2.used);
  NvmlMemory v1;
  if (fn.memory != nullptr && fn.memory(d, &v1) == kNvmlSuccess)
    return static_cast<double>(v1.used);
  return std::numeric_limits<double>::quiet_NaN();
}

double as_double(unsigned int v) {
  return static_cast<double>(v);
}

NvmlDevice device_handle(const Nvml::Symbols& fn, unsigned int index) {
  NvmlDevice d = nullptr;
  if (fn.handle == nullptr || fn.handle(index, &d) != kNvmlSuccess)
    return nullptr;
  return d;
}

/// Calls a `(device, unsigned int*)` query; NaN when missing or failing.
double uint_query(NvmlDeviceGetUintFn f, NvmlDevice d) {
  unsigned int v = 0;
  return f != nullptr && f(d, &v) == kNvmlSuccess ? as_double(v) : kNaN;
}

/// Calls a `(device, int arg, unsigned int*)` query; NaN when missing or failing.
double arg_query(NvmlDeviceGetClockFn f, NvmlDevice d, int arg) {
  unsigned int v = 0;
  return f != nullptr && f(d, arg, &v) == kNvmlSuccess ? as_double(v) : kNaN;
}

double ecc_query(NvmlDeviceGetTotalEccErrorsFn f, NvmlDevice d, int type) {
  unsigned long long v = 0;  // NOLINT(google-runtime-int): the C ABI's type
  return f != nullptr && f(d, type, kNvmlVolatileEcc, &v) == kNvmlSuccess ? static_cast<double>(v)
                                                                          : kNaN;
}

double aggregate_ecc_query(NvmlDeviceGetTotalEccErrorsFn f, NvmlDevice d, int type) {
  unsigned long long v = 0;  // NOLINT(google-runtime-int): the C ABI's type
  return f != nullptr && f(d, type, kNvmlAggregateEcc, &v) == kNvmlSuccess ? static_cast<double>(v)
                                                                           : kNaN;
}

std::optional<bool> enable_state(NvmlDeviceGetEnableStateFn f, NvmlDevice d) {
  int v = 0;
  if (f == nullptr || f(d, &v) != kNvmlSuccess)
    return std::nullopt;
  return v != 0;
}

/// Link states until the first link NVML calls invalid; nullopt when link 0 is not supported.
std::optional<std::vector<bool>> nvlink_states(NvmlDeviceGetNvLinkStateFn f, NvmlDevice d) {
  if (f == nullptr)
    return std::nullopt;
  std::vector<bool> active;
  for (unsigned int link = 0; link < kNvmlNvLinkMaxLinks; ++link) {
    int v = 0;
    const NvmlReturn rc = f(d, link, &v);
    if (rc == kNvmlSuccess) {
      active.push_back(v != 0);
    } else if (link == 0 || rc == kNvmlErrorInvalidArgument) {
      break;
    }
  }
  if (active.empty())
    return std::nullopt;
  return active;
}

/// The compute processes of `d`: asks with room for 64, then once more with the count the
/// driver said it needs (NVML_ERROR_INSUFFICIENT_SIZE).
std::optional<std::vector<GpuProcess>> compute_processes(NvmlDeviceGetProcessesFn f, NvmlDevice d,
                                                         const std::string& proc_root) {
  if (f == nullptr)
    return std::nullopt;
  std::vector<NvmlProcessInfo> infos(64);
  unsigned int count = static_cast<unsigned int>(infos.size());
  NvmlReturn rc = f(d, &count, infos.data());
  if (rc == kNvmlErrorInsufficientSize) {
    infos.resize(count + 8U);
    count = static_cast<unsigned int>(infos.size());
    rc = f(d, &count, infos.data());
  }
  if (rc != kNvmlSuccess)
    return std::nullopt;
  std::vector<GpuProcess> out;
  for (unsigned int i = 0; i < std::min<std::size_t>(count, infos.size()); ++i) {
    GpuProcess p{.pid = infos[i].pid};
    if (infos[i].used_gpu_memory != kNvmlValueNotAvailable)
      p.used_bytes = static_cast<double>(infos[i].used_gpu_memory);
    if (auto comm = read_file(fmt::format("{}/{}/comm", proc_root, p.pid))) {
      p.name = *comm;
      while (!p.name.empty() && (p.name.back() == '\n' || p.name.back() == '\r')) p.name.pop_back();
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::vector<std::string> decode_throttle_reasons(std::uint64_t mask) {
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& r : kThrottleReasons) {
    known |= r.bit;
    if ((mask & r.bit) != 0)
      out.emplace_back(r.name);
  }
  if ((mask & ~known) != 0)
    out.push_back(fmt::format("other(0x{:x})", mask & ~known));
  return out;
}

std::unique_ptr<Nvml> Nvml::open(const std::string& library_path, std::string& message,
                                 std::vector<std::string>& notes) {
  void* handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    message = fmt::format("GPU telemetry off: cannot open {} ({})", library_path,
                          why != nullptr ? why : "unknown error");
    return nullptr;
  }
  std::unique_ptr<Nvml> nvml(new Nvml());
  nvml->handle_ = handle;
  nvml->fn_ = std::make_unique<Symbols>();
  NvmlInitFn init = nullptr;
  std::vector<std::string> missing;
  resolve(handle, {"nvmlInit_v2", "nvmlInit"}, init, missing);
  if (init == nullptr) {
    message = fmt::format("GPU telemetry off: {} has no nvmlInit_v2", library_path);
    return nullptr;  // the destructor closes the handle
  }
  auto& fn = *nvml->fn_;
  resolve(handle, {"nvmlShutdown"}, fn.shutdown, missing);
  resolve(handle, {"nvmlErrorString"}, fn.error_string, missing);
  const NvmlReturn rc = init();
  if (rc != kNvmlSuccess) {
    const char* text = fn.error_string != nullptr ? fn.error_string(rc) : nullptr;
    message = fmt::format("GPU telemetry off: nvmlInit_v2 failed: {} (code {})",
                          text != nullptr ? text : "unknown", rc);
    fn.shutdown = nullptr;  // nothing to shut down
    return nullptr;
  }
  resolve(handle, {"nvmlSystemGetDriverVersion"}, fn.driver_version, missing);
  resolve(handle, {"nvmlSystemGetCudaDriverVersion"}, fn.cuda_driver_version, missing);
  resolve(handle, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, fn.count, missing);
  resolve(handle, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, fn.handle,
          missing);
  resolve(handle, {"nvmlDeviceGetName"}, fn.name, missing);
  resolve(handle, {"nvmlDeviceGetMemoryInfo"}, fn.memory, missing);
  resolve_quiet(handle, {"nvmlDeviceGetMemoryInfo_v2"}, fn.memory_v2);
  resolve(handle, {"nvmlDeviceGetUtilizationRates"}, fn.utilization, missing);
  resolve(handle, {"nvmlDeviceGetPowerUsage"}, fn.power, missing);
  resolve(handle, {"nvmlDeviceGetTotalEnergyConsumption"}, fn.energy, missing);
  resolve(handle, {"nvmlDeviceGetClockInfo"}, fn.clock, missing);
  resolve(handle, {"nvmlDeviceGetMaxClockInfo"}, fn.max_clock, missing);
  // Renamed in R535; older drivers have only the throttle name.
  resolve(handle,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
          fn.throttle, missing);
  resolve(handle, {"nvmlDeviceGetTemperature"}, fn.temperature, missing);
  resolve(handle, {"nvmlDeviceGetCurrPcieLinkGeneration"}, fn.pcie_gen, missing);
  resolve(handle, {"nvmlDeviceGetCurrPcieLinkWidth"}, fn.pcie_width, missing);
  resolve(handle, {"nvmlDeviceGetMaxPcieLinkGeneration"}, fn.max_pcie_gen, missing);
  resolve(handle, {"nvmlDeviceGetMaxPcieLinkWidth"}, fn.max_pcie_width, missing);
  resolve(handle, {"nvmlDeviceGetPcieThroughput"}, fn.pcie_throughput, missing);
  resolve(handle, {"nvmlDeviceGetTotalEccErrors"}, fn.ecc, missing);
  resolve(handle, {"nvmlDeviceGetMigMode"}, fn.mig, missing);
  resolve_quiet(handle, {"nvmlDeviceGetPersistenceMode"}, fn.persistence);
  resolve_quiet(handle, {"nvmlDeviceGetApplicationsClock"}, fn.app_clock);
  resolve_quiet(handle, {"nvmlDeviceGetEccMode"}, fn.ecc_mode);
  resolve_quiet(handle, {"nvmlDeviceGetNvLinkState"}, fn.nvlink_state);
  resolve_quiet(
      handle,
      {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"},
      fn.processes);
  notes.insert(notes.end(), missing.begin(), missing.end());
  return nvml;
}

Nvml::~Nvml() {
  if (fn_ && fn_->shutdown != nullptr)
    fn_->shutdown();
  if (handle_ != nullptr)
    dlclose(handle_);
}

unsigned int Nvml::device_count() const {
  unsigned int n = 0;
  return fn_->count != nullptr && fn_->count(&n) == kNvmlSuccess ? n : 0;
}

GpuDeviceInfo Nvml::device_info(unsigned int index) const {
  const Symbols& fn = *fn_;
  GpuDeviceInfo info{.index = index};
  NvmlDevice d = device_handle(fn, index);
  if (d == nullptr)
    return info;
  std::array<char, 96> name{};  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
  if (fn.name != nullptr && fn.name(d, name.data(), name.size()) == kNvmlSuccess)
    info.name = std::string(name.data());
  NvmlMemory memory;
  if (fn.memory != nullptr && fn.memory(d, &memory) == kNvmlSuccess)
    info.memory_total_bytes = static_cast<double>(memory.total);
  info.max_sm_clock_mhz = arg_query(fn.max_clock, d, kNvmlClockSm);
  info.max_mem_clock_mhz = arg_query(fn.max_clock, d, kNvmlClockMem);
  info.max_pcie_gen = uint_query(fn.max_pcie_gen, d);
  info.max_pcie_width = uint_query(fn.max_pcie_width, d);
  unsigned int current = 0;
  unsigned int pending = 0;
  if (fn.mig != nullptr && fn.mig(d, &current, &pending) == kNvmlSuccess)
    info.mig_enabled = current != 0;
  return info;
}

GpuSample Nvml::sample(unsigned int index) const {
  const Symbols& fn = *fn_;
  GpuSample s{.t_ns = steady_now_ns()};
  NvmlDevice d = device_handle(fn, index);
  if (d == nullptr)
    return s;
  s.memory_used_bytes = memory_used(fn, d);
  NvmlUtilization util;
  if (fn.utilization != nullptr && fn.utilization(d, &util) == kNvmlSuccess) {
    s.sm_util_pct = as_double(util.gpu);
    s.mem_util_pct = as_double(util.memory);
  }
  s.power_w = uint_query(fn.power, d) / 1000.0;
  unsigned long long ull = 0;  // NOLINT(google-runtime-int): the C ABI's type
  if (fn.energy != nullptr && fn.energy(d, &ull) == kNvmlSuccess)
    s.energy_j = static_cast<double>(ull) / 1000.0;
  s.sm_clock_mhz = arg_query(fn.clock, d, kNvmlClockSm);
  s.mem_clock_mhz = arg_query(fn.clock, d, kNvmlClockMem);
  if (fn.throttle != nullptr && fn.throttle(d, &ull) == kNvmlSuccess)
    s.throttle_reasons = static_cast<std::uint64_t>(ull);
  s.temperature_c = arg_query(fn.temperature, d, kNvmlTemperatureGpu);
  s.pcie_gen = uint_query(fn.pcie_gen, d);
  s.pcie_width = uint_query(fn.pcie_width, d);
  s.pcie_tx_kbps = arg_query(fn.pcie_throughput, d, kNvmlPcieTxBytes);
  s.pcie_rx_kbps = arg_query(fn.pcie_throughput, d, kNvmlPcieRxBytes);
  s.ecc_corrected = ecc_query(fn.ecc, d, kNvmlMemoryErrorCorrected);
  s.ecc_uncorrected = ecc_query(fn.ecc, d, kNvmlMemoryErrorUncorrected);
  return s;
}

GpuHealth Nvml::health(unsigned int index, const std::string& proc_root) const {
  const Symbols& fn = *fn_;
  GpuHealth h{.info = device_info(index), .now = sample(index)};
  const std::array<std::pair<bool, const char*>, 5> doctor_symbols{{
      {fn.persistence != nullptr, "nvmlDeviceGetPersistenceMode"},
      {fn.app_clock != nullptr, "nvmlDeviceGetApplicationsClock"},
      {fn.ecc_mode != nullptr, "nvmlDeviceGetEccMode"},
      {fn.nvlink_state != nullptr, "nvmlDeviceGetNvLinkState"},
      {fn.processes != nullptr, "nvmlDeviceGetComputeRunningProcesses_v3"},
  }};
  for (const auto& [present, name] : doctor_symbols) {
    if (!present)
      h.missing.emplace_back(name);
  }
  NvmlDevice d = device_handle(fn, index);
  if (d == nullptr)
    return h;
  h.persistence_mode = enable_state(fn.persistence, d);
  h.app_sm_clock_mhz = arg_query(fn.app_clock, d, kNvmlClockSm);
  h.app_mem_clock_mhz = arg_query(fn.app_clock, d, kNvmlClockMem);
  int current = 0;
  int pending = 0;
  if (fn.ecc_mode != nullptr && fn.ecc_mode(d, &current, &pending) == kNvmlSuccess) {
    h.ecc_enabled = current != 0;
    h.ecc_pending = pending != 0;
  }
  h.ecc_aggregate_corrected = aggregate_ecc_query(fn.ecc, d, kNvmlMemoryErrorCorrected);
  h.ecc_aggregate_uncorrected = aggregate_ecc_query(fn.ecc, d, kNvmlMemoryErrorUncorrected);
  h.nvlink_active = nvlink_states(fn.nvlink_state, d);
  h.processes = compute_processes(fn.processes, d, proc_root);
  return h;
}

std::string Nvml::driver_version() const {
  std::array<char, 80> text{};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
  if (fn_->driver_version != nullptr &&
      fn_->driver_version(text.data(), text.size()) == kNvmlSuccess)
    return {text.data()};
  return {};
}

std::optional<int> Nvml::cuda_driver_version() const {
  int v = 0;
  if (fn_->cuda_driver_version != nullptr && fn_->cuda_driver_version(&v) == kNvmlSuccess)
    return v;
  return std::nullopt;
}

// ---- sampler ----

GpuSampler::GpuSampler(NvmlOptions options) : options_(std::move(options)) {}

GpuSampler::~GpuSampler() {
  stop();
}

void GpuSampler::open_once() {
  if (opened_)
    return;
  opened_ = true;
  nvml_ = Nvml::open(options_.library_path, message_, notes_);
  if (!nvml_)
    return;
  driver_version_ = nvml_->driver_version();
  cuda_version_ = nvml_->cuda_driver_version();
  const unsigned int count = nvml_->device_count();
  std::vector<unsigned int> chosen = options_.devices;
  if (chosen.empty()) {
    for (unsigned int i = 0; i < count; ++i) chosen.push_back(i);
  }
  for (const unsigned int i : chosen) {
    if (i >= count) {
      notes_.push_back(
          fmt::format("--gpu-devices: GPU {} does not exist (NVML sees {})", i, count));
      continue;
    }
    series_.push_back(GpuSeries{.info = nvml_->device_info(i)});
  }
}

void GpuSampler::sample_once() {
  open_once();
  if (!nvml_)
    return;
  for (auto& s : series_) s.samples.push_back(nvml_->sample(s.info.index));
}

void GpuSampler::start() {
  if (periodic_.running())
    return;
  open_once();
  if (!nvml_) {
    log::warn("{}; the run goes on without it", message_);
    return;
  }
  for (const auto& note : notes_) log::warn("{}", note);
  sample_once();
  periodic_.start("llmb-telem-gpu", options_.interval, [this] { sample_once(); });
}

void GpuSampler::stop() {
  if (periodic_.stop())
    sample_once();
}

}  // namespace llmbench::telemetry
