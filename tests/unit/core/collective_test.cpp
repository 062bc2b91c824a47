// The collective vocabulary (core/collective.hpp): names, nccl-tests' bus-bandwidth factors
// (doc/PERFORMANCE.md) and call counts (`*GetCollByteCount`: chunks of whole 16-byte units).

#include "llmbench/core/collective.hpp"

#include <gtest/gtest.h>

namespace llmbench {
namespace {

TEST(Collective, NamesRoundTrip) {
  for (const auto& c : kCollectives) EXPECT_EQ(find_collective(c.name), c.collective);
  for (const auto& d : kCommDtypes) EXPECT_EQ(find_comm_dtype(d.name), d.dtype);
  EXPECT_FALSE(find_collective("allreduce").has_value());
  EXPECT_FALSE(find_comm_dtype("fp8").has_value());
  EXPECT_EQ(collective_names(), "all_reduce, all_gather, reduce_scatter, all_to_all");
  EXPECT_EQ(comm_dtype_names(), "fp16, bf16, fp8_e4m3, fp8_e5m2");
  EXPECT_EQ(info(CommDtype::Fp8E5M2).bytes, 1);
  EXPECT_EQ(info(CommDtype::Bf16).min_nccl_version, 21000);
}

TEST(Collective, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::AllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::AllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::ReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::AllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::AllReduce, 0), 0);
  const CollectiveTiming t{.collective = Collective::AllReduce,
                           .gpus = 8,
                           .bytes = std::int64_t{1} << 30,
                           .mean_us = 4000};
  EXPECT_NEAR(t.algbw_gb_s(), 268.435456, 1e-9);
  EXPECT_NEAR(t.busbw_gb_s(), 268.435456 * 1.75, 1e-9);
}

TEST(Collective, CountsFollowNcclTests) {
  const auto ar = collective_counts(Collective::AllReduce, CommDtype::Bf16, 8, 4096);
  EXPECT_EQ(ar.count, 2048);
  EXPECT_EQ(ar.bytes, 4096);
  EXPECT_EQ(ar.send_bytes, 4096);
  // All-gather of 4 KB over 8 GPUs in BF16: 256 elements from each, 4 KB gathered.
  const auto ag = collective_counts(Collective::AllGather, CommDtype::Bf16, 8, 4096);
  EXPECT_EQ(ag.count, 256);
  EXPECT_EQ(ag.bytes, 4096);
  EXPECT_EQ(ag.send_bytes, 512);
  EXPECT_EQ(ag.recv_bytes, 4096);
  const auto rs = collective_counts(Collective::ReduceScatter, CommDtype::Bf16, 8, 4096);
  EXPECT_EQ(rs.send_bytes, 4096);
  EXPECT_EQ(rs.recv_bytes, 512);
  // 6 GPUs: 4096 / 2 / 6 = 341 elements, rounded down to 336 (whole 16-byte units).
  const auto a2a = collective_counts(Collective::AllToAll, CommDtype::Bf16, 6, 4096);
  EXPECT_EQ(a2a.count, 336);
  EXPECT_EQ(a2a.bytes, 336 * 2 * 6);
  EXPECT_EQ(a2a.send_bytes, a2a.bytes);
  // FP8: 16 elements make the unit; too small to split gives count 0.
  EXPECT_EQ(collective_counts(Collective::AllToAll, CommDtype::Fp8E4M3, 8, 4096).count, 512);
  EXPECT_EQ(collective_counts(Collective::AllGather, CommDtype::Bf16, 8, 64).count, 0);
  EXPECT_EQ(collective_counts(Collective::AllReduce, CommDtype::Bf16, 8, 1).count, 0);
}

}  // namespace
}  // namespace llmbench
