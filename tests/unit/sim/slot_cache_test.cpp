// llama.cpp's slots over one KV cache: the cells an idle slot keeps (prompt caching), which slot a
// new request takes (least recently used), and the attention window every step spans (all
// occupied cells, not the sequence's own), traced by hand.

#include "llmbench/sim/slot_cache.hpp"

#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/engine_spec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

TEST(SlotCache, IdleSlotsKeepTheirCellsAndTheLeastRecentlyUsedIsTaken) {
  const std::vector<std::int64_t> before{100, 200};  // slot 0 holds nothing: the oldest
  SlotCache slots(3, before);
  EXPECT_EQ(slots.retained_cells(), 300);
  EXPECT_EQ(slots.cells_by_age(), (std::vector<std::int64_t>{0, 100, 200}));
  slots.take(7);  // the empty slot
  EXPECT_EQ(slots.retained_cells(), 300);
  slots.take(8);  // the slot of 100 cells: dropped for the new prompt
  EXPECT_EQ(slots.retained_cells(), 200);
  slots.release(7, 50);  // most recently used now
  EXPECT_EQ(slots.retained_cells(), 250);
  EXPECT_EQ(slots.cells_by_age(), (std::vector<std::int64_t>{0, 200, 50}));  // 8's slot is busy
  slots.take(9);  // the slot of 200 cells (used before 7's)
  EXPECT_EQ(slots.retained_cells(), 50);
  slots.take(10);  // 7's old slot
  EXPECT_EQ(slots.retained_cells(), 0);
  slots.take(11);  // no idle slot left: nothing changes
  slots.release(11, 999);
  EXPECT_EQ(slots.retained_cells(), 0);
}

/// ds2-random-tiny on cpu-host with llama.cpp's window: the model and the hand-computed pieces.
struct Window {
  ExecModelParams p;
  double bytes_per_cell = 0;  ///< K and V per head, one layer
  double flops_per_cell = 0;  ///< per token and cell, one layer
  Window() {
    EngineOverrides o;
    o.engine = "llamacpp";
    o.model_profile = "ds2-random-tiny";
    o.gpu = "cpu-host";
    p = load_engine_spec(kData, o).exec_params();
    const double nh = 4, dk = 64 + 32, dv = 64;  // heads, qk_nope + qk_rope, v_head_dim
    bytes_per_cell = nh * (dk + dv) * 2;
    flops_per_cell = 2 * nh * (dk + dv);
  }
};

TEST(SharedKvWindow, DecodeReadsEveryOccupiedCellOncePerMicroBatch) {
  const Window w;
  ASSERT_TRUE(w.p.shared_kv_window);
  const RooflineModel model(w.p);
  BatchSums sums;
  sums.add(1, 99, true);  // a decode after 99 cells: 100 cells of its own
  const double own = model.step_cost_of_sums(sums).attention_decode_s;
  sums.retained_cells = 1000;  // idle slots' cells: 1100, padded to 1120
  const double shared = model.step_cost_of_sums(sums).attention_decode_s;
  const double bw = w.p.gpu.memory_bandwidth_gb_s * 1e9 * w.p.efficiency.memory;
  EXPECT_NEAR(own, 2 * 128 * w.bytes_per_cell / bw, 1e-12);  // 2 layers, 100 → 128 cells
  EXPECT_NEAR(shared, 2 * 1120 * w.bytes_per_cell / bw, 1e-12);
  // Without the window (vLLM), the retained cells cost nothing.
  ExecModelParams vllm = w.p;
  vllm.shared_kv_window = false;
  const RooflineModel paged(vllm);
  EXPECT_DOUBLE_EQ(paged.step_cost_of_sums(sums).attention_decode_s,
                   paged.step_cost_of_sums(BatchSums::of({{1, 99, true}})).attention_decode_s);
}

TEST(SharedKvWindow, AOneTokenMicroBatchPaysTheMatrixVectorCostPerScore) {
  // llama.cpp's CPU backend scores a one-token micro-batch cell by cell (τ_vec per cell, head and
  // layer: 2 layers × 4 heads here); two tokens go through tinyBLAS and pay nothing extra.
  Window w;
  ASSERT_TRUE(w.p.gpu.cpu);
  const RooflineModel none(w.p);
  w.p.efficiency.vec_score_overhead_us = 0.1;
  const RooflineModel with(w.p);
  BatchSums one;
  one.add(1, 99, true);
  one.retained_cells = 1000;  // 1100 cells, padded to 1120
  EXPECT_NEAR(with.step_cost_of_sums(one).attention_decode_s -
                  none.step_cost_of_sums(one).attention_decode_s,
              2 * 4 * 1120 * 0.1e-6, 1e-12);
  BatchSums two = one;
  two.add(1, 99, true);
  EXPECT_EQ(with.step_cost_of_sums(two).total_s(), none.step_cost_of_sums(two).total_s());
  // 513 tokens run as micro-batches of 512 and 1: the last one pays over the whole window.
  BatchSums chunk;
  chunk.add(513, 0, true);
  EXPECT_NEAR(with.step_cost_of_sums(chunk).attention_prefill_s -
                  none.step_cost_of_sums(chunk).attention_prefill_s,
              2 * 4 * 544 * 0.1e-6, 1e-12);
}

TEST(SharedKvWindow, APromptChunkScoresEveryTokenAgainstTheWholeWindow) {
  const Window w;
  const RooflineModel model(w.p);
  BatchSums sums;
  sums.add(1024, 0, true);  // a 1024-token prompt: two micro-batches of 512
  sums.retained_cells = 3000;
  const double window = 4032;  // 3000 + 1024 = 4024, padded to 32
  const double peak =
      w.p.gpu.bf16_tflops * 1e12 * w.p.efficiency.compute * w.p.efficiency.attention;
  const double compute = 2 * 1024 * window * w.flops_per_cell / peak;
  const double memory = 2 * 2 * window * w.bytes_per_cell / (15e9 * w.p.efficiency.memory);
  EXPECT_NEAR(model.step_cost_of_sums(sums).attention_prefill_s, std::max(compute, memory),
              1e-9 * compute);
}

TEST(SharedKvWindow, AServedRequestLeavesItsCellsInTheNextOnesWindow) {
  EngineOverrides o;
  o.engine = "llamacpp";
  o.model_profile = "ds2-random-tiny";
  o.gpu = "cpu-host";
  o.max_num_seqs = 2;
  o.context_size = 8192;
  const EngineSpec spec = load_engine_spec(kData, o);
  ASSERT_TRUE(spec.engine.slot_cache);
  // Two requests one after the other (concurrency 1): the second's prompt attends over the
  // first's 1000 + 8 − 1 cells too, so it takes longer to its first token.
  const auto run = [&](std::vector<std::int64_t> before) {
    SimOptions so;
    so.engine = spec.engine;
    so.engine.initial_slot_cells = std::move(before);
    so.max_concurrency = 1;
    Simulation sim(so, spec.make_exec_model());
    const std::vector<SimRequest> reqs(2, SimRequest{0, 1000, 8, {}, false, {}});
    return sim.run(reqs);
  };
  const SimResult fresh = run({});
  const auto ttft = [](const SimResult& r, std::size_t i) {
    return r.records[i].chunks.front().time_ns - r.records[i].sent_ns;
  };
  EXPECT_GT(ttft(fresh, 1), ttft(fresh, 0));
  // A server whose slots still hold 4000 cells each: even the first request pays for them.
  const SimResult warm = run({4000, 4000});
  EXPECT_GT(ttft(warm, 0), ttft(fresh, 1));
}

TEST(SharedKvWindow, TheEngineReportsWhatItsSlotsKeep) {
  EngineOverrides o;
  o.engine = "llamacpp";
  o.model_profile = "ds2-random-tiny";
  o.gpu = "cpu-host";
  o.max_num_seqs = 3;
  o.context_size = 3 * 2048;
  const EngineSpec spec = load_engine_spec(kData, o);
  EngineConfig config = spec.engine;
  config.initial_slot_cells = {500};
  EngineCore core(config, spec.make_exec_model());
  core.add_request(0, 1, 100, 2, {});
  core.add_request(0, 2, 300, 1, {});
  TimeNs now = 0;
  while (core.num_live() > 0) {
    const auto dt = core.begin_step(now);
    ASSERT_TRUE(dt.has_value());
    now += *dt;
    (void)core.end_step();
  }
  // Requests 1 and 2 took the two empty slots; 2 finished first (one token), then 1.
  EXPECT_EQ(core.slot_cells(), (std::vector<std::int64_t>{500, 300, 101}));
}

}  // namespace
}  // namespace llmbench::sim
