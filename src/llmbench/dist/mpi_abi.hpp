#pragma once
/// @file
/// The C ABI between llmbench and its MPI plugin, `libllmbench_mpi.so` (built from
/// `mpi_plugin.cpp`, the one file that includes `mpi.h`; docs/distributed.md "Where MPI lives").
/// The plugin exports one `extern "C"` function, `llmbench_mpi_plugin`, that returns a table of
/// plain C function pointers; `World` (world.cpp) opens the plugin with `dlopen` only when an MPI
/// launcher started the process, so `llmbench` itself links no MPI library. Across the boundary
/// go only ints, fixed-width integers and pointers to them: no C++ types, no exceptions. Every
/// function returns the MPI return code of its call (`MpiTable::success` when it went well); all
/// work on `MPI_COMM_WORLD`. This header includes no MPI header and is read by both sides.

#include <cstdint>

namespace llmbench::dist {

/// The version of `MpiTable` this llmbench was built against; raised whenever a field is added,
/// removed or changes its meaning. The loader refuses a plugin whose `abi_version` differs.
inline constexpr std::uint32_t kMpiAbiVersion = 1;

/// The name of the one symbol the plugin exports (a `MpiPluginEntry`).
inline constexpr const char* kMpiPluginEntry = "llmbench_mpi_plugin";

/// The plugin's functions. Counts are element counts (MPI's `int`); `root` and `peer` are ranks
/// of `MPI_COMM_WORLD`. The table is static in the plugin and lives as long as it is loaded.
struct MpiTable {
  /// `kMpiAbiVersion` of the plugin's build.
  std::uint32_t abi_version;
  /// `sizeof(MpiTable)` of the plugin's build (a second check of the layout).
  std::uint32_t table_size;
  /// `MPI_SUCCESS` of the MPI the plugin was built with.
  int success;
  /// `MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED)`, then this process's `rank`, the world's
  /// `size` and `MPI_Get_processor_name` into `host` (at most `host_capacity` bytes, not
  /// terminated; `*host_length` set to the bytes written).
  int (*init)(int* argc, char*** argv, int* rank, int* size, char* host, int host_capacity,
              int* host_length);
  /// `MPI_Finalize` unless MPI is finalized already (`MPI_Finalized`).
  int (*finalize)();
  /// `MPI_Abort(MPI_COMM_WORLD, code)`: ends every process of the job.
  int (*abort)(int code);
  /// `MPI_Barrier`.
  int (*barrier)();
  /// `MPI_Send` of `count` int64s to `peer` with `tag`.
  int (*send_int64)(const std::int64_t* data, int count, int peer, int tag);
  /// `MPI_Recv` of `count` int64s from `peer` with `tag` (status ignored).
  int (*recv_int64)(std::int64_t* data, int count, int peer, int tag);
  /// `MPI_Bcast` of `count` int64s from `root`.
  int (*broadcast_int64)(std::int64_t* data, int count, int root);
  /// `MPI_Bcast` of `count` uint64s from `root`.
  int (*broadcast_uint64)(std::uint64_t* data, int count, int root);
  /// `MPI_Bcast` of `count` bytes (`MPI_CHAR`) from `root`.
  int (*broadcast_bytes)(char* data, int count, int root);
  /// `MPI_Gather` of one int per rank into `all` (size ranks, read on `root` only).
  int (*gather_int)(int value, int* all, int root);
  /// `MPI_Gatherv` of `count` bytes per rank into `all` on `root` at `displacements` (bytes),
  /// `counts` bytes from each rank (`all`, `counts` and `displacements` read on `root` only).
  int (*gatherv_bytes)(const char* data, int count, char* all, const int* counts,
                       const int* displacements, int root);
  /// `MPI_Allreduce` with `MPI_MAX` of one int64: the largest `value` of any rank in `*out`.
  int (*allreduce_max_int64)(std::int64_t value, std::int64_t* out);
  /// `MPI_Allreduce` with `MPI_LOR` of one int: non-zero in `*out` when any rank's `value` is.
  int (*allreduce_lor)(int value, int* out);
  /// `MPI_Error_string(code)` into `text` (at most `capacity` bytes, not terminated;
  /// `*length` set to the bytes written).
  int (*error_string)(int code, char* text, int capacity, int* length);
};

/// The type of the plugin's entry, `kMpiPluginEntry`: its table (never null).
using MpiPluginEntry = const MpiTable* (*)();

}  // namespace llmbench::dist
