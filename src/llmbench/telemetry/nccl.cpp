#include "llmbench/telemetry/nccl.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/telemetry/detail/nccl_libraries.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <dlfcn.h>
#include <initializer_list>
#include <set>
#include <string_view>

extern char** environ;  // POSIX: the process environment (unistd.h declares it with _GNU_SOURCE)

namespace llmbench::telemetry {

using namespace detail;  // NOLINT(google-build-using-namespace): the ABI's names, this file only

namespace {

/// Where every "cannot measure" message ends: what the probe needs.
constexpr std::string_view kNeeds =
    "all-reduce, all-gather, reduce-scatter and all-to-all need the CUDA runtime, NCCL and at "
    "least 2 GPUs; nothing was measured and no calibration was written";

[[noreturn]] void cannot_measure(const std::string& why) {
  throw Exception(Error{fmt::format("{}: {}", why, kNeeds), "probe comm", -1});
}

/// Opens the first of `names` that loads; "" with `errors` listing each failure otherwise.
void* open_first(const std::vector<std::string>& names, std::string& opened, std::string& errors) {
  for (const auto& name : names) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      opened = name;
      return h;
    }
    const char* why = dlerror();
    if (!errors.empty())
      errors += "; ";
    errors += why != nullptr ? why : name + ": unknown error";
  }
  return nullptr;
}

/// Resolves the first of `names` into `fn`; throws naming the first when the library has none.
template <class Fn>
void resolve(void* handle, const std::string& library, std::initializer_list<const char*> names,
             Fn& fn) {
  for (const char* name : names) {
    if (void* p = dlsym(handle, name)) {
      // POSIX guarantees that a dlsym result converts to a function pointer (dlsym(3)).
      fn = reinterpret_cast<Fn>(p);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
      return;
    }
  }
  cannot_measure(fmt::format("{} has no {}", library, *names.begin()));
}

void resolve_cudart(CommProbe::Libraries& l, const std::string& lib) {
  void* h = l.cudart;
  resolve(h, lib, {"cudaGetErrorString"}, l.cuda_error_string);
  resolve(h, lib, {"cudaGetDeviceCount"}, l.get_device_count);
  resolve(h, lib, {"cudaSetDevice"}, l.set_device);
  // CUDA 12 exports the current struct as _v2; `name` leads both layouts.
  resolve(h, lib, {"cudaGetDeviceProperties_v2", "cudaGetDeviceProperties"},
          l.get_device_properties);
  resolve(h, lib, {"cudaDeviceGetAttribute"}, l.device_get_attribute);
  resolve(h, lib, {"cudaRuntimeGetVersion"}, l.runtime_get_version);
  resolve(h, lib, {"cudaDriverGetVersion"}, l.driver_get_version);
  resolve(h, lib, {"cudaMalloc"}, l.malloc);
  resolve(h, lib, {"cudaFree"}, l.free);
  resolve(h, lib, {"cudaMemset"}, l.memset);
  resolve(h, lib, {"cudaStreamCreateWithFlags"}, l.stream_create);
  resolve(h, lib, {"cudaStreamDestroy"}, l.stream_destroy);
  resolve(h, lib, {"cudaStreamSynchronize"}, l.stream_synchronize);
  resolve(h, lib, {"cudaEventCreate"}, l.event_create);
  resolve(h, lib, {"cudaEventDestroy"}, l.event_destroy);
  resolve(h, lib, {"cudaEventRecord"}, l.event_record);
  resolve(h, lib, {"cudaEventSynchronize"}, l.event_synchronize);
  resolve(h, lib, {"cudaEventElapsedTime"}, l.event_elapsed_time);
}

void resolve_nccl(CommProbe::Libraries& l, const std::string& lib) {
  void* h = l.nccl;
  resolve(h, lib, {"ncclGetVersion"}, l.nccl_get_version);
  resolve(h, lib, {"ncclGetErrorString"}, l.nccl_error_string);
  resolve(h, lib, {"ncclCommInitAll"}, l.comm_init_all);
  resolve(h, lib, {"ncclCommDestroy"}, l.comm_destroy);
  resolve(h, lib, {"ncclCommAbort"}, l.comm_abort);
  resolve(h, lib, {"ncclGroupStart"}, l.group_start);
  resolve(h, lib, {"ncclGroupEnd"}, l.group_end);
  resolve(h, lib, {"ncclAllReduce"}, l.all_reduce);
  resolve(h, lib, {"ncclAllGather"}, l.all_gather);
  resolve(h, lib, {"ncclReduceScatter"}, l.reduce_scatter);
  resolve(h, lib, {"ncclSend"}, l.send);
  resolve(h, lib, {"ncclRecv"}, l.recv);
}

/// Name and compute capability of device `index` (name "" when the runtime does not say).
CommDevice describe_device(const CommProbe::Libraries& l, int index) {
  CommDevice d{.index = index};
  // `cudaDeviceProp` begins with `char name[256]`; the rest of the buffer only gives the
  // runtime room for the struct, whatever its size in this release.
  std::vector<char> prop(kCudaDevicePropBytes, '\0');
  if (l.get_device_properties(prop.data(), index) == kCudaSuccess) {
    const auto first = prop.begin();
    d.name.assign(first, std::find(first, first + kCudaDeviceNameBytes, '\0'));
  }
  int major = 0;
  int minor = 0;
  if (l.device_get_attribute(&major, kCudaDevAttrComputeCapabilityMajor, index) == kCudaSuccess &&
      l.device_get_attribute(&minor, kCudaDevAttrComputeCapabilityMinor, index) == kCudaSuccess)
    d.compute_capability = major * 10 + minor;
  return d;
}

std::string device_list(const std::vector<CommDevice>& devices) {
  std::string out;
  for (const auto& d : devices) {
    if (!out.empty())
      out += ", ";
    out += fmt::format("{}: {}", d.index, d.name.empty() ? "unnamed" : d.name);
  }
  return out;
}

/// The devices `o.devices` names (or all `count`), checked.
std::vector<int> choose_devices(const CommProbeOptions& o, int count) {
  if (o.devices.empty()) {
    std::vector<int> all(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  }
  for (const int d : o.devices) {
    if (d < 0 || d >= count) {
      throw Exception(Error{
          fmt::format("GPU {} does not exist: this machine has {} (0 to {})", d, count, count - 1),
          "--gpu-devices", -1});
    }
  }
  return o.devices;
}

/// The GPU counts to sweep: the options' (each within 2..n), else 2, 4, 8, … below n, and n.
std::vector<int> choose_gpu_counts(const CommProbeOptions& o, int n) {
  if (!o.gpu_counts.empty()) {
    for (const int k : o.gpu_counts) {
      if (k < 2 || k > n) {
        throw Exception(Error{fmt::format("{} GPUs: must be between 2 and the {} chosen", k, n),
                              "--gpu-counts", -1});
      }
    }
    std::vector<int> out = o.gpu_counts;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  std::vector<int> out;
  for (int k = 2; k < n; k *= 2) out.push_back(k);
  out.push_back(n);
  return out;
}

/// Every NCCL_* variable of the environment, sorted by name.
std::vector<std::pair<std::string, std::string>> nccl_environment() {
  std::vector<std::pair<std::string, std::string>> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (entry.rfind("NCCL_", 0) == 0 && eq != std::string_view::npos)
      out.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> default_cudart_libraries() {
  return {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"};
}

std::vector<std::string> default_nccl_libraries() {
  return {"libnccl.so.2", "libnccl.so"};
}

void validate_comm_probe_options(const CommProbeOptions& o) {
  if (o.iters < 1)
    throw Exception(Error{fmt::format("must be ≥ 1, got {}", o.iters), "--iters", -1});
  if (o.warmup_iters < 0)
    throw Exception(
        Error{fmt::format("must be ≥ 0, got {}", o.warmup_iters), "--warmup-iters", -1});
  if (o.min_bytes < 1)
    throw Exception(Error{fmt::format("must be ≥ 1, got {}", o.min_bytes), "--min-bytes", -1});
  if (o.max_bytes < o.min_bytes) {
    throw Exception(
        Error{fmt::format("must be ≥ --min-bytes ({}), got {}", o.min_bytes, o.max_bytes),
              "--max-bytes", -1});
  }
  if (o.dtypes.empty())
    throw Exception(Error{"at least one is needed", "--dtypes", -1});
  const std::set<int> distinct(o.devices.begin(), o.devices.end());
  if (distinct.size() != o.devices.size())
    throw Exception(Error{"a GPU is listed twice", "--gpu-devices", -1});
}

std::vector<std::int64_t> sweep_sizes(std::int64_t min_bytes, std::int64_t max_bytes) {
  std::vector<std::int64_t> out;
  for (std::int64_t s = min_bytes; s > 0 && s <= max_bytes; s *= 2) out.push_back(s);
  return out;
}

std::string nccl_version_string(int code) {
  if (code >= 10000)  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9
    return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

CommProbe::Libraries::~Libraries() {
  if (nccl != nullptr)
    dlclose(nccl);
  if (cudart != nullptr)
    dlclose(cudart);
}

std::string CommProbe::Libraries::cuda_failure(const char* call, CudaError rc) const {
  const char* text = cuda_error_string != nullptr ? cuda_error_string(rc) : nullptr;
  return fmt::format("{}: {} (CUDA error {})", call, text != nullptr ? text : "unknown", rc);
}

std::string CommProbe::Libraries::nccl_failure(const char* call, NcclResult rc) const {
  const char* text = nccl_error_string != nullptr ? nccl_error_string(rc) : nullptr;
  return fmt::format("{}: {} (NCCL result {})", call, text != nullptr ? text : "unknown", rc);
}

std::unique_ptr<CommProbe> CommProbe::open(const CommProbeOptions& options) {
  validate_comm_probe_options(options);
  // NVLink multicast stays off unless the user set NCCL_NVLS_ENABLE (nccl.hpp); NCCL reads it
  // when the communicators are made.
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // NOLINT(concurrency-mt-unsafe): before any thread
  std::unique_ptr<CommProbe> p(new CommProbe());
  p->options_ = options;
  p->lib_ = std::make_unique<Libraries>();
  Libraries& l = *p->lib_;
  CommProbeSetup& s = p->setup_;

  const auto cudart_names =
      options.cudart_libraries.empty() ? default_cudart_libraries() : options.cudart_libraries;
  std::string errors;
  l.cudart = open_first(cudart_names, s.cudart_library, errors);
  if (l.cudart == nullptr)
    cannot_measure(fmt::format("no CUDA runtime on this machine ({})", errors));
  resolve_cudart(l, s.cudart_library);

  int count = 0;
  const CudaError rc = l.get_device_count(&count);
  if (rc != kCudaSuccess || count < 1) {
    cannot_measure(
        rc != kCudaSuccess
            ? fmt::format("no usable GPU ({} of {})", l.cuda_failure("cudaGetDeviceCount", rc),
                          s.cudart_library)
            : fmt::format("no GPU (cudaGetDeviceCount of {}: 0 devices)", s.cudart_library));
  }
  (void)l.runtime_get_version(&s.cuda_runtime_version);
  (void)l.driver_get_version(&s.cuda_driver_version);
  for (const int d : choose_devices(options, count)) s.devices.push_back(describe_device(l, d));
  if (s.devices.size() < 2 && count >= 2) {
    throw Exception(Error{fmt::format("chose one GPU ({}) of {}: collectives move data between "
                                      "GPUs; choose at least 2",
                                      device_list(s.devices), count),
                          "--gpu-devices", -1});
  }
  if (s.devices.size() < 2) {
    cannot_measure(fmt::format(
        "this machine has one GPU ({}): collectives move data between GPUs, so not one of them "
        "can be measured here (one GPU's own costs are not communication; the simulator keeps "
        "its datasheet terms)",
        device_list(s.devices)));
  }

  const auto nccl_names =
      options.nccl_libraries.empty() ? default_nccl_libraries() : options.nccl_libraries;
  errors.clear();
  l.nccl = open_first(nccl_names, s.nccl_library, errors);
  if (l.nccl == nullptr)
    cannot_measure(fmt::format("NCCL cannot be opened ({}); {} GPUs found: {}", errors,
                               s.devices.size(), device_list(s.devices)));
  resolve_nccl(l, s.nccl_library);
  const NcclResult vr = l.nccl_get_version(&s.nccl_version_code);
  if (vr != kNcclSuccess)
    cannot_measure(l.nccl_failure("ncclGetVersion", vr));
  s.nccl_version = nccl_version_string(s.nccl_version_code);
  p->gpu_counts_ = choose_gpu_counts(options, static_cast<int>(s.devices.size()));
  s.nccl_env = nccl_environment();
  return p;
}

CommProbe::~CommProbe() = default;

}  // namespace llmbench::telemetry
