// Regression check of the calibrated H200 profile against the public sweep it was fitted to
// (SIMULATOR-NOTES.md §5b: InferenceX issue #870, DeepSeek-R1-0528 FP8, SGLang v0.5.7, TP8,
// 8×H200, 1024 in / 1024 out, closed loop): mean TPOT within 15 %.

#include "llmbench/metrics/summary.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/memory.hpp"

#include <gtest/gtest.h>

#include <string>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

double simulated_mean_tpot_ms(std::int64_t concurrency) {
  const auto model = load_model_profile(kData, "deepseek-r1");
  const auto gpu = load_hardware_profile(kData, "h200");
  MemoryOptions mem;
  mem.tp = 8;
  mem.block_size = 64;
  const auto plan = plan_memory(model, gpu, mem);
  SimOptions o;
  o.engine.num_gpu_blocks = plan.num_gpu_blocks;
  o.engine.block_size = plan.block_size;
  o.engine.scheduler.max_num_seqs = 1024;
  o.engine.scheduler.max_num_batched_tokens = 8192;
  o.max_concurrency = concurrency;
  ExecModelParams p{model, gpu, 8, gpu.efficiency};
  Simulation sim(o, make_exec_model(ExecModelKind::Roofline, p));
  std::vector<SimRequest> reqs(static_cast<std::size_t>(concurrency * 2),
                               SimRequest{0, 1024, 1024, {}, false, {}});
  const auto result = sim.run(reqs);
  const auto summary = metrics::summarize(result.records, {});
  EXPECT_EQ(summary.completed, reqs.size());
  return summary.tpot_ms.mean;
}

TEST(Calibration, H200DeepSeekR1MatchesInferenceXSweep) {
  const std::vector<std::pair<std::int64_t, double>> sweep{
      {8, 12.8}, {16, 17.2}, {32, 25.6}, {64, 34.6}};
  for (const auto& [concurrency, tpot_ms] : sweep) {
    EXPECT_NEAR(simulated_mean_tpot_ms(concurrency), tpot_ms, 0.15 * tpot_ms)
        << "concurrency " << concurrency;
  }
}

}  // namespace
}  // namespace llmbench::sim
