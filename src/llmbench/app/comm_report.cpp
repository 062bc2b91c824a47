#include "llmbench/app/comm_report.hpp"

#include "llmbench/sim/comm_traffic.hpp"

#include <fmt/core.h>

#include <cstdio>

namespace llmbench::app {

namespace {

std::vector<sim::CommTermSource> sources(const sim::EngineSpec& spec) {
  return sim::describe_comm_terms(spec.comm ? &*spec.comm : nullptr, spec.calibration_file,
                                  spec.memory.tp, spec.memory.ep, spec.gpu, spec.efficiency);
}

/// "3.67 MB" (10^6 bytes), "-" for none.
std::string megabytes(double bytes) {
  return bytes > 0 ? fmt::format("{:.3f}", bytes / 1e6) : std::string("-");
}

std::string source_of(const sim::LayoutTraffic& t) {
  const bool ar = t.all_reduces > 0;
  const bool a2a = t.all_to_alls > 0;
  if (!ar && !a2a)
    return "no communication";
  const auto one = [](bool measured) { return measured ? "measured" : "datasheet"; };
  if (ar && a2a)
    return fmt::format("all-reduce {}, all-to-all {}", one(t.all_reduce_measured),
                       one(t.all_to_all_measured));
  return one(ar ? t.all_reduce_measured : t.all_to_all_measured);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> comm_term_lines(const sim::EngineSpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : sources(spec)) out.emplace_back(s.term + ":", s.detail);
  return out;
}

void print_comm_plan(const CommPlanInput& in) {
  for (const auto& s : sim::describe_comm_terms(in.comm, in.calibration_file, in.tp, in.ep, in.gpu,
                                                in.efficiency)) {
    std::printf("%-44s %s\n", (s.term + ":").c_str(), s.detail.c_str());
  }
  const int n = in.tp * in.dp;
  if (n < 2)
    return;
  std::printf(
      "Communication per forward pass over %d GPUs (N tokens in all; S = nccl-tests "
      "size of one call, MB = 10^6 B; * = this plan):\n",
      n);
  std::printf("%s\n", fmt::format("  {:<14} {:>7} {:>12} {:>6} {:>20} {:>6} {:>12} {:>10}  {}",
                                  "layout", "N", "all-reduce S", "calls", "dispatch+combine S",
                                  "layers", "sent/GPU MB", "comm ms", "source")
                          .c_str());
  for (const auto tokens : in.batch_tokens) {
    for (const auto& t : sim::forward_pass_traffic(in.model, in.gpu, in.efficiency, in.comm, in.tp,
                                                   in.ep, in.dp, tokens)) {
      const std::string a2a = t.all_to_alls > 0 ? fmt::format("{}+{}", megabytes(t.dispatch_bytes),
                                                              megabytes(t.combine_bytes))
                                                : std::string("-");
      std::printf("%s\n",
                  fmt::format("  {:<14} {:>7} {:>12} {:>6} {:>20} {:>6} {:>12.3f} {:>10.3f}  {}",
                              t.layout + (t.configured ? " *" : ""), t.tokens,
                              megabytes(t.all_reduce_bytes),
                              t.all_reduces > 0 ? std::to_string(t.all_reduces) : "-", a2a,
                              t.all_to_alls > 0 ? std::to_string(t.all_to_alls) : "-",
                              t.wire_bytes_per_gpu / 1e6, 1e3 * t.comm_s(), source_of(t))
                      .c_str());
    }
  }
}

}  // namespace llmbench::app
