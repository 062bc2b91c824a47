#pragma once
/// @file
/// The part of the CUDA runtime's and NCCL's C ABI that `llmbench probe comm` calls, described
/// here instead of including cuda_runtime_api.h and nccl.h: both libraries are opened with dlopen
/// at run time (never linked), so `llmbench` builds and runs on machines without them.
///
/// CUDA runtime (NVIDIA "CUDA Runtime API" reference, modules Device Management, Stream
/// Management, Event Management, Memory Management, Version Management, Error Handling):
/// `cudaError_t` is a C enum (0 = cudaSuccess); `cudaStream_t` and `cudaEvent_t` are pointers
/// to opaque structs. `cudaEventElapsedTime` gives milliseconds as a float (resolution about
/// 0.5 µs). `cudaGetDeviceProperties` fills a `cudaDeviceProp` whose first member is
/// `char name[256]` in every CUDA release; the probe reads only that member, into a buffer far
/// larger than the struct (about 1 KB in CUDA 12), so the layout of the rest does not matter.
/// CUDA 12 names the function `cudaGetDeviceProperties_v2` in the library.
///
/// NCCL (`nccl.h`, NVIDIA/nccl `src/nccl.h.in`, and the NCCL API documentation):
/// `ncclResult_t` 0 = ncclSuccess; `ncclComm_t` a pointer; `ncclDataType_t` ncclUint8 = 1,
/// ncclFloat16 = 6, ncclBfloat16 = 9 (NCCL 2.10+), ncclFloat8e4m3 = 10 and ncclFloat8e5m2 = 11
/// (NCCL 2.24+); `ncclRedOp_t` ncclSum = 0. `ncclGetVersion` returns NCCL_VERSION_CODE:
/// major × 10000 + minor × 100 + patch since 2.9 (major × 1000 + minor × 100 + patch before).
/// `ncclCommInitAll(comms, ndev, devlist)` makes one communicator per listed device inside one
/// process; when one thread drives several devices, every call on them must sit between
/// `ncclGroupStart` and `ncclGroupEnd` (the NCCL guide, "Group Calls": "Management Of Multiple
/// GPUs From One Thread"). An all-to-all is n `ncclSend` + n `ncclRecv` per rank inside one
/// group ("Point-to-point communication", the all-to-all example of the NCCL guide).

#include <cstddef>

namespace llmbench::telemetry::detail {

/// `cudaError_t` (a C enum passed as int).
using CudaError = int;
inline constexpr CudaError kCudaSuccess = 0;
/// cudaErrorInsufficientDriver, cudaErrorNoDevice: no usable GPU.
inline constexpr CudaError kCudaErrorInsufficientDriver = 35;
inline constexpr CudaError kCudaErrorNoDevice = 100;

struct CudaStreamOpaque;
struct CudaEventOpaque;
using CudaStream = CudaStreamOpaque*;  ///< `cudaStream_t`
using CudaEvent = CudaEventOpaque*;    ///< `cudaEvent_t`

/// `cudaStreamNonBlocking`: the stream does not synchronize with the legacy default stream.
inline constexpr unsigned int kCudaStreamNonBlocking = 0x01;
/// `cudaDeviceAttr` cudaDevAttrComputeCapabilityMajor / Minor.
inline constexpr int kCudaDevAttrComputeCapabilityMajor = 75;
inline constexpr int kCudaDevAttrComputeCapabilityMinor = 76;
/// Bytes reserved for `cudaDeviceProp` (the real struct is about 1 KB; only `name` is read).
inline constexpr std::size_t kCudaDevicePropBytes = 8192;
/// `cudaDeviceProp::name`'s size.
inline constexpr std::size_t kCudaDeviceNameBytes = 256;

using CudaGetErrorStringFn = const char* (*)(CudaError);
using CudaGetDeviceCountFn = CudaError (*)(int*);
using CudaSetDeviceFn = CudaError (*)(int);
using CudaGetDevicePropertiesFn = CudaError (*)(void*, int);
using CudaDeviceGetAttributeFn = CudaError (*)(int*, int, int);
using CudaVersionFn = CudaError (*)(int*);
using CudaMallocFn = CudaError (*)(void**, std::size_t);
using CudaFreeFn = CudaError (*)(void*);
using CudaMemsetFn = CudaError (*)(void*, int, std::size_t);
using CudaStreamCreateWithFlagsFn = CudaError (*)(CudaStream*, unsigned int);
using CudaStreamDestroyFn = CudaError (*)(CudaStream);
using CudaStreamSynchronizeFn = CudaError (*)(CudaStream);
using CudaEventCreateFn = CudaError (*)(CudaEvent*);
using CudaEventDestroyFn = CudaError (*)(CudaEvent);
using CudaEventRecordFn = CudaError (*)(CudaEvent, CudaStream);
using CudaEventSynchronizeFn = CudaError (*)(CudaEvent);
using CudaEventElapsedTimeFn = CudaError (*)(float*, CudaEvent, CudaEvent);

/// `ncclResult_t` (a C enum passed as int).
using NcclResult = int;
inline constexpr NcclResult kNcclSuccess = 0;
struct NcclCommOpaque;
using NcclComm = NcclCommOpaque*;  ///< `ncclComm_t`
/// `ncclDataType_t` values.
inline constexpr int kNcclUint8 = 1;
inline constexpr int kNcclFloat16 = 6;
inline constexpr int kNcclBfloat16 = 9;
inline constexpr int kNcclFloat8e4m3 = 10;
inline constexpr int kNcclFloat8e5m2 = 11;
/// `ncclRedOp_t` ncclSum.
inline constexpr int kNcclSum = 0;

using NcclGetVersionFn = NcclResult (*)(int*);
using NcclGetErrorStringFn = const char* (*)(NcclResult);
using NcclCommInitAllFn = NcclResult (*)(NcclComm*, int, const int*);
/// `ncclCommDestroy` and `ncclCommAbort` (the latter for a communicator after a failure).
using NcclCommDestroyFn = NcclResult (*)(NcclComm);
using NcclGroupFn = NcclResult (*)();
using NcclAllReduceFn = NcclResult (*)(const void*, void*, std::size_t, int, int, NcclComm,
                                       CudaStream);
using NcclAllGatherFn = NcclResult (*)(const void*, void*, std::size_t, int, NcclComm, CudaStream);
using NcclReduceScatterFn = NcclResult (*)(const void*, void*, std::size_t, int, int, NcclComm,
                                           CudaStream);
using NcclSendFn = NcclResult (*)(const void*, std::size_t, int, int, NcclComm, CudaStream);
using NcclRecvFn = NcclResult (*)(void*, std::size_t, int, int, NcclComm, CudaStream);

}  // namespace llmbench::telemetry::detail
