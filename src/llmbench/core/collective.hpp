#pragma once
/// @file
/// The vocabulary of GPU collectives shared by the probe that times them (telemetry/nccl.hpp,
/// `llmbench probe comm`) and the simulator that prices them (sim/comm_model.hpp): which
/// collective, in which data type, over how many GPUs, and one timed message size.
///
/// Sizes and bandwidths are those of NVIDIA's nccl-tests (`doc/PERFORMANCE.md`, "Performance
/// reported by NCCL tests"), so a row here reads like a row of `all_reduce_perf`:
/// - the size S is the whole array: for all-reduce the buffer each GPU reduces; for all-gather
///   sendcount × n elements (the gathered output); for reduce-scatter recvcount × n (the input);
///   for all-to-all the send buffer of one GPU, n chunks of which one stays on the GPU;
/// - algorithm bandwidth algbw = S / t;
/// - bus bandwidth busbw = algbw × 2(n−1)/n for all-reduce and algbw × (n−1)/n for all-gather,
///   reduce-scatter and all-to-all: the rate each GPU's link would need, comparable with the
///   link's peak whatever n is.
/// nccl-tests also rounds each GPU's chunk down to whole 16-byte units
/// (`*GetCollByteCount`), which `collective_counts` does as well.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llmbench {

/// The collectives that tensor and expert parallelism move activations with.
enum class Collective : std::uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll };

/// One row of `kCollectives`: the name (nccl-tests' binary name without `_perf`, also the JSON
/// value and the CLI value) and the bus-bandwidth factor's numerator (2(n−1)/n or (n−1)/n).
struct CollectiveInfo {
  Collective collective;
  std::string_view name;
  int busbw_numerator_factor;  ///< 2 for all-reduce, 1 for the others
};
/// The one name table of `Collective`, in the order the probe runs them.
inline constexpr std::array<CollectiveInfo, 4> kCollectives{{
    {.collective = Collective::AllReduce, .name = "all_reduce", .busbw_numerator_factor = 2},
    {.collective = Collective::AllGather, .name = "all_gather", .busbw_numerator_factor = 1},
    {.collective = Collective::ReduceScatter,
     .name = "reduce_scatter",
     .busbw_numerator_factor = 1},
    {.collective = Collective::AllToAll, .name = "all_to_all", .busbw_numerator_factor = 1},
}};

/// The element types measured: the activations' (FP16, BF16) and DeepSeek's FP8 dispatch.
enum class CommDtype : std::uint8_t { Fp16, Bf16, Fp8E4M3, Fp8E5M2 };

/// One row of `kCommDtypes`: name (CLI and JSON value), bytes per element, and the oldest NCCL
/// that has the type (`NCCL_VERSION` code: BF16 since 2.10, FP8 e4m3/e5m2 since 2.24; nccl-tests
/// `src/common.h` gates them the same way).
struct CommDtypeInfo {
  CommDtype dtype;
  std::string_view name;
  int bytes;
  int min_nccl_version;
  int min_compute_capability;  ///< major × 10 + minor; FP8 needs Hopper (9.0), as nccl-tests
};
/// The one name table of `CommDtype`.
inline constexpr std::array<CommDtypeInfo, 4> kCommDtypes{{
    {.dtype = CommDtype::Fp16,
     .name = "fp16",
     .bytes = 2,
     .min_nccl_version = 0,
     .min_compute_capability = 0},
    {.dtype = CommDtype::Bf16,
     .name = "bf16",
     .bytes = 2,
     .min_nccl_version = 21000,
     .min_compute_capability = 0},
    {.dtype = CommDtype::Fp8E4M3,
     .name = "fp8_e4m3",
     .bytes = 1,
     .min_nccl_version = 22400,
     .min_compute_capability = 90},
    {.dtype = CommDtype::Fp8E5M2,
     .name = "fp8_e5m2",
     .bytes = 1,
     .min_nccl_version = 22400,
     .min_compute_capability = 90},
}};

/// The table row of `c` / `d`.
const CollectiveInfo& info(Collective c) noexcept;
const CommDtypeInfo& info(CommDtype d) noexcept;
/// The names.
std::string_view to_string(Collective c) noexcept;
std::string_view to_string(CommDtype d) noexcept;
/// Parses a name of the tables; nullopt when unknown.
std::optional<Collective> find_collective(std::string_view name) noexcept;
std::optional<CommDtype> find_comm_dtype(std::string_view name) noexcept;
/// "all_reduce, all_gather, reduce_scatter, all_to_all" / "fp16, bf16, fp8_e4m3, fp8_e5m2", for
/// error messages and help.
std::string collective_names();
std::string comm_dtype_names();

/// busbw / algbw for `c` over `gpus` GPUs: 2(n−1)/n or (n−1)/n (nccl-tests PERFORMANCE.md);
/// 0 for n < 1.
double bus_bandwidth_factor(Collective c, int gpus) noexcept;

/// The counts of one call for a target size, as nccl-tests computes them.
struct CollectiveCounts {
  /// The `count` argument of the NCCL call: all-reduce the whole buffer; all-gather sendcount,
  /// reduce-scatter recvcount, all-to-all the count sent to each peer (one GPU's chunk).
  std::int64_t count = 0;
  std::int64_t bytes = 0;       ///< S, the nccl-tests size of the call (see the file comment)
  std::int64_t send_bytes = 0;  ///< bytes of each GPU's send buffer
  std::int64_t recv_bytes = 0;  ///< bytes of each GPU's receive buffer
};
/// The counts of `c` in `d` over `gpus` GPUs for the target size `target_bytes`: all-reduce
/// takes target / element size elements; the others split the target into `gpus` chunks, each
/// rounded down to whole 16-byte units. `count` 0 when the target is too small for that.
CollectiveCounts collective_counts(Collective c, CommDtype d, int gpus,
                                   std::int64_t target_bytes) noexcept;

/// One timed message size of one collective: what `llmbench probe comm` measures and the
/// communication fit reads. Times in µs.
struct CollectiveTiming {
  Collective collective = Collective::AllReduce;
  CommDtype dtype = CommDtype::Bf16;
  int gpus = 0;
  std::int64_t bytes = 0;  ///< S (nccl-tests size)
  std::int64_t count = 0;  ///< the NCCL call's count argument (`CollectiveCounts::count`)
  int iters = 0;           ///< timed iterations behind the statistics
  double mean_us = 0;      ///< mean iteration time
  double p99_us = 0;       ///< 99th percentile (linear interpolation between order statistics)
  double min_us = 0;
  double max_us = 0;

  /// algbw = S / mean time, GB/s (10^9 bytes per second).
  [[nodiscard]] double algbw_gb_s() const noexcept;
  /// busbw = algbw × `bus_bandwidth_factor`, GB/s.
  [[nodiscard]] double busbw_gb_s() const noexcept;
};

}  // namespace llmbench
