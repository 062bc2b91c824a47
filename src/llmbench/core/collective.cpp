#include "llmbench/core/collective.hpp"

#include "llmbench/core/error.hpp"

#include <type_traits>

namespace llmbench {

namespace {

template <class Table, class Key>
const auto& row_of(const Table& table, Key key) noexcept {
  for (const auto& row : table) {
    if constexpr (std::is_same_v<Key, Collective>) {
      if (row.collective == key)
        return row;
    } else {
      if (row.dtype == key)
        return row;
    }
  }
  LLMBENCH_ASSERT(false, "enum value missing from its name table");
  return table.front();
}

template <class Table>
std::string names_of(const Table& table) {
  std::string out;
  for (const auto& row : table) {
    if (!out.empty())
      out += ", ";
    out += row.name;
  }
  return out;
}

}  // namespace

const CollectiveInfo& info(Collective c) noexcept {
  return row_of(kCollectives, c);
}

const CommDtypeInfo& info(CommDtype d) noexcept {
  return row_of(kCommDtypes, d);
}

std::string_view to_string(Collective c) noexcept {
  return info(c).name;
}

std::string_view to_string(CommDtype d) noexcept {
  return info(d).name;
}

std::optional<Collective> find_collective(std::string_view name) noexcept {
  for (const auto& row : kCollectives) {
    if (row.name == name)
      return row.collective;
  }
  return std::nullopt;
}

std::optional<CommDtype> find_comm_dtype(std::string_view name) noexcept {
  for (const auto& row : kCommDtypes) {
    if (row.name == name)
      return row.dtype;
  }
  return std::nullopt;
}

std::string collective_names() {
  return names_of(kCollectives);
}

std::string comm_dtype_names() {
  return names_of(kCommDtypes);
}

double bus_bandwidth_factor(Collective c, int gpus) noexcept {
  if (gpus < 1)
    return 0;
  const double n = gpus;
  return info(c).busbw_numerator_factor * (n - 1) / n;
}

CollectiveCounts collective_counts(Collective c, CommDtype d, int gpus,
                                   std::int64_t target_bytes) noexcept {
  const std::int64_t e = info(d).bytes;
  CollectiveCounts out;
  if (gpus < 1 || target_bytes < e)
    return out;
  if (c == Collective::AllReduce) {
    out.count = target_bytes / e;
    out.bytes = out.count * e;
    out.send_bytes = out.bytes;
    out.recv_bytes = out.bytes;
    return out;
  }
  // One GPU's chunk, rounded down to whole 16-byte units (nccl-tests `*GetCollByteCount`).
  const std::int64_t unit = 16 / e;
  const std::int64_t chunk = (target_bytes / e / gpus) / unit * unit;
  if (chunk == 0)
    return out;
  out.count = chunk;
  out.bytes = chunk * gpus * e;
  switch (c) {
    case Collective::AllGather:
      out.send_bytes = chunk * e;
      out.recv_bytes = out.bytes;
      break;
    case Collective::ReduceScatter:
      out.send_bytes = out.bytes;
      out.recv_bytes = chunk * e;
      break;
    case Collective::AllToAll:
    case Collective::AllReduce:
      out.send_bytes = out.bytes;
      out.recv_bytes = out.bytes;
      break;
  }
  return out;
}

double CollectiveTiming::algbw_gb_s() const noexcept {
  return mean_us > 0 ? static_cast<double>(bytes) / (mean_us * 1e3) : 0.0;
}

double CollectiveTiming::busbw_gb_s() const noexcept {
  return algbw_gb_s() * bus_bandwidth_factor(collective, gpus);
}

}  // namespace llmbench
