// libllmbench_mpi.so: the MPI calls of `World` behind the C ABI of mpi_abi.hpp, and nothing else
// (the algorithms stay in world.cpp). Built only with LLMBENCH_WITH_MPI; opened with dlopen by
// `World::join` when an MPI launcher started the process (docs/distributed.md).
#include "llmbench/dist/mpi_abi.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <mpi.h>

namespace {

/// Copies `length` bytes of `from` into `to` (at most `capacity`) and sets `*written`.
void copy_out(const char* from, int length, char* to, int capacity, int* written) noexcept {
  const int n = std::clamp(length, 0, std::max(capacity, 0));
  std::memcpy(to, from, static_cast<std::size_t>(n));
  *written = n;
}

int init(int* argc, char*** argv, int* rank, int* size, char* host, int host_capacity,
         int* host_length) noexcept {
  int provided = 0;
  if (const int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided); rc != MPI_SUCCESS)
    return rc;
  if (const int rc = MPI_Comm_rank(MPI_COMM_WORLD, rank); rc != MPI_SUCCESS)
    return rc;
  if (const int rc = MPI_Comm_size(MPI_COMM_WORLD, size); rc != MPI_SUCCESS)
    return rc;
  std::array<char, MPI_MAX_PROCESSOR_NAME> name{};
  int length = 0;
  const int rc = MPI_Get_processor_name(name.data(), &length);
  copy_out(name.data(), rc == MPI_SUCCESS ? length : 0, host, host_capacity, host_length);
  return rc;
}

int finalize() noexcept {
  int finalized = 0;
  if (const int rc = MPI_Finalized(&finalized); rc != MPI_SUCCESS || finalized != 0)
    return rc;
  return MPI_Finalize();
}

int abort_job(int code) noexcept {
  return MPI_Abort(MPI_COMM_WORLD, code);
}

int barrier() noexcept {
  return MPI_Barrier(MPI_COMM_WORLD);
}

int send_int64(const std::int64_t* data, int count, int peer, int tag) noexcept {
  return MPI_Send(data, count, MPI_INT64_T, peer, tag, MPI_COMM_WORLD);
}

int recv_int64(std::int64_t* data, int count, int peer, int tag) noexcept {
  return MPI_Recv(data, count, MPI_INT64_T, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int broadcast_int64(std::int64_t* data, int count, int root) noexcept {
  return MPI_Bcast(data, count, MPI_INT64_T, root, MPI_COMM_WORLD);
}

int broadcast_uint64(std::uint64_t* data, int count, int root) noexcept {
  return MPI_Bcast(data, count, MPI_UINT64_T, root, MPI_COMM_WORLD);
}

int broadcast_bytes(char* data, int count, int root) noexcept {
  return MPI_Bcast(data, count, MPI_CHAR, root, MPI_COMM_WORLD);
}

int gather_int(int value, int* all, int root) noexcept {
  return MPI_Gather(&value, 1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD);
}

int gatherv_bytes(const char* data, int count, char* all, const int* counts,
                  const int* displacements, int root) noexcept {
  return MPI_Gatherv(data, count, MPI_CHAR, all, counts, displacements, MPI_CHAR, root,
                     MPI_COMM_WORLD);
}

int allreduce_max_int64(std::int64_t value, std::int64_t* out) noexcept {
  return MPI_Allreduce(&value, out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
}

int allreduce_lor(int value, int* out) noexcept {
  return MPI_Allreduce(&value, out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
}

int error_string(int code, char* text, int capacity, int* length) noexcept {
  std::array<char, MPI_MAX_ERROR_STRING> buffer{};
  int n = 0;
  const int rc = MPI_Error_string(code, buffer.data(), &n);
  copy_out(buffer.data(), rc == MPI_SUCCESS ? n : 0, text, capacity, length);
  return rc;
}

constexpr llmbench::dist::MpiTable kTable{
    .abi_version = llmbench::dist::kMpiAbiVersion,
    .table_size = sizeof(llmbench::dist::MpiTable),
    .success = MPI_SUCCESS,
    .init = init,
    .finalize = finalize,
    .abort = abort_job,
    .barrier = barrier,
    .send_int64 = send_int64,
    .recv_int64 = recv_int64,
    .broadcast_int64 = broadcast_int64,
    .broadcast_uint64 = broadcast_uint64,
    .broadcast_bytes = broadcast_bytes,
    .gather_int = gather_int,
    .gatherv_bytes = gatherv_bytes,
    .allreduce_max_int64 = allreduce_max_int64,
    .allreduce_lor = allreduce_lor,
    .error_string = error_string,
};

}  // namespace

/// The plugin's one export (`llmbench::dist::kMpiPluginEntry`, of type `MpiPluginEntry`): its
/// table of MPI calls, static for as long as the plugin is loaded.
extern "C" __attribute__((visibility("default"))) const llmbench::dist::MpiTable*
llmbench_mpi_plugin() {
  return &kTable;
}
