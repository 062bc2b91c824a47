// A fake NVML for the tests (libfake_nvml.so; libfake_nvml_no_energy.so built with
// LLMBENCH_FAKE_NVML_NO_ENERGY, which lacks nvmlDeviceGetTotalEnergyConsumption and, like a driver
// older than NVML 11.5, nvmlDeviceGetMemoryInfo_v2; and
// libfake_nvml_no_persistence.so built with LLMBENCH_FAKE_NVML_NO_PERSISTENCE, which lacks the
// doctor's nvmlDeviceGetPersistenceMode). It exports
// the functions llmbench's sampler resolves (src/llmbench/telemetry/detail/nvml_abi.hpp, after
// NVIDIA's NVML API Reference Guide) and answers from a script, the file named by the
// environment variable LLMBENCH_FAKE_NVML_SCRIPT, read at nvmlInit_v2. Script lines:
//   devices N                 how many GPUs
//   driver TEXT / cuda N      nvmlSystemGetDriverVersion / nvmlSystemGetCudaDriverVersion
//   init_error N              nvmlInit_v2 returns N (a failing driver)
//   name D TEXT               nvmlDeviceGetName of device D
//   proc D PID BYTES          a compute process on device D (BYTES "-": not available)
//   row D key=value ...       the next step of device D: keys not given keep the previous
//                             step's value; the value "-" makes the query answer
//                             NVML_ERROR_NOT_SUPPORTED (3)
// Keys: mem_total mem_used (v2's used) mem_reserved (default 0; nvmlDeviceGetMemoryInfo's used is
// mem_used + mem_reserved, as a real driver's total - free) util_gpu util_mem power_mw energy_mj
// sm_clock mem_clock max_sm_clock max_mem_clock throttle temp pcie_gen pcie_width max_pcie_gen
// max_pcie_width pcie_tx pcie_rx ecc_corr ecc_uncorr mig, and for `llmbench doctor` persistence
// app_sm_clock app_mem_clock ecc_mode ecc_pending (defaults to ecc_mode) ecc_corr_agg
// ecc_uncorr_agg nvlink_links (links the GPU has; absent: no NVLink) nvlink_up (bit i set: link i
// active). Every query reads the device's current step, which the test moves with
// llmbench_fake_nvml_set_step(n) (the last step repeats past the end).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr long long kUnsupported = -1;  // a "-" in the script

using Row = std::map<std::string, long long>;

struct Process {
  unsigned pid = 0;
  unsigned long long used = 0;
};

struct Device {
  std::string name = "Fake GPU";
  std::vector<Row> steps;
  std::vector<Process> processes;
};

struct Script {
  int init_error = 0;
  std::string driver = "550.00.00";
  int cuda = 12040;
  std::vector<Device> devices;
  unsigned step = 0;
};

Script g_script;  // NOLINT: the fake's one state, reset by every nvmlInit_v2

void load_script() {
  g_script = Script{};
  const char* path = std::getenv("LLMBENCH_FAKE_NVML_SCRIPT");
  if (path == nullptr)
    return;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "devices") {
      std::size_t n = 0;
      words >> n;
      g_script.devices.resize(n);
    } else if (kind == "driver") {
      words >> g_script.driver;
    } else if (kind == "cuda") {
      words >> g_script.cuda;
    } else if (kind == "init_error") {
      words >> g_script.init_error;
    } else if (kind == "name") {
      std::size_t d = 0;
      words >> d;
      std::getline(words >> std::ws, g_script.devices.at(d).name);
    } else if (kind == "proc") {
      std::size_t d = 0;
      Process p;
      std::string used;
      words >> d >> p.pid >> used;
      p.used = used == "-" ? ~0ULL : std::stoull(used);
      g_script.devices.at(d).processes.push_back(p);
    } else if (kind == "row") {
      std::size_t d = 0;
      words >> d;
      auto& steps = g_script.devices.at(d).steps;
      Row row = steps.empty() ? Row{} : steps.back();
      for (std::string kv; words >> kv;) {
        const auto eq = kv.find('=');
        const std::string value = kv.substr(eq + 1);
        row[kv.substr(0, eq)] = value == "-" ? kUnsupported : std::stoll(value, nullptr, 0);
      }
      steps.push_back(row);
    }
  }
}

Device* device(void* handle) {
  return static_cast<Device*>(handle);
}

/// The value of `key` in the device's current step; kNotSupported when absent or "-".
int get(void* handle, const char* key, long long& out) {
  const Device* d = device(handle);
  if (d == nullptr || d->steps.empty())
    return kNotSupported;
  const Row& row = d->steps[std::min<std::size_t>(g_script.step, d->steps.size() - 1)];
  const auto it = row.find(key);
  if (it == row.end() || it->second == kUnsupported)
    return kNotSupported;
  out = it->second;
  return kSuccess;
}

int get_uint(void* handle, const char* key, unsigned int* out) {
  long long v = 0;
  const int rc = get(handle, key, v);
  if (rc == kSuccess)
    *out = static_cast<unsigned int>(v);
  return rc;
}

int get_ull(void* handle, const char* key, unsigned long long* out) {
  long long v = 0;
  const int rc = get(handle, key, v);
  if (rc == kSuccess)
    *out = static_cast<unsigned long long>(v);
  return rc;
}

}  // namespace

extern "C" {

struct FakeMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct FakeUtilization {
  unsigned int gpu;
  unsigned int memory;
};

__attribute__((visibility("default"))) void llmbench_fake_nvml_set_step(unsigned step) {
  g_script.step = step;
}

__attribute__((visibility("default"))) int nvmlInit_v2() {
  load_script();
  return g_script.init_error;
}
__attribute__((visibility("default"))) int nvmlShutdown() {
  return kSuccess;
}
__attribute__((visibility("default"))) const char* nvmlErrorString(int rc) {
  return rc == 9 ? "Driver Not Loaded" : "Fake Error";
}
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* out, unsigned n) {
  std::snprintf(out, n, "%s", g_script.driver.c_str());
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlSystemGetCudaDriverVersion(int* out) {
  *out = g_script.cuda;
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* out) {
  *out = static_cast<unsigned>(g_script.devices.size());
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** out) {
  if (i >= g_script.devices.size())
    return kInvalidArgument;
  *out = &g_script.devices[i];
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetName(void* d, char* out, unsigned n) {
  std::snprintf(out, n, "%s", device(d)->name.c_str());
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* d, FakeMemory* out) {
  long long total = 0;
  long long used = 0;
  if (get(d, "mem_total", total) != kSuccess || get(d, "mem_used", used) != kSuccess)
    return kNotSupported;
  long long reserved = 0;
  if (get(d, "mem_reserved", reserved) != kSuccess)
    reserved = 0;
  *out = FakeMemory{static_cast<unsigned long long>(total),
                    static_cast<unsigned long long>(total - used - reserved),
                    static_cast<unsigned long long>(used + reserved)};
  return kSuccess;
}
#ifndef LLMBENCH_FAKE_NVML_NO_ENERGY
struct FakeMemoryV2 {
  unsigned version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo_v2(void* d, FakeMemoryV2* out) {
  constexpr int kArgumentVersionMismatch = 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  if (out->version != (static_cast<unsigned>(sizeof(FakeMemoryV2)) | (2U << 24U)))
    return kArgumentVersionMismatch;
  long long total = 0;
  long long used = 0;
  long long reserved = 0;
  if (get(d, "mem_total", total) != kSuccess || get(d, "mem_used", used) != kSuccess)
    return kNotSupported;
  if (get(d, "mem_reserved", reserved) != kSuccess)
    reserved = 0;
  out->total = static_cast<unsigned long long>(total);
  out->reserved = static_cast<unsigned long long>(reserved);
  out->used = static_cast<unsigned long long>(used);
  out->free = static_cast<unsigned long long>(total - used - reserved);
  return kSuccess;
}
#endif
__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* d,
                                                                         FakeUtilization* out) {
  long long gpu = 0;
  long long mem = 0;
  if (get(d, "util_gpu", gpu) != kSuccess || get(d, "util_mem", mem) != kSuccess)
    return kNotSupported;
  *out = FakeUtilization{static_cast<unsigned>(gpu), static_cast<unsigned>(mem)};
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void* d, unsigned* mw) {
  return get_uint(d, "power_mw", mw);
}
#ifndef LLMBENCH_FAKE_NVML_NO_ENERGY
__attribute__((visibility("default"))) int nvmlDeviceGetTotalEnergyConsumption(
    void* d, unsigned long long* mj) {
  return get_ull(d, "energy_mj", mj);
}
#endif
__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(void* d, int type, unsigned* v) {
  return get_uint(d, type == 1 ? "sm_clock" : type == 2 ? "mem_clock" : "other_clock", v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMaxClockInfo(void* d, int type,
                                                                     unsigned* v) {
  return get_uint(d, type == 1 ? "max_sm_clock" : type == 2 ? "max_mem_clock" : "other", v);
}
// Only the pre-R535 name, so the sampler's fallback from nvmlDeviceGetCurrentClocksEventReasons
// is what finds it.
__attribute__((visibility("default"))) int nvmlDeviceGetCurrentClocksThrottleReasons(
    void* d, unsigned long long* mask) {
  return get_ull(d, "throttle", mask);
}
__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void* d, int sensor,
                                                                    unsigned* c) {
  return sensor == 0 ? get_uint(d, "temp", c) : kInvalidArgument;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCurrPcieLinkGeneration(void* d,
                                                                               unsigned* v) {
  return get_uint(d, "pcie_gen", v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetCurrPcieLinkWidth(void* d, unsigned* v) {
  return get_uint(d, "pcie_width", v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMaxPcieLinkGeneration(void* d,
                                                                              unsigned* v) {
  return get_uint(d, "max_pcie_gen", v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMaxPcieLinkWidth(void* d, unsigned* v) {
  return get_uint(d, "max_pcie_width", v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetPcieThroughput(void* d, int counter,
                                                                       unsigned* kbps) {
  return get_uint(d, counter == 0 ? "pcie_tx" : "pcie_rx", kbps);
}
__attribute__((visibility("default"))) int nvmlDeviceGetTotalEccErrors(void* d, int error_type,
                                                                       int counter_type,
                                                                       unsigned long long* n) {
  if (counter_type == 1)
    return get_ull(d, error_type == 0 ? "ecc_corr_agg" : "ecc_uncorr_agg", n);
  if (counter_type != 0)
    return kInvalidArgument;
  return get_ull(d, error_type == 0 ? "ecc_corr" : "ecc_uncorr", n);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMigMode(void* d, unsigned* current,
                                                                unsigned* pending) {
  const int rc = get_uint(d, "mig", current);
  if (rc == kSuccess)
    *pending = *current;
  return rc;
}

// ---- the doctor's functions ----

#ifndef LLMBENCH_FAKE_NVML_NO_PERSISTENCE
__attribute__((visibility("default"))) int nvmlDeviceGetPersistenceMode(void* d, int* mode) {
  long long v = 0;
  const int rc = get(d, "persistence", v);
  if (rc == kSuccess)
    *mode = static_cast<int>(v);
  return rc;
}
#endif
__attribute__((visibility("default"))) int nvmlDeviceGetApplicationsClock(void* d, int type,
                                                                          unsigned* v) {
  return get_uint(d, type == 1 ? "app_sm_clock" : type == 2 ? "app_mem_clock" : "other", v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetEccMode(void* d, int* current,
                                                                int* pending) {
  long long mode = 0;
  const int rc = get(d, "ecc_mode", mode);
  if (rc != kSuccess)
    return rc;
  long long next = mode;
  if (get(d, "ecc_pending", next) != kSuccess)
    next = mode;
  *current = static_cast<int>(mode);
  *pending = static_cast<int>(next);
  return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetNvLinkState(void* d, unsigned link,
                                                                    int* active) {
  long long links = 0;
  if (get(d, "nvlink_links", links) != kSuccess)
    return kNotSupported;
  if (link >= static_cast<unsigned long long>(links))
    return kInvalidArgument;
  long long up = 0;
  get(d, "nvlink_up", up);
  *active = ((static_cast<unsigned long long>(up) >> link) & 1U) != 0 ? 1 : 0;
  return kSuccess;
}
// The nvmlProcessInfo_t of nvml.h (the _v2/_v3 layout).
struct FakeProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
__attribute__((visibility("default"))) int nvmlDeviceGetComputeRunningProcesses_v3(
    void* d, unsigned* count, FakeProcessInfo* infos) {
  const auto& procs = device(d)->processes;
  const auto n = static_cast<unsigned>(procs.size());
  if (*count < n) {
    *count = n;
    return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  }
  for (unsigned i = 0; i < n; ++i)
    infos[i] = FakeProcessInfo{procs[i].pid, procs[i].used, 0xFFFFFFFFU, 0xFFFFFFFFU};
  *count = n;
  return kSuccess;
}

}  // extern "C"
