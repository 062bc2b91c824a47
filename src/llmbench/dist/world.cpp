// `World`: joining an MPI job and the collectives of a spread run. The MPI calls themselves are in
// the plugin (mpi_plugin.cpp, opened by plugin_loader.cpp only under an MPI launcher); everything
// else (the ping-pong rounds, the lengths before a gather, the 2 GiB checks, the errors) is here,
// the same in every build. A build without MPI has no plugin and refuses a launch of several
// processes on the same path as a build whose plugin cannot be found.
#include "llmbench/dist/world.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/dist/plugin_loader.hpp"

#include <fmt/core.h>

#include <array>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#ifndef LLMBENCH_WITH_MPI_PLUGIN
#define LLMBENCH_WITH_MPI_PLUGIN 0
#endif

namespace llmbench::dist {

namespace {

/// The process's one world and the plugin it runs on (both set by `join`).
struct State {
  MpiPlugin plugin;
  std::unique_ptr<World> world;
};

State& state() {
  static State s;
  return s;
}

/// The plugin's table; only a world that `join` made calls it.
const MpiTable& mpi() {
  const MpiTable* table = state().plugin.table;
  LLMBENCH_ASSERT(table != nullptr, "an MPI collective without the MPI plugin loaded");
  return *table;
}

/// Throws `Exception` naming the MPI call when `rc` is not MPI's success (the default error
/// handler aborts the job first; this covers a handler set to return).
void check(int rc, const char* call) {
  const MpiTable& t = mpi();
  if (rc == t.success)
    return;
  std::array<char, 512> text{};
  int length = 0;
  if (t.error_string(rc, text.data(), static_cast<int>(text.size()), &length) != t.success)
    length = 0;
  throw Exception(fmt::format("{} failed: {} (MPI error {})", call,
                              std::string_view(text.data(), static_cast<std::size_t>(length)), rc));
}

constexpr int kPingTag = 17;

/// The number of processes the launcher started, with the variable that says so: Open MPI's
/// `OMPI_COMM_WORLD_SIZE`, PMI's `PMI_SIZE` or, under Slurm's `srun --mpi=pmix` (which sets
/// `PMIX_RANK` and no size of its own), `SLURM_STEP_NUM_TASKS`; none when none is set.
std::optional<std::pair<const char*, const char*>> launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (const char* size = std::getenv(name); size != nullptr)
      return std::pair{name, size};
  }
  return std::nullopt;
}

/// Why a launch of several processes cannot run without the plugin: every path tried and why it
/// did not load, and how to build the plugin.
std::string refusal(const char* name, const char* size, const MpiPluginSearch& search) {
  std::string tried;
  for (const auto& f : search.failures) tried += fmt::format("{}{}", tried.empty() ? "" : "; ", f);
  if (tried.empty())
    tried = "no path (the executable's directory is unknown and LLMBENCH_MPI_PLUGIN is unset)";
  const char* what = built_with_mpi() ? "its MPI plugin (libllmbench_mpi.so) could not be loaded"
                                      : "this llmbench was built without MPI (no MPI plugin)";
  return fmt::format(
      "started by an MPI launcher ({}={}) but {}: each process would run the whole benchmark. "
      "Tried: {}. Build the plugin with Open MPI (libopenmpi-dev, -DLLMBENCH_WITH_MPI=ON, target "
      "llmbench_mpi) and keep it beside llmbench or in <prefix>/lib/llmbench, or set "
      "LLMBENCH_MPI_PLUGIN to its path; or run one process",
      name, size, what, tried);
}

}  // namespace

bool built_with_mpi() noexcept {
  return LLMBENCH_WITH_MPI_PLUGIN != 0;
}

World* World::join(int& argc, char**& argv) {
  if (!launched_by_mpi())
    return nullptr;
  MpiPluginSearch search = open_mpi_plugin(mpi_plugin_candidates());
  if (search.plugin.table == nullptr) {
    const auto size = launcher_size();
    if (size && std::atoi(size->second) > 1)
      throw Exception(refusal(size->first, size->second, search));
    return nullptr;  // one process: it runs alone, as without a launcher
  }
  state().plugin = std::move(search.plugin);
  const MpiTable& t = mpi();
  int rank = 0;
  int size = 1;
  std::array<char, 256> name{};
  int length = 0;
  check(t.init(&argc, &argv, &rank, &size, name.data(), static_cast<int>(name.size()), &length),
        "MPI_Init_thread");
  state().world = std::make_unique<World>(
      rank, size, std::string(name.data(), static_cast<std::size_t>(length)));
  return state().world.get();
}

World* World::current() noexcept {
  return state().world.get();
}

void World::leave() noexcept {
  if (!state().world)
    return;
  mpi().finalize();
  state().world.reset();
}

void World::abort(int code) noexcept {
  if (state().world)
    mpi().abort(code);
  std::_Exit(code);
}

std::vector<ClockOffset> World::measure_offsets(int rounds) {
  const MpiTable& t = mpi();
  std::vector<ClockOffset> offsets(static_cast<std::size_t>(size_));
  for (int peer = 1; peer < size_; ++peer) {
    check(t.barrier(), "MPI_Barrier");
    if (rank_ == 0) {
      std::vector<PingPong> log(static_cast<std::size_t>(rounds));
      for (auto& round : log) {
        round.sent_ns = steady_now_ns();
        check(t.send_int64(&round.sent_ns, 1, peer, kPingTag), "MPI_Send");
        check(t.recv_int64(&round.peer_ns, 1, peer, kPingTag), "MPI_Recv");
        round.received_ns = steady_now_ns();
      }
      offsets[static_cast<std::size_t>(peer)] = estimate_offset(log);
    } else if (rank_ == peer) {
      for (int i = 0; i < rounds; ++i) {
        TimeNs ping = 0;
        check(t.recv_int64(&ping, 1, 0, kPingTag), "MPI_Recv");
        const TimeNs now = steady_now_ns();
        check(t.send_int64(&now, 1, 0, kPingTag), "MPI_Send");
      }
    }
  }
  // Every rank learns every offset (three numbers each).
  std::vector<TimeNs> flat;
  for (const auto& o : offsets) flat.insert(flat.end(), {o.offset_ns, o.bound_ns, o.rtt_ns});
  check(t.broadcast_int64(flat.data(), static_cast<int>(flat.size()), 0), "MPI_Bcast");
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    offsets[i] = ClockOffset{
        .offset_ns = flat[3 * i], .bound_ns = flat[3 * i + 1], .rtt_ns = flat[3 * i + 2]};
  }
  return offsets;
}

std::string World::broadcast(std::string value) {
  const MpiTable& t = mpi();
  // The length first, so the other ranks can size their strings; every rank then knows whether
  // it fits one MPI message (int counts), so all of them stop together when it does not.
  auto length = static_cast<std::int64_t>(value.size());
  check(t.broadcast_int64(&length, 1, 0), "MPI_Bcast");
  if (length > std::numeric_limits<int>::max())
    throw Exception(
        fmt::format("rank 0's {} bytes are more than one MPI broadcast holds (2 GiB)", length));
  value.resize(static_cast<std::size_t>(length));
  check(t.broadcast_bytes(value.data(), static_cast<int>(length), 0), "MPI_Bcast");
  return value;
}

std::uint64_t World::broadcast(std::uint64_t value) {
  check(mpi().broadcast_uint64(&value, 1, 0), "MPI_Bcast");
  return value;
}

std::vector<std::string> World::gather(const std::string& text) {
  const MpiTable& t = mpi();
  // MPI counts are int: a rank's part is sent in one message up to 2 GiB. Whether any part or
  // the whole is too big is agreed on by every rank (`any`), so all of them stop together
  // instead of the others waiting in a gather that one rank left.
  const bool too_big = text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max());
  if (any(too_big)) {
    throw Exception(too_big ? fmt::format("rank {}: {} bytes of records are more than one MPI "
                                          "message holds (2 GiB); its records file keeps them",
                                          rank_, text.size())
                            : fmt::format("rank {}: another rank's records are more than one MPI "
                                          "message holds (2 GiB); each rank's records file "
                                          "keeps its own",
                                          rank_));
  }
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  check(t.gather_int(length, lengths.data(), 0), "MPI_Gather");
  // Only rank 0 received the lengths: it alone can tell whether the parts fit one gather.
  std::optional<std::vector<int>> starts =
      rank_ == 0 ? gather_displacements(lengths) : std::vector<int>(lengths.size());
  if (any(!starts)) {
    throw Exception(
        "the ranks' records are more than one MPI gather holds (2 GiB); each rank's records file "
        "keeps its own");
  }
  const std::vector<int>& displacements = *starts;
  std::string all;
  if (rank_ == 0 && !lengths.empty())
    all.resize(static_cast<std::size_t>(displacements.back()) +
               static_cast<std::size_t>(lengths.back()));
  check(t.gatherv_bytes(text.data(), length, all.data(), lengths.data(), displacements.data(), 0),
        "MPI_Gatherv");
  std::vector<std::string> parts;
  if (rank_ == 0) {
    for (std::size_t i = 0; i < lengths.size(); ++i)
      parts.push_back(all.substr(static_cast<std::size_t>(displacements[i]),
                                 static_cast<std::size_t>(lengths[i])));
  }
  return parts;
}

std::int64_t World::max(std::int64_t value) {
  std::int64_t out = 0;
  check(mpi().allreduce_max_int64(value, &out), "MPI_Allreduce");
  return out;
}

bool World::any(bool flag) {
  int out = 0;
  check(mpi().allreduce_lor(flag ? 1 : 0, &out), "MPI_Allreduce");
  return out != 0;
}

}  // namespace llmbench::dist
