#pragma once
/// @file
/// The CUDA runtime and NCCL as `CommProbe` opened them: the dlopen handles and one pointer per
/// function called (types in nccl_abi.hpp). Private to telemetry/nccl.cpp and comm_probe.cpp.

#include "llmbench/telemetry/detail/nccl_abi.hpp"
#include "llmbench/telemetry/nccl.hpp"

#include <string>

namespace llmbench::telemetry {

/// Every function the probe calls; all are required (`CommProbe::open` fails naming a missing
/// one). The handles are closed at destruction.
struct CommProbe::Libraries {
  void* cudart = nullptr;
  void* nccl = nullptr;

  detail::CudaGetErrorStringFn cuda_error_string = nullptr;
  detail::CudaGetDeviceCountFn get_device_count = nullptr;
  detail::CudaSetDeviceFn set_device = nullptr;
  detail::CudaGetDevicePropertiesFn get_device_properties = nullptr;
  detail::CudaDeviceGetAttributeFn device_get_attribute = nullptr;
  detail::CudaVersionFn runtime_get_version = nullptr;
  detail::CudaVersionFn driver_get_version = nullptr;
  detail::CudaMallocFn malloc = nullptr;
  detail::CudaFreeFn free = nullptr;
  detail::CudaMemsetFn memset = nullptr;
  detail::CudaStreamCreateWithFlagsFn stream_create = nullptr;
  detail::CudaStreamDestroyFn stream_destroy = nullptr;
  detail::CudaStreamSynchronizeFn stream_synchronize = nullptr;
  detail::CudaEventCreateFn event_create = nullptr;
  detail::CudaEventDestroyFn event_destroy = nullptr;
  detail::CudaEventRecordFn event_record = nullptr;
  detail::CudaEventSynchronizeFn event_synchronize = nullptr;
  detail::CudaEventElapsedTimeFn event_elapsed_time = nullptr;

  detail::NcclGetVersionFn nccl_get_version = nullptr;
  detail::NcclGetErrorStringFn nccl_error_string = nullptr;
  detail::NcclCommInitAllFn comm_init_all = nullptr;
  detail::NcclCommDestroyFn comm_destroy = nullptr;
  detail::NcclCommDestroyFn comm_abort = nullptr;  ///< `ncclCommAbort`, same prototype
  detail::NcclGroupFn group_start = nullptr;
  detail::NcclGroupFn group_end = nullptr;
  detail::NcclAllReduceFn all_reduce = nullptr;
  detail::NcclAllGatherFn all_gather = nullptr;
  detail::NcclReduceScatterFn reduce_scatter = nullptr;
  detail::NcclSendFn send = nullptr;
  detail::NcclRecvFn recv = nullptr;

  Libraries() = default;
  ~Libraries();
  Libraries(const Libraries&) = delete;
  Libraries& operator=(const Libraries&) = delete;
  Libraries(Libraries&&) = delete;
  Libraries& operator=(Libraries&&) = delete;

  /// "cudaMalloc: out of memory (code 2)" for a failed CUDA call.
  [[nodiscard]] std::string cuda_failure(const char* call, detail::CudaError rc) const;
  /// "ncclGroupEnd: invalid usage (code 5)" for a failed NCCL call.
  [[nodiscard]] std::string nccl_failure(const char* call, detail::NcclResult rc) const;
};

}  // namespace llmbench::telemetry
