#pragma once
/// @file
/// The processes of one benchmark spread over several hosts by an MPI launcher (`mpirun`,
/// Slurm's `srun --mpi=pmix`, the Kubeflow MPI Operator; docs/distributed.md): joining and
/// leaving MPI, and the few collectives a spread run needs (clock ping-pong, broadcast, gather,
/// agreement). MPI is started only when a launcher started the process, so `llmbench run` alone
/// pays nothing: `llmbench` links no MPI library, and `join` opens the MPI plugin
/// (`libllmbench_mpi.so`, mpi_abi.hpp, plugin_loader.hpp) with `dlopen` only under a launcher.
/// A build without MPI (`LLMBENCH_WITH_MPI=OFF`) has the same interface and no plugin; `join`
/// then refuses a launch of several processes, as it does when the plugin cannot be loaded.

#include "llmbench/core/clock.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace llmbench::dist {

/// True when an MPI launcher started this process: Open MPI's `OMPI_COMM_WORLD_SIZE`, PMIx's
/// `PMIX_RANK` (Slurm `--mpi=pmix`) or PMI's `PMI_SIZE` is in the environment.
[[nodiscard]] bool launched_by_mpi() noexcept;

/// True when this build made the MPI plugin: decided at compile time by the CMake option
/// `LLMBENCH_WITH_MPI` (on when CMake found MPI). Whether the plugin's file is there to be
/// opened is known only when `World::join` looks for it.
[[nodiscard]] bool built_with_mpi() noexcept;

/// One ping-pong round between rank 0 and a peer, each instant on its own steady clock (ns):
/// rank 0 sends at `sent_ns`, the peer stamps `peer_ns` and answers, rank 0 receives at
/// `received_ns`.
struct PingPong {
  TimeNs sent_ns = 0;
  TimeNs peer_ns = 0;
  TimeNs received_ns = 0;
};

/// A peer's steady clock against rank 0's: peer time = rank 0 time + `offset_ns`, within
/// ±`bound_ns`. Cristian's estimate from the round of least round-trip time: the peer stamped
/// its time somewhere inside the round trip, so the offset is its stamp minus the round's
/// midpoint and the error is at most half the round trip (F. Cristian, "Probabilistic clock
/// synchronization", Distributed Computing 3, 1989).
struct ClockOffset {
  TimeNs offset_ns = 0;
  TimeNs bound_ns = 0;  ///< half the least round trip; 0 for rank 0 itself
  TimeNs rtt_ns = 0;    ///< the least round trip
};

/// The estimate of the least-round-trip round of `rounds` (which must not be empty).
[[nodiscard]] ClockOffset estimate_offset(std::span<const PingPong> rounds);

/// Where each rank's part starts in a gather of parts of `lengths` bytes (index = rank): the
/// running sums, or nullopt when a start does not fit MPI's `int` displacements (the parts
/// together are more than one gather holds, 2 GiB).
[[nodiscard]] std::optional<std::vector<int>> gather_displacements(std::span<const int> lengths);

/// This process's place in an MPI job (`MPI_COMM_WORLD`). One per process: `join` makes it,
/// `current` finds it, `leave` ends MPI. Every member function marked collective must be called
/// by every rank in the same order, on the thread that joined.
class World {
 public:
  /// Starts MPI when `launched_by_mpi()` (opens the plugin, then `MPI_Init_thread`, funneled:
  /// only the joining thread calls MPI) and returns the process's world; null when no launcher
  /// started the process, or when it started one process and the plugin cannot be loaded (that
  /// process runs alone). The plugin is `LLMBENCH_MPI_PLUGIN` when set, else
  /// `libllmbench_mpi.so` beside the executable, else `<exe dir>/../<libdir>/llmbench/` of the
  /// install (`mpi_plugin_candidates`). Throws `Exception` when the launcher started more than
  /// one process (each would run the whole benchmark) and no plugin loads (none built, none
  /// found, another ABI), naming every path tried and why, or when `MPI_Init_thread` fails. Call
  /// once, before any thread starts.
  static World* join(int& argc, char**& argv);
  /// The world `join` made, or null (a single process).
  [[nodiscard]] static World* current() noexcept;
  /// `MPI_Finalize` when `join` started MPI; call once at the end of `main`.
  static void leave() noexcept;
  /// Ends every process of the job at once (`MPI_Abort`) with `code`: a rank that cannot go on
  /// while the others wait in a collective. Without a world, ends this process (`_Exit`).
  [[noreturn]] static void abort(int code) noexcept;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// The host this rank runs on (`MPI_Get_processor_name`).
  [[nodiscard]] const std::string& host() const noexcept { return host_; }

  /// Collective: every rank's clock offset to rank 0 (index = rank; rank 0's is zero), from
  /// `rounds` ping-pongs per peer, one peer after another, known on every rank.
  std::vector<ClockOffset> measure_offsets(int rounds);
  /// Collective: rank 0's `value` on every rank.
  std::string broadcast(std::string value);
  /// Collective: rank 0's `value` on every rank.
  std::uint64_t broadcast(std::uint64_t value);
  /// Collective: every rank's `text` (index = rank) on rank 0; empty on the others.
  std::vector<std::string> gather(const std::string& text);
  /// Collective: the largest `value` of any rank, on every rank.
  std::int64_t max(std::int64_t value);
  /// Collective: true on every rank when `flag` is true on any.
  bool any(bool flag);

  World(int rank, int size, std::string host) : rank_(rank), size_(size), host_(std::move(host)) {}

 private:
  int rank_ = 0;
  int size_ = 1;
  std::string host_;
};

}  // namespace llmbench::dist
