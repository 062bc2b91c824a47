// A fake CUDA runtime for the tests (libfake_cudart.so): the functions `llmbench probe comm`
// resolves (src/llmbench/telemetry/detail/nccl_abi.hpp, after NVIDIA's CUDA Runtime API
// reference), with no GPU behind them. Memory is address space only (nothing is stored), but
// every allocation is tracked so the fake NCCL can check that each buffer it is given lies
// inside one allocation of the right device. Streams carry a virtual clock (fake_comm_state.hpp)
// that only the fake NCCL advances; events take the clock of their stream when recorded.
//
// Environment, read at first use and again at every cudaGetDeviceCount:
//   LLMBENCH_FAKE_CUDA_DEVICES  devices (default 8; 0 makes cudaGetDeviceCount fail with
//                               cudaErrorNoDevice, as on a machine without a GPU)
//   LLMBENCH_FAKE_CUDA_NAME     cudaDeviceProp::name (default "Fake H100")
//   LLMBENCH_FAKE_CUDA_CC       compute capability, major*10 + minor (default 90)
//   LLMBENCH_FAKE_CUDA_MEMORY   bytes of memory per device (default 80 GiB)
// Test hooks: llmbench_fake_cuda_live() counts live allocations + streams + events.

#include "fake_comm_state.hpp"
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

using llmbench_fake::FakeEvent;
using llmbench_fake::FakeStream;

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kMemoryAllocation = 2;
constexpr int kInvalidDevice = 101;
constexpr int kNoDevice = 100;
constexpr int kInvalidResourceHandle = 400;
constexpr int kNotReady = 600;

struct Alloc {
  std::size_t size = 0;
  int device = 0;
};

struct State {
  int devices = 8;
  std::string name = "Fake H100";
  int cc = 90;
  std::uint64_t memory = std::uint64_t{80} << 30;
  std::map<std::uintptr_t, Alloc> allocs;
  std::vector<std::uint64_t> used;
  std::uintptr_t next = std::uintptr_t{1} << 40;
  std::set<FakeStream*> streams;
  std::set<FakeEvent*> events;
  std::mutex mu;

  State() { read_environment(); }
  /// (Re)reads the environment: at start and at every cudaGetDeviceCount, so one test process
  /// can play several machines in turn. Allocations made before are kept.
  void read_environment() {
    devices = 8;
    name = "Fake H100";
    cc = 90;
    memory = std::uint64_t{80} << 30;
    if (const char* v = std::getenv("LLMBENCH_FAKE_CUDA_DEVICES"))
      devices = std::atoi(v);
    if (const char* v = std::getenv("LLMBENCH_FAKE_CUDA_NAME"))
      name = v;
    if (const char* v = std::getenv("LLMBENCH_FAKE_CUDA_CC"))
      cc = std::atoi(v);
    if (const char* v = std::getenv("LLMBENCH_FAKE_CUDA_MEMORY"))
      memory = std::strtoull(v, nullptr, 10);
    used.resize(static_cast<std::size_t>(devices > 0 ? devices : 0), 0);
  }
};

State& state() {
  static State s;
  return s;
}

thread_local int current_device = 0;

bool valid_device(int d) {
  return d >= 0 && d < state().devices;
}

}  // namespace

FAKE_API const char* cudaGetErrorString(int error) {
  switch (error) {
    case kSuccess:
      return "no error";
    case kInvalidValue:
      return "invalid argument";
    case kMemoryAllocation:
      return "out of memory";
    case kNoDevice:
      return "no CUDA-capable device is detected";
    case kInvalidDevice:
      return "invalid device ordinal";
    case kInvalidResourceHandle:
      return "invalid resource handle";
    default:
      return "unknown error";
  }
}

FAKE_API int cudaGetDeviceCount(int* count) {
  state().read_environment();
  *count = state().devices > 0 ? state().devices : 0;
  return state().devices > 0 ? kSuccess : kNoDevice;
}

FAKE_API int cudaSetDevice(int device) {
  if (!valid_device(device))
    return kInvalidDevice;
  current_device = device;
  return kSuccess;
}

FAKE_API int cudaGetDeviceProperties_v2(void* prop, int device) {
  if (!valid_device(device))
    return kInvalidDevice;
  auto* name = static_cast<char*>(prop);
  std::strncpy(name, state().name.c_str(), 255);
  name[255] = '\0';
  return kSuccess;
}

FAKE_API int cudaDeviceGetAttribute(int* value, int attr, int device) {
  if (!valid_device(device))
    return kInvalidDevice;
  if (attr == 75) {
    *value = state().cc / 10;
  } else if (attr == 76) {
    *value = state().cc % 10;
  } else {
    return kInvalidValue;
  }
  return kSuccess;
}

FAKE_API int cudaRuntimeGetVersion(int* v) {
  *v = 12040;
  return kSuccess;
}

FAKE_API int cudaDriverGetVersion(int* v) {
  *v = 12080;
  return kSuccess;
}

FAKE_API int cudaMalloc(void** ptr, std::size_t size) {
  State& s = state();
  const std::lock_guard lock(s.mu);
  auto& used = s.used.at(static_cast<std::size_t>(current_device));
  if (size == 0 || used + size > s.memory)
    return kMemoryAllocation;
  used += size;
  const std::uintptr_t base = s.next;
  s.next += (size + 0xFFFF) & ~std::uintptr_t{0xFFFF};
  s.allocs[base] = Alloc{size, current_device};
  *ptr = reinterpret_cast<void*>(base);  // NOLINT: an address, never dereferenced
  return kSuccess;
}

FAKE_API int cudaFree(void* ptr) {
  State& s = state();
  const std::lock_guard lock(s.mu);
  const auto it = s.allocs.find(reinterpret_cast<std::uintptr_t>(ptr));  // NOLINT
  if (it == s.allocs.end())
    return kInvalidValue;
  s.used.at(static_cast<std::size_t>(it->second.device)) -= it->second.size;
  s.allocs.erase(it);
  return kSuccess;
}

FAKE_API int llmbench_fake_cuda_check(const void* ptr, std::size_t bytes, int device) {
  State& s = state();
  const std::lock_guard lock(s.mu);
  const auto p = reinterpret_cast<std::uintptr_t>(ptr);  // NOLINT
  auto it = s.allocs.upper_bound(p);
  if (it == s.allocs.begin())
    return kInvalidValue;
  --it;
  if (p + bytes > it->first + it->second.size)
    return kInvalidValue;
  return it->second.device == device ? kSuccess : kInvalidDevice;
}

FAKE_API int llmbench_fake_cuda_device_count() {
  return state().devices;
}

FAKE_API int cudaMemset(void* ptr, int /*value*/, std::size_t bytes) {
  return llmbench_fake_cuda_check(ptr, bytes, current_device);
}

FAKE_API int cudaStreamCreateWithFlags(FakeStream** stream, unsigned int /*flags*/) {
  auto* st = new FakeStream{.device = current_device};
  const std::lock_guard lock(state().mu);
  state().streams.insert(st);
  *stream = st;
  return kSuccess;
}

FAKE_API int cudaStreamDestroy(FakeStream* stream) {
  const std::lock_guard lock(state().mu);
  if (state().streams.erase(stream) == 0)
    return kInvalidResourceHandle;
  delete stream;
  return kSuccess;
}

FAKE_API int cudaStreamSynchronize(FakeStream* stream) {
  // nullptr: the legacy default stream, always valid.
  return stream == nullptr || stream->magic == llmbench_fake::kStreamMagic ? kSuccess
                                                                           : kInvalidResourceHandle;
}

FAKE_API int cudaEventCreate(FakeEvent** event) {
  auto* ev = new FakeEvent{.device = current_device};
  const std::lock_guard lock(state().mu);
  state().events.insert(ev);
  *event = ev;
  return kSuccess;
}

FAKE_API int cudaEventDestroy(FakeEvent* event) {
  const std::lock_guard lock(state().mu);
  if (state().events.erase(event) == 0)
    return kInvalidResourceHandle;
  delete event;
  return kSuccess;
}

FAKE_API int cudaEventRecord(FakeEvent* event, FakeStream* stream) {
  if (event == nullptr || stream == nullptr || event->magic != llmbench_fake::kEventMagic ||
      stream->magic != llmbench_fake::kStreamMagic || event->device != stream->device)
    return kInvalidResourceHandle;
  event->recorded = true;
  event->t_us = stream->clock_us;
  return kSuccess;
}

FAKE_API int cudaEventSynchronize(FakeEvent* event) {
  if (event == nullptr || event->magic != llmbench_fake::kEventMagic)
    return kInvalidResourceHandle;
  return event->recorded ? kSuccess : kNotReady;
}

FAKE_API int cudaEventElapsedTime(float* ms, FakeEvent* start, FakeEvent* end) {
  if (start == nullptr || end == nullptr || !start->recorded || !end->recorded ||
      start->device != end->device)
    return kInvalidResourceHandle;
  *ms = static_cast<float>((end->t_us - start->t_us) / 1e3);
  return kSuccess;
}

FAKE_API int llmbench_fake_cuda_live() {
  State& s = state();
  const std::lock_guard lock(s.mu);
  return static_cast<int>(s.allocs.size() + s.streams.size() + s.events.size());
}
