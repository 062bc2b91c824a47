// The sweep of `llmbench probe comm` (nccl.hpp): per GPU count one clique of communicators,
// streams, buffers and events; per collective, dtype and size one timed series.

#include "llmbench/core/error.hpp"
#include "llmbench/telemetry/detail/nccl_libraries.hpp"
#include "llmbench/telemetry/nccl.hpp"
#include "llmbench/telemetry/series_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmbench::telemetry {

using namespace detail;  // NOLINT(google-build-using-namespace): the ABI's names, this file only

namespace {

/// A CUDA or NCCL call failed: the sweep stops and keeps what it measured.
class CallFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

int nccl_type(CommDtype d) noexcept {
  switch (d) {
    case CommDtype::Fp16:
      return kNcclFloat16;
    case CommDtype::Bf16:
      return kNcclBfloat16;
    case CommDtype::Fp8E4M3:
      return kNcclFloat8e4m3;
    case CommDtype::Fp8E5M2:
      return kNcclFloat8e5m2;
  }
  return kNcclUint8;
}

/// One GPU of a clique: its communicator, stream, buffers and the iteration marks.
struct Rank {
  int device = 0;
  NcclComm comm = nullptr;
  CudaStream stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  std::vector<CudaEvent> marks{};  ///< iters + 1 events: mark i starts iteration i
};

/// Communicators over a set of devices with everything one timed series needs, made once per
/// GPU count and freed (errors ignored) at destruction.
class Clique {
 public:
  Clique(const CommProbe::Libraries& lib, const std::vector<CommDevice>& devices,
         std::int64_t buffer_bytes, int marks)
      : lib_(lib) {
    try {
      make(devices, buffer_bytes, marks);
    } catch (...) {
      release();
      throw;
    }
  }

  ~Clique() { release(); }
  Clique(const Clique&) = delete;
  Clique& operator=(const Clique&) = delete;
  Clique(Clique&&) = delete;
  Clique& operator=(Clique&&) = delete;

  /// Times `iters` iterations of `c` after `warmup` (nccl.hpp "Timing").
  CollectiveTiming time(Collective c, CommDtype d, const CollectiveCounts& n, int warmup,
                        int iters) {
    for (int w = 0; w < warmup; ++w) launch(c, d, n);
    for (auto& k : ranks_) cuda("cudaStreamSynchronize", lib_.stream_synchronize(k.stream));
    for (int i = 0; i < iters; ++i) {
      mark(static_cast<std::size_t>(i));
      launch(c, d, n);
    }
    const auto last = static_cast<std::size_t>(iters);
    mark(last);
    for (auto& k : ranks_) cuda("cudaEventSynchronize", lib_.event_synchronize(k.marks[last]));
    std::vector<double> per_iteration(last, 0.0);
    for (std::size_t i = 0; i < last; ++i) {
      double sum_us = 0;
      for (auto& k : ranks_) {
        float ms = 0;
        cuda("cudaEventElapsedTime", lib_.event_elapsed_time(&ms, k.marks[i], k.marks[i + 1]));
        sum_us += static_cast<double>(ms) * 1e3;
      }
      per_iteration[i] = sum_us / static_cast<double>(ranks_.size());
    }
    const SeriesStats st = describe_series(per_iteration);
    return CollectiveTiming{.collective = c,
                            .dtype = d,
                            .gpus = static_cast<int>(ranks_.size()),
                            .bytes = n.bytes,
                            .count = n.count,
                            .iters = iters,
                            .mean_us = st.mean,
                            .p99_us = st.p99,
                            .min_us = st.min,
                            .max_us = st.max};
  }

 private:
  void cuda(const char* call, CudaError rc) const {
    if (rc != kCudaSuccess) {
      failed_ = true;
      throw CallFailed(lib_.cuda_failure(call, rc));
    }
  }
  void nccl(const char* call, NcclResult rc) const {
    if (rc != kNcclSuccess) {
      failed_ = true;
      throw CallFailed(lib_.nccl_failure(call, rc));
    }
  }

  /// Records mark `i` on every GPU's stream.
  void mark(std::size_t i) const {
    for (const auto& k : ranks_) {
      cuda("cudaSetDevice", lib_.set_device(k.device));
      cuda("cudaEventRecord", lib_.event_record(k.marks[i], k.stream));
    }
  }

  /// One iteration: one group call with every GPU's part.
  void launch(Collective c, CommDtype d, const CollectiveCounts& n) const {
    const int type = nccl_type(d);
    const auto count = static_cast<std::size_t>(n.count);
    const int peers = static_cast<int>(ranks_.size());
    const auto chunk = static_cast<std::size_t>(n.count * info(d).bytes);
    nccl("ncclGroupStart", lib_.group_start());
    for (const auto& k : ranks_) {
      switch (c) {
        case Collective::AllReduce:
          nccl("ncclAllReduce",
               lib_.all_reduce(k.send, k.recv, count, type, kNcclSum, k.comm, k.stream));
          break;
        case Collective::AllGather:
          nccl("ncclAllGather", lib_.all_gather(k.send, k.recv, count, type, k.comm, k.stream));
          break;
        case Collective::ReduceScatter:
          nccl("ncclReduceScatter",
               lib_.reduce_scatter(k.send, k.recv, count, type, kNcclSum, k.comm, k.stream));
          break;
        case Collective::AllToAll:
          // Chunk p of the send buffer goes to peer p, chunk p of the receive buffer comes from
          // it (nccl-tests' alltoall, the NCCL guide's all-to-all example).
          for (int p = 0; p < peers; ++p) {
            const auto off = static_cast<std::size_t>(p) * chunk;
            nccl("ncclSend", lib_.send(static_cast<const char*>(k.send) + off, count, type, p,
                                       k.comm, k.stream));
            nccl("ncclRecv",
                 lib_.recv(static_cast<char*>(k.recv) + off, count, type, p, k.comm, k.stream));
          }
          break;
      }
    }
    nccl("ncclGroupEnd", lib_.group_end());
  }

  /// Allocates, creates and initializes every rank (the constructor's work).
  void make(const std::vector<CommDevice>& devices, std::int64_t buffer_bytes, int marks) {
    ranks_.resize(devices.size());
    for (std::size_t r = 0; r < devices.size(); ++r) {
      Rank& k = ranks_[r];
      k.device = devices[r].index;
      cuda("cudaSetDevice", lib_.set_device(k.device));
      const auto bytes = static_cast<std::size_t>(buffer_bytes);
      for (void** buffer : {&k.send, &k.recv}) {
        const CudaError rc = lib_.malloc(buffer, bytes);
        if (rc != kCudaSuccess) {
          failed_ = true;
          throw CallFailed(fmt::format("{} on GPU {} (lower --max-bytes)",
                                       lib_.cuda_failure("cudaMalloc", rc), k.device));
        }
        cuda("cudaMemset", lib_.memset(*buffer, 0, bytes));
      }
      // cudaMemset runs on the legacy default stream, which the non-blocking streams below do
      // not wait for: wait here, so no collective reads a buffer still being cleared.
      cuda("cudaStreamSynchronize", lib_.stream_synchronize(nullptr));
      cuda("cudaStreamCreateWithFlags", lib_.stream_create(&k.stream, kCudaStreamNonBlocking));
      k.marks.resize(static_cast<std::size_t>(marks), nullptr);
      for (auto& e : k.marks) cuda("cudaEventCreate", lib_.event_create(&e));
    }
    std::vector<NcclComm> comms(ranks_.size(), nullptr);
    std::vector<int> list;
    for (const auto& k : ranks_) list.push_back(k.device);
    nccl("ncclCommInitAll",
         lib_.comm_init_all(comms.data(), static_cast<int>(list.size()), list.data()));
    for (std::size_t r = 0; r < ranks_.size(); ++r) ranks_[r].comm = comms[r];
  }

  /// Frees whatever was made (errors ignored: nothing more can be done about them).
  void release() noexcept {
    for (auto& k : ranks_) {
      // After a failed call a communicator may have work that never ends: abort it (the NCCL
      // guide, "Fault tolerance"); otherwise destroy it, which waits for its work.
      if (k.comm != nullptr)
        (void)(failed_ ? lib_.comm_abort(k.comm) : lib_.comm_destroy(k.comm));
      (void)lib_.set_device(k.device);
      for (auto* e : k.marks) {
        if (e != nullptr)
          (void)lib_.event_destroy(e);
      }
      if (k.stream != nullptr)
        (void)lib_.stream_destroy(k.stream);
      for (void* b : {k.send, k.recv}) {
        if (b != nullptr)
          (void)lib_.free(b);
      }
    }
    ranks_.clear();
  }

  const CommProbe::Libraries& lib_;
  std::vector<Rank> ranks_;
  mutable bool failed_ = false;  ///< a call failed: communicators are aborted, not destroyed
};

/// Why `d` cannot be measured with this NCCL on these GPUs ("" when it can).
std::string unsupported(CommDtype d, const CommProbeSetup& s, int gpus) {
  const CommDtypeInfo& i = info(d);
  if (s.nccl_version_code < i.min_nccl_version) {
    return fmt::format("{}: NCCL {} has no such type ({} and later)", i.name, s.nccl_version,
                       nccl_version_string(i.min_nccl_version));
  }
  for (int g = 0; g < gpus; ++g) {
    const CommDevice& dev = s.devices[static_cast<std::size_t>(g)];
    if (dev.compute_capability < i.min_compute_capability) {
      return fmt::format("{}: GPU {} has compute capability {}.{} (NCCL needs {}.{})", i.name,
                         dev.index, dev.compute_capability / 10, dev.compute_capability % 10,
                         i.min_compute_capability / 10, i.min_compute_capability % 10);
    }
  }
  return {};
}

}  // namespace

CommProbeResult CommProbe::run(
    const std::function<void(std::span<const CollectiveTiming>)>& on_group) const {
  CommProbeResult result{.setup = setup_};
  const auto sizes = sweep_sizes(options_.min_bytes, options_.max_bytes);
  std::vector<Collective> collectives = options_.collectives;
  if (collectives.empty()) {
    for (const auto& c : kCollectives) collectives.push_back(c.collective);
  }
  try {
    for (const int gpus : gpu_counts_) {
      const std::vector<CommDevice> devices(setup_.devices.begin(), setup_.devices.begin() + gpus);
      Clique clique(*lib_, devices, sizes.back(), options_.iters + 1);
      for (const Collective c : collectives) {
        for (const CommDtype d : options_.dtypes) {
          if (const std::string why = unsupported(d, setup_, gpus); !why.empty()) {
            result.notes.push_back(
                fmt::format("{} on {} GPUs not measured: {}", to_string(c), gpus, why));
            continue;
          }
          const std::size_t first = result.timings.size();
          for (const std::int64_t target : sizes) {
            const CollectiveCounts n = collective_counts(c, d, gpus, target);
            if (n.count == 0) {
              result.notes.push_back(
                  fmt::format("{} {} on {} GPUs: {} B is too small to split into {} chunks of 16 B",
                              to_string(c), to_string(d), gpus, target, gpus));
              continue;
            }
            result.timings.push_back(clique.time(c, d, n, options_.warmup_iters, options_.iters));
          }
          if (on_group)
            on_group(std::span<const CollectiveTiming>(result.timings).subspan(first));
        }
      }
    }
  } catch (const CallFailed& e) {
    result.error = e.what();
  }
  return result;
}

}  // namespace llmbench::telemetry
