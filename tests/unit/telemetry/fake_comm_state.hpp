#pragma once
// The objects behind the handles of the fake CUDA runtime (fake_cudart.cpp) and the fake NCCL
// (fake_nccl.cpp), shared by the two: a `cudaStream_t` of the fake runtime points to a
// FakeStream, whose virtual clock the fake NCCL advances by the scripted time of each
// collective; a `cudaEvent_t` points to a FakeEvent that takes the clock when recorded.

#include <cstddef>

namespace llmbench_fake {

inline constexpr int kStreamMagic = 0x5354524d;  // "STRM"
inline constexpr int kEventMagic = 0x45564e54;   // "EVNT"

struct FakeStream {
  int magic = kStreamMagic;
  int device = 0;
  double clock_us = 0;  ///< virtual time at which the stream's last queued work ends
};

struct FakeEvent {
  int magic = kEventMagic;
  int device = 0;
  bool recorded = false;
  double t_us = 0;
};

}  // namespace llmbench_fake

extern "C" {
/// 0 when [ptr, ptr + bytes) lies inside one live allocation of `device`; else a CUDA error.
int llmbench_fake_cuda_check(const void* ptr, std::size_t bytes, int device);
/// Devices the fake runtime reports.
int llmbench_fake_cuda_device_count();
}
