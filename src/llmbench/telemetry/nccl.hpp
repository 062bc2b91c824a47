#pragma once
/// @file
/// `llmbench probe comm`: NCCL collectives timed across the GPUs of this machine, the way
/// NVIDIA's nccl-tests time them (sizes, bus bandwidth: core/collective.hpp), from one process
/// that drives every GPU: `ncclCommInitAll` over the chosen devices, one non-blocking stream per
/// GPU, each iteration one group call (`ncclGroupStart` … one call per GPU … `ncclGroupEnd`);
/// all-to-all is the grouped `ncclSend`/`ncclRecv` to every peer that nccl-tests issues.
///
/// Timing: after `warmup_iters` untimed iterations, `iters` iterations are issued back to back,
/// with a CUDA event recorded on each GPU's stream between consecutive iterations; iteration i
/// on GPU g lasts the events' elapsed time, and the iteration's time is the mean over the GPUs
/// (nccl-tests' default `-a 1` averages over ranks). Mean, p99, min and max are over the
/// iterations (linear interpolation between order statistics).
///
/// The CUDA runtime and NCCL are opened at run time with `dlopen`, never linked, as NVML is
/// (nvml.hpp): the binary runs without them, and says what it cannot measure. Their ABI is in
/// detail/nccl_abi.hpp. NVLink multicast (NVLS) is left off: unless the environment already sets
/// NCCL_NVLS_ENABLE, the probe sets it to 0 before NCCL starts, and every NCCL_* variable in
/// effect is reported with the results. Tests load fake libraries
/// (tests/unit/telemetry/fake_cudart.cpp, fake_nccl.cpp) through the library options.

#include "llmbench/core/collective.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::telemetry {

/// The CUDA runtime names tried in order when none is given (the unversioned development link,
/// then the runtimes of CUDA 13, 12 and 11).
std::vector<std::string> default_cudart_libraries();
/// The NCCL names tried in order when none is given.
std::vector<std::string> default_nccl_libraries();

/// What to measure. Every list empty = its default.
struct CommProbeOptions {
  std::vector<std::string> cudart_libraries{};  ///< `--cudart-library`; empty = the defaults
  std::vector<std::string> nccl_libraries{};    ///< `--nccl-library`; empty = the defaults
  std::vector<int> devices{};                   ///< `--gpu-devices` (CUDA ordinals); empty = all
  /// `--gpu-counts`: sweep the first k chosen devices for each k; empty = 2, 4, 8, … below the
  /// number of chosen devices, and that number.
  std::vector<int> gpu_counts{};
  std::vector<Collective> collectives{};           ///< `--collectives`; empty = all four
  std::vector<CommDtype> dtypes{CommDtype::Bf16};  ///< `--dtypes`
  std::int64_t min_bytes = std::int64_t{4} << 10;  ///< `--min-bytes` (nccl-tests `-b`)
  std::int64_t max_bytes = std::int64_t{1} << 30;  ///< `--max-bytes` (`-e`); sizes double (`-f 2`)
  int iters = 50;                                  ///< `--iters` (`-n`)
  int warmup_iters = 5;                            ///< `--warmup-iters` (`-w`)
};

/// Checks `o` on its own (before any library is opened): iteration counts, sizes, lists. Throws
/// `Exception` naming the flag.
void validate_comm_probe_options(const CommProbeOptions& o);

/// The target sizes of a sweep: min_bytes, 2·min_bytes, … up to max_bytes.
std::vector<std::int64_t> sweep_sizes(std::int64_t min_bytes, std::int64_t max_bytes);

/// One chosen GPU.
struct CommDevice {
  int index = 0;               ///< CUDA ordinal
  std::string name{};          ///< `cudaDeviceProp::name`
  int compute_capability = 0;  ///< major × 10 + minor (90 = Hopper)
};

/// What the probe found: libraries, versions, devices, NCCL's environment.
struct CommProbeSetup {
  std::string cudart_library{};  ///< the name or path that opened
  std::string nccl_library{};
  int cuda_runtime_version = 0;       ///< `cudaRuntimeGetVersion`, e.g. 12040
  int cuda_driver_version = 0;        ///< `cudaDriverGetVersion`
  int nccl_version_code = 0;          ///< `ncclGetVersion`
  std::string nccl_version{};         ///< "2.21.5"
  std::vector<CommDevice> devices{};  ///< the chosen devices, in sweep order
  /// Every NCCL_* environment variable at the start of the sweep, sorted by name.
  std::vector<std::pair<std::string, std::string>> nccl_env{};
};

/// A sweep's outcome. `error` non-empty: it stopped early (an NCCL or CUDA call failed), and
/// `timings` holds every size measured before.
struct CommProbeResult {
  CommProbeSetup setup{};
  std::vector<CollectiveTiming> timings{};  ///< by GPU count, collective, dtype, size
  std::vector<std::string> notes{};         ///< what was skipped, and why
  std::string error{};
};

/// "2.21.5" from an NCCL_VERSION_CODE (2.9 and later: major × 10000 + minor × 100 + patch;
/// earlier: major × 1000 + minor × 100 + patch).
std::string nccl_version_string(int code);

/// The probe: libraries opened, devices chosen. One thread at a time.
class CommProbe {
 public:
  /// Opens the CUDA runtime and NCCL, counts the GPUs and checks the options against them.
  /// Throws `Exception` whose message says what cannot be measured and why when a library is
  /// missing, there is no GPU or only one (collectives need two), or the options do not fit the
  /// machine (a device that does not exist, a GPU count above the devices chosen).
  static std::unique_ptr<CommProbe> open(const CommProbeOptions& options);
  ~CommProbe();
  CommProbe(const CommProbe&) = delete;
  CommProbe& operator=(const CommProbe&) = delete;
  CommProbe(CommProbe&&) = delete;
  CommProbe& operator=(CommProbe&&) = delete;

  [[nodiscard]] const CommProbeSetup& setup() const noexcept { return setup_; }
  /// The GPU counts the sweep will use.
  [[nodiscard]] const std::vector<int>& gpu_counts() const noexcept { return gpu_counts_; }

  /// Runs the sweep. `on_group` (optional) is called after each (GPU count, collective, dtype)
  /// with its timings, for printing as the sweep goes. Never throws for a failing NCCL or CUDA
  /// call: the result's `error` says which, and what was measured before is kept.
  CommProbeResult run(
      const std::function<void(std::span<const CollectiveTiming>)>& on_group = {}) const;

  struct Libraries;  ///< the opened libraries and their symbols (nccl.cpp)

 private:
  CommProbe() = default;
  std::unique_ptr<Libraries> lib_;
  CommProbeOptions options_;
  CommProbeSetup setup_;
  std::vector<int> gpu_counts_;
};

}  // namespace llmbench::telemetry
