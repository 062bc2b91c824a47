// The MPI side of `World` (built when CMake found MPI and LLMBENCH_WITH_MPI is on).
#include "llmbench/core/error.hpp"
#include "llmbench/dist/world.hpp"

#include <fmt/core.h>

#include <array>
#include <memory>
#include <mpi.h>

namespace llmbench::dist {

namespace {

std::unique_ptr<World>& the_world() {
  static std::unique_ptr<World> world;
  return world;
}

/// Throws `Exception` naming the MPI call when `rc` is not MPI_SUCCESS (the default error
/// handler aborts the job first; this covers a handler set to return).
void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS)
    return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(rc, text.data(), &length);
  throw Exception(fmt::format("{} failed: {}", call,
                              std::string_view(text.data(), static_cast<std::size_t>(length))));
}

constexpr int kPingTag = 17;

}  // namespace

bool built_with_mpi() noexcept {
  return true;
}

World* World::join(int& argc, char**& argv) {
  if (!launched_by_mpi())
    return nullptr;
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::array<char, MPI_MAX_PROCESSOR_NAME> name{};
  int length = 0;
  MPI_Get_processor_name(name.data(), &length);
  the_world() = std::make_unique<World>(rank, size,
                                        std::string(name.data(), static_cast<std::size_t>(length)));
  return the_world().get();
}

World* World::current() noexcept {
  return the_world().get();
}

void World::leave() noexcept {
  if (!the_world())
    return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0)
    MPI_Finalize();
  the_world().reset();
}

void World::abort(int code) noexcept {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::vector<ClockOffset> World::measure_offsets(int rounds) {
  std::vector<ClockOffset> offsets(static_cast<std::size_t>(size_));
  for (int peer = 1; peer < size_; ++peer) {
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    if (rank_ == 0) {
      std::vector<PingPong> log(static_cast<std::size_t>(rounds));
      for (auto& round : log) {
        round.sent_ns = steady_now_ns();
        check(MPI_Send(&round.sent_ns, 1, MPI_INT64_T, peer, kPingTag, MPI_COMM_WORLD), "MPI_Send");
        check(MPI_Recv(&round.peer_ns, 1, MPI_INT64_T, peer, kPingTag, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE),
              "MPI_Recv");
        round.received_ns = steady_now_ns();
      }
      offsets[static_cast<std::size_t>(peer)] = estimate_offset(log);
    } else if (rank_ == peer) {
      for (int i = 0; i < rounds; ++i) {
        TimeNs ping = 0;
        check(MPI_Recv(&ping, 1, MPI_INT64_T, 0, kPingTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv");
        const TimeNs now = steady_now_ns();
        check(MPI_Send(&now, 1, MPI_INT64_T, 0, kPingTag, MPI_COMM_WORLD), "MPI_Send");
      }
    }
  }
  // Every rank learns every offset (three numbers each).
  std::vector<TimeNs> flat;
  for (const auto& o : offsets) flat.insert(flat.end(), {o.offset_ns, o.bound_ns, o.rtt_ns});
  check(MPI_Bcast(flat.data(), static_cast<int>(flat.size()), MPI_INT64_T, 0, MPI_COMM_WORLD),
        "MPI_Bcast");
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    offsets[i] = ClockOffset{
        .offset_ns = flat[3 * i], .bound_ns = flat[3 * i + 1], .rtt_ns = flat[3 * i + 2]};
  }
  return offsets;
}

std::string World::broadcast(std::string value) {
  auto length = static_cast<std::int64_t>(value.size());
  check(MPI_Bcast(&length, 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  value.resize(static_cast<std::size_t>(length));
  check(MPI_Bcast(value.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Bcast");
  return value;
}

std::uint64_t World::broadcast(std::uint64_t value) {
  check(MPI_Bcast(&value, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return value;
}

std::vector<std::string> World::gather(const std::string& text) {
  // MPI counts are int: a rank's part is sent in one message up to 2 GiB.
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Exception(
        fmt::format("rank {}: {} bytes of records are more than one MPI message "
                    "holds (2 GiB); its records file keeps them",
                    rank_, text.size()));
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
        "MPI_Gather");
  std::vector<int> displacements(lengths.size());
  std::string all;
  if (rank_ == 0) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      if (total > std::numeric_limits<int>::max())
        throw Exception("the ranks' records are more than one MPI gather holds (2 GiB)");
      displacements[i] = static_cast<int>(total);
      total += lengths[i];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(),
                    MPI_CHAR, 0, MPI_COMM_WORLD),
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
  check(MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

bool World::any(bool flag) {
  int in = flag ? 1 : 0;
  int out = 0;
  check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD), "MPI_Allreduce");
  return out != 0;
}

}  // namespace llmbench::dist
