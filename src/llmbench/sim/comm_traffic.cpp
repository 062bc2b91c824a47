#include "llmbench/sim/comm_traffic.hpp"

#include "llmbench/sim/cost_model.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace llmbench::sim {

namespace {

std::string list_ints(const std::vector<int>& v) {
  std::string out;
  for (const int x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

/// "measured: all_reduce bf16 on 8 GPUs, 2 segments, within 4.1 % of every measured size
/// (FILE; NCCL 2.21.5; 0: NVIDIA H100 …)".
std::string measured_detail(const CommModel& comm, const CommFit& f, const std::string& file) {
  std::string where = file;
  if (!comm.measurement.nccl_version.empty())
    where += "; NCCL " + comm.measurement.nccl_version;
  if (!comm.measurement.devices.empty())
    where += "; " + comm.measurement.devices.front();
  return fmt::format(
      "measured: {} {} on {} GPUs, {} segment{}, within {:.1f} % of every measured "
      "size ({})",
      to_string(f.collective), to_string(f.dtype), f.gpus, f.curve.pieces.size(),
      f.curve.pieces.size() == 1 ? "" : "s", 100 * f.curve.max_error(), where);
}

/// Why a used term stays on the datasheet.
std::string datasheet_reason(const CommModel* comm, const std::string& file, Collective c,
                             int gpus) {
  if (file.empty())
    return "no --calibration";
  if (comm == nullptr)
    return file + " has no comm section";
  const auto counts = comm->gpu_counts(c);
  if (counts.empty())
    return fmt::format("{} has no {} fit", file, to_string(c));
  return fmt::format("{} has {} for {} GPUs, not {}", file, to_string(c), list_ints(counts), gpus);
}

std::string layout_name(int tp, int ep, int dp) {
  std::string out;
  const auto add = [&](const char* what, int n) {
    if (n > 1)
      out += (out.empty() ? "" : "+") + fmt::format("{}{}", what, n);
  };
  add("TP", tp);
  add("DP", dp);
  add("EP", ep);
  return out.empty() ? "TP1" : out;
}

}  // namespace

std::vector<CommTermSource> describe_comm_terms(const CommModel* comm, const std::string& file,
                                                int tp, int ep, const HardwareProfile& gpu,
                                                const Efficiency& e) {
  std::vector<CommTermSource> out;
  const auto term = [&](const char* name, Collective c, int gpus, std::span<const CommDtype> dt,
                        const char* datasheet) {
    CommTermSource s{.term = name, .used = gpus > 1};
    if (gpus <= 1) {
      s.detail = fmt::format("none ({}1)", c == Collective::AllReduce ? "TP" : "EP");
    } else if (const CommFit* f = comm != nullptr ? comm->find(c, gpus, dt) : nullptr) {
      s.measured = true;
      s.detail = measured_detail(*comm, *f, file);
    } else {
      s.detail = fmt::format("datasheet: {}, {} µs + bytes / {:g} GB/s link ({})", datasheet,
                             e.allreduce_latency_us, gpu.link_bandwidth_gb_s,
                             datasheet_reason(comm, file, c, gpus));
    }
    out.push_back(std::move(s));
  };
  term("TP all-reduce", Collective::AllReduce, tp, kAllReduceDtypes, "ring of 2(t-1)/t bytes");
  term("EP all-to-all", Collective::AllToAll, ep, kAllToAllDtypes, "(e-1)/e of the bytes");
  return out;
}

std::vector<LayoutTraffic> forward_pass_traffic(const ModelProfile& model,
                                                const HardwareProfile& gpu,
                                                const Efficiency& efficiency, const CommModel* comm,
                                                int tp, int ep, int dp,
                                                std::int64_t tokens_per_replica) {
  const int n = tp * dp;
  const std::int64_t tokens = tokens_per_replica * dp;
  struct Layout {
    int tp, ep, dp;
  };
  std::vector<Layout> layouts{{tp, ep, dp}, {n, 1, 1}};
  layouts.push_back(model.is_moe() ? Layout{1, n, n} : Layout{1, 1, n});
  std::vector<LayoutTraffic> out;
  const double h = static_cast<double>(model.hidden_size);
  const double k = static_cast<double>(model.experts_per_token);
  const double dispatch_element = model.weight_bytes <= 1.0 ? 1.0 : 2.0;
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const Layout& l = layouts[i];
    const bool seen = std::any_of(out.begin(), out.end(), [&](const LayoutTraffic& t) {
      return t.tp == l.tp && t.ep == l.ep && t.dp == l.dp;
    });
    if (seen || (l.ep > 1 && !model.is_moe()))
      continue;
    LayoutTraffic t{.layout = layout_name(l.tp, l.ep, l.dp),
                    .configured = i == 0,
                    .tp = l.tp,
                    .ep = l.ep,
                    .dp = l.dp,
                    .tokens = tokens};
    // Tokens of one replica's forward pass (rounded up when N does not split evenly).
    const std::int64_t replica = (tokens + l.dp - 1) / l.dp;
    if (l.tp > 1) {
      t.all_reduce_bytes = static_cast<double>(replica) * h * 2.0;
      t.all_reduces = 2 * model.num_layers;
      t.wire_bytes_per_gpu +=
          static_cast<double>(t.all_reduces) * 2.0 * (l.tp - 1) / l.tp * t.all_reduce_bytes;
    }
    if (l.ep > 1) {
      const double per_gpu = static_cast<double>(replica) / l.tp * h * k;
      t.dispatch_bytes = per_gpu * dispatch_element;
      t.combine_bytes = per_gpu * 2.0;
      t.all_to_alls = model.num_moe_layers();
      t.wire_bytes_per_gpu += static_cast<double>(t.all_to_alls) * (l.ep - 1) / l.ep *
                              (t.dispatch_bytes + t.combine_bytes);
    }
    ExecModelParams p{.model = model,
                      .gpu = gpu,
                      .tp = l.tp,
                      .efficiency = efficiency,
                      .ep = l.ep,
                      .dp = l.dp,
                      .comm = comm != nullptr ? comm_terms(*comm, l.tp, l.ep) : CommTerms{}};
    t.all_reduce_measured = p.comm.all_reduce.has_value();
    t.all_to_all_measured = p.comm.all_to_all.has_value();
    BatchSums sums;
    sums.add(replica, 0, false);
    const StepCost c = RooflineModel(std::move(p)).step_cost_of_sums(sums);
    t.all_reduce_s = c.allreduce_s;
    t.all_to_all_s = c.alltoall_s;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace llmbench::sim
