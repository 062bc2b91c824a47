#pragma once
/// @file
/// The part of NVML's C ABI that the GPU sampler calls, described here instead of including
/// nvml.h (which llmbench neither ships nor needs: the library is opened with dlopen at run
/// time). Every prototype, struct layout and constant below is as documented in NVIDIA's "NVML
/// API Reference Guide" (docs.nvidia.com/deploy/nvml-api): section "Device Queries" for the
/// nvmlDeviceGet* functions, "Initialization and Cleanup", "System Queries", and the structs
/// `nvmlMemory_t` (total, free, used: unsigned long long bytes) and `nvmlUtilization_t` (gpu,
/// memory: unsigned int percent). Enum arguments are passed as C ints. Units (from the same
/// reference): power in mW, energy in mJ since the driver was loaded, clocks in MHz, PCIe
/// throughput in KB/s over a 20 ms window, temperature in °C. The fake library of the tests
/// (tests/unit/telemetry/fake_nvml.cpp) implements the same prototypes.
///
/// `llmbench doctor` adds these, each as declared in nvml.h (CUDA 12 toolkit; the same
/// reference, "Device Queries" and "NvLink Methods"):
/// - `nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode)`
/// - `nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t
///   clockType, unsigned int* clockMHz)`
/// - `nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current,
///   nvmlEnableState_t* pending)`
/// - `nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
///   nvmlEnableState_t* isActive)`, links 0 .. NVML_NVLINK_MAX_LINKS - 1 (18)
/// - `nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int*
///   infoCount, nvmlProcessInfo_t* infos)` (`_v2` has the same prototype and struct): on
///   NVML_ERROR_INSUFFICIENT_SIZE `*infoCount` holds the count needed
/// - `nvmlDeviceGetTotalEccErrors` (above) with `NVML_AGGREGATE_ECC` (1) for lifetime counts.

#include <cstdint>

namespace llmbench::telemetry::detail {

/// `nvmlReturn_t`: 0 is NVML_SUCCESS; 3 NVML_ERROR_NOT_SUPPORTED.
using NvmlReturn = int;
inline constexpr NvmlReturn kNvmlSuccess = 0;

/// `nvmlDevice_t`: an opaque handle (a pointer to an undefined struct).
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;

/// `nvmlMemory_t` (bytes).
struct NvmlMemory {
  unsigned long long total = 0;  // NOLINT(google-runtime-int): the C ABI's type
  unsigned long long free = 0;   // NOLINT(google-runtime-int)
  unsigned long long used = 0;   // NOLINT(google-runtime-int)
};

/// `nvmlMemory_v2_t` (bytes; NVML 11.5+, `nvmlDeviceGetMemoryInfo_v2`): `used` excludes the
/// driver's `reserved` memory, as nvidia-smi's "FB Memory Usage: Used" does, where
/// `nvmlMemory_t::used` (total − free) includes it (616 MiB on the H200 of docs/telemetry.md).
/// `version` must be `kNvmlMemoryV2Version`.
struct NvmlMemoryV2 {
  unsigned int version = 0;
  unsigned long long total = 0;     // NOLINT(google-runtime-int): the C ABI's type
  unsigned long long reserved = 0;  // NOLINT(google-runtime-int)
  unsigned long long free = 0;      // NOLINT(google-runtime-int)
  unsigned long long used = 0;      // NOLINT(google-runtime-int)
};
/// `nvmlMemory_v2` = NVML_STRUCT_VERSION(Memory, 2): the struct's size | (2 << 24) (nvml.h).
inline constexpr unsigned int kNvmlMemoryV2Version =
    static_cast<unsigned int>(sizeof(NvmlMemoryV2)) | (2U << 24U);

/// `nvmlUtilization_t` (percent of the last sample period).
struct NvmlUtilization {
  unsigned int gpu = 0;
  unsigned int memory = 0;
};

/// `nvmlProcessInfo_t` (the `_v2`/`_v3` layout): `usedGpuMemory` is NVML_VALUE_NOT_AVAILABLE
/// (all bits set) when the driver cannot tell; the instance ids are 0xFFFFFFFF without MIG.
struct NvmlProcessInfo {
  unsigned int pid = 0;
  unsigned long long used_gpu_memory = 0;  // NOLINT(google-runtime-int): the C ABI's type
  unsigned int gpu_instance_id = 0;
  unsigned int compute_instance_id = 0;
};
inline constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;  // NOLINT(google-runtime-int)

/// `nvmlReturn_t` values the doctor tells apart.
inline constexpr NvmlReturn kNvmlErrorInvalidArgument = 2;
inline constexpr NvmlReturn kNvmlErrorNotSupported = 3;
inline constexpr NvmlReturn kNvmlErrorInsufficientSize = 7;
/// `NVML_NVLINK_MAX_LINKS` (nvml.h, CUDA 12).
inline constexpr unsigned int kNvmlNvLinkMaxLinks = 18;
/// `nvmlEccCounterType_t` NVML_AGGREGATE_ECC: counts over the board's life.
inline constexpr int kNvmlAggregateEcc = 1;

// `nvmlClockType_t`, `nvmlTemperatureSensors_t`, `nvmlPcieUtilCounter_t`,
// `nvmlMemoryErrorType_t`, `nvmlEccCounterType_t` values used.
inline constexpr int kNvmlClockSm = 1;
inline constexpr int kNvmlClockMem = 2;
inline constexpr int kNvmlTemperatureGpu = 0;
inline constexpr int kNvmlPcieTxBytes = 0;
inline constexpr int kNvmlPcieRxBytes = 1;
inline constexpr int kNvmlMemoryErrorCorrected = 0;
inline constexpr int kNvmlMemoryErrorUncorrected = 1;
inline constexpr int kNvmlVolatileEcc = 0;

// Function types, one per symbol resolved with dlsym (names in nvml.cpp's symbol table).
using NvmlInitFn = NvmlReturn (*)();
using NvmlShutdownFn = NvmlReturn (*)();
using NvmlErrorStringFn = const char* (*)(NvmlReturn);
using NvmlSystemGetDriverVersionFn = NvmlReturn (*)(char*, unsigned int);
using NvmlSystemGetCudaDriverVersionFn = NvmlReturn (*)(int*);
using NvmlDeviceGetCountFn = NvmlReturn (*)(unsigned int*);
using NvmlDeviceGetHandleByIndexFn = NvmlReturn (*)(unsigned int, NvmlDevice*);
using NvmlDeviceGetNameFn = NvmlReturn (*)(NvmlDevice, char*, unsigned int);
using NvmlDeviceGetMemoryInfoFn = NvmlReturn (*)(NvmlDevice, NvmlMemory*);
using NvmlDeviceGetMemoryInfoV2Fn = NvmlReturn (*)(NvmlDevice, NvmlMemoryV2*);
using NvmlDeviceGetUtilizationRatesFn = NvmlReturn (*)(NvmlDevice, NvmlUtilization*);
using NvmlDeviceGetUintFn = NvmlReturn (*)(NvmlDevice, unsigned int*);
using NvmlDeviceGetUllFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);  // NOLINT
using NvmlDeviceGetClockFn = NvmlReturn (*)(NvmlDevice, int, unsigned int*);
using NvmlDeviceGetPcieThroughputFn = NvmlReturn (*)(NvmlDevice, int, unsigned int*);
using NvmlDeviceGetTotalEccErrorsFn = NvmlReturn (*)(NvmlDevice, int, int,
                                                     unsigned long long*);  // NOLINT
using NvmlDeviceGetMigModeFn = NvmlReturn (*)(NvmlDevice, unsigned int*, unsigned int*);
// `nvmlEnableState_t` is a C enum (0 disabled, 1 enabled), passed as int.
using NvmlDeviceGetEnableStateFn = NvmlReturn (*)(NvmlDevice, int*);
using NvmlDeviceGetEccModeFn = NvmlReturn (*)(NvmlDevice, int*, int*);
using NvmlDeviceGetNvLinkStateFn = NvmlReturn (*)(NvmlDevice, unsigned int, int*);
using NvmlDeviceGetProcessesFn = NvmlReturn (*)(NvmlDevice, unsigned int*, NvmlProcessInfo*);

}  // namespace llmbench::telemetry::detail
