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

/// `nvmlUtilization_t` (percent of the last sample period).
struct NvmlUtilization {
  unsigned int gpu = 0;
  unsigned int memory = 0;
};

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
using NvmlDeviceGetUtilizationRatesFn = NvmlReturn (*)(NvmlDevice, NvmlUtilization*);
using NvmlDeviceGetUintFn = NvmlReturn (*)(NvmlDevice, unsigned int*);
using NvmlDeviceGetUllFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);  // NOLINT
using NvmlDeviceGetClockFn = NvmlReturn (*)(NvmlDevice, int, unsigned int*);
using NvmlDeviceGetPcieThroughputFn = NvmlReturn (*)(NvmlDevice, int, unsigned int*);
using NvmlDeviceGetTotalEccErrorsFn = NvmlReturn (*)(NvmlDevice, int, int,
                                                     unsigned long long*);  // NOLINT
using NvmlDeviceGetMigModeFn = NvmlReturn (*)(NvmlDevice, unsigned int*, unsigned int*);

}  // namespace llmbench::telemetry::detail
